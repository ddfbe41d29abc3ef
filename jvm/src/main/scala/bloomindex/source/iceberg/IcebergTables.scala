package bloomindex.source.iceberg

import java.util.Locale

import scala.jdk.CollectionConverters._
import scala.util.Try
import scala.util.control.NonFatal

import bloomindex.errors.BloomIndexErrors
import bloomindex.log.{IndexLog, IndexSpec, LogEntry, SourceSpec}
import bloomindex.source.{DecodingContext, Relocation, ScanSource, SourceFile, SourceIdentity, SourceProvider, SourceProviders,
  SourceResolver, TableRename}

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.iceberg.{BaseScanTaskGroup, FileFormat, FileScanTask, ScanTask, ScanTaskGroup, Schema, TableProperties,
  Table => IcebergTable}
import org.apache.iceberg.mapping.{NameMapping, NameMappingParser}
import org.apache.iceberg.spark.{Spark3Util, SparkSchemaUtil}
import org.apache.iceberg.spark.source.SparkTable
import org.apache.iceberg.types.Type.TypeID
import org.apache.spark.internal.Logging
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.connector.catalog.{CatalogPlugin, TableCatalog}
import org.apache.spark.sql.connector.read.InputPartition
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.types.{DataType, MetadataBuilder, StructField, StructType}

/**
 * Everything that uses Iceberg's API (compile-only: Iceberg is on the class path only when the
 * session added it, see `bloomindex.configure(builder, iceberg=True)`). Only called once a plan
 * holds an Iceberg table ([[IcebergProvider]] recognises them by class name).
 *
 * An Iceberg table is identified by its location (catalog name or iceberg.`path` alike); its
 * files are those of a snapshot, from Iceberg's manifests (a table folder also holds files that
 * later snapshots removed); a data file is immutable, so path and size identify it. Columns are
 * identified by Iceberg field id: the schema handed to the catalog and the build carries each
 * field's id as Parquet field id metadata, which the decoding context records (a rename keeps
 * the id; a column dropped and added again gets a new one) and the build reads by.
 */
object IcebergTables extends Logging {

  val Format: String = IcebergProvider.Format
  /** Iceberg's type of a column, in the schema's field metadata. */
  val TypeKey = "iceberg.type"
  private val SupportedKey = "iceberg.indexable"
  /** Whether a column has an initial default (Iceberg v3: the value of files written before it was added). */
  private val InitialDefaultKey = "iceberg.initialDefault"

  /** Iceberg types a build reads with Spark's Parquet reader into the values Iceberg's reader gives. */
  private val Supported: Set[TypeID] = Set(TypeID.BOOLEAN, TypeID.INTEGER, TypeID.LONG, TypeID.FLOAT, TypeID.DOUBLE,
    TypeID.DECIMAL, TypeID.DATE, TypeID.TIMESTAMP, TypeID.STRING, TypeID.BINARY, TypeID.FIXED)

  /** Reader options of a build: Iceberg never rebases dates and timestamps. */
  val ReaderOptions: Map[String, String] = Map("datetimeRebaseMode" -> "CORRECTED", "int96RebaseMode" -> "CORRECTED")

  private def sparkTable(r: DataSourceV2Relation): SparkTable = r.table.asInstanceOf[SparkTable]

  /** The catalog name of the relation's table (catalog.namespace.table), or None for a path table. */
  def tableName(r: DataSourceV2Relation): Option[String] = {
    val t = sparkTable(r).table()
    val location = t.location()
    (r.catalog, r.identifier) match {
      case (Some(c), Some(id)) if id.name() != location && !id.name().contains("/") =>
        Some(qualifiedName(c, id))
      case _ => None
    }
  }

  /** The Spark schema of `t`'s current schema: field ids and Iceberg types in each field's metadata. */
  def sparkSchema(t: IcebergTable): StructType = sparkSchema(t.schema())

  /** The Spark schema of an Iceberg schema: field ids and Iceberg types in each field's metadata. */
  def sparkSchema(schema: Schema): StructType = StructType(schema.columns().asScala.toSeq.map { f =>
    val md = new MetadataBuilder()
      .putLong(DecodingContext.ParquetFieldIdKey, f.fieldId().toLong)
      .putString(TypeKey, f.`type`().toString)
      .putBoolean(SupportedKey, Supported.contains(f.`type`().typeId()))
      .putBoolean(InitialDefaultKey, initialDefaultOf(f))
      .build()
    StructField(f.name(), SparkSchemaUtil.convert(f.`type`()), f.isOptional, md)
  })

