package bloomindex.source

import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

class DecodingSuite extends AnyFunSuite {

  private def conf(settings: (String, String)*): SQLConf = {
    val c = new SQLConf
    c.setConfString(DecodingContext.SessionTimeZone, "UTC")
    settings.foreach { case (k, v) => c.setConfString(k, v) }
    c
  }

  private def col(c: SQLConf, format: String, field: StructField, options: Map[String, String] = Map.empty) =
    if (format == "delta") new delta.DeltaProvider().decoding(c, null, field)
    else DecodingContext.fileColumn(c, format, options, StructType(Seq(field)), field)

  private def diff(format: String, field: StructField, built: SQLConf, queried: SQLConf,
      builtOptions: Map[String, String] = Map.empty, queriedOptions: Map[String, String] = Map.empty): Option[String] =
    DecodingContext.difference(format, col(built, format, field, builtOptions), format, col(queried, format, field, queriedOptions))

  private val ts = StructField("ts", TimestampType)
  private val id = StructField("id", IntegerType)
  private val la = DecodingContext.SessionTimeZone -> "America/Los_Angeles"

  test("the session time zone changes text timestamps, not Parquet's or ORC's, nor other types") {
    val why = diff("csv", ts, conf(), conf(la))
    assert(why.contains("ts: session time zone differs: built under UTC, queried under America/Los_Angeles"))
    assert(diff("json", ts, conf(), conf(la)).isDefined)
    assert(diff("csv", id, conf(), conf(la)).isEmpty)
    assert(diff("csv", StructField("d", DateType), conf(), conf(la)).isEmpty)
    assert(diff("csv", StructField("n", TimestampNTZType), conf(), conf(la)).isEmpty)
    assert(diff("parquet", ts, conf(), conf(la)).isEmpty)
    assert(diff("orc", ts, conf(), conf(la)).isEmpty)
    assert(diff("delta", ts, conf(), conf(la)).isEmpty)
    // The reader's own timeZone option wins over the session's.
    val tzOption = Map("timeZone" -> "UTC")
    assert(diff("csv", ts, conf(), conf(la), tzOption, tzOption).isEmpty)
  }

  test("Parquet timestamps depend on the zone only where Spark converts them (LEGACY rebase, INT96 conversion)") {
    val legacy = DecodingContext.ParquetRebase -> "LEGACY"
    assert(diff("parquet", ts, conf(legacy), conf(legacy, la)).exists(_.contains("time zone")))
    val int96 = DecodingContext.ParquetInt96Conversion -> "true"
    assert(diff("parquet", ts, conf(int96), conf(int96, la)).exists(_.contains("time zone")))
    assert(diff("parquet", ts, conf(), conf(legacy)).isDefined)
    assert(diff("parquet", id, conf(), conf(legacy)).isEmpty)
    // Read LEGACY, another writer's files (no Spark metadata) are rebased in the JVM's default zone,
    // not the session's: the build records it, and a JVM of another zone differs.
    val built = col(conf(legacy), "parquet", ts)
    assert(built.settings.get(DecodingContext.ParquetRebase).contains("LEGACY"))
    assert(built.settings.get(DecodingContext.JvmTimeZone).contains(java.util.TimeZone.getDefault.toZoneId.normalized().getId))
    val elsewhere = built.copy(settings = built.settings + (DecodingContext.JvmTimeZone -> "Asia/Tokyo"))
    assert(DecodingContext.difference("parquet", built, "parquet", elsewhere).exists(_.contains("JVM default time zone")))
    assert(!col(conf(), "parquet", ts).settings.contains(DecodingContext.JvmTimeZone))
    // Avro's timestamps read LEGACY likewise; dates are rebased in no zone.
    assert(col(conf(DecodingContext.AvroRebase -> "LEGACY"), "avro", ts).settings.contains(DecodingContext.JvmTimeZone))
    assert(!col(conf(), "avro", ts).settings.contains(DecodingContext.JvmTimeZone))
    assert(!col(conf(legacy), "parquet", StructField("d", DateType)).settings.contains(DecodingContext.JvmTimeZone))
    // The reader's LEGACY option too: the zone counts then, even with the session's rebase CORRECTED.
    val option = Map("datetimeRebaseMode" -> "LEGACY")
    assert(diff("parquet", ts, conf(), conf(la), option, option).exists(_.contains("time zone")))
    assert(diff("parquet", ts, conf(), conf(la), Map("datetimeRebaseMode" -> "CORRECTED"), Map("datetimeRebaseMode" -> "CORRECTED")).isEmpty)
  }

