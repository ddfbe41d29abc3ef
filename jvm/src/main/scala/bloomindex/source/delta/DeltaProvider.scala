package bloomindex.source.delta

import java.util.Locale

import scala.util.control.NonFatal

import bloomindex.catalog.IndexCatalog
import bloomindex.compat.SparkShim
import bloomindex.errors.BloomIndexErrors
import bloomindex.log.{ColumnDecoding, LogEntry, SourceSpec}
import bloomindex.pruning.{BloomPrunedFileIndex, ExplainContext, ScanExplain, ScanHistory, ScanPruner}
import bloomindex.source.{DecodingContext, FileIndexes, Relocation, ScanSource, SessionTables, Snapshot, SourceIdentity,
  SourceProvider, SourceProviders, SourceResolver}

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{AnalysisException, DataFrame, SparkSession}
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, V2WriteCommand}
import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan}
import org.apache.spark.sql.execution.datasources.{FileIndex, HadoopFsRelation, LogicalRelation, SaveIntoDataSourceCommand}
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{DataType, StructField, StructType}

/**
 * Delta Lake tables, reached only through Spark's public APIs (the `delta` data source,
 * `DESCRIBE HISTORY`, `DESCRIBE DETAIL`) and Delta's file index read by reflection: this code
 * compiles and runs without Delta on the class path, and a Delta source is refused with a clear
 * message when it is not.
 *
 * A Delta table is one folder however it is named (catalog name or delta.`path`). Its files are
 * those of a snapshot, read from its log (a Delta folder also holds files that later commits
 * removed): the snapshot's `TahoeFileIndex` lists them with the size and modification time its
 * log records. A Delta data file is never rewritten in place, so a path names the same bytes
 * for ever. Delta hides column mapping from the relation's schema, so the columns' physical
 * names and field ids come from the table's own metadata, which Delta's file index carries.
 * Delta reads its Parquet files with its own settings: reader options do not change values.
 *
 * Pruning: Delta plans its scans with its own rules and strategies, which match its own file
 * index classes: data skipping (`PrepareDeltaScan`, pre-CBO) replaces the table's
 * `TahoeLogFileIndex` with a prepared index, and the deletion vector rules add the row index
 * filter to scans of tables with deletion vectors. A wrapper installed before them (as for plain
 * sources) would hide it from both, and a hidden deletion vector is a wrong answer. So Delta
 * scans are pruned once Delta has planned them: the scan's (already data-skipped) file index is
 * wrapped in a [[BloomPrunedFileIndex]], which lists what Delta lists minus the files the Bloom
 * index proves cannot match the scan's data filters. The files it keeps are Delta's own objects,
 * with the deletion vector descriptors Delta attached to them. The index holds a file by path,
 * size and modification time (as Delta's log records them), so files of a time-travelled
 * snapshot that the index holds are pruned and files it does not hold are read.
 */
final class DeltaProvider extends SourceProvider with ScanPruner {
  import DeltaProvider._

  override def name: String = Format

  override def records(format: String): Boolean = format == Format

  override def pathFormats: Set[String] = Set(Format)

  /** delta.`path` names the folder: Delta's catalog also answers to it as a table name. */
  override def pathsBeforeTables: Boolean = true

  /** `delta.`path``: the path must hold a Delta table (a `_delta_log` folder). */
  override def resolvePath(spark: SparkSession, format: String, path: String): (SourceSpec, DataFrame) = {
    val p = new Path(path)
    val fs = SourceProviders.requireExists(spark, p)
    if (!fs.exists(new Path(p, "_delta_log"))) throw DeltaErrors.notDeltaTable(path)
    requireDelta(spark, quotedPath(path))
    val s = spec(spark, None, fs.makeQualified(p).toString)
    (s, dataFrame(spark, s.paths.head, None))
  }

  /** A catalog table (or a DataFrame over one) whose relation is Delta's: indexed by its location, named by `table`. */
  override def resolveFrame(df: DataFrame, table: Option[String], what: String, named: Boolean): Option[SourceSpec] =
    relationOf(df).map { rel =>
      val location = rel.location.rootPaths match {
        case Seq(p) => p.toString
        case other => throw DeltaErrors.rootPaths(table.getOrElse(what), other.size)
      }
      spec(df.sparkSession, table, location)
    }

  private def relationOf(df: DataFrame): Option[HadoopFsRelation] = df.queryExecution.analyzed.collectFirst {
    case LogicalRelation(rel: HadoopFsRelation, _, _, _, _) if isDeltaIndex(rel.location) => rel
  }

