package bloomindex.source

import java.util.Locale

import scala.util.Try

import bloomindex.errors.BloomIndexErrors
import bloomindex.log.{Decoding, IndexSpec, SourceSpec}

import org.apache.hadoop.fs.Path
import org.apache.spark.paths.SparkPath
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2Relation, FileTable}

/** A file of a source, identified by path + size + modification time. */
case class SourceFile(path: String, size: Long, modificationTime: Long)

/**
 * Turns what a user names (a table, `format.`path``, a DataFrame) into a source, and asks the
 * source's provider ([[SourceProviders]]) for its files, relation and decoding.
 */
object SourceResolver {

  /** The canonical form of a file path, as both listings and `_metadata.file_path` map to it. */
  def normalize(path: String): String = SparkPath.fromUrlString(path).toPath.toString

  def normalize(path: Path): String = path.toString

  def resolve(spark: SparkSession, ref: SourceRef): SourceSpec = resolveFrame(spark, ref)._1

  /**
   * The source and a DataFrame over it, as of now: a command that builds right after resolving
   * passes the frame on, so that the source's schema is not inferred again. `format.`path``
   * names a catalog table of that name if there is one, unless its provider says otherwise.
   */
  def resolveFrame(spark: SparkSession, ref: SourceRef): (SourceSpec, DataFrame) = {
    val parts = ref.parts
    val byPath = if (parts.size == 2) SourceProviders.forPath(parts.head.toLowerCase(Locale.ROOT)) else None
    byPath.filter(_.pathsBeforeTables).foreach(p => return p.resolvePath(spark, parts.head.toLowerCase(Locale.ROOT), parts(1)))
    val asTable = parts.size <= 3 && Try(spark.catalog.tableExists(quoted(parts))).getOrElse(false)
    if (asTable) resolveTableFrame(spark, parts)
    else byPath match {
      case Some(p) => p.resolvePath(spark, parts.head.toLowerCase(Locale.ROOT), parts(1))
      case None =>
        // A name Spark resolves that is no table (a view, a format's metadata table): its provider may say why.
        Try(spark.table(quoted(parts))).toOption.foreach(df => SourceProviders.all.foreach(_.refuse(df, ref.sql)))
        throw BloomIndexErrors.sourceNotFound(ref.sql)
    }
  }

  /**
   * Drops what the session keeps of table `name` (its relation with the file listing it took,
   * its metadata), so that its next read lists its files anew, and keeps the data of a
   * `CACHE TABLE` of it: `spark.catalog.refreshTable` would drop that too and cache it again at
   * the next read of the user's. A name the session catalog does not hold (another catalog's
   * table) takes `refreshTable`.
   */
  def relist(spark: SparkSession, name: String): Unit = {
    val parts = Try(spark.sessionState.sqlParser.parseMultipartIdentifier(name)).getOrElse(Nil)
    // The session catalog's name (`CatalogManager.SESSION_CATALOG_NAME`, private to Spark's sql
    // package); a temporary view of that name would be what the name reads.
    val ofSession = (parts.size < 3 || parts.head.equalsIgnoreCase("spark_catalog")) && !spark.sessionState.catalog.isTempView(parts)
    catalogTable(spark, name).filter(_ => ofSession) match {
      case Some(t) =>
        // As refreshTable does, less its last step (uncaching and caching again): the relation's
        // file index listed anew (which empties the session's cache of file statuses, that a
        // new relation would list from), then the relation and metadata dropped.
        spark.table(name).queryExecution.analyzed.refresh()
        spark.sessionState.catalog.refreshTable(t.identifier)
      case None => spark.catalog.refreshTable(name)
    }
  }

