package bloomindex.source

import java.util.Locale

import scala.util.Try

import bloomindex.log.{ColumnDecoding, Decoding}

import org.apache.spark.sql.catalyst.util.ResolveDefaultColumns
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._

/**
 * The rules that decide which context a column is read in ([[bloomindex.log.Decoding]] is what
 * the log records of it), and whether two contexts decode the same bytes into the same values.
 */
object DecodingContext {

  val CaseSensitive = "spark.sql.caseSensitive"
  val SessionTimeZone = "spark.sql.session.timeZone"
  val TimeParserPolicy = "spark.sql.legacy.timeParserPolicy"
  val CsvDateTimeFallback = "spark.sql.legacy.csv.enableDateTimeParsingFallback"
  val JsonDateTimeFallback = "spark.sql.legacy.json.enableDateTimeParsingFallback"
  val JsonExactStrings = "spark.sql.json.enableExactStringParsing"
  val JsonAllowEmptyString = "spark.sql.legacy.json.allowEmptyString.enabled"
  val ParquetFieldIds = "spark.sql.parquet.fieldId.read.enabled"
  val ParquetFieldIdsIgnoreMissing = "spark.sql.parquet.fieldId.read.ignoreMissing"
  val ParquetRebase = "spark.sql.parquet.datetimeRebaseModeInRead"
  val ParquetInt96Rebase = "spark.sql.parquet.int96RebaseModeInRead"
  val ParquetInt96Conversion = "spark.sql.parquet.int96TimestampConversion"
  val OrcImpl = "spark.sql.orc.impl"
  /**
   * ORC's reader setting (a Hadoop one: the reader's options, then the session's settings, then
   * the cluster's Hadoop configuration) that reads every file's columns by position instead of
   * by name.
   */
  val OrcPositional = "orc.force.positional.evolution"
  /** JSON: a line whose array holds one malformed element keeps its other elements' fields (true) or nulls the whole line. */
  val JsonPartialResults = "spark.sql.json.enablePartialResults"
  /** Hadoop's line reader (CSV, JSON and text read by line): longer lines are skipped, without a word. */
  val LineMaxLength = "mapreduce.input.linerecordreader.line.maxlength"
  /** ORC's reader settings that read dates and timestamps before 1582 in the proleptic calendar (Hadoop settings). */
  val OrcProleptic = Seq("orc.proleptic.gregorian", "orc.proleptic.gregorian.default")
  /** Parsing of zone offsets with seconds in CSV, JSON and XML datetimes. */
  val SecondOffsets = "spark.sql.files.supportSecondOffsetFormat"
  /** Spark's XML reader: the legacy parser, which reads malformed content otherwise. */
  val LegacyXmlParser = "spark.sql.legacy.useLegacyXMLParser"
  /**
   * The driver JVM's default time zone (`user.timezone`), which ORC's readers read the local
   * times of ORC's `timestamp` type in (files of Hive's writer: `spark.sql.orc.impl=hive`).
   */
  val JvmTimeZone = "jvm.timeZone"
  /**
   * The JVM's default zone, which Spark rebases the timestamps of Parquet and Avro files marked
   * legacy by their own metadata in ([[LegacyRebase]]): a scan states it for every such column, a
   * build records it only where it read such a file ([[LegacyRebase.NoMarkedFiles]] otherwise).
   */
  val LegacyFilesZone = "jvm.timeZone.legacyFiles"
  val AvroRebase = "spark.sql.avro.datetimeRebaseModeInRead"

  /**
   * Formats whose files are text parsed by Spark's CSV, JSON and XML parsers, which builds read
   * PERMISSIVE: a malformed field is null there and the rest of its record kept, so a column's
   * filter holds every value a read in any mode, of any set of columns, can see.
   */
  val TextFormats: Set[String] = Set("csv", "json", "xml")

  /**
   * Reader options known not to change any value: where files are listed from and which are
   * (file identity covers those), and the parse mode of text formats (builds always read them
   * PERMISSIVE, which keeps every row and every parseable value a query in any mode keeps).
   */
  private val NeutralOptions = Set("path", "paths", "basepath", "pathglobfilter", "recursivefilelookup",
    "modifiedbefore", "modifiedafter", "maxfilespertrigger", "maxbytespertrigger", "latestfirst",
    "filenameonly", "mergeschema", "samplingratio", "inferschema", "prefersdecimal", "enforceschema",
    "columnnameofcorruptrecord")

  /** Options that only change values of some types; every other option counts for every type. */
  private def optionApplies(key: String, dataType: DataType): Boolean = key match {
    case "timestampformat" | "timezone" => dataType == TimestampType
    case "timestampntzformat" => dataType == TimestampNTZType
    case "dateformat" => dataType == DateType || dataType == TimestampType || dataType == TimestampNTZType
    case _ => true
  }