  private def requireDelta(spark: SparkSession, what: String): Unit = {
    val available = try {
      org.apache.spark.sql.execution.datasources.DataSource.lookupDataSource(Format, spark.sessionState.conf)
      true
    } catch { case NonFatal(_) => false }
    if (!available) throw DeltaErrors.unavailable(what)
  }

  private def spec(spark: SparkSession, table: Option[String], location: String): SourceSpec = {
    val what = table.getOrElse(quotedPath(location))
    val detail = try spark.sql(s"DESCRIBE DETAIL ${quotedPath(location)}").head() catch {
      case NonFatal(e) => throw DeltaErrors.logUnreadable(what, e)
    }
    val props = detail.getMap[String, String](detail.fieldIndex("properties"))
    val mapping = Option(props).flatMap(m => Option(m.getOrElse(ColumnMappingModeKey, null)))
      .map(_.toLowerCase(Locale.ROOT)).getOrElse("none")
    // Column mapping: the build reads each column by its physical name (and field id, in id
    // mode), as Delta does; a mode this code does not know how Delta reads is refused.
    if (!ColumnMappingModes.contains(mapping)) throw DeltaErrors.columnMapping(what, mapping)
    val partitions = detail.getSeq[String](detail.fieldIndex("partitionColumns"))
    SourceSpec(table, Format, Seq(location), Map.empty, partitions)
  }

  // ---------------------------------------------------------------- the current snapshot

  override def dataFrame(spark: SparkSession, s: SourceSpec): DataFrame = dataFrame(spark, s.paths.head, None)

  /** The table as of `version` (or its newest snapshot). */
  private def dataFrame(spark: SparkSession, location: String, version: Option[Long]): DataFrame = {
    val reader = spark.read.format(Format)
    version.fold(reader)(v => reader.option("versionAsOf", v.toString)).load(location)
  }

  /**
   * The files of the table's current snapshot (from its log) and that snapshot's version; the
   * relation reads them as the Parquet files they are, each column under column mapping by its
   * physical name, and in id mode by its field id, as Delta reads them ([[DeltaPhysicalParquetFormat]]:
   * the schema's fields carry the table's column mapping metadata). Rows a deletion vector
   * hides are read too, which only adds values to a filter.
   */
  override def snapshot(spark: SparkSession, s: SourceSpec, frame: Option[DataFrame]): Snapshot = {
    val location = s.paths.head
    val version = spark.sql(s"DESCRIBE HISTORY ${quotedPath(location)} LIMIT 1").select("version").head().getLong(0)
    val rel = withMapping(SourceResolver.relation(dataFrame(spark, location, Some(version)), s.display))
    val mode = mappingMode(FileIndexes.unwrap(rel.location))
    if (mode.isEmpty && rel.dataSchema.fields.exists(_.metadata.contains(PhysicalNameKey))) {
      throw DeltaErrors.columnMapping(s.display, "(unreadable)")
    }
    val idMode = mode.contains("id")
    Snapshot(rel.copy(fileFormat = new DeltaPhysicalParquetFormat(idMode))(rel.sparkSession), SourceResolver.filesOf(rel),
      Some(version))
  }

  /** The relation as a query reads it now, its fields with the table's column mapping metadata (renames are followed by it). */
  override def currentRelation(spark: SparkSession, s: SourceSpec, frame: Option[DataFrame]): HadoopFsRelation =
    withMapping(SourceResolver.relation(frame.getOrElse(dataFrame(spark, s)), s.display))

  private def withMapping(rel: HadoopFsRelation): HadoopFsRelation =
    rel.copy(dataSchema = withPhysical(rel.dataSchema, FileIndexes.unwrap(rel.location)))(rel.sparkSession)

  /**
   * A build reads with Spark's Parquet reader matching columns by field id where the read
   * schema carries one (id mode's columns, [[DeltaPhysicalParquetFormat]]), as Delta requires of
   * sessions reading id mode tables; it changes nothing for a schema without field ids. Set on
   * the session for the build only (Spark's reader takes it from the session) and put back after.
   */
  override def buildScope[T](spark: SparkSession, s: SourceSpec)(body: => T): T = {
    val conf = spark.sessionState.conf
    val key = DecodingContext.ParquetFieldIds
    val before = if (conf.contains(key)) Some(conf.getConfString(key)) else None
    conf.setConfString(key, "true")
    try body finally before match {
      case Some(v) => conf.setConfString(key, v)
      case None => conf.unsetConf(key)
    }
  }