  private def quoted(parts: Seq[String]): String = parts.map(p => s"`${p.replace("`", "``")}`").mkString(".")

  def resolveTable(spark: SparkSession, parts: Seq[String]): SourceSpec = resolveTableFrame(spark, parts)._1

  def resolveTableFrame(spark: SparkSession, parts: Seq[String]): (SourceSpec, DataFrame) = {
    relist(spark, quoted(parts))
    val df = spark.table(quoted(parts))
    val qualified = catalogName(df).getOrElse(parts.mkString("."))
    (ofFrame(df, Some(qualified), quoted(parts), named = true), df)
  }

  /** `format.`path``, with `format` one of the providers' path formats. */
  def resolvePath(spark: SparkSession, format: String, path: String): SourceSpec = resolvePathFrame(spark, format, path)._1

  def resolvePathFrame(spark: SparkSession, format: String, path: String): (SourceSpec, DataFrame) =
    SourceProviders.forPath(format).getOrElse(SourceProviders.unsupportedFormat(format)).resolvePath(spark, format, path)

  /** The source a DataFrame reads directly: its relation's roots, format and options. */
  def resolveDataFrame(df: DataFrame): SourceSpec = ofFrame(df, catalogName(df), "the DataFrame", named = false)

  /**
   * [[resolveDataFrame]], and the frame a build reads: `df`, or where `df` reads its folders
   * through DataSource V2 (which a build does not read), the same folders read anew.
   */
  def resolveDataFrameFrame(df: DataFrame): (SourceSpec, DataFrame) = {
    val spec = resolveDataFrame(df)
    (spec, if (v2Files(df).isEmpty) df else dataFrame(df.sparkSession, spec))
  }

  /** The V2 file relations `df` reads (a path read through DataSource V2). */
  def v2Files(df: DataFrame): Seq[DataSourceV2Relation] =
    df.queryExecution.analyzed.collect { case r: DataSourceV2Relation if r.table.isInstanceOf[FileTable] => r }

  /** The first provider's answer for `df` (the plain-file provider, last, refuses what it cannot read). */
  private def ofFrame(df: DataFrame, table: Option[String], what: String, named: Boolean): SourceSpec =
    SourceProviders.all.iterator.flatMap(_.resolveFrame(df, table, what, named)).nextOption()
      .getOrElse(throw BloomIndexErrors.unsupportedSource(what))

  /** The catalog name of the table `df` reads through a file relation, if any. */
  private def catalogName(df: DataFrame): Option[String] = df.queryExecution.analyzed.collectFirst {
    case l: LogicalRelation if l.catalogTable.isDefined => l.catalogTable.get.identifier.unquotedString
  }

  /** The short name of `rel`'s file format (`parquet`, ...), or its class name. */
  def formatOf(rel: HadoopFsRelation): String = rel.fileFormat match {
    case r: org.apache.spark.sql.sources.DataSourceRegister => r.shortName().toLowerCase(Locale.ROOT)
    case other => other.getClass.getName
  }

  /** The one file relation `df` reads. */
  def relation(df: DataFrame, what: String): HadoopFsRelation = {
    val rels = df.queryExecution.analyzed.collect { case LogicalRelation(r: HadoopFsRelation, _, _, _, _) => r }
    rels match {
      case Seq(r) => r
      case Seq() => throw BloomIndexErrors.unsupportedSource(what)
      case _ => throw BloomIndexErrors.multipleRelations(what)
    }
  }

  /** A fresh DataFrame over the source (new listing: files added since are seen). */
  def dataFrame(spark: SparkSession, s: SourceSpec): DataFrame = SourceProviders.of(s).dataFrame(spark, s)

  /**
   * The scan a new query of `s` makes in this session, with a fresh listing, for checks made
   * while a query is analysed (no cache is dropped: `refreshTable` would uncache the table).
   */
  def currentScan(spark: SparkSession, s: SourceSpec): ScanSource = {
    val df = SourceProviders.of(s).queryFrame(spark, s)
    val scan = df.queryExecution.analyzed.collectLeaves().flatMap(SourceProviders.describe).headOption.getOrElse(
      throw BloomIndexErrors.sourceChanged(s.display))
    scan.index.refresh()
    scan
  }

  /** The session catalog's entry of table `name` (a qualified name as a [[SourceSpec]] records it), if it has one. */
  def catalogTable(spark: SparkSession, name: String): Option[CatalogTable] =
    Try(spark.sessionState.sqlParser.parseMultipartIdentifier(name)).toOption.flatMap {
      case Seq(t) => Some(TableIdentifier(t))
      case Seq(db, t) => Some(TableIdentifier(t, Some(db)))
      case Seq(catalog, db, t) => Some(TableIdentifier(t, Some(db), Some(catalog)))
      case _ => None
    }.flatMap(id => Try(spark.sessionState.catalog.getTableMetadata(id)).toOption)

  /** Runs a build of `s`'s files under the session settings its provider reads them with. */
  def buildScope[T](spark: SparkSession, s: SourceSpec)(body: => T): T = SourceProviders.of(s).buildScope(spark, s)(body)

  /** What a build of `files` of `spec`'s source reads, and the relation it reads them with. */
  def readable(spark: SparkSession, spec: IndexSpec, rel: HadoopFsRelation,
      files: Seq[SourceFile]): (HadoopFsRelation, Seq[SourceFile]) = SourceProviders.of(spec.source).readable(spark, spec, rel, files)

  /** The source's relation as a query would read it now (for a refresh's decoding check). */
  def currentRelation(spark: SparkSession, s: SourceSpec, frame: Option[DataFrame]): HadoopFsRelation =
    SourceProviders.of(s).currentRelation(spark, s, frame)

  /**
   * `rel` (a relation over `spec`'s source, as a build or a refresh's checks read it) with each
   * indexed column that was renamed since `built` (the context the index recorded) under the
   * index's name again, where the source's provider follows renames: the column with the
   * physical identity the index recorded (Iceberg's field id, Delta's physical name and id),
   * whatever it is called now ([[DecodingContext.renames]]). A column that now has an indexed
   * column's name but another identity (added since) is left out of the relation: it is
   * another column. With `preferNames` (a full rebuild) a column the source still has under
   * the index's name is taken as it is, renamed or not, as a full rebuild always did.
   * The relation's fields keep their metadata, so it is still read by identity.
   */
  def following(spark: SparkSession, spec: IndexSpec, built: Option[Decoding], preferNames: Boolean,
      rel: HadoopFsRelation): HadoopFsRelation = {
    val provider = SourceProviders.of(spec.source)
    if (!provider.followsRenames || built.isEmpty) return rel
    val scan = provider.scanOf(spark, spec.source, rel)
    val names = rel.dataSchema.fieldNames.toSeq
    val current = names.flatMap(n => scan.decoding(spark.sessionState.conf, n).map(n -> _))
    // Index column -> the source column it reads (a text filter's column reads another name).
    val sourceOf = spec.columns.map(c => c.name -> c.sourceName).toMap
    // The source column the build reads under its indexed name -> the name it has now.
    val renames = DecodingContext.renames(built.get, current).toSeq
      .collect { case (c, now) if sourceOf.contains(c) && !(preferNames && names.contains(sourceOf(c))) => sourceOf(c) -> now }
      .filter { case (source, now) => source != now }.toMap
    if (renames.isEmpty) return rel
    val back = renames.map(_.swap)
    if (back.size != renames.size) return rel // two indexed names for one column now: left to the context check
    val fields = rel.dataSchema.fields
      .filterNot(f => renames.contains(f.name) && !back.contains(f.name))
      .map(f => back.get(f.name).map(n => f.copy(name = n)).getOrElse(f))
    renames.foreach { case (c, now) =>
      log.info(s"Bloom index '${spec.name}': column $c of ${spec.source.display} is called $now now; built as $c")
    }
    rel.copy(dataSchema = org.apache.spark.sql.types.StructType(fields))(rel.sparkSession)
  }

  private lazy val log = org.slf4j.LoggerFactory.getLogger(getClass)

  /**
   * How `rel` (a relation over `spec`'s source, as a build reads it) decodes each indexed
   * column in this session: what the build records. A column the provider cannot read as the
   * source does is refused. (A Delta column stored under another physical name than its own,
   * column mapping's, is read by that name: the Delta provider's build relation does so.)
   */
  def decoding(spark: SparkSession, spec: IndexSpec, rel: HadoopFsRelation): Decoding = {
    val provider = SourceProviders.of(spec.source)
    val scan = provider.scanOf(spark, spec.source, rel)
    Decoding(scan.format, spec.columns.map { c =>
      val source = c.sourceName
      val d = scan.decoding(spark.sessionState.conf, source).getOrElse(throw BloomIndexErrors.sourceColumnGone(
        source, spec.name, spec.source.display, rel.dataSchema.fieldNames.toSeq))
      rel.dataSchema.fields.find(_.name == source).foreach(provider.checkColumn(_, c, spec))
      DecodingContext.ofIndexColumn(d, c)
    })
  }

  /**
   * The source's relation (format, schema, options), its current files, listed once, and the
   * version of the table's snapshot they are where it has one; `frame`: a DataFrame over the
   * source just resolved (its listing is refreshed).
   */
  def snapshot(spark: SparkSession, s: SourceSpec, frame: Option[DataFrame] = None): Snapshot =
    SourceProviders.of(s).snapshot(spark, s, frame)

  /** The source's current files and table version, as [[snapshot]] lists them. */
  def currentFiles(spark: SparkSession, s: SourceSpec): (Seq[SourceFile], Option[Long]) =
    SourceProviders.of(s).currentFiles(spark, s)

  /** The files `rel`'s file index lists, each once. */
  def filesOf(rel: HadoopFsRelation): Seq[SourceFile] =
    rel.location.listFiles(Nil, Nil).flatMap(_.files).map { f =>
      SourceFile(normalize(f.getPath), f.getLen, f.getModificationTime)
    }.distinct
}