  private def neutral(format: String, key: String): Boolean =
    NeutralOptions.contains(key) || key.startsWith("__") || (TextFormats.contains(format) && key == "mode") ||
      // Builds read every Avro file, whatever its name (BuildScan.readerOptions): a superset.
      (format == "avro" && (key == "ignoreextension" || key == AvroIgnoreWithoutExtension.toLowerCase(Locale.ROOT)))

  /** Avro's Hadoop setting (or reader option) to read no rows of files not named `*.avro`. */
  val AvroIgnoreWithoutExtension = "avro.mapred.ignore.inputs.without.extension"

  /** [[ColumnDecoding.settings]]' key saying an Avro build read the files without the `.avro` extension too. */
  val AvroFilesWithoutExtension = "bloomindex.avro.filesWithoutExtension"

  /**
   * Reader options that name a file whose content changes values: Avro's reader schema
   * (`avroSchemaUrl`: its fields' defaults and types), which Spark reads each time it makes a
   * reader. The option's text may stay while the file is rewritten, so it is recorded with a
   * fingerprint of the content it names.
   */
  private val ContentOptions = Set("avroschemaurl")

  /**
   * Reader options under which no index answers: XML's row validation schema
   * (`rowValidationXSDPath`: which rows are valid). No fingerprint taken on the driver says which
   * schema a read validates with: Spark keeps each XSD it parsed per path in each JVM (a build's
   * tasks may validate with an older copy than the file now holds), and an XSD may include
   * others (`xs:include`, `xs:import`).
   */
  private val NeverAnsweringOptions = Set("rowvalidationxsdpath")

  /** At most this much of a file named by a [[ContentOptions]] option is read for its fingerprint (read once per column checked). */
  private val MaxContentBytes = 1 << 20

  /**
   * The options of `all` (any case) that may change values of a `dataType` column, keys
   * lower-cased; a [[ContentOptions]] value with the fingerprint of the file it names.
   */
  def optionsFor(format: String, all: Map[String, String], dataType: DataType): Map[String, String] = {
    val lower = all.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
    lower.filter { case (k, _) => !neutral(format, k) && optionApplies(k, dataType) }
      .map {
        case (k, v) if ContentOptions.contains(k) => k -> s"$v (${contentOf(v, all)})"
        case (k, v) if NeverAnsweringOptions.contains(k) => k -> s"$v (${neverTheSame("not indexable")})"
        case kv => kv
      }
  }

  /**
   * The length and CRC32C of the file `location` (as Spark's readers find it: a Hadoop path with
   * the reader's options, else a file added with `SparkContext.addFile`); where it cannot be
   * read, a text no other read gives, so that an index never answers on its account.
   */
  private def contentOf(location: String, options: Map[String, String]): String = {
    def read(path: org.apache.hadoop.fs.Path, conf: org.apache.hadoop.conf.Configuration): Array[Byte] = {
      val in = path.getFileSystem(conf).open(path)
      try in.readNBytes(MaxContentBytes + 1) finally in.close()
    }
    Try {
      val conf = currentSession.map(_.sessionState.newHadoopConfWithOptions(options)).getOrElse(new org.apache.hadoop.conf.Configuration())
      val bytes = Try(read(new org.apache.hadoop.fs.Path(location), conf)).orElse(Try {
        val local = new java.io.File(org.apache.spark.SparkFiles.get(location))
        if (!local.isFile) throw new java.io.FileNotFoundException(location)
        read(new org.apache.hadoop.fs.Path(local.toURI), conf)
      }).get
      if (bytes.length > MaxContentBytes) throw new java.io.IOException(s"$location is over $MaxContentBytes bytes")
      val crc = new java.util.zip.CRC32C()
      crc.update(bytes, 0, bytes.length)
      f"content of ${bytes.length} bytes, CRC32C ${crc.getValue}%08x"
    }.getOrElse(neverTheSame("content unreadable when planned"))
  }

  /** A text no other call gives: a recorded option with it never matches a scan's. */
  private def neverTheSame(why: String): String = s"$why, ${java.util.UUID.randomUUID()}"

  /**
   * The default of Spark's setting `key` as a string (internal settings too: an unset conf reads
   * it); "" where this Spark has no such setting.
   */
  private def sparkDefault(key: String): String = Try(Option(unsetConf.getConfString(key))).toOption.flatten.getOrElse("")

  /** A conf with nothing set, read only: made once, not for each column of each scan planned. */
  private lazy val unsetConf = new SQLConf()