  /** The table's folder still holds its log (a catalog name only names the folder). */
  override def exists(spark: SparkSession, s: SourceSpec): Boolean = scala.util.Try {
    val log = new Path(s.paths.head, "_delta_log")
    log.getFileSystem(spark.sessionState.newHadoopConf()).exists(log)
  }.getOrElse(true)

  /**
   * A Delta table is its folder: while the folder holds its log the index answers for it, by any
   * name. A catalog name that no longer names a table (renamed by another engine or cluster) is
   * followed to the one Delta table of the same database at that folder
   * ([[SessionTables.relocate]]; Delta's table id is not recorded by the index, the location is
   * the identity), so that SHOW and REFRESH name it. A managed table's rename moves its folder:
   * not found, ORPHANED as before.
   */
  override def relocate(spark: SparkSession, entry: LogEntry): Relocation = {
    val s = entry.spec.source
    if (!exists(spark, s)) Relocation.Gone(s"no Delta table at ${s.paths.mkString(", ")}")
    else if (Relocation.nameResolves(spark, s)) Relocation.Here
    else SessionTables.relocate(spark, entry, SessionTables.provides(_, Format), "a Delta table", createTime = false) match {
      case m: Relocation.Moved => m
      // The folder is still the table: the index answers for it as before, under its old name.
      case _ => Relocation.Here
    }
  }

  /** A refresh lists the table's snapshot anew from its log. */
  override def refreshReusesFrame: Boolean = false

  // ---------------------------------------------------------------- scans

  override def claims(plan: LogicalPlan): Boolean = plan match {
    case LogicalRelation(rel: HadoopFsRelation, _, _, _, _) => isDeltaIndex(rel.location)
    case _ => false
  }

  override def describe(plan: LogicalPlan): Option[ScanSource] = plan match {
    case LogicalRelation(rel: HadoopFsRelation, _, table, _, _) if isDeltaIndex(rel.location) =>
      Some(of(rel, table.map(_.identifier.unquotedString)))
    case _ => None
  }

  private def of(rel: HadoopFsRelation, table: Option[String]): ScanSource = {
    val index = FileIndexes.unwrap(rel.location)
    ScanSource(this, table, Format, index.rootPaths, Map.empty, withPhysical(rel.dataSchema, index), index)
  }

  override def scanOf(spark: SparkSession, s: SourceSpec, rel: HadoopFsRelation): ScanSource = of(rel, s.table)

  /** Delta reads its Parquet files as Spark's Parquet reader does, a column under its physical name or field id. */
  override def decoding(conf: SQLConf, scan: ScanSource, field: StructField): ColumnDecoding =
    DecodingContext.column(field, physicalOf(field),
      DecodingContext.settingsFor(conf, "parquet", field.dataType, Map.empty), Map.empty)

  /** A Delta snapshot's files come from its log: immutable, never stale. */
  override def listingMayBeStale: Boolean = false

  /** Under column mapping a rename keeps a column's physical name and id: the index follows it. */
  override def followsRenames: Boolean = true

  /** A Delta table is its folder, whether named through a catalog or as delta.`path`. */
  override def sameSource(index: SourceSpec, target: SourceIdentity): Boolean = SourceProviders.sameFolders(this, index, target)

  override def footerFilters(s: SourceSpec): Boolean = false

  /**
   * Delta's writes: a DataFrame `save` (`SaveIntoDataSourceCommand` of Delta's source), a V2
   * write into a `DeltaTableV2` (SQL `INSERT`), and Delta's own commands (`WriteIntoDelta`,
   * `DeleteCommand`, `UpdateCommand`, `MergeIntoCommand`, `OptimizeTableCommand`, ...), each by
   * the table's `DeltaLog` data path (Delta's classes reached by reflection, as elsewhere here).
   */
  /** Delta's streaming sink (`DeltaSink[<path>]`), after each micro-batch. */
  override def writtenBySink(description: String): Option[SourceIdentity] = description match {
    case DeltaSink(path) => Some(SourceIdentity.of(name, None, Seq(path)))
    case _ => None
  }

  override def writtenBy(command: LogicalPlan): Option[SourceIdentity] = {
    val path = command match {
      case s: SaveIntoDataSourceCommand if s.dataSource.getClass.getName.startsWith(DeltaPackage) =>
        s.options.find(_._1.equalsIgnoreCase("path")).map(_._2)
      case w: V2WriteCommand => w.table match {
        case r: DataSourceV2Relation if r.table.getClass.getName.startsWith(DeltaPackage) => dataPathOf(r.table)
        case _ => None
      }
      case c if c.getClass.getName.startsWith(DeltaPackage + "commands.") =>
        // Most commands hold the DeltaLog; OPTIMIZE and its kind hold the resolved table as a child.
        dataPathOf(c).orElse(c.children.iterator.flatMap(tableOf).filter(_.getClass.getName.startsWith(DeltaPackage))
          .flatMap(dataPathOf).take(1).toSeq.headOption)
      case _ => None
    }
    path.map(p => SourceIdentity.of(name, None, Seq(p)))
  }