  test("files marked legacy by their own metadata: a build that read one records the JVM's zone, a scan in another differs") {
    // Spark rebases them whatever the session's mode, in the zone the file records, else the JVM's.
    def v(kv: (String, String)*): Boolean = LegacyRebase.rebasedInJvmZone(kv.toMap.get)
    assert(v("org.apache.spark.version" -> "2.4.5"))
    assert(v("org.apache.spark.version" -> "3.0.3"))  // INT96 values: before 3.1
    assert(v("org.apache.spark.version" -> "3.3.0", "org.apache.spark.legacyDateTime" -> ""))
    assert(v("org.apache.spark.version" -> "3.5.1", "org.apache.spark.legacyINT96" -> ""))
    assert(!v("org.apache.spark.version" -> "3.3.0", "org.apache.spark.legacyDateTime" -> "", "org.apache.spark.timeZone" -> "UTC"))
    assert(!v("org.apache.spark.version" -> "2.4.5", "org.apache.spark.timeZone" -> "Asia/Tokyo"))
    assert(!v("org.apache.spark.version" -> "4.1.0"))
    assert(!v())  // another writer's file: the session's mode (the JvmTimeZone setting above)
    // A scan states its JVM's zone for Parquet's, Delta's and Avro's timestamps, nothing for other types.
    val zone = java.util.TimeZone.getDefault.toZoneId.normalized().getId
    for (f <- Seq("parquet", "delta", "avro")) {
      assert(col(conf(), f, ts).settings.get(DecodingContext.LegacyFilesZone).contains(zone), f)
      assert(!col(conf(), f, id).settings.contains(DecodingContext.LegacyFilesZone), f)
      assert(!col(conf(), f, StructField("d", DateType)).settings.contains(DecodingContext.LegacyFilesZone), f)
    }
    val scan = col(conf(), "parquet", ts)
    val elsewhere = scan.copy(settings = scan.settings + (DecodingContext.LegacyFilesZone -> "Asia/Tokyo"))
    // A build that read no such file records so, and answers a scan in any zone; one that did
    // answers only in its zone. An index built before this was recorded has no key, and answers.
    val none = scan.copy(settings = scan.settings + (DecodingContext.LegacyFilesZone -> LegacyRebase.NoMarkedFiles))
    val before = scan.copy(settings = scan.settings - DecodingContext.LegacyFilesZone)
    assert(DecodingContext.difference("parquet", none, "parquet", elsewhere).isEmpty)
    assert(DecodingContext.difference("parquet", before, "parquet", elsewhere).isEmpty)
    assert(!DecodingContext.readInJvmZone(none) && DecodingContext.readInJvmZone(scan))
    assert(DecodingContext.difference("parquet", scan, "parquet", scan).isEmpty)
    assert(DecodingContext.difference("parquet", scan, "parquet", elsewhere).exists(w =>
      w.contains("rebases in the JVM's default time zone") && w.contains(s"built in $zone, this JVM's is Asia/Tokyo")),
      DecodingContext.difference("parquet", scan, "parquet", elsewhere))
  }

  test("case sensitivity matters where columns are matched by name, not for CSV") {
    val cs = DecodingContext.CaseSensitive -> "true"
    for (f <- Seq("parquet", "orc", "json", "delta")) assert(diff(f, id, conf(), conf(cs)).isDefined, f)
    assert(diff("csv", id, conf(), conf(cs)).isEmpty)
  }

  test("reader options: all count, except the neutral ones and those of other types; parse modes do not") {
    assert(diff("csv", id, conf(), conf(), Map("nullValue" -> "-"), Map.empty)
      .contains("id: reader option 'nullvalue' differs: built with '-', queried with (not set)"))
    assert(diff("csv", id, conf(), conf(), Map("timestampFormat" -> "x"), Map("timestampFormat" -> "y")).isEmpty)
    assert(diff("csv", ts, conf(), conf(), Map("timestampFormat" -> "x"), Map("TIMESTAMPFORMAT" -> "y"))
      .exists(_.contains("'timestampformat'")))
    assert(diff("csv", ts, conf(), conf(), Map("TimestampFormat" -> "x"), Map("timestampformat" -> "x")).isEmpty)
    assert(diff("csv", StructField("d", DateType), conf(), conf(), Map("dateFormat" -> "x"), Map.empty).isDefined)
    assert(diff("json", id, conf(), conf(), Map("mode" -> "DROPMALFORMED", "path" -> "/a"), Map("mode" -> "FAILFAST")).isEmpty)
    // Parquet has no parse mode: an option it does not know still counts (it may be a newer one).
    assert(diff("parquet", id, conf(), conf(), Map("mode" -> "x"), Map.empty).isDefined)
  }