  /** The driver JVM's default zone (`user.timezone`), as recorded: UTC, Etc/UTC and GMT all read `Z`. */
  private[bloomindex] def jvmZone: String = java.util.TimeZone.getDefault.toZoneId.normalized().getId

  /** A date or timestamp type: the types calendars, zones and date formats change. */
  private[source] def isDatetime(dt: DataType): Boolean = dt == DateType || dt == TimestampType || dt == TimestampNTZType

  /**
   * The session settings that change how `format` decodes a `dataType` column, read from Spark's
   * source (catalyst's CSV/JSON parsers, the Parquet, ORC and Avro readers); see
   * docs/decisions.md for the list and what each does. Values are the effective ones.
   */
  def settingsFor(conf: SQLConf, format: String, dataType: DataType, options: Map[String, String]): Map[String, String] = {
    // Settings without a default read as "" when unset.
    def v(key: String): String = Try(Option(conf.getConfString(key))).toOption.flatten.getOrElse("")
    val out = Map.newBuilder[String, String]
    def add(keys: String*): Unit = keys.foreach(k => out += k -> v(k))
    // Settings recorded only where not at their defaults, so that indexes built before they were
    // recorded (at the defaults) still answer.
    def addChanged(keys: String*): Unit = keys.foreach { k =>
      val default = sparkDefault(k)
      val now = v(k)
      if (now.nonEmpty && !now.equalsIgnoreCase(default)) out += k -> now
    }
    // Whether a rebase setting or the reader's own option says LEGACY (the option wins over the
    // session's setting; counting either costs at most pruning). Read LEGACY, a file without
    // Spark's zone in its metadata (another writer's) is rebased in the JVM's default zone, not the
    // session's: a pre-1900 timestamp reads otherwise in a JVM of another zone.
    def readsLegacy(settings: Seq[String], readerOptions: Seq[String]): Boolean =
      settings.exists(k => v(k).equalsIgnoreCase("LEGACY")) || readerOptions.exists(k => options.get(k).exists(_.equalsIgnoreCase("LEGACY")))
    format match {
      case "csv" | "json" =>
        // CSV maps columns by position: name case does not pick the values.
        if (format == "json") add(CaseSensitive, JsonAllowEmptyString)
        if (isDatetime(dataType)) {
          add(TimeParserPolicy, if (format == "csv") CsvDateTimeFallback else JsonDateTimeFallback)
          addChanged(SecondOffsets)
        }
        // Text without an offset is read in the session zone, unless the reader sets its own.
        if (dataType == TimestampType && !options.contains("timezone")) out += SessionTimeZone -> conf.sessionLocalTimeZone
        if (format == "json" && dataType.isInstanceOf[StringType]) add(JsonExactStrings)
        // Where not at its default (true): an index built under false misses values true reads.
        if (format == "json") addChanged(JsonPartialResults)
        hadoopSetting(conf, options, LineMaxLength).foreach(n => out += LineMaxLength -> n.trim)
      case "parquet" =>
        add(CaseSensitive, ParquetFieldIds, ParquetFieldIdsIgnoreMissing)
        if (isDatetime(dataType)) add(ParquetRebase)
        if (dataType == TimestampType) {
          add(ParquetInt96Rebase, ParquetInt96Conversion)
          // Parquet's timestamps are UTC-adjusted: the zone matters only where Spark converts.
          val legacy = readsLegacy(Seq(ParquetRebase, ParquetInt96Rebase), Seq("datetimerebasemode", "int96rebasemode"))
          if (legacy || v(ParquetInt96Conversion).equalsIgnoreCase("true")) out += SessionTimeZone -> conf.sessionLocalTimeZone
          if (legacy) out += JvmTimeZone -> jvmZone
          out += LegacyFilesZone -> jvmZone
        }
      case "orc" =>
        add(CaseSensitive, OrcImpl)
        // Read by position in every file (not only files with Hive's `_col` names): recorded where
        // on, wherever it is set, as Spark's reader takes it from the Hadoop configuration.
        if (hadoopSetting(conf, options, OrcPositional).exists(_.trim.equalsIgnoreCase("true"))) out += OrcPositional -> "true"
        // ORC's `timestamp` type holds local times, which its readers turn into instants in the
        // JVM's default zone: the same file reads otherwise in a JVM of another zone. (Spark's
        // own writer uses `timestamp with local time zone`, whose values are instants; which type
        // a file has is the file's affair, so the zone is always recorded.)
        if (isDatetime(dataType)) OrcProleptic.foreach(k => hadoopSetting(conf, options, k).foreach(x => out += k -> x.trim.toLowerCase(Locale.ROOT)))
        if (dataType == TimestampType || dataType == TimestampNTZType) {
          out += JvmTimeZone -> jvmZone
        }
      case "avro" =>
        add(CaseSensitive)
        // Builds read every Avro file since this was recorded (BuildScan.readerOptions); one built
        // before may have read none of a file without the extension (Hadoop's setting), unrecorded.
        out += AvroFilesWithoutExtension -> "read"
        if (isDatetime(dataType)) {
          add(AvroRebase)
          if (readsLegacy(Seq(AvroRebase), Seq("datetimerebasemode"))) {
            out += SessionTimeZone -> conf.sessionLocalTimeZone
            if (dataType == TimestampType) out += JvmTimeZone -> jvmZone
          }
          if (dataType == TimestampType) out += LegacyFilesZone -> jvmZone
        }
      case "xml" =>
        // As any other format (below), and the settings Spark's XML reader takes from the session.
        add(CaseSensitive)
        out += SessionTimeZone -> conf.sessionLocalTimeZone
        addChanged(LegacyXmlParser)
        if (isDatetime(dataType)) addChanged(TimeParserPolicy, SecondOffsets)
      case _ =>
        // A format we know nothing of: every setting that could matter is recorded.
        add(CaseSensitive)
        out += SessionTimeZone -> conf.sessionLocalTimeZone
        hadoopSetting(conf, options, LineMaxLength).foreach(n => out += LineMaxLength -> n.trim)
    }
    if (dataType.isInstanceOf[StringType]) out ++= charSettings(conf)
    out.result()
  }