  // ---------------------------------------------------------------- pruning

  override def prunePlanned(spark: SparkSession, scan: SparkPlan): Option[SparkPlan] = scan match {
    case s: FileSourceScanExec if isDeltaIndex(s.relation.location) =>
      prunedIndex(spark, s, record = true).map(idx => SparkShim.withRelation(s, s.relation.copy(location = idx)(s.relation.sparkSession)))
    case _ => None
  }

  /**
   * The pruned file index for a planned Delta scan, or None when no index applies; with `record`
   * (planning, not explaining) the scan is recorded in the workload history, once per logical
   * relation and execution (adaptive execution applies the physical rules again).
   */
  private def prunedIndex(spark: SparkSession, s: FileSourceScanExec, record: Boolean = false): Option[BloomPrunedFileIndex] = {
    val dataFilters = s.dataFilters.filter(ScanPruner.usable)
    if (dataFilters.isEmpty || !spark.sessionState.conf.getConf(BloomIndexSQLConf.PRUNING_ENABLED)) return None
    try {
      val location = s.relation.location
      // Dynamic partition pruning filters hold subqueries not run yet: list without them.
      val files = location.listFiles(s.partitionFilters.filter(ScanPruner.usable), dataFilters)
        .flatMap(_.files).map(_.fileStatus)
      val source = of(s.relation, s.tableIdentifier.map(_.unquotedString))
      val condition = ScanPruner.conjunction(dataFilters)
      (if (record) ScanHistory.decide(spark, s.logicalLink.getOrElse(s), condition, source, files)
       else new IndexCatalog(spark).decide(condition, source, files))
        .map(d => new BloomPrunedFileIndex(location, d.skipped, d.info, check = d.check)) // Delta's: the folding and the decoding settings
    } catch {
      case NonFatal(e) =>
        IndexCatalog.warnOnce(s"bloomindex: Delta scan not pruned (${e.getMessage})")
        None
    }
  }

  /**
   * Delta scans are pruned once planned: the decision for this relation's planned scan (its
   * output is the relation's attributes, so a self-join's two scans differ; a scan of a table
   * with deletion vectors also outputs Delta's own row columns).
   */
  override def explain(ctx: ExplainContext, node: LogicalPlan): Option[ScanExplain] = node match {
    case l @ LogicalRelation(rel: HadoopFsRelation, _, table, _, _) if isDeltaIndex(rel.location) =>
      val what = table.map(_.identifier.unquotedString).getOrElse(rel.location.rootPaths.mkString(", "))
      val info = ctx.planned.collect { case s: FileSourceScanExec if isDeltaIndex(s.relation.location) => s }
        .find(s => s.relation.location.rootPaths == rel.location.rootPaths &&
          (s.output.isEmpty || s.output.exists(l.outputSet.contains)))
        .flatMap(prunedIndex(ctx.spark, _)).map(_.info)
      Some(ScanExplain(what, info,
        s"scan of $what: no Bloom index for this Delta table, or no filter to prune on"))
    case _ => None
  }
}

object DeltaProvider {
  val Format = "delta"

  /** Delta column mapping's metadata keys. */
  private[delta] val PhysicalNameKey = "delta.columnMapping.physicalName"
  private[delta] val FieldIdKey = "delta.columnMapping.id"
  private val ColumnMappingModeKey = "delta.columnMapping.mode"
  /** The column mapping modes whose reads the build knows: by name (none), by physical name, by field id. */
  private val ColumnMappingModes = Set("none", "name", "id")

  private val DeltaPackage = "org.apache.spark.sql.delta."
  private val DeltaSink = """DeltaSink\[(.+)\]""".r

  /** The table a resolved child holds (`ResolvedTable.table`, `DataSourceV2Relation.table`). */
  private def tableOf(child: LogicalPlan): Option[AnyRef] = child match {
    case r: DataSourceV2Relation => Some(r.table)
    case other => try Option(other.getClass.getMethod("table").invoke(other)) catch { case NonFatal(_) => None }
  }