  /**
   * Whether the table was loaded `VERSION AS OF` / `TIMESTAMP AS OF` (Iceberg's `SparkTable`
   * pins every loaded table to a snapshot; only a time-travelled one records how).
   */
  private def isTimeTravel(t: SparkTable): Boolean =
    try {
      val f = classOf[SparkTable].getDeclaredField("timeTravel")
      f.setAccessible(true)
      f.get(t) != null
    } catch {
      case NonFatal(_) => Option(t.snapshotId()).exists(id => Option(t.table().currentSnapshot()).forall(_.snapshotId() != id))
    }

  /** The snapshot a relation reads: a time-travelled one, else the table's current one (None: empty table). */
  private def snapshotOf(r: DataSourceV2Relation): Option[Long] = {
    val st = sparkTable(r)
    Option(st.snapshotId()).map(_.longValue()).orElse(Option(st.table().currentSnapshot()).map(_.snapshotId()))
  }

  /**
   * The schema a scan of `st` reads its files with, or None when it cannot be told. Iceberg's
   * `SparkTable` pins one on load (its `schema` field): a snapshot's or tag's own schema for
   * time travel (`SnapshotUtil.schemaFor`), the table's current schema for the main branch and
   * for other branches. Read from the field, so it is the one Iceberg's scan builder gets; its
   * column names must be those the relation shows.
   */
  private[source] def readSchema(st: SparkTable): Option[Schema] = {
    val pinned = try {
      var c: Class[_] = st.getClass
      var found: Option[Schema] = None
      while (found.isEmpty && c != null && c != classOf[Object]) {
        c.getDeclaredFields.find(f => f.getName == "schema" && f.getType == classOf[Schema]).foreach { f =>
          f.setAccessible(true)
          found = Option(f.get(st).asInstanceOf[Schema])
        }
        c = c.getSuperclass
      }
      found
    } catch { case NonFatal(_) => None }
    pinned.filter(s => s.columns().asScala.map(_.name()).toSeq == st.columns().toSeq.map(_.name()))
  }

  /**
   * How the catalog sees a scan of `r`: the table's location, the schema the scan reads (with
   * its field ids: a snapshot's schema may give a column's name to another column) and the
   * data files of the snapshot it reads (listed on use). When the read schema cannot be told,
   * the scan shows no columns: no index answers for it.
   */
  def scanSource(provider: SourceProvider, r: DataSourceV2Relation): ScanSource = {
    val st = sparkTable(r)
    val t = st.table()
    val snapshot = snapshotOf(r)
    val root = new Path(t.location())
    val schema = readSchema(st).map(sparkSchema).getOrElse {
      IndexLog.warnOnce(s"bloomindex: the schema Iceberg reads ${tableName(r).getOrElse(t.location())} with " +
        "is unknown; no index is used for it")
      new StructType()
    }
    ScanSource(provider, tableName(r), Format, Seq(root), Map.empty, schema,
      new IcebergFileIndex(root, () => snapshot.map(dataFiles(t, _, tableName(r).getOrElse(t.location()))).getOrElse(Nil),
        uuidOf(t), () => mappedNamesOf(t)))
  }

  /**
   * The table's UUID, Iceberg's identity of a table (kept by renames and REPLACE; a table
   * dropped and created again has another), if its metadata has one.
   */
  def uuidOf(t: IcebergTable): Option[String] = try Option(t.uuid()).map(_.toString) catch { case NonFatal(_) => None }

  /** The table's name mapping (JSON), which Iceberg reads files without field ids by, if it has one. */
  def nameMappingOf(t: IcebergTable): Option[String] = Option(t.properties().get(TableProperties.DEFAULT_NAME_MAPPING))

  /**
   * Field id -> the names the table's name mapping gives it, sorted, at every level; None when
   * the table has no mapping. A mapping Iceberg cannot parse gives no field a name.
   */
  def mappedNamesOf(t: IcebergTable): Option[Map[Int, Seq[String]]] = nameMappingOf(t).map { json =>
    def all(fields: org.apache.iceberg.mapping.MappedFields): Seq[(Int, Seq[String])] =
      if (fields == null) Nil else fields.fields().asScala.toSeq.flatMap { f =>
        Option(f.id()).map(id => id.intValue -> f.names().asScala.toSeq.sorted).toSeq ++ all(f.nestedMapping())
      }
    try all(NameMappingParser.fromJson(json).asMappedFields()).toMap catch { case NonFatal(_) => Map.empty[Int, Seq[String]] }
  }