  /**
   * A Hadoop setting as a file source's reader sees it (Spark's `newHadoopConfWithOptions`): the
   * reader's options (`options`, keys lower-cased), then the session's settings, then the
   * cluster's Hadoop configuration (`spark.hadoop.*`).
   */
  private def hadoopSetting(conf: SQLConf, options: Map[String, String], key: String): Option[String] =
    options.get(key.toLowerCase(Locale.ROOT))
      .orElse(Try(Option(conf.getConfString(key, null))).toOption.flatten)
      .orElse(currentSession.flatMap(s => Option(s.sparkContext.hadoopConfiguration.get(key))))

  /** The session planning on this thread, else the process's default one. */
  private def currentSession: Option[org.apache.spark.sql.SparkSession] =
    org.apache.spark.sql.SparkSession.getActiveSession.orElse(org.apache.spark.sql.SparkSession.getDefaultSession)

  /**
   * The settings that change what a query compares for a CHAR(n) column (a STRING with Spark's
   * CHAR metadata, which a read under them may drop), where not at their defaults: whether the
   * stored value is padded on read, or the literal padded instead. The index holds what its
   * build read (padded, where the build read rows through Spark's read of the table), so a
   * query comparing the stored values otherwise may not use it.
   */
  private def charSettings(conf: SQLConf): Map[String, String] = CharDefaults.flatMap { case (k, default) =>
    val now = Try(conf.getConfString(k, default)).getOrElse(default).trim.toLowerCase(Locale.ROOT)
    if (now == default) None else Some(k -> now)
  }.toMap

  private val CharDefaults = Seq("spark.sql.legacy.charVarcharAsString" -> "false",
    "spark.sql.readSideCharPadding" -> "true", "spark.sql.legacy.noCharPaddingInPredicate" -> "false")

  /** [[ColumnDecoding.physical]]'s key for a column's field id. */
  val FieldId = "fieldId"

  /** Parquet field ids' metadata key. */
  val ParquetFieldIdKey = "parquet.field.id"

  /** Where a Parquet file stores `field`, when its metadata says (a field id; empty: under its own name). */
  def physicalOf(field: StructField): Map[String, String] = {
    val m = field.metadata
    if (m.contains(ParquetFieldIdKey)) Map(FieldId -> m.getLong(ParquetFieldIdKey).toString) else Map.empty
  }