  test("text datetime parsing settings, JSON string parsing") {
    val policy = DecodingContext.TimeParserPolicy -> "LEGACY"
    assert(diff("csv", StructField("d", DateType), conf(), conf(policy)).exists(_.contains("parser policy")))
    assert(diff("csv", id, conf(), conf(policy)).isEmpty)
    val exact = DecodingContext.JsonExactStrings -> "false" // the default is true
    assert(diff("json", StructField("s", StringType), conf(), conf(exact)).isDefined)
    assert(diff("csv", StructField("s", StringType), conf(), conf(exact)).isEmpty)
  }

  test("format, type, exact name and physical column") {
    val c = conf()
    assert(DecodingContext.difference("csv", col(c, "csv", id), "json", col(c, "json", id)).exists(_.contains("format differs")))
    assert(DecodingContext.difference("csv", col(c, "csv", id), "csv", col(c, "csv", StructField("id", LongType)))
      .exists(_.contains("type differs: built as INT, queried as BIGINT")))
    assert(DecodingContext.difference("csv", col(c, "csv", id), "csv", col(c, "csv", StructField("ID", IntegerType))).isDefined)
    def mapped(physical: String, fieldId: Long) = StructField("k", IntegerType, metadata = new MetadataBuilder()
      .putString("delta.columnMapping.physicalName", physical).putLong("delta.columnMapping.id", fieldId).build())
    val plain = col(c, "delta", StructField("k", IntegerType))
    // Column mapping turned on: an existing column keeps its name as physical name, and its values.
    assert(DecodingContext.difference("delta", plain, "delta", col(c, "delta", mapped("k", 1))).isEmpty)
    assert(DecodingContext.difference("delta", plain, "delta", col(c, "delta", mapped("col-9", 3)))
      .contains("k: another physical column: built from 'k', the table now reads 'col-9'"))
    assert(DecodingContext.difference("delta", col(c, "delta", mapped("col-1", 1)), "delta", col(c, "delta", mapped("col-1", 2)))
      .exists(_.contains("field id 1, now 2")))
  }

  test("unset settings without a default are recorded, not failed on") {
    val d = col(conf(), "csv", ts)
    assert(d.settings.contains(DecodingContext.CsvDateTimeFallback) && d.settings(DecodingContext.CsvDateTimeFallback) == "")
  }

  private def scan(format: String, schema: String, options: Map[String, String] = Map.empty, created: Option[Long] = None) =
    ScanSource(new files.FilesProvider, created.map(_ => "t"), format, Nil, options, StructType.fromDDL(schema), null, created)

  private def scanDiff(column: String, built: ScanSource, queried: ScanSource): Option[String] =
    DecodingContext.difference(built.format, built.decoding(conf(), column).get, queried.format, queried.decoding(conf(), column).get)

  test("CSV and ORC columns are read by position: another position is another column") {
    for (f <- Seq("csv", "orc")) {
      val built = scan(f, "c0 STRING, c1 STRING")
      assert(scanDiff("c0", built, scan(f, "c1 STRING, c0 STRING")).exists(_.contains("by position")), f)
      assert(scanDiff("c0", built, scan(f, "c0 STRING")).isEmpty, f)
      assert(scanDiff("c1", built, scan(f, "c0 STRING, c1 STRING, c2 STRING")).isEmpty, f)
    }
    // JSON and Parquet read by name.
    for (f <- Seq("json", "parquet")) assert(scanDiff("c0", scan(f, "c0 STRING, c1 STRING"), scan(f, "c1 STRING, c0 STRING")).isEmpty, f)
  }

  test("CSV's corrupt-record column takes no field of the line") {
    val built = scan("csv", "c0 STRING, c1 STRING")
    assert(scanDiff("c0", built, scan("csv", "_corrupt_record STRING, c0 STRING")).isEmpty)
    assert(scanDiff("c1", built, scan("csv", "c0 STRING, bad STRING, c1 STRING", Map("columnNameOfCorruptRecord" -> "bad"))).isEmpty)
    assert(scanDiff("c1", built, scan("csv", "c0 STRING, bad STRING, c1 STRING")).isDefined)
  }