  // ---------------------------------------------------------------- writes

  private def identityOf(table: Option[String], t: IcebergTable): SourceIdentity =
    SourceIdentity.of(Format, table, Seq(t.location()))

  /** Who the table a V2 write wrote is (its location, and its catalog name when it has one). */
  def identity(r: DataSourceV2Relation): SourceIdentity = identityOf(tableName(r), sparkTable(r).table())

  /** Who the table a command named (TRUNCATE TABLE's `ResolvedTable`) is: as [[identity]] of a relation. */
  def identity(catalog: CatalogPlugin, ident: org.apache.spark.sql.connector.catalog.Identifier,
      table: org.apache.spark.sql.connector.catalog.Table): SourceIdentity =
    identityOf(nameOf(catalog, ident, table.asInstanceOf[SparkTable].table()), table.asInstanceOf[SparkTable].table())

  /**
   * The Iceberg table `catalog` holds as `ident` now (a REPLACE's table, loaded after it
   * committed), with its identity; None when it is not an Iceberg table or cannot be loaded.
   */
  def catalogTable(catalog: CatalogPlugin, ident: org.apache.spark.sql.connector.catalog.Identifier): Option[SourceIdentity] =
    load(catalog, ident).map(t => identityOf(nameOf(catalog, ident, t), t))

  /**
   * The rename of `table` (`ident` in `catalog`) to `newName` (as `ALTER TABLE ... RENAME TO`
   * spelled it), for a catalog table (a path table has no name to follow). Iceberg's
   * `SparkCatalog` drops a leading catalog name from the new name; both spellings are tried,
   * and only a table with the renamed table's UUID is taken for it.
   */
  def rename(catalog: CatalogPlugin, ident: org.apache.spark.sql.connector.catalog.Identifier,
      table: org.apache.spark.sql.connector.catalog.Table, newName: Seq[String]): Option[TableRename] = {
    val t = table.asInstanceOf[SparkTable].table()
    val uuid = uuidOf(t)
    nameOf(catalog, ident, t).filter(_ => uuid.isDefined && newName.nonEmpty).map { old =>
      val partitions = spec(t.spec(), t.schema())
      val candidates = (if (newName.size > 2 && newName.head.equalsIgnoreCase(catalog.name())) Seq(newName.tail) else Nil) :+ newName
      TableRename(old, () => candidates.iterator.flatMap { parts =>
        val id = org.apache.spark.sql.connector.catalog.Identifier.of(parts.init.toArray, parts.last)
        load(catalog, id).filter(n => uuidOf(n) == uuid).map { n =>
          SourceSpec(Some((catalog.name() +: parts).mkString(".")), Format, Seq(normalizedLocation(n)), Map.empty, partitions)
        }
      }.nextOption())
    }
  }

  /**
   * Where the catalog table of index `entry` is now, by the table UUID the index recorded
   * ([[DecodingContext.TableUuid]]): the table its recorded name loads when it has that UUID;
   * else (renamed by another engine: the name is gone, or names another table) the one table
   * with that UUID among the tables of the recorded name's namespace in the same catalog
   * (listed by the catalog, at most [[Relocation.MaxTables]] of them loaded; other namespaces
   * and catalogs are not searched). An index that recorded no UUID, or a name in a catalog this
   * session does not have, is only looked up by its name.
   */
  def relocate(spark: SparkSession, entry: LogEntry): Relocation = {
    val s = entry.spec.source
    val uuid = Relocation.recorded(entry, DecodingContext.TableUuid)
    val parts = s.table.flatMap(t => scala.util.Try(spark.sessionState.sqlParser.parseMultipartIdentifier(t)).toOption)
      .filter(p => p.size >= 3 && spark.conf.getOption(s"spark.sql.catalog.${p.head}").exists(_.startsWith("org.apache.iceberg.")))
    def byName: Relocation =
      if (Relocation.nameResolves(spark, s)) Relocation.Here
      else Relocation.Gone(s"no table ${s.display}")
    (uuid, parts) match {
      case (Some(id), Some(p)) =>
        val ci = try Spark3Util.catalogAndIdentifier(spark, p.asJava) catch { case NonFatal(_) => return byName }
        val (catalog, ident) = (ci.catalog(), ci.identifier())
        val named = load(catalog, ident)
        if (named.exists(t => uuidOf(t).contains(id))) return Relocation.Here
        val identity = s"table UUID $id"
        val tc = catalog match {
          case tc: TableCatalog => tc
          case _ => return byName
        }
        val ns = ident.namespace()
        val where = (catalog.name() +: ns.toSeq).mkString(".")
        val listed = try tc.listTables(ns).toSeq catch {
          case NonFatal(e) => return Relocation.Gone(s"namespace $where cannot be listed (${e.getMessage})")
        }
        Relocation.tooManyTables(s"namespace $where", listed.size).foreach(r => return r)
        val found = listed.filterNot(i => i.name() == ident.name() && i.namespace().sameElements(ns)).flatMap { i =>
          load(catalog, i).filter(t => uuidOf(t).contains(id)).map(i -> _)
        }
        found match {
          case Seq((i, t)) =>
            Relocation.Moved(SourceSpec(Some(qualifiedName(catalog, i)), Format,
              Seq(normalizedLocation(t)), Map.empty, spec(t.spec(), t.schema())), identity)
          case Seq() =>
            if (named.isDefined) Relocation.Here // another table under the name, none with the UUID: "created again"
            else Relocation.Gone(s"no table of namespace $where has its identity ($identity)")
          case many => Relocation.Ambiguous(many.map { case (i, _) => qualifiedName(catalog, i) }.sorted, identity)
        }
      case _ => byName
    }
  }