  /** [[ColumnDecoding.physical]]'s key for the position a format reads a column from (see [[mapping]]). */
  val Position = "position"
  /** The position of a column Avro's `positionalFieldMatching` reads: its place among the columns a query reads. */
  val ReadOrder = "read-order"
  /** [[ColumnDecoding.physical]]'s key for the creation time of the catalog table a column belongs to. */
  val TableCreated = "tableCreated"
  /**
   * [[ColumnDecoding.physical]]'s key for the UUID of the table a column belongs to, for table
   * formats that give their tables one (Iceberg): a table dropped and created again, even at the
   * same location, has another.
   */
  val TableUuid = "tableUuid"
  /**
   * [[ColumnDecoding.physical]]'s key for what a column's filters hold when not the values'
   * bytes: [[CollationKeyed]] for collated strings ([[bloomindex.hash.CollationKeys]]).
   */
  val Keys = "keys"
  val CollationKeyed = "collation"
  /**
   * [[ColumnDecoding.physical]]'s key for the version of the data a keyed column's collation keys
   * were computed from ([[bloomindex.hash.CollationKeys.dataVersion]]: ICU's).
   */
  val KeysData = "keysData"
  /**
   * [[ColumnDecoding.physical]]'s key for a column's existence default (Spark's `EXISTS_DEFAULT`
   * field metadata, from `ALTER TABLE ... ADD COLUMN ... DEFAULT`): the value a read of the table
   * gives the column in files written before it was added, where a read of the files by path, or
   * of a table without the default, gives NULL.
   */
  val ExistsDefault = "existsDefault"
  private val ExistsDefaultMetadataKey = ResolveDefaultColumns.EXISTS_DEFAULT_COLUMN_METADATA_KEY
  private val SqlCorruptRecordColumn = "spark.sql.columnNameOfCorruptRecord"

  /**
   * [[ColumnDecoding.physical]]'s key marking a column the scan reads as its corrupt-record
   * column (CSV, JSON, XML): its values are whole malformed records, and which records are
   * malformed depends on the columns a query reads, so no filter answers for it.
   */
  val CorruptRecord = "corruptRecord"

  /** The formats that give malformed records to a corrupt-record column. */
  val CorruptRecordFormats: Set[String] = Set("csv", "json", "xml")

  /**
   * [[ColumnDecoding.physical]]'s key marking a column an XML scan reads as its wildcard column
   * (the reader's `wildcardColName`, `xs_any` by default): it holds the elements the read's
   * schema does not name, so its values depend on the columns a query reads, and no filter
   * answers for it.
   */
  val XmlWildcard = "xmlWildcard"

  /** The wildcard column's name of an XML read with `options` (Spark's `XmlOptions`), where the format is XML. */
  def xmlWildcardColumn(format: String, options: Map[String, String]): Option[String] =
    if (format != "xml") None
    else Some(options.collectFirst { case (k, v) if k.equalsIgnoreCase("wildcardColName") => v }.getOrElse("xs_any"))

  /**
   * The name of the corrupt-record column of a `format` read with `options` under `conf` (the
   * reader's `columnNameOfCorruptRecord`, else the session's), where the format has one.
   */
  def corruptRecordColumn(conf: SQLConf, format: String, options: Map[String, String]): Option[String] =
    if (!CorruptRecordFormats.contains(format)) None
    else Some(options.collectFirst { case (k, v) if k.equalsIgnoreCase("columnNameOfCorruptRecord") => v }.getOrElse(
      Try(conf.getConfString(SqlCorruptRecordColumn)).getOrElse("_corrupt_record")))

  /**
   * How `format` maps the files' columns to column `name` of a scan whose data schema (without
   * partition columns) is `dataSchema`, where that is not by name alone: the column's position
   * (see docs/decisions.md, "Columns read by position"). CSV reads the n-th field of a line
   * for the n-th column of the data schema without the corrupt-record column, whatever the
   * header says; ORC reads files whose columns have Hive's names (`_col0`, ...), or all files
   * under `orc.force.positional.evolution`, by position in the data schema (whether a file has
   * such names is the file's affair, so ORC's position is always recorded); Avro with
   * `positionalFieldMatching` reads by the column's place among the columns the query reads,
   * which no index can record. Empty for the formats that read by name or field id.
   */
  def mapping(conf: SQLConf, format: String, options: Map[String, String], dataSchema: StructType,
      name: String): Map[String, String] = {
    def option(key: String): Option[String] = options.collectFirst { case (k, v) if k.equalsIgnoreCase(key) => v }
    def positionIn(fields: Seq[String]): Map[String, String] = {
      val i = fields.indexOf(name)
      if (i < 0) Map.empty else Map(Position -> i.toString)
    }
    val corrupt = corruptRecordColumn(conf, format, options)
    val marked = (if (corrupt.contains(name)) Map(CorruptRecord -> "true") else Map.empty[String, String]) ++
      (if (xmlWildcardColumn(format, options).contains(name)) Map(XmlWildcard -> "true") else Map.empty[String, String])
    format match {
      case "csv" => marked ++ positionIn(dataSchema.fieldNames.toSeq.filterNot(f => corrupt.contains(f)))
      case "json" | "xml" => marked
      case "orc" => positionIn(dataSchema.fieldNames.toSeq)
      case "avro" if option("positionalFieldMatching").exists(_.trim.equalsIgnoreCase("true")) => Map(Position -> ReadOrder)
      case _ => Map.empty
    }
  }