  test("Avro's positionalFieldMatching never answers; a CSV index without positions answers once rebuilt") {
    val positional = Map("positionalFieldMatching" -> "true")
    val avro = scan("avro", "c0 STRING", positional)
    assert(scanDiff("c0", avro, avro).exists(_.contains("positionalFieldMatching")))
    assert(scanDiff("c0", scan("avro", "c0 STRING"), scan("avro", "c1 STRING, c0 STRING")).isEmpty)
    val old = scan("csv", "c0 STRING").decoding(conf(), "c0").get
    val oldBuilt = old.copy(physical = old.physical - DecodingContext.Position)
    assert(DecodingContext.difference("csv", oldBuilt, "csv", old).exists(_.contains("FULL")))
  }

  test("a catalog table created again is another table") {
    val built = scan("parquet", "a INT", created = Some(1L))
    assert(scanDiff("a", built, scan("parquet", "a INT", created = Some(2L))).exists(_.contains("created again")))
    assert(scanDiff("a", built, scan("parquet", "a INT", created = Some(1L))).isEmpty)
    // An index built before creation times were recorded is matched on its columns alone.
    assert(scanDiff("a", scan("parquet", "a INT"), scan("parquet", "a INT", created = Some(2L))).isEmpty)
  }

  test("an Iceberg column read through the table's name mapping needs the same names at query time") {
    val k = StructField("k", StringType, metadata = new MetadataBuilder().putLong(DecodingContext.ParquetFieldIdKey, 2L).build())
    def icebergScan(mapping: Option[Map[Int, Seq[String]]]) = {
      val root = new org.apache.hadoop.fs.Path("/warehouse/db/t")
      ScanSource(new iceberg.IcebergProvider, Some("local.db.t"), "iceberg", Seq(root), Map.empty, StructType(Seq(k)),
        new iceberg.IcebergFileIndex(root, () => Nil, Some("u"), () => mapping))
    }
    val built = icebergScan(Some(Map(1 -> Seq("id"), 2 -> Seq("k"))))
    assert(built.decoding(conf(), "k").get.physical.get(DecodingContext.NameMapping).contains("'k'"))
    assert(scanDiff("k", built, icebergScan(Some(Map(2 -> Seq("k"), 3 -> Seq("v"))))).isEmpty)
    // The mapping removed (Iceberg reads files without ids by position), a name added to the
    // column (a rename, a dropped column's name taken), the names gone.
    for (now <- Seq(None, Some(Map(2 -> Seq("b", "k"))), Some(Map(1 -> Seq("k"))))) {
      assert(scanDiff("k", built, icebergScan(now)).exists(_.contains("name mapping")), now)
    }
    // A build that read no file through the mapping records no names: the mapping is not its concern.
    val provider = new iceberg.IcebergProvider()
    val found = bloomindex.log.Decoding("iceberg", Seq(built.decoding(conf(), "k").get))
    val recorded = provider.withMappedNames(found, viaMapping = false, base = None)
    assert(!recorded.columns.head.physical.contains(DecodingContext.NameMapping))
    assert(DecodingContext.difference("iceberg", recorded.columns.head, "iceberg", icebergScan(None).decoding(conf(), "k").get).isEmpty)
    // Read through the mapping, or carrying rows of a version that was: recorded.
    assert(provider.withMappedNames(found, viaMapping = true, base = None) == found)
    assert(provider.withMappedNames(found, viaMapping = false, base = Some(found)) == found)
  }