  private def spec(ps: org.apache.iceberg.PartitionSpec, schema: Schema): Seq[String] =
    ps.fields().asScala.toSeq.filter(_.transform().isIdentity).map(f => schema.findColumnName(f.sourceId()))

  /** catalog.namespace.table, as [[tableName]] gives it; None for a path table (its identifier is its location). */
  private def nameOf(catalog: CatalogPlugin, ident: org.apache.spark.sql.connector.catalog.Identifier,
      t: IcebergTable): Option[String] =
    if (ident.name() == t.location() || ident.name().contains("/")) None else Some(qualifiedName(catalog, ident))

  /** catalog.namespace.table of `ident` in `catalog`. */
  private def qualifiedName(catalog: CatalogPlugin, ident: org.apache.spark.sql.connector.catalog.Identifier): String =
    (catalog.name() +: ident.namespace().toSeq :+ ident.name()).mkString(".")

  /** The Iceberg table of `catalog` named `ident`, if it is one (any failure to load it: None). */
  private def load(catalog: CatalogPlugin, ident: org.apache.spark.sql.connector.catalog.Identifier): Option[IcebergTable] =
    catalog match {
      case tc: TableCatalog =>
        try tc.loadTable(ident) match {
          case st: SparkTable => Some(st.table())
          case _ => None
        } catch { case NonFatal(_) => None }
      case _ => None
    }

  /**
   * The table an Iceberg procedure of `catalog` was called on, named `name` (its `table`
   * argument), resolved as Iceberg's procedures resolve it: a name in another catalog than the
   * procedure's is refused by the procedure, so none is looked for there.
   */
  def procedureTable(spark: SparkSession, catalog: CatalogPlugin, name: String): Option[SourceIdentity] = {
    val resolved = try Some(Spark3Util.catalogAndIdentifier("table", spark, name, catalog)) catch { case NonFatal(_) => None }
    resolved.filter(_.catalog() eq catalog).flatMap { ci =>
      load(ci.catalog(), ci.identifier()).map { t =>
        identityOf(Some(qualifiedName(catalog, ci.identifier())), t)
      }
    }
  }

  /**
   * The Iceberg table a streaming sink described as `description` writes: a location (a path
   * table; an Iceberg table has its `metadata` folder there), or a catalog table's name as
   * Iceberg gives it (`<catalog>.<namespace>...<table>`, the catalog one of Iceberg's that the
   * session has: looked up only then).
   */
  def sinkTable(spark: SparkSession, description: String): Option[SourceIdentity] = {
    val looksLikePath = description.startsWith("/") || description.matches("^[A-Za-z][A-Za-z0-9+.-]*:/.*")
    if (looksLikePath) {
      val path = new Path(description)
      val fs = path.getFileSystem(spark.sessionState.newHadoopConf())
      if (fs.exists(new Path(path, "metadata"))) Some(SourceIdentity.of(Format, None, Seq(description)))
      else None
    } else {
      val parts = try spark.sessionState.sqlParser.parseMultipartIdentifier(description) catch { case NonFatal(_) => return None }
      val known = parts.size >= 2 &&
        spark.conf.getOption(s"spark.sql.catalog.${parts.head}").exists(_.startsWith("org.apache.iceberg."))
      if (!known) None
      else {
        val ci = Spark3Util.catalogAndIdentifier(spark, parts.asJava)
        load(ci.catalog(), ci.identifier()).map(identityOf(Some(parts.mkString(".")), _))
      }
    }
  }