  /**
   * A column's decoding context: `physical` where its format stores it, `settings` the session
   * settings and `options` the reader options that change its values; a string column under a
   * collation whose filters hold collation keys says so.
   */
  def column(field: StructField, physical: Map[String, String], settings: Map[String, String],
      options: Map[String, String]): ColumnDecoding = {
    val keys = field.dataType match {
      case s: StringType if bloomindex.hash.CollationKeys.keyed(s) =>
        Map(Keys -> CollationKeyed, KeysData -> bloomindex.hash.CollationKeys.dataVersion)
      case _ => Map.empty[String, String]
    }
    val default =
      if (field.metadata.contains(ExistsDefaultMetadataKey)) Map(ExistsDefault -> field.metadata.getString(ExistsDefaultMetadataKey))
      else Map.empty[String, String]
    ColumnDecoding(field.name, field.dataType.sql, physical ++ keys ++ default, settings, options)
  }

  /**
   * The context a session `conf` reads `field` of a file source of `format` with `options` in,
   * `dataSchema` the scan's data schema (formats that read columns by position: [[mapping]]).
   */
  def fileColumn(conf: SQLConf, format: String, options: Map[String, String], dataSchema: StructType,
      field: StructField): ColumnDecoding = {
    val opts = optionsFor(format, options, field.dataType)
    column(field, physicalOf(field) ++ mapping(conf, format, options, dataSchema, field.name),
      settingsFor(conf, format, field.dataType, opts), opts)
  }

  /** The settings key of a text filter's [[bloomindex.text.TextFilterSpec.fingerprint]]. */
  val TextFilter = "bloomindex.text"

  /**
   * `d`, the decoding of index column `c`'s source column, as recorded for `c`: under `c`'s
   * name, and for a text filter with its tokenizer's fingerprint (settings and Unicode data),
   * so that a filter is used only where a query computes the same tokens or n-grams.
   */
  def ofIndexColumn(d: ColumnDecoding, c: bloomindex.log.ColumnSpec): ColumnDecoding = c.text match {
    case None => d.copy(name = c.name)
    case Some(t) => d.copy(name = c.name, settings = d.settings + (TextFilter -> t.spec.fingerprint))
  }

  /**
   * Per column of `built`, why the current context would decode it otherwise: `current` gives
   * the current context of a column by its exact name (None: no such column now), in a scan of
   * `format`. Columns that decode alike are left out.
   */
  def changes(built: Decoding, format: String, current: String => Option[ColumnDecoding]): Seq[(String, String)] =
    built.columns.flatMap { b =>
      current(b.name) match {
        case None => Some(b.name -> s"${b.name}: the source has no column named exactly ${b.name} now")
        case Some(now) => difference(built.format, b, format, now).map(b.name -> _)
      }
    }

  /**
   * [[ColumnDecoding.physical]]'s key for the names a table's name mapping gives a column
   * ([[mappedNames]]), which a table format reads files without field ids by (Iceberg's
   * imported files): recorded where the index holds such files, and then the same names are
   * required of a scan.
   */
  val NameMapping = "nameMapping"

  /** `names` (sorted) as [[NameMapping]] records them: each quoted, `'` doubled. */
  def mappedNames(names: Seq[String]): String = names.sorted.map(n => "'" + n.replace("'", "''") + "'").mkString(", ")

  /** [[ColumnDecoding.physical]]'s key for Delta column mapping's physical name of a column. */
  val PhysicalName = "physicalName"

  /**
   * Whether `a` and `b` (a column's recorded context and a scan's, any names) are the same
   * physical column by what their formats identify columns by: the field ids where both record
   * one, the physical names (a column's own name when none is recorded) where either records
   * one. False when neither identity is recorded on both sides: names alone say nothing here.
   */
  def samePhysical(a: ColumnDecoding, b: ColumnDecoding): Boolean = {
    val ids = (a.physical.get(FieldId), b.physical.get(FieldId)) match {
      case (Some(x), Some(y)) => Some(x == y)
      case _ => None
    }
    val names = if (!a.physical.contains(PhysicalName) && !b.physical.contains(PhysicalName)) None
      else Some(a.physical.getOrElse(PhysicalName, a.name) == b.physical.getOrElse(PhysicalName, b.name))
    (ids.isDefined || names.isDefined) && ids.forall(identity) && names.forall(identity)
  }