  /** The data path of the `DeltaLog` `o` holds (a command's `deltaLog`, `targetDeltaLog`, or its file index's). */
  private def dataPathOf(o: AnyRef): Option[String] = {
    def call(x: AnyRef, method: String): Option[AnyRef] =
      try Option(x.getClass.getMethod(method).invoke(x)) catch { case NonFatal(_) => None }
    val log = Seq("deltaLog", "targetDeltaLog").iterator.flatMap(call(o, _)).take(1).toSeq.headOption
      .orElse(Seq("tahoeFileIndex", "targetFileIndex").iterator.flatMap(call(o, _)).flatMap(call(_, "deltaLog")).take(1).toSeq.headOption)
    log.flatMap(call(_, "dataPath")).map(_.toString)
  }

  /** Delta's file indexes: `TahoeLogFileIndex`, `PreparedDeltaFileIndex`, ... all extend it. */
  private val TahoeFileIndexClass = "org.apache.spark.sql.delta.files.TahoeFileIndex"

  /** Whether `index` is one of Delta's file indexes, recognised without Delta on the class path. */
  def isDeltaIndex(index: FileIndex): Boolean = SourceProviders.isA(index, TahoeFileIndexClass)

  private def quotedPath(path: String): String = s"delta.`${path.replace("`", "``")}`"

  /** Where Delta stores `field`: its physical name and field id under column mapping (else a Parquet field id). */
  private def physicalOf(field: StructField): Map[String, String] = {
    val m = field.metadata
    val out = Map.newBuilder[String, String]
    if (m.contains(PhysicalNameKey)) out += DecodingContext.PhysicalName -> m.getString(PhysicalNameKey)
    if (m.contains(FieldIdKey)) out += DecodingContext.FieldId -> m.getLong(FieldIdKey).toString
    else out ++= DecodingContext.physicalOf(field)
    out.result()
  }

  /**
   * `schema` with each field's column mapping metadata as the table's metadata records it, found
   * by name; a field that carries it already keeps it (a build's relation whose renamed columns
   * were given the index's names again, [[SourceResolver.following]]).
   */
  private def withPhysical(schema: StructType, index: FileIndex): StructType = {
    val table = tableSchema(index)
    StructType(schema.fields.map { f =>
      if (f.metadata.contains(PhysicalNameKey) || f.metadata.contains(FieldIdKey)) f
      else table.flatMap(_.fields.find(_.name == f.name)).map(t => f.copy(metadata = t.metadata)).getOrElse(f)
    })
  }

  /** The table's `delta.columnMapping.mode` (lower case) as its file index's metadata records it, if it can be read. */
  private def mappingMode(index: FileIndex): Option[String] =
    try {
      val metadata = index.getClass.getMethod("metadata").invoke(index)
      val conf = metadata.getClass.getMethod("configuration").invoke(metadata).asInstanceOf[scala.collection.Map[String, String]]
      Some(conf.getOrElse(ColumnMappingModeKey, "none").toLowerCase(Locale.ROOT))
    } catch { case NonFatal(_) => None }

  private def tableSchema(index: FileIndex): Option[StructType] =
    try {
      val metadata = index.getClass.getMethod("metadata").invoke(index)
      val json = metadata.getClass.getMethod("schemaString").invoke(metadata).asInstanceOf[String]
      Some(DataType.fromJson(json).asInstanceOf[StructType])
    } catch { case NonFatal(_) => None }
}

/** Delta's error conditions (raised through [[BloomIndexErrors.error]]). */
object DeltaErrors {
  def unavailable(source: String): AnalysisException =
    BloomIndexErrors.error("BLOOM_INDEX_DELTA_UNAVAILABLE", Map("source" -> source))

  def notDeltaTable(path: String): AnalysisException =
    BloomIndexErrors.error("BLOOM_INDEX_NOT_DELTA_TABLE", Map("path" -> path))

  def rootPaths(source: String, count: Int): AnalysisException =
    BloomIndexErrors.error("BLOOM_INDEX_DELTA_ROOT_PATHS", Map("source" -> source, "count" -> count.toString))

  def logUnreadable(source: String, cause: Throwable): AnalysisException =
    BloomIndexErrors.error("BLOOM_INDEX_DELTA_LOG_UNREADABLE", Map("source" -> source, "reason" -> String.valueOf(cause.getMessage)), cause)

  def columnMapping(source: String, mode: String): AnalysisException =
    BloomIndexErrors.error("BLOOM_INDEX_DELTA_COLUMN_MAPPING", Map("source" -> source, "mode" -> mode))
}