  /** The data files of snapshot `id` (Parquet only), from the table's manifests. */
  def dataFiles(t: IcebergTable, id: Long, what: String): Seq[SourceFile] = {
    val tasks = t.newScan().useSnapshot(id).planFiles()
    try tasks.asScala.toSeq.map { task =>
      val f = task.file()
      if (f.format() != FileFormat.PARQUET) throw IcebergErrors.fileFormat(what, f.format().toString, f.location())
      SourceFile(SourceResolver.normalize(new Path(f.location())), f.fileSizeInBytes(), 0L)
    }.distinct finally tasks.close()
  }

  // ---------------------------------------------------------------- resolving what a user names

  private def quotedPath(path: String): String = s"${Format}.`${path.replace("`", "``")}`"

  /** The Iceberg relation of a DataFrame, or why it is none (metadata tables, views). */
  def relationOf(df: DataFrame, what: String): Option[DataSourceV2Relation] = {
    val rels = df.queryExecution.analyzed.collect { case r: DataSourceV2Relation => r }
    rels.find(r => IcebergProvider.isIcebergTable(r.table) && sparkTable(r).table().isInstanceOf[org.apache.iceberg.BaseMetadataTable])
      .foreach { r =>
        throw IcebergErrors.notIndexable(what, s"it is Iceberg's metadata table ${r.table.name()}, not a table of data files")
      }
    rels.find(r => IcebergProvider.isIcebergTable(r.table)).orElse {
      rels.headOption.filter(_.table.getClass.getName.startsWith("org.apache.iceberg.")).foreach { r =>
        throw IcebergErrors.notIndexable(what, s"it is Iceberg's metadata table ${r.table.name()}, not a table of data files")
      }
      None
    }
  }

  /** `iceberg.`path``: a table Iceberg's data source reads from a folder. */
  def resolvePath(spark: SparkSession, path: String): (SourceSpec, DataFrame) = {
    SourceProviders.requireExists(spark, new Path(path))
    val df = try spark.read.format(Format).load(path) catch {
      case e: ClassNotFoundException => throw IcebergErrors.unavailable(quotedPath(path))
      case NonFatal(e) if e.getMessage != null && e.getMessage.contains("Failed to find the data source") =>
        throw IcebergErrors.unavailable(quotedPath(path))
    }
    val r = relationOf(df, quotedPath(path)).getOrElse(throw BloomIndexErrors.unsupportedSource(quotedPath(path)))
    (spec(r, None), df)
  }

  /** A catalog table (or a DataFrame over one) whose relation is Iceberg's. */
  def resolveRelation(r: DataSourceV2Relation): SourceSpec = spec(r, tableName(r))

  private def spec(r: DataSourceV2Relation, table: Option[String]): SourceSpec = {
    val t = sparkTable(r)
    if (isTimeTravel(t)) {
      throw IcebergErrors.notIndexable(table.getOrElse(t.table().location()),
        s"it names snapshot ${t.snapshotId()} (time travel); an index follows the table's current snapshot")
    }
    val partitions = t.table().spec().fields().asScala.toSeq
      .filter(_.transform().isIdentity).map(f => t.table().schema().findColumnName(f.sourceId()))
    SourceSpec(table, Format, Seq(normalizedLocation(t.table())), Map.empty, partitions)
  }

  private def normalizedLocation(t: IcebergTable): String = SourceResolver.normalize(new Path(t.location()))

  /**
   * A DataFrame over the source. A catalog table is not refreshed here (`refreshTable` would
   * drop the table object Iceberg's caching catalog keeps, which every query and write of the
   * session shares, from another thread too: a write committing meanwhile through the dropped
   * object would leave the session reading an older snapshot); what reads the newest snapshot
   * loads a table object of its own ([[ownTable]]).
   */
  def dataFrame(spark: SparkSession, s: SourceSpec): DataFrame = s.table match {
    case Some(t) => spark.table(t)
    case None => spark.read.format(Format).load(s.paths.head)
  }