  /**
   * Where a provider follows renames ([[SourceProvider.followsRenames]]): for each column of
   * `built`, the one column of `current` (name -> its context) that is the same physical column
   * ([[samePhysical]]) under another name. Index column -> the current column's name; a column
   * with no such column, or several, is left out.
   */
  def renames(built: Decoding, current: Seq[(String, ColumnDecoding)]): Map[String, String] =
    built.columns.flatMap { b =>
      current.filter { case (_, d) => samePhysical(b, d) } match {
        case Seq((name, _)) if name != b.name => Some(b.name -> name)
        case _ => None
      }
    }.toMap

  /** Why a column read by position (see [[mapping]]) built at `built` may not answer for a scan reading `scan`. */
  private def positionDifference(c: String, built: Option[String], scan: Option[String]): Option[String] =
    if (built.contains(ReadOrder) || scan.contains(ReadOrder)) {
      Some(s"$c: Avro's positionalFieldMatching reads the column by its place among the columns each query reads")
    } else if (built == scan) None
    else (built, scan) match {
      case (None, Some(_)) => Some(s"$c: the format reads columns by position, and the index was built before " +
        "positions were recorded; REFRESH BLOOM INDEX ... FULL records them")
      case (Some(a), Some(b)) => Some(s"$c: the format reads columns by position: built from field ${a.toInt + 1} of " +
        s"the files, the scan reads field ${b.toInt + 1} as $c")
      case _ => Some(s"$c: the format reads columns by position, and the scan's position is unknown")
    }

  /** Whether a column's recorded settings depend on the JVM's default time zone. */
  def readInJvmZone(c: ColumnDecoding): Boolean =
    c.settings.contains(JvmTimeZone) || c.settings.get(LegacyFilesZone).exists(_ != LegacyRebase.NoMarkedFiles)

  private val SettingNames = Map(
    SessionTimeZone -> "session time zone",
    JvmTimeZone -> "JVM default time zone (user.timezone, which ORC's timestamp type is read in, and Parquet and Avro timestamps without Spark's metadata rebased LEGACY)",
    CaseSensitive -> "case sensitivity (spark.sql.caseSensitive)",
    TimeParserPolicy -> "datetime parser policy (spark.sql.legacy.timeParserPolicy)",
    AvroFilesWithoutExtension -> ("what the build read of Avro files without the .avro extension (not recorded by " +
      "earlier builds, which may have read none of them; REFRESH BLOOM INDEX ... FULL builds it again)"))

  private def shown(v: Option[String]): String = v.map(s => s"'$s'").getOrElse("(not set)")