  test("an Iceberg table created again (another table UUID, the same field ids) is another table") {
    val k = StructField("k", StringType, metadata = new MetadataBuilder().putLong(DecodingContext.ParquetFieldIdKey, 2L).build())
    def icebergScan(uuid: Option[String]) = {
      val root = new org.apache.hadoop.fs.Path("/warehouse/db/t")
      ScanSource(new iceberg.IcebergProvider, Some("local.db.t"), "iceberg", Seq(root), Map.empty, StructType(Seq(k)),
        new iceberg.IcebergFileIndex(root, () => Nil, uuid))
    }
    val built = icebergScan(Some("a"))
    assert(built.decoding(conf(), "k").get.physical == Map(DecodingContext.FieldId -> "2", DecodingContext.TableUuid -> "a"))
    assert(scanDiff("k", built, icebergScan(Some("b"))).exists(_.contains("created again")))
    assert(scanDiff("k", built, icebergScan(Some("a"))).isEmpty)
    // An index built before table UUIDs were recorded is matched on its field ids alone.
    assert(scanDiff("k", icebergScan(None), icebergScan(Some("b"))).isEmpty)
  }
  test("collated strings: keys computed with other ICU data, or data not recorded, are refused; plain strings record none") {
    val s = StructField("s", DataType.fromDDL("STRING COLLATE UNICODE_CI"))
    val now = DecodingContext.column(s, Map.empty, Map.empty, Map.empty)
    assert(now.physical.get(DecodingContext.KeysData).contains(s"icu-${com.ibm.icu.util.VersionInfo.ICU_VERSION}"))
    assert(DecodingContext.difference("parquet", now, "parquet", now).isEmpty)
    val other = now.copy(physical = now.physical + (DecodingContext.KeysData -> "icu-77.1.0.0"))
    assert(DecodingContext.difference("parquet", other, "parquet", now).exists(_.contains("computed with icu-77.1.0.0")))
    val unrecorded = now.copy(physical = now.physical - DecodingContext.KeysData)
    assert(DecodingContext.difference("parquet", unrecorded, "parquet", now).exists(_.contains("unrecorded version")))
    val lcase = DecodingContext.column(StructField("l", DataType.fromDDL("STRING COLLATE UTF8_LCASE")), Map.empty, Map.empty, Map.empty)
    assert(lcase.physical.contains(DecodingContext.KeysData))
    assert(!DecodingContext.column(StructField("b", StringType), Map.empty, Map.empty, Map.empty).physical.contains(DecodingContext.KeysData))
  }

  test("string columns record the CHAR comparison settings where not at their defaults") {
    val c = StructField("c", StringType)
    val legacy = "spark.sql.legacy.charVarcharAsString" -> "true"
    assert(!col(conf(), "csv", c).settings.keySet.exists(_.contains("char")))
    assert(diff("csv", c, conf(), conf(legacy)).exists(_.contains("spark.sql.legacy.charVarcharAsString")))
    assert(diff("parquet", c, conf(legacy), conf(legacy)).isEmpty)
    assert(diff("csv", id, conf(), conf(legacy)).isEmpty)
  }

  test("settings recorded where not at their defaults are not recorded at them (indexes built before keep answering)") {
    val d = StructField("d", DateType)
    val newer = Seq(DecodingContext.SecondOffsets, DecodingContext.LegacyXmlParser, DecodingContext.OrcPositional)
    // At the defaults, set or not, none of them is recorded, for any format and type.
    val defaults = conf(DecodingContext.SecondOffsets -> "TRUE", DecodingContext.LegacyXmlParser -> "false")
    for (c <- Seq(conf(), defaults); format <- Seq("csv", "json", "xml", "orc"); f <- Seq(ts, d, id)) {
      val recorded = col(c, format, f).settings.keySet
      assert(newer.forall(k => !recorded.contains(k)), s"$format ${f.dataType}: $recorded")
      if (format == "xml") assert(!recorded.contains(DecodingContext.TimeParserPolicy), s"xml ${f.dataType}: $recorded")
    }
    // An XML context as recorded before XML had rules of its own (any format's: case
    // sensitivity and the session zone) still answers at the defaults.
    val before = col(conf(), "xml", d).copy(settings = Map(DecodingContext.CaseSensitive -> "false",
      DecodingContext.SessionTimeZone -> "UTC"))
    assert(DecodingContext.difference("xml", before, "xml", col(conf(), "xml", d)).isEmpty)
    // Away from the defaults, recorded.
    assert(diff("xml", d, conf(), conf(DecodingContext.TimeParserPolicy -> "LEGACY")).exists(_.contains("differs")))
    assert(diff("xml", id, conf(), conf(DecodingContext.LegacyXmlParser -> "true")).exists(_.contains("useLegacyXMLParser")))
    assert(diff("json", ts, conf(), conf(DecodingContext.SecondOffsets -> "false")).exists(_.contains("supportSecondOffsetFormat")))
    assert(diff("orc", id, conf(), conf(DecodingContext.OrcPositional -> "true")).exists(_.contains(DecodingContext.OrcPositional)))
  }
}