  private val PathIdentifierClass = "org.apache.iceberg.spark.PathIdentifier"

  /**
   * The Iceberg catalog under the Spark catalog `c` (Iceberg's `SparkCatalog` or
   * `SparkSessionCatalog`), without its cache: the catalog Iceberg's `CachingCatalog` wraps.
   */
  private def uncachedCatalog(c: CatalogPlugin): Option[org.apache.iceberg.catalog.Catalog] = {
    val iceberg = try Option(c.getClass.getMethod("icebergCatalog").invoke(c)) catch { case NonFatal(_) => None }
    iceberg.flatMap {
      case cc: org.apache.iceberg.CachingCatalog =>
        try {
          val f = classOf[org.apache.iceberg.CachingCatalog].getDeclaredField("catalog")
          f.setAccessible(true)
          Option(f.get(cc)).collect { case cat: org.apache.iceberg.catalog.Catalog => cat }
        } catch { case NonFatal(_) => None }
      case cat: org.apache.iceberg.catalog.Catalog => Some(cat)
      case _ => None
    }
  }

  /**
   * `r`'s table at its newest snapshot, as an object of its own that nothing else holds: a
   * catalog table loaded anew from the catalog under the session's cache (see [[dataFrame]];
   * refreshing the shared object from another thread while a write commits through it could
   * leave it at the older snapshot), a path table as Iceberg's source loaded it (anew, for this
   * DataFrame), refreshed. When no catalog under the cache can be reached, the shared object
   * as it is, not refreshed (an index built from it may be behind the newest snapshot: the
   * files it does not cover are read whole).
   */
  private def ownTable(r: DataSourceV2Relation): IcebergTable = {
    val shared = sparkTable(r).table()
    (r.catalog, r.identifier) match {
      case (Some(c), Some(id)) if id.getClass.getName != PathIdentifierClass =>
        uncachedCatalog(c).flatMap { cat =>
          try Some(cat.loadTable(Spark3Util.identifierToTableIdentifier(id))) catch { case NonFatal(_) => None }
        }.getOrElse {
          IndexLog.warnOnce(s"bloomindex: Iceberg table ${tableName(r).getOrElse(shared.location())}: its catalog " +
            "could not be read without its cache; indexes are built from the snapshot the session sees")
          shared
        }
      case _ =>
        shared.refresh()
        shared
    }
  }

  /**
   * The table's current snapshot: a relation the build reads its files with (Parquet, columns by
   * field id), its data files, and its id. Refuses indexed columns of a type a build cannot read
   * as Iceberg does.
   */
  def snapshot(spark: SparkSession, s: SourceSpec, frame: Option[DataFrame]): (HadoopFsRelation, Seq[SourceFile], Option[Long]) = {
    val df = frame.getOrElse(dataFrame(spark, s))
    val r = relationOf(df, s.display).getOrElse(throw BloomIndexErrors.sourceChanged(s.display))
    val t = ownTable(r)
    val snapshot = Option(t.currentSnapshot()).map(_.snapshotId())
    val files = snapshot.map(dataFiles(t, _, s.display)).getOrElse(Nil)
    (relation(spark, t, files), files, snapshot)
  }

  /**
   * The relation a build reads `files` of `t` with: Spark's Parquet reader, columns by field id
   * (files without ids: see [[readable]]), with the table's name mapping at hand.
   */
  def relation(spark: SparkSession, t: IcebergTable, files: Seq[SourceFile]): HadoopFsRelation = {
    val root = new Path(t.location())
    val mapping = nameMappingOf(t)
    HadoopFsRelation(new IcebergFileIndex(root, () => files, uuidOf(t), () => mappedNamesOf(t)), new StructType(), sparkSchema(t), None,
      new IcebergParquetFormat(mapping, Map.empty), ReaderOptions)(spark)
  }