  /**
   * Why a scan of `scanFormat` whose column decodes as `scan` may not use a filter built as
   * `built`, in words; None when both decode the same bytes into the same values.
   */
  def difference(builtFormat: String, built: ColumnDecoding, scanFormat: String, scan: ColumnDecoding): Option[String] = {
    val c = built.name
    if (builtFormat != scanFormat) return Some(s"$c: format differs: built from $builtFormat, queried as $scanFormat")
    if (built.name != scan.name) return Some(s"$c: the scan's column is ${scan.name} (names differ in case)")
    if (built.dataType != scan.dataType) {
      return Some(s"$c: type differs: built as ${built.dataType}, queried as ${scan.dataType}")
    }
    // A physical name defaults to the column's own; a field id counts where both sides have one,
    // and where either side reads Parquet by field id, whether there is one at all (without one
    // the column is read by name: another physical column of a file whose ids differ).
    val builtPhysical = built.physical.getOrElse("physicalName", built.name)
    val scanPhysical = scan.physical.getOrElse("physicalName", scan.name)
    if (builtPhysical != scanPhysical) {
      return Some(s"$c: another physical column: built from '$builtPhysical', the table now reads '$scanPhysical'")
    }
    (built.physical.get(FieldId), scan.physical.get(FieldId)) match {
      case (Some(a), Some(b)) if a != b => return Some(s"$c: another physical column: built from field id $a, now $b")
      case (a, b) if a.isDefined != b.isDefined &&
          (built.settings.get(ParquetFieldIds).contains("true") || scan.settings.get(ParquetFieldIds).contains("true")) =>
        return Some(s"$c: another physical column: built ${a.fold("by name")(i => s"from field id $i")}, " +
          s"now read ${b.fold("by name")(i => s"by field id $i")}")
      case _ =>
    }
    (built.physical.get(TableCreated), scan.physical.get(TableCreated)) match {
      case (Some(a), Some(b)) if a != b => return Some(s"$c: the table was dropped and created again since the index " +
        s"was built (created at $a, now at $b ms since the epoch); a REFRESH BLOOM INDEX ... FULL builds it for this table")
      case _ =>
    }
    (built.physical.get(TableUuid), scan.physical.get(TableUuid)) match {
      case (Some(a), Some(b)) if a != b => return Some(s"$c: the table was dropped and created again since the index " +
        s"was built (table UUID $a, now $b); a REFRESH BLOOM INDEX ... FULL builds it for this table")
      case _ =>
    }
    if (built.physical.contains(CorruptRecord) || scan.physical.contains(CorruptRecord)) {
      return Some(s"$c: ${if (scan.physical.contains(CorruptRecord)) "the scan reads" else "the index was built from"} " +
        s"$c as the corrupt-record column (columnNameOfCorruptRecord), whose values depend on the columns a query reads")
    }
    if (built.physical.contains(XmlWildcard) || scan.physical.contains(XmlWildcard)) {
      return Some(s"$c: ${if (scan.physical.contains(XmlWildcard)) "the scan reads" else "the index was built from"} " +
        s"$c as the XML wildcard column (wildcardColName), whose values depend on the columns a query reads")
    }
    positionDifference(c, built.physical.get(Position), scan.physical.get(Position)).foreach(why => return Some(why))
    (built.physical.get(NameMapping), scan.physical.get(NameMapping)) match {
      case (Some(a), b) if !b.contains(a) => return Some(s"$c: the index holds files without field ids, read through " +
        s"the table's name mapping by the names [$a]; the mapping now gives ${b.fold("none (it was removed)")(n => s"[$n]")}, " +
        "so the table may read other columns of those files; REFRESH BLOOM INDEX ... FULL builds it as the table reads now")
      case _ =>
    }
    (built.physical.get(ExistsDefault), scan.physical.get(ExistsDefault)) match {
      case (a, b) if a == b =>
      // An index of the table built before defaults were recorded read the rows through the
      // table, which gives them the default (fixed when the column was added).
      case (None, Some(_)) if built.physical.contains(TableCreated) =>
      case (None, Some(d)) => return Some(s"$c: the table gives rows of its files that lack the column its default ($d), " +
        "the index was built from the files by path, which read them as NULL: create the index on the table")
      case (a, b) => return Some(s"$c: rows of files that lack the column read as ${b.getOrElse("NULL")} now, the index " +
        s"was built reading them as ${a.getOrElse("NULL")}")
    }
    if (built.physical.get(Keys) != scan.physical.get(Keys)) {
      return Some(s"$c: the filters hold the strings' bytes, built before collation keys were stored; " +
        "REFRESH BLOOM INDEX ... FULL stores them")
    }
    (built.physical.get(KeysData), scan.physical.get(KeysData)) match {
      case (a, b) if a == b =>
      case (None, Some(b)) => return Some(s"$c: the filters hold collation keys computed with data of an unrecorded " +
        s"version (indexes built before it was recorded), this Spark computes them with $b, whose keys may differ for " +
        "the same string; REFRESH BLOOM INDEX ... FULL computes them again")
      case (a, b) => return Some(s"$c: the filters hold collation keys computed with ${a.getOrElse("(not recorded)")}, " +
        s"this Spark computes them with ${b.getOrElse("(not recorded)")}, whose keys may differ for the same string " +
        "(another Spark version); REFRESH BLOOM INDEX ... FULL computes them again")
    }
    // Asked only of builds that read files marked legacy by their metadata (LegacyRebase).
    built.settings.get(LegacyFilesZone).filter(_ != LegacyRebase.NoMarkedFiles)
        .filterNot(z => scan.settings.get(LegacyFilesZone).contains(z)).foreach { z =>
      return Some(s"$c: the index holds files written by Spark before 3.1 (or marked legacy) that record no time zone, " +
        s"whose timestamps Spark rebases in the JVM's default time zone: built in $z, this JVM's is " +
        s"${scan.settings.getOrElse(LegacyFilesZone, "(not recorded)")}")
    }
    val settings = (built.settings.keySet ++ scan.settings.keySet - LegacyFilesZone).toSeq.sorted
      .find(k => built.settings.get(k) != scan.settings.get(k))
    settings.foreach { k =>
      val what = SettingNames.getOrElse(k, k)
      return Some(s"$c: $what differs: built under ${built.settings.getOrElse(k, "(not recorded)")}, " +
        s"queried under ${scan.settings.getOrElse(k, "(not recorded)")}")
    }
    (built.options.keySet ++ scan.options.keySet).toSeq.sorted.find(k => built.options.get(k) != scan.options.get(k)).map { k =>
      s"$c: reader option '$k' differs: built with ${shown(built.options.get(k))}, queried with ${shown(scan.options.get(k))}"
    }
  }
}
