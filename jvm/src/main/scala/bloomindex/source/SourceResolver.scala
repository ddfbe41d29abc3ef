package bloomindex.source

import java.util.Locale

import bloomindex.errors.BloomIndexErrors
import bloomindex.log.{Decoding, IndexSpec, SourceSpec}

import org.apache.hadoop.fs.Path
import org.apache.spark.paths.SparkPath
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.execution.datasources.{FileStatusCache, HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.StructType

/** A file of a source, identified by path + size + modification time. */
case class SourceFile(path: String, size: Long, modificationTime: Long)

/** Turns what a user names (a table, `format.`path``, a DataFrame) into files and a reader. */
object SourceResolver {

  /** Formats `format.`path`` may name. */
  val PathFormats: Set[String] = Set("parquet", "orc", "csv", "json", "avro", "text")

  /** The canonical form of a file path, as both listings and `_metadata.file_path` map to it. */
  def normalize(path: String): String = SparkPath.fromUrlString(path).toPath.toString

  def normalize(path: Path): String = path.toString

  def resolve(spark: SparkSession, ref: SourceRef): SourceSpec = resolveFrame(spark, ref)._1

  /**
   * The source and a DataFrame over it, as of now: a command that builds right after resolving
   * passes the frame on, so that the source's schema is not inferred again.
   */
  def resolveFrame(spark: SparkSession, ref: SourceRef): (SourceSpec, DataFrame) = {
    val parts = ref.parts
    // delta.`path` first: Delta's catalog also answers to it as a table name.
    if (parts.size == 2 && parts.head.toLowerCase(Locale.ROOT) == DeltaSource.Format) {
      val delta = DeltaSource.resolvePath(spark, parts(1))
      return (delta, DeltaSource.dataFrame(spark, delta.paths.head))
    }
    if (parts.size == 2 && parts.head.toLowerCase(Locale.ROOT) == IcebergFiles.Format &&
        !scala.util.Try(spark.catalog.tableExists(quoted(parts))).getOrElse(false)) {
      return IcebergTables.resolvePath(spark, parts(1))
    }
    val asTable = parts.size <= 3 && scala.util.Try(spark.catalog.tableExists(quoted(parts))).getOrElse(false)
    if (!asTable && parts.size == 2 && PathFormats.contains(parts.head.toLowerCase(Locale.ROOT))) {
      resolvePathFrame(spark, parts.head.toLowerCase(Locale.ROOT), parts(1))
    } else if (!asTable) {
      // An Iceberg metadata table (t.files, t.snapshots, ...) is no table to the catalog: refused by name.
      // So is a view of Iceberg's catalogs (a query over tables): refused by name too.
      scala.util.Try(spark.table(quoted(parts))).toOption.foreach(df => iceberg(df, ref.sql, named = true))
      throw BloomIndexErrors.sourceNotFound(ref.sql)
    } else resolveTableFrame(spark, parts)
  }

  private def quoted(parts: Seq[String]): String = parts.map(p => s"`${p.replace("`", "``")}`").mkString(".")

  def resolveTable(spark: SparkSession, parts: Seq[String]): SourceSpec = resolveTableFrame(spark, parts)._1

  def resolveTableFrame(spark: SparkSession, parts: Seq[String]): (SourceSpec, DataFrame) = {
    spark.catalog.refreshTable(quoted(parts))
    val df = spark.table(quoted(parts))
    iceberg(df, quoted(parts), named = true).foreach(s => return (s, df))
    val rel = relation(df, quoted(parts))
    val qualified = df.queryExecution.analyzed.collectFirst {
      case l: LogicalRelation if l.catalogTable.isDefined => l.catalogTable.get.identifier
    }.map(_.unquotedString).getOrElse(parts.mkString("."))
    if (DeltaSource.isDeltaRelation(rel)) (DeltaSource.resolveTable(spark, qualified, rel), df)
    else (spec(Some(qualified), rel), df)
  }

  def resolvePath(spark: SparkSession, format: String, path: String): SourceSpec = resolvePathFrame(spark, format, path)._1

  def resolvePathFrame(spark: SparkSession, format: String, path: String): (SourceSpec, DataFrame) = {
    if (!PathFormats.contains(format)) throw BloomIndexErrors.unsupportedFormat(format, PathFormats.toSeq)
    val p = new Path(path)
    val fs = p.getFileSystem(spark.sessionState.newHadoopConf())
    if (!fs.exists(p)) throw BloomIndexErrors.pathNotFound(path)
    FileStatusCache.getOrCreate(spark).invalidateAll()
    val df = spark.read.format(format).load(path)
    (spec(None, relation(df, s"$format.`$path`")), df)
  }

  /** A DataFrame that reads files directly: its relation's roots, format and options. */
  def resolveDataFrame(df: DataFrame): SourceSpec = {
    iceberg(df, "the DataFrame").foreach(s => return s)
    val rel = relation(df, "the DataFrame")
    val table = df.queryExecution.analyzed.collectFirst {
      case l: LogicalRelation if l.catalogTable.isDefined => l.catalogTable.get.identifier.unquotedString
    }
    if (!DeltaSource.isDeltaRelation(rel)) spec(table, rel)
    else DeltaSource.resolveTable(df.sparkSession, table.getOrElse("the DataFrame"), rel).copy(table = table)
  }

  /**
   * An Iceberg table's source, when `df` reads one (Iceberg's classes are touched only then);
   * an Iceberg view or metadata table is refused.
   */
  private def iceberg(df: DataFrame, what: String, named: Boolean = false): Option[SourceSpec] = {
    val plan = df.queryExecution.analyzed
    val v2 = plan.collect { case r: org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation => r }
    if (v2.isEmpty) return None
    val icebergish = v2.filter(_.table.getClass.getName.startsWith("org.apache.iceberg."))
    if (icebergish.isEmpty) return None
    if (plan.collectFirst { case v: org.apache.spark.sql.catalyst.plans.logical.View => v }.isDefined ||
        plan.exists(_.getClass.getSimpleName.contains("View"))) {
      throw BloomIndexErrors.icebergNotIndexable(what, "it is a view, not a table of data files")
    }
    // A name that reads a query over tables rather than one table is a view (Iceberg's views
    // resolve to their query under an alias, without Spark's View node).
    def unaliased(p: org.apache.spark.sql.catalyst.plans.logical.LogicalPlan): org.apache.spark.sql.catalyst.plans.logical.LogicalPlan =
      p match {
        case a: org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias => unaliased(a.child)
        case other => other
      }
    if (named && !unaliased(plan).isInstanceOf[org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation]) {
      IcebergTables.relationOf(df, what) // a metadata table is named as such
      throw BloomIndexErrors.icebergNotIndexable(what, "it is a view (a query over tables), not a table of data files")
    }
    IcebergTables.relationOf(df, what).map { r =>
      if (v2.size > 1) throw BloomIndexErrors.multipleRelations(what)
      IcebergTables.resolveRelation(r)
    }
  }

  private def spec(table: Option[String], rel: HadoopFsRelation): SourceSpec = {
    val format = rel.fileFormat match {
      case r: DataSourceRegister => r.shortName()
      case other => throw BloomIndexErrors.unsupportedFileFormat(other.getClass.getName)
    }
    SourceSpec(table, format, rel.location.rootPaths.map(_.toString),
      rel.options.filter { case (k, _) => k != "path" && k != "paths" },
      rel.partitionSchema.fieldNames.toSeq)
  }

  def relation(df: DataFrame, what: String): HadoopFsRelation = {
    val rels = df.queryExecution.analyzed.collect { case LogicalRelation(r: HadoopFsRelation, _, _, _, _) => r }
    rels match {
      case Seq(r) => r
      case Seq() => throw BloomIndexErrors.unsupportedSource(what)
      case _ => throw BloomIndexErrors.multipleRelations(what)
    }
  }

  /** A fresh DataFrame over the source (new listing: files added since are seen). */
  def dataFrame(spark: SparkSession, s: SourceSpec): DataFrame = s.table match {
    case _ if s.format == DeltaSource.Format => DeltaSource.dataFrame(spark, s.paths.head)
    case _ if s.format == IcebergFiles.Format => IcebergTables.dataFrame(spark, s)
    case Some(t) =>
      spark.catalog.refreshTable(t)
      spark.table(t)
    case None =>
      // Path reads share the session's file status cache: drop it so deletes are seen.
      FileStatusCache.getOrCreate(spark).invalidateAll()
      spark.read.format(s.format).options(s.options).load(s.paths: _*)
  }

  /**
   * The scan a new query of `s` makes in this session, with a fresh listing, for checks made
   * while a query is analysed (no cache is dropped: `refreshTable` would uncache the table).
   */
  def currentScan(spark: SparkSession, s: SourceSpec): ScanSource = {
    val df = s.table match {
      case Some(t) if s.format != DeltaSource.Format && s.format != IcebergFiles.Format => spark.table(t)
      case _ => dataFrame(spark, s)
    }
    val scan = df.queryExecution.analyzed.collectLeaves().flatMap(SourceProviders.describe).headOption.getOrElse(
      throw BloomIndexErrors.sourceChanged(s.display))
    scan.index.refresh()
    scan
  }

  /** How the catalog describes a scan of `rel`, a relation over source `s`. */
  def scanOf(spark: SparkSession, s: SourceSpec, rel: HadoopFsRelation): ScanSource =
    if (s.format == DeltaSource.Format) DeltaProvider.of(rel, s.table)
    else if (s.format == IcebergFiles.Format) {
      ScanSource(IcebergFiles.Format, s.table, IcebergFiles.Format, rel.location.rootPaths, Map.empty, rel.dataSchema, rel.location)
    } else FileRelationProvider.of(rel, s.table.flatMap(catalogTable(spark, _))).copy(table = s.table)

  /** The session catalog's entry of table `name` (a qualified name as a [[SourceSpec]] records it), if it has one. */
  def catalogTable(spark: SparkSession, name: String): Option[CatalogTable] =
    scala.util.Try(spark.sessionState.sqlParser.parseMultipartIdentifier(name)).toOption.flatMap {
      case Seq(t) => Some(TableIdentifier(t))
      case Seq(db, t) => Some(TableIdentifier(t, Some(db)))
      case Seq(catalog, db, t) => Some(TableIdentifier(t, Some(db), Some(catalog)))
      case _ => None
    }.flatMap(id => scala.util.Try(spark.sessionState.catalog.getTableMetadata(id)).toOption)

  /**
   * Runs a build of `s`'s files: for Iceberg with Spark's Parquet reader matching columns by
   * field id (a renamed column is read from files written under its old name, a column added
   * later reads as null from older files) and never rebasing dates. These are session settings
   * (Spark's Parquet reader takes them from the session, not from reader options), set for the
   * build and put back after; they change nothing for a query whose schema carries no field ids.
   */
  def buildScope[T](spark: SparkSession, s: SourceSpec)(body: => T): T =
    if (s.format != IcebergFiles.Format) body
    else {
      val settings = Seq(DecodingContext.ParquetFieldIds -> "true", DecodingContext.ParquetRebase -> "CORRECTED",
        DecodingContext.ParquetInt96Rebase -> "CORRECTED")
      val conf = spark.sessionState.conf
      val before = settings.map { case (k, _) => k -> (if (conf.contains(k)) Some(conf.getConfString(k)) else None) }
      settings.foreach { case (k, v) => conf.setConfString(k, v) }
      try body finally before.foreach {
        case (k, Some(v)) => conf.setConfString(k, v)
        case (k, None) => conf.unsetConf(k)
      }
    }

  /**
   * What a build of `files` of `spec`'s source reads, and the relation it reads them with: as
   * they are, except Iceberg files without field ids, read by the table's name mapping or left
   * out ([[IcebergTables.readable]]).
   */
  def readable(spark: SparkSession, spec: IndexSpec, rel: HadoopFsRelation,
      files: Seq[SourceFile]): (HadoopFsRelation, Seq[SourceFile]) =
    if (spec.source.format == IcebergFiles.Format) IcebergTables.readable(spark, spec, rel, files) else (rel, files)

  /** The source's relation as a query would read it now (for a refresh's decoding check). */
  def currentRelation(spark: SparkSession, s: SourceSpec, frame: Option[DataFrame]): HadoopFsRelation =
    if (s.format == IcebergFiles.Format) IcebergTables.currentRelation(spark, s)
    else relation(frame.getOrElse(dataFrame(spark, s)), s.display)

  /**
   * How `rel` (a relation over `spec`'s source, as a build reads it) decodes each indexed
   * column in this session: what the build records. A Delta column stored under another
   * physical name (column mapping) cannot be read by name, and is refused.
   */
  def decoding(spark: SparkSession, spec: IndexSpec, rel: HadoopFsRelation): Decoding = {
    val scan = scanOf(spark, spec.source, rel)
    Decoding(scan.format, spec.columns.map { c =>
      val d = scan.decoding(spark.sessionState.conf, c.name).getOrElse(throw BloomIndexErrors.sourceColumnGone(
        c.name, spec.name, spec.source.display, rel.dataSchema.fieldNames.toSeq))
      if (scan.isIceberg) rel.dataSchema.fields.find(_.name == c.name).foreach { f =>
        IcebergTables.checkColumnType(f, spec.source.display)
        // The index's column type is fixed at CREATE; a widened Iceberg column (int to long, ...)
        // would be read as the new type and hashed as the old one.
        if (f.dataType.sql != c.dataType) {
          throw BloomIndexErrors.sourceColumnTypeChanged(c.name, spec.name, spec.source.display, c.dataType, f.dataType.sql)
        }
      }
      d.physical.get("physicalName").filter(_ != c.name).foreach { p =>
        throw BloomIndexErrors.physicalColumnName(c.name, spec.source.display, p, spec.name)
      }
      d
    })
  }

  /**
   * The source's relation (format, schema, options), its current files, listed once, and for a
   * Delta table the version of the snapshot they are (from its log, not a listing); `frame`: a
   * DataFrame over the source just resolved (its listing is refreshed here). A Delta table's
   * relation reads its data files as the Parquet files they are (column mapping is refused at
   * CREATE; rows a deletion vector hides are read too, which only adds values to a filter).
   */
  def snapshot(spark: SparkSession, s: SourceSpec, frame: Option[DataFrame] = None): (HadoopFsRelation, Seq[SourceFile], Option[Long]) = {
    if (s.format == IcebergFiles.Format) return IcebergTables.snapshot(spark, s, frame)
    if (s.format == DeltaSource.Format) {
      val (rel, files, version) = DeltaSource.snapshot(spark, s)
      return (rel.copy(fileFormat = new ParquetFileFormat())(rel.sparkSession), files, Some(version))
    }
    val rel = relation(frame.getOrElse(dataFrame(spark, s)), s.display)
    rel.location.refresh()
    (rel, filesOf(rel), None)
  }

  /** The files `rel`'s file index lists, each once. */
  private def filesOf(rel: HadoopFsRelation): Seq[SourceFile] =
    rel.location.listFiles(Nil, Nil).flatMap(_.files).map { f =>
      SourceFile(normalize(f.getPath), f.getLen, f.getModificationTime)
    }.distinct

  /**
   * The source's current files and (Delta) table version, as [[snapshot]] lists them. A path
   * source is listed without inferring its schema (which for Parquet sorts every path and reads
   * a footer: seconds at 100,000 files): an empty schema is given, the listing is the same.
   */
  def currentFiles(spark: SparkSession, s: SourceSpec): (Seq[SourceFile], Option[Long]) =
    if (s.table.isDefined || s.format == DeltaSource.Format || s.format == IcebergFiles.Format) {
      val (_, files, version) = snapshot(spark, s)
      (files, version)
    } else {
      FileStatusCache.getOrCreate(spark).invalidateAll()
      // A format that refuses an empty schema is listed as a query would read it.
      val df = try Some(spark.read.format(s.format).options(s.options).schema(new StructType()).load(s.paths: _*))
        catch { case scala.util.control.NonFatal(_) => None }
      // Listed just now, after the cache was dropped: no refresh (a second listing) needed.
      df.map(df => (filesOf(relation(df, s.display)), None: Option[Long])).getOrElse {
        val (_, files, version) = snapshot(spark, s)
        (files, version)
      }
    }
}