  /**
   * What a build of `files` reads, and the relation it reads them with. Iceberg reads a data
   * file that carries field ids by them; one that carries none (imported: `add_files`,
   * `migrate`, `snapshot`) through the table's name mapping, each file column taking the field
   * id of the mapped field its name is one of (the names a column had: a rename adds one). So
   * when the table has a name mapping, the files' footers are read first (a Spark job), and
   * each file without ids is read by the name of its column the mapping gives each indexed
   * column's field id. A file where that is not exactly one column (none: Iceberg would read
   * nulls or a default; several; or one whose name differs from another's only in case) is
   * left out of the index, with a warning: queries read it in full. Without a name mapping
   * (removed by hand), a file without ids is left out the same way: Iceberg reads it by
   * fallback ids in column order, which no name says. A file whose footer makes Spark's reader
   * rebase dates and timestamps (written by a Spark before 3.1 or in legacy mode: Spark takes
   * the mode from the file, not the session) is left out when a date or timestamp column is
   * indexed: Iceberg reads its values as stored.
   */
  def readable(spark: SparkSession, spec: IndexSpec, relation: HadoopFsRelation,
      files: Seq[SourceFile]): (HadoopFsRelation, Seq[SourceFile]) = relation.fileFormat match {
    case f: IcebergParquetFormat if files.nonEmpty =>
      val mapping = f.nameMapping.map(NameMappingParser.fromJson)
      val ids = spec.columns.map(_.sourceName).distinct.map { c =>
        c -> relation.dataSchema.fields.find(_.name == c)
          .filter(_.metadata.contains(DecodingContext.ParquetFieldIdKey))
          .map(_.metadata.getLong(DecodingContext.ParquetFieldIdKey).toInt)
      }
      val datetimes = spec.columns.exists(c => Try(DataType.fromDDL(c.dataType)).toOption.exists(DecodingContext.isDatetime))
      val columns = IcebergParquetFormat.survey(spark, files)
      val resolved = files.flatMap { file =>
        columns.get(file.path).flatMap { c =>
          if (datetimes && c.rebased) {
            Some(file.path -> Left("Spark's reader would rebase its dates and timestamps (its footer says a Spark " +
              "before 3.1 or in legacy mode wrote it), which Iceberg reads as stored"))
          } else if (c.hasIds) None
          else Some(file.path -> mapping.fold[Either[String, Map[String, String]]](
            Left("it carries no field ids and the table has no name mapping (Iceberg reads it by position)"))(
            byMapping(_, ids, c.names)))
        }
      }
      val left = resolved.collect { case (p, Left(why)) => p -> why }
      if (left.nonEmpty) {
        logWarning(s"Bloom index ${spec.name}: ${left.size} of ${files.size} files of ${spec.source.display} cannot " +
          s"be read as Iceberg reads them; they are not indexed (queries read them in full): " +
          left.take(3).map { case (p, why) => s"$p: $why" }.mkString("; "))
      }
      val renames = resolved.collect { case (p, Right(r)) => p -> r }.toMap
      val skipped = left.map(_._1).toSet
      (relation.copy(fileFormat = f.withRenames(renames))(relation.sparkSession), files.filterNot(x => skipped(x.path)))
    case _ => (relation, files)
  }

  /**
   * For a file without field ids whose top-level columns are `names`: the column each indexed
   * column (name, field id) is read from, by Iceberg's name mapping; or why none can be.
   */
  private def byMapping(mapping: NameMapping, ids: Seq[(String, Option[Int])],
      names: Seq[String]): Either[String, Map[String, String]] = {
    val idOf = names.map(n => n -> Option(mapping.find(Seq(n): _*)).flatMap(m => Option(m.id())).map(_.intValue)).toMap
    val out = ids.map { case (column, id) =>
      val fieldId = id.getOrElse(return Left(s"column $column has no field id"))
      names.filter(n => idOf(n).contains(fieldId)) match {
        case Seq(one) if names.count(_.equalsIgnoreCase(one)) == 1 => column -> one
        case Seq(one) => return Left(s"its column $one (for $column) differs from another of its columns only in case")
        case Seq() => return Left(s"the name mapping maps none of its columns to $column (field id $fieldId)")
        case many => return Left(s"the name mapping maps several of its columns to $column: ${many.mkString(", ")}")
      }
    }
    Right(out.toMap)
  }

  /** The current relation of the source, for a refresh's decoding check. */
  def currentRelation(spark: SparkSession, s: SourceSpec): HadoopFsRelation = {
    val r = relationOf(dataFrame(spark, s), s.display).getOrElse(throw BloomIndexErrors.sourceChanged(s.display))
    relation(spark, ownTable(r), Nil)
  }

  /**
   * Refuses an indexed column whose Iceberg type a build cannot read as Iceberg does, or that has
   * an initial default ([[hasInitialDefault]]).
   */
  def checkColumnType(field: StructField, source: String): Unit = {
    if (field.metadata.contains(TypeKey)) {
      if (!field.metadata.getBoolean(SupportedKey)) {
        throw IcebergErrors.columnType(field.name, source, field.metadata.getString(TypeKey))
      }
    }
    if (hasInitialDefault(field)) throw IcebergErrors.initialDefault(field.name, source)
  }

  /**
   * Whether the column has an initial default: Iceberg reads it as that value from data files
   * written before the column was added, where a build reading by field id finds no column
   * (null). An Iceberg without defaults (before 1.8) has none.
   */
  def hasInitialDefault(field: StructField): Boolean =
    field.metadata.contains(InitialDefaultKey) && field.metadata.getBoolean(InitialDefaultKey)

  private def initialDefaultOf(f: org.apache.iceberg.types.Types.NestedField): Boolean =
    try f.initialDefault() != null catch { case _: NoSuchMethodError => false }

  // ---------------------------------------------------------------- scan tasks (pruning)

  private def taskGroup(p: InputPartition): Option[ScanTaskGroup[ScanTask]] =
    try {
      val m = p.getClass.getMethod("taskGroup")
      m.setAccessible(true)
      Some(m.invoke(p).asInstanceOf[ScanTaskGroup[ScanTask]])
    } catch { case NonFatal(_) => None }

  /** The data files one input partition of an Iceberg scan reads, or None when it is not only data files. */
  def partitionFiles(p: InputPartition): Option[Seq[FileStatus]] = taskGroup(p).flatMap { g =>
    val tasks = g.tasks().asScala.toSeq
    if (!tasks.forall(_.isFileScanTask)) None
    else Some(tasks.map { t =>
      val f = t.asFileScanTask().file()
      new FileStatus(f.fileSizeInBytes(), false, 1, 0L, 0L, new Path(f.location()))
    })
  }

  /**
   * `p` without the tasks of `skipped` files (normalized paths): the same partition when it
   * keeps them all, None when it keeps none. The partition object is copied field by field
   * (Iceberg's `SparkInputPartition` has no public constructor) with a task group of the kept
   * tasks; the grouping key stays.
   */
  def prunePartition(p: InputPartition, skipped: bloomindex.catalog.SkippedFiles): Option[InputPartition] = {
    // A copy that reads only some files (beside the scan as planned, which reads the rest and
    // every other task) keeps their file tasks alone, and must narrow every partition.
    val only = skipped.isInstanceOf[bloomindex.catalog.SkippedFiles.AllBut]
    val group = taskGroup(p).getOrElse {
      if (only) throw new IllegalStateException(s"an Iceberg input partition of ${p.getClass.getName} cannot be narrowed")
      return Some(p)
    }
    val tasks = group.tasks().asScala.toSeq
    def skips(t: ScanTask) = skipped.contains(SourceResolver.normalize(new Path(t.asFileScanTask().file().location())))
    val kept = if (only) tasks.filter(t => t.isFileScanTask && !skips(t)) else tasks.filterNot(t => t.isFileScanTask && skips(t))
    if (kept.size == tasks.size) Some(p)
    else if (kept.isEmpty) None
    else {
      val newGroup: ScanTaskGroup[ScanTask] = new BaseScanTaskGroup[ScanTask](group.groupingKey(), kept.asJava)
      Some(copyWith(p, newGroup))
    }
  }

  private lazy val unsafe: sun.misc.Unsafe = {
    val f = classOf[sun.misc.Unsafe].getDeclaredField("theUnsafe")
    f.setAccessible(true)
    f.get(null).asInstanceOf[sun.misc.Unsafe]
  }

  private def copyWith(p: InputPartition, group: ScanTaskGroup[ScanTask]): InputPartition = {
    val cls = p.getClass
    val copy = unsafe.allocateInstance(cls)
    var c: Class[_] = cls
    var replaced = false
    while (c != null && c != classOf[Object]) {
      c.getDeclaredFields.filterNot(f => java.lang.reflect.Modifier.isStatic(f.getModifiers)).foreach { f =>
        f.setAccessible(true)
        if (classOf[ScanTaskGroup[_]].isAssignableFrom(f.getType)) { f.set(copy, group); replaced = true }
        else f.set(copy, f.get(p))
      }
      c = c.getSuperclass
    }
    if (!replaced) throw new IllegalStateException(s"no task group field in ${cls.getName}")
    copy.asInstanceOf[InputPartition]
  }

  /** Whether a task is a data file scan of a Parquet file (the others are never pruned). */
  def isParquet(t: FileScanTask): Boolean = t.file().format().toString.toLowerCase(Locale.ROOT) == "parquet"
}
