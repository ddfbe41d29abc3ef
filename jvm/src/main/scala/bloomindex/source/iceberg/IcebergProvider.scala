package bloomindex.source.iceberg

import scala.util.control.NonFatal

import bloomindex.catalog.{Decision, IndexCatalog}
import bloomindex.compat.SparkShim
import bloomindex.errors.BloomIndexErrors
import bloomindex.log.{ColumnDecoding, ColumnSpec, Decoding, IndexSpec, LogEntry, SourceSpec}
import bloomindex.pruning.{ExplainContext, ScanExplain, ScanHistory, ScanPruner}
import bloomindex.source.{DecodingContext, Relocation, ScanSource, Snapshot, SourceFile, SourceIdentity, SourceProvider,
  SourceProviders, TableRename}

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.{AnalysisException, DataFrame, SparkSession}
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.planning.PhysicalOperation
import org.apache.spark.sql.catalyst.analysis.{ResolvedIdentifier, ResolvedProcedure, ResolvedTable}
import org.apache.spark.sql.catalyst.plans.logical.{Call, LogicalPlan, RenameTable, ReplaceTable, ReplaceTableAsSelect,
  RowLevelWrite, SubqueryAlias, TruncateTable, V2WriteCommand, View}
import org.apache.spark.sql.connector.catalog.{CatalogPlugin, Table}
import org.apache.spark.sql.connector.catalog.procedures.BoundProcedure
import org.apache.spark.sql.connector.read.Scan
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.datasources.{FileIndex, HadoopFsRelation, PartitionDirectory}
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2Relation, DataSourceV2ScanRelation, DataSourceV2Strategy}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{StructField, StructType}

/**
 * Apache Iceberg tables, read through Iceberg's Spark catalog or its `iceberg` data source.
 * Recognised by class name: this class names no Iceberg type, so it loads (and is asked about
 * every scan) without Iceberg on the class path; everything that touches Iceberg's API is in
 * [[IcebergTables]], reached only once a plan holds an Iceberg table.
 *
 * An Iceberg table is its location, whether named through a catalog or as iceberg.`path`; its
 * files are those of a snapshot (immutable, identified by path and size); its columns are
 * identified by field id.
 *
 * Pruning, at planning time, after Iceberg's own planning: Iceberg plans a read in its scan
 * (`SparkBatchQueryScan`): partition pruning, metrics and its residual filters choose the data
 * files, which it groups into tasks; the batch's input partitions each carry a group of file
 * scan tasks. For a filtered Iceberg read the catalog is asked about the data files of those
 * tasks (the files Iceberg would read), and the scan is planned through Spark's own
 * `DataSourceV2Strategy` wrapped in a [[PrunedIcebergScan]], whose batch hands out Iceberg's
 * input partitions minus the tasks of the skipped files. Everything else (the reader, deletes,
 * runtime filtering, metrics) stays Iceberg's. Only plain reads are pruned: the scans of
 * row-level rewrites (copy-on-write DELETE, UPDATE, MERGE) and changelogs are other classes,
 * left alone. See docs/decisions.md (issue 19) for why here and not through Iceberg's filter APIs.
 */
final class IcebergProvider extends SourceProvider with ScanPruner {
  import IcebergProvider._

  override def name: String = Format

  override def records(format: String): Boolean = format == Format

  /** The footer survey's results, collected from a job over more than 64 files ([[IcebergParquetFormat.survey]]). */
  override def kryoClasses: Seq[Class[_]] = Seq(classOf[IcebergParquetFormat.FileColumns])

  override def pathFormats: Set[String] = Set(Format)

  override def resolvePath(spark: SparkSession, format: String, path: String): (SourceSpec, DataFrame) =
    IcebergTables.resolvePath(spark, path)

  /** An Iceberg table's source, when `df` reads one (Iceberg's classes are touched only then); an Iceberg view or metadata table is refused. */
  override def resolveFrame(df: DataFrame, table: Option[String], what: String, named: Boolean): Option[SourceSpec] = {
    val plan = df.queryExecution.analyzed
    val v2 = plan.collect { case r: DataSourceV2Relation => r }
    if (!v2.exists(_.table.getClass.getName.startsWith(Package))) return None
    if (plan.collectFirst { case v: View => v }.isDefined || plan.exists(_.getClass.getSimpleName.contains("View"))) {
      throw IcebergErrors.notIndexable(what, "it is a view, not a table of data files")
    }
    // A name that reads a query over tables rather than one table is a view (Iceberg's views
    // resolve to their query under an alias, without Spark's View node).
    def unaliased(p: LogicalPlan): LogicalPlan = p match {
      case a: SubqueryAlias => unaliased(a.child)
      case other => other
    }
    if (named && !unaliased(plan).isInstanceOf[DataSourceV2Relation]) {
      IcebergTables.relationOf(df, what) // a metadata table is named as such
      throw IcebergErrors.notIndexable(what, "it is a view (a query over tables), not a table of data files")
    }
    IcebergTables.relationOf(df, what).map { r =>
      if (v2.size > 1) throw BloomIndexErrors.multipleRelations(what)
      IcebergTables.resolveRelation(r)
    }
  }

  /** A metadata table or a view of Iceberg's catalogs is no table to the catalog: refused by name. */
  override def refuse(df: DataFrame, what: String): Unit = resolveFrame(df, None, what, named = true)

  override def dataFrame(spark: SparkSession, s: SourceSpec): DataFrame = IcebergTables.dataFrame(spark, s)

  override def snapshot(spark: SparkSession, s: SourceSpec, frame: Option[DataFrame]): Snapshot = {
    val (rel, files, id) = IcebergTables.snapshot(spark, s, frame)
    Snapshot(rel, files, id)
  }

  override def currentRelation(spark: SparkSession, s: SourceSpec, frame: Option[DataFrame]): HadoopFsRelation =
    IcebergTables.currentRelation(spark, s)

  override def claims(plan: LogicalPlan): Boolean = plan match {
    case r: DataSourceV2Relation => isIcebergTable(r.table)
    case s: DataSourceV2ScanRelation => isIcebergTable(s.relation.table)
    case _ => false
  }

  /**
   * A read of the snapshot the relation's table is pinned to: a relation without Iceberg's
   * incremental read options, or a scan built as a plain batch read. An incremental read
   * (`start-snapshot-id`, `end-snapshot-id`, ...: Iceberg's `SparkIncrementalAppendScan`) reads
   * the files appended over a range of snapshots, files a later commit may have removed, which
   * the snapshot's files (what a join filter's coverage is checked against) do not show: it has
   * no source here, so no index answers for it.
   */
  override def describe(plan: LogicalPlan): Option[ScanSource] = plan match {
    case r: DataSourceV2Relation if isIcebergTable(r.table) && !isIncremental(r) => Some(IcebergTables.scanSource(this, r))
    case s: DataSourceV2ScanRelation if isIcebergTable(s.relation.table) && isBatchQueryScan(s.scan) && !isIncremental(s.relation) =>
      Some(IcebergTables.scanSource(this, s.relation))
    case _ => None
  }

  override def scanOf(spark: SparkSession, s: SourceSpec, rel: HadoopFsRelation): ScanSource =
    ScanSource(this, s.table, Format, rel.location.rootPaths, Map.empty, rel.dataSchema, rel.location)

  /**
   * Iceberg reads its Parquet files itself, columns by field id (the physical identity), without
   * calendar rebasing and whatever Spark's Parquet settings. The table's UUID is recorded too
   * ([[DecodingContext.TableUuid]]): a table dropped and created again under the same name (at
   * the same location, as a Hadoop catalog's is) is another table, whose field ids are numbered
   * afresh.
   */
  override def decoding(conf: SQLConf, scan: ScanSource, field: StructField): ColumnDecoding = {
    val physical = DecodingContext.physicalOf(field)
    val table = scan.index match {
      case i: IcebergFileIndex =>
        i.tableUuid.map(DecodingContext.TableUuid -> _).toMap ++
          physical.get(DecodingContext.FieldId).flatMap(id => i.mappedNames(id.toInt))
            .map(names => DecodingContext.NameMapping -> DecodingContext.mappedNames(names))
      case _ => Map.empty[String, String]
    }
    DecodingContext.column(field, physical ++ table, Map.empty, Map.empty)
  }

  /**
   * The names the table's name mapping gives a column are recorded only where the build read
   * files without field ids through them ([[IcebergTables.readable]]), or carried rows of such
   * files from `base`: a query then uses the column only while the mapping gives it the same
   * names (a rename, a dropped column's name given to it, the mapping edited or removed: Iceberg
   * may read another column of those files, or none).
   */
  override def recordedDecoding(decoding: Decoding, read: HadoopFsRelation, base: Option[Decoding]): Decoding =
    withMappedNames(decoding, read.fileFormat match {
      case f: IcebergParquetFormat => f.renames.nonEmpty
      case _ => false
    }, base)

  /** `decoding` with the mapping's names kept where files were read through them (`viaMapping`) or `base` kept them. */
  def withMappedNames(decoding: Decoding, viaMapping: Boolean, base: Option[Decoding]): Decoding =
    if (viaMapping) decoding
    else decoding.copy(columns = decoding.columns.map { c =>
      if (base.exists(_.column(c.name).exists(_.physical.contains(DecodingContext.NameMapping)))) c
      else c.copy(physical = c.physical - DecodingContext.NameMapping)
    })

  /** Iceberg reads every column by field id: a renamed column is the same column. */
  override def followsRenames: Boolean = true

  /** A snapshot's files come from its manifests: immutable, never stale. */
  override def listingMayBeStale: Boolean = false

  override def sameSource(index: SourceSpec, target: SourceIdentity): Boolean = SourceProviders.sameFolders(this, index, target)

  /**
   * A build reads with Spark's Parquet reader matching columns by field id (a renamed column is
   * read from files written under its old name, a column added later reads as null from older
   * files) and never rebasing dates. These are session settings (Spark's Parquet reader takes
   * them from the session, not from reader options), set for the build and put back after; they
   * change nothing for a query whose schema carries no field ids.
   */
  override def buildScope[T](spark: SparkSession, s: SourceSpec)(body: => T): T = {
    // Never shifting INT96 values by the session's zone (Iceberg does not), and never reading
    // a file without field ids as nulls ([[IcebergTables.readable]] leaves such files out).
    val settings = Seq(DecodingContext.ParquetFieldIds -> "true", DecodingContext.ParquetFieldIdsIgnoreMissing -> "false",
      DecodingContext.ParquetRebase -> "CORRECTED", DecodingContext.ParquetInt96Rebase -> "CORRECTED",
      DecodingContext.ParquetInt96Conversion -> "false")
    val conf = spark.sessionState.conf
    val before = settings.map { case (k, _) => k -> (if (conf.contains(k)) Some(conf.getConfString(k)) else None) }
    settings.foreach { case (k, v) => conf.setConfString(k, v) }
    try body finally before.foreach {
      case (k, Some(v)) => conf.setConfString(k, v)
      case (k, None) => conf.unsetConf(k)
    }
  }

  /** Files without field ids are read by the table's name mapping, or left out ([[IcebergTables.readable]]). */
  override def readable(spark: SparkSession, spec: IndexSpec, rel: HadoopFsRelation,
      files: Seq[SourceFile]): (HadoopFsRelation, Seq[SourceFile]) = IcebergTables.readable(spark, spec, rel, files)

  override def checkColumn(field: StructField, column: ColumnSpec, spec: IndexSpec): Unit = {
    IcebergTables.checkColumnType(field, spec.source.display)
    // The index's column type is fixed at CREATE; a widened Iceberg column (int to long, ...)
    // would be read as the new type and hashed as the old one.
    if (field.dataType.sql != column.dataType) {
      throw BloomIndexErrors.sourceColumnTypeChanged(column.name, spec.name, spec.source.display, column.dataType, field.dataType.sql)
    }
  }

  /**
   * A column with an initial default (Iceberg v3) is read as the default from files written
   * before it was added; a build reads those files' missing column as null, so no index column
   * may answer for it (one built before this was refused is not used).
   */
  override def unusable(scan: ScanSource, column: String): Option[String] =
    scan.dataSchema.fields.find(_.name == column).filter(IcebergTables.hasInitialDefault)
      .map(_ => s"$column: has an Iceberg initial default, which files written before it was added do not hold")

  /** Data files are Parquet with field ids, matched by id as the build's footer read does. */
  override def footerFilters(s: SourceSpec): Boolean = true

  // ---------------------------------------------------------------- writes

  /**
   * Iceberg's writes through Spark's V2 write commands: `INSERT INTO` and DataFrameWriterV2
   * `append` (`AppendData`), `INSERT OVERWRITE` and `overwrite` (`OverwriteByExpression`),
   * `overwritePartitions` (`OverwritePartitionsDynamic`), and the row-level operations `DELETE`,
   * `UPDATE` and `MERGE INTO` (`ReplaceData` for copy-on-write, `WriteDelta` for
   * merge-on-read), each by the location of the table written. (Replaces and TRUNCATE TABLE,
   * whose table is named rather than read: the other [[writtenBy]].)
   */
  override def writtenBy(command: LogicalPlan): Option[SourceIdentity] = {
    // A row-level write's table is the relation over Spark's wrapper of the operation
    // (`RowLevelOperationTable`); the table itself is its `originalTable`.
    val written = command match {
      case w: RowLevelWrite => Some(w.originalTable)
      case w: V2WriteCommand => Some(w.table)
      case _ => None
    }
    written.collect { case r: DataSourceV2Relation if isIcebergTable(r.table) => IcebergTables.identity(r) }
  }

  /**
   * [[writtenBy]], and Iceberg's stored procedures (`CALL <catalog>.system.rewrite_data_files(table
   * => ...)`, `rollback_to_snapshot`, `cherrypick_snapshot`, `add_files`, ...): the table their
   * `table` argument names, resolved as Iceberg's procedures resolve it (relative to the
   * procedure's catalog and the session's current namespace). A call whose table cannot be
   * told queues nothing (its indexes stay behind: the files they do not cover are read whole).
   */
  override def writtenBy(spark: SparkSession, command: LogicalPlan): Option[SourceIdentity] = command match {
    // CREATE OR REPLACE / REPLACE TABLE ... AS SELECT, DataFrameWriterV2 `replace` and
    // `createOrReplace`, DataFrameWriter `saveAsTable` in overwrite mode (Spark plans all as
    // `ReplaceTableAsSelect`), and REPLACE TABLE without a query: the table is loaded from its
    // catalog after the replace committed (the listener hears of the command once it returned).
    // Iceberg's replace keeps the table's UUID (the index's table), its location and its history;
    // a column keeps its field id when a column of its name was there before (another type: the
    // index's refresh refuses it, its scans do not use it). Spark 4.1 also runs the write of an
    // AS SELECT as a nested `OverwriteByExpression` of the staged table, heard by [[writtenBy]]
    // before the replace committed: the refresh it queues may find the table as it was.
    case r: ReplaceTableAsSelect => replaced(r.name)
    case r: ReplaceTable => replaced(r.name)
    // TRUNCATE TABLE: Spark truncates an Iceberg table itself (`TruncateTableExec`: Iceberg's
    // delete of all rows), a command of its own, not a V2 write.
    case TruncateTable(rt: ResolvedTable) if isIcebergTable(rt.table) => Some(IcebergTables.identity(rt.catalog, rt.identifier, rt.table))
    case c: Call => c.procedure match {
      case ResolvedProcedure(catalog, _, p: BoundProcedure) if p.getClass.getName.startsWith(Package) =>
        val i = p.parameters().indexWhere(_.name().equalsIgnoreCase(TableParameter))
        val table = if (i < 0 || i >= c.args.size || !c.args(i).foldable) None
          else Option(c.args(i).eval()).map(_.toString)
        table.flatMap(IcebergTables.procedureTable(spark, catalog, _))
      case _ => None
    }
    case other => writtenBy(other)
  }

  /** The Iceberg table a replace wrote, if its catalog is one of Iceberg's and loads it as an Iceberg table. */
  private def replaced(name: LogicalPlan): Option[SourceIdentity] = name match {
    case ResolvedIdentifier(catalog, ident) if isIcebergCatalog(catalog) => IcebergTables.catalogTable(catalog, ident)
    case _ => None
  }

  private def isIcebergCatalog(c: CatalogPlugin): Boolean = c != null && c.getClass.getName.startsWith(Package)

  /**
   * Iceberg's Structured Streaming sink: its progress describes it by the table's name, as
   * Iceberg names it (`<catalog>.<namespace>.<table>`, `writeStream.toTable` or a table name as
   * the `path` option), or by its location (a path table, `.option("path", <location>)`).
   */
  override def writtenBySink(spark: SparkSession, description: String): Option[SourceIdentity] =
    if (description == null || description.isEmpty || description.contains("[") || !icebergLoaded) None
    else try IcebergTables.sinkTable(spark, description) catch { case NonFatal(_) => None }

  /** Whether Iceberg's Spark runtime is on this class's class path (a sink's description is only a string). */
  private lazy val icebergLoaded: Boolean =
    try { Class.forName(SparkTableClass, false, getClass.getClassLoader); true } catch { case _: Throwable => false }

  // ---------------------------------------------------------------- the table's life

  /**
   * `ALTER TABLE ... RENAME TO` of an Iceberg table (Spark's V2 `RenameTable`, run by Iceberg's
   * catalog: no session catalog event reports it). The table keeps its UUID and, in the
   * catalogs that rename (Hive, JDBC, REST, in-memory; a Hadoop catalog refuses), its location.
   */
  override def renamedBy(spark: SparkSession, command: LogicalPlan): Option[TableRename] = command match {
    case RenameTable(rt: ResolvedTable, newName, false) if isIcebergTable(rt.table) =>
      IcebergTables.rename(rt.catalog, rt.identifier, rt.table, newName)
    case _ => None
  }

  /**
   * An Iceberg table renamed by another engine, found again by its UUID in its namespace
   * ([[IcebergTables.relocate]]). Queries need no search: an index answers for a scan of the
   * table's location (whatever its name), and only with the recorded UUID ([[decoding]]).
   */
  override def relocate(spark: SparkSession, entry: LogEntry): Relocation =
    if (entry.spec.source.table.isEmpty || !icebergLoaded) super.relocate(spark, entry)
    else IcebergTables.relocate(spark, entry)

  // ---------------------------------------------------------------- pruning

  override def planPruned(spark: SparkSession, plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case PhysicalOperation(_, filters, s: DataSourceV2ScanRelation)
        if isBatchQueryScan(s.scan) && isIcebergTable(s.relation.table) =>
      decision(spark, filters, s, record = true)
        .filter(_.skipped.nonEmpty)
        .map { d =>
          val wrapped = PrunedIcebergScan(s.scan, d.skipped, d.info, d.check)
          val pruned = plan.transformUp { case rel: DataSourceV2ScanRelation if rel eq s => SparkShim.withScan(s, wrapped) }
          new DataSourceV2Strategy(spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession]).apply(pruned)
        }
        .getOrElse(Nil)
    case _ => Nil
  }

  /**
   * What the indexes decide for an Iceberg read under `filters` (None: no usable filter, pruning
   * off, or no index over the table). The files are those of the tasks Iceberg planned for the
   * scan (its cached plan: planning again costs nothing). A task group that is not only data
   * file tasks makes no decision. With `record` (planning, not explaining) the scan is recorded
   * in the workload history; a table with no index is recorded without asking Iceberg's batch,
   * with the files and bytes Iceberg's scan reports when it planned its files already.
   */
  private def decision(spark: SparkSession, filters: Seq[Expression], s: DataSourceV2ScanRelation,
      record: Boolean = false): Option[Decision] = {
    val conds = filters.filter(ScanPruner.usable)
    if (conds.isEmpty || !spark.sessionState.conf.getConf(BloomIndexSQLConf.PRUNING_ENABLED)) return None
    try {
      val source = IcebergTables.scanSource(this, s.relation)
      val catalog = new IndexCatalog(spark)
      // No index over the table: Iceberg's batch is not asked for (its partitions broadcast the table).
      if (!catalog.anyIndexFor(source)) {
        if (record) ScanHistory.record(spark, s, ScanPruner.conjunction(conds), source, reportedFiles(s.scan), None)
        return None
      }
      val partitions = s.scan.toBatch.planInputPartitions().toSeq
      val perPartition = partitions.map(IcebergTables.partitionFiles)
      if (perPartition.exists(_.isEmpty)) return None
      val files = perPartition.flatMap(_.get)
        .groupBy(f => f.getPath.toString).values.map(_.head).toSeq
      if (record) ScanHistory.decide(spark, s, ScanPruner.conjunction(conds), source, files, catalog = Some(catalog))
      else catalog.decide(ScanPruner.conjunction(conds), source, files)
    } catch {
      case NonFatal(e) =>
        IndexCatalog.warnOnce(s"bloomindex: Iceberg scan not pruned (${e.getMessage})")
        None
    }
  }

  /**
   * The data files and bytes Iceberg's scan reports having planned (its driver metrics
   * `resultDataFiles` and `totalDataFileSize`), when it planned them already (None: not yet).
   */
  private def reportedFiles(scan: org.apache.spark.sql.connector.read.Scan): Option[(Long, Long)] =
    try {
      val m = scan.reportDriverMetrics().map(t => t.name() -> t.value()).toMap
      for (n <- m.get("resultDataFiles"); b <- m.get("totalDataFileSize")) yield (n, b)
    } catch { case NonFatal(_) => None }

  /** Iceberg reads are pruned at planning, after Iceberg's own planning: the same decision. */
  override def explain(ctx: ExplainContext, node: LogicalPlan): Option[ScanExplain] = node match {
    case s: DataSourceV2ScanRelation if isBatchQueryScan(s.scan) =>
      val what = s.relation.identifier.map(_.toString).getOrElse(s.relation.table.name())
      Some(ScanExplain(what, decision(ctx.spark, ctx.filtersOn(s), s).map(_.info),
        s"scan of $what: no Bloom index pruned this Iceberg scan"))
    case _ => None
  }
}

object IcebergProvider {
  val Format = "iceberg"

  private val Package = "org.apache.iceberg."
  /** The argument of Iceberg's procedures that names the table they act on. */
  private val TableParameter = "table"
  private val SparkTableClass = "org.apache.iceberg.spark.source.SparkTable"
  /** The scan of a plain read (Iceberg's other scans: row-level rewrites, changelogs, ...). */
  private val BatchQueryScanClass = "org.apache.iceberg.spark.source.SparkBatchQueryScan"

  def isIcebergTable(t: Table): Boolean = SourceProviders.isA(t, SparkTableClass)

  /** A plain read of an Iceberg table (not a copy-on-write rewrite's scan, not a changelog). */
  def isBatchQueryScan(s: Scan): Boolean = s != null && s.getClass.getName == BatchQueryScanClass

  /** Iceberg's read options (`SparkReadOptions`) that make a read incremental over snapshots. */
  private val IncrementalOptions = Seq("start-snapshot-id", "end-snapshot-id", "start-timestamp", "end-timestamp")

  /** A relation read with any of Iceberg's incremental options (keys are case-insensitive). */
  def isIncremental(r: DataSourceV2Relation): Boolean = IncrementalOptions.exists(r.options.containsKey)
}

/**
 * The data files of one Iceberg snapshot as a file index (listed on first use): what a scan's
 * coverage checks (join filters, `bloom_might_contain`) compare an index with. Iceberg data
 * files are immutable and identified by path and size; they carry no modification time (0).
 * `tableUuid`: the table's UUID, which the columns' decoding records (see [[IcebergProvider.decoding]]).
 */
final class IcebergFileIndex(root: Path, list: () => Seq[SourceFile], val tableUuid: Option[String] = None,
    nameMapping: () => Option[Map[Int, Seq[String]]] = () => None) extends FileIndex {
  private lazy val mapping = nameMapping()

  /**
   * The names the table's name mapping gives field `id`, sorted (files without field ids are
   * read by them); None when the table has no mapping ([[IcebergTables.mappedNamesOf]]).
   */
  def mappedNames(id: Int): Option[Seq[String]] = mapping.map(_.getOrElse(id, Nil))

  private lazy val statuses: Array[FileStatus] =
    list().map(f => new FileStatus(f.size, false, 1, 0L, f.modificationTime, new Path(f.path))).toArray

  override def rootPaths: Seq[Path] = Seq(root)
  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] =
    Seq(PartitionDirectory(InternalRow.empty, statuses))
  override def inputFiles: Array[String] = statuses.map(_.getPath.toString)
  override def refresh(): Unit = ()
  override def sizeInBytes: Long = statuses.map(_.getLen).sum
  override def partitionSchema: StructType = new StructType()
}

/** Iceberg's error conditions (raised through [[BloomIndexErrors.error]]). */
object IcebergErrors {
  def notIndexable(source: String, reason: String): AnalysisException =
    BloomIndexErrors.error("BLOOM_INDEX_ICEBERG_NOT_INDEXABLE", Map("source" -> source, "reason" -> reason))

  def columnType(column: String, source: String, icebergType: String): AnalysisException =
    BloomIndexErrors.error("BLOOM_INDEX_ICEBERG_COLUMN_TYPE", Map("column" -> column, "source" -> source, "type" -> icebergType))

  def initialDefault(column: String, source: String): AnalysisException =
    BloomIndexErrors.error("BLOOM_INDEX_ICEBERG_INITIAL_DEFAULT", Map("column" -> column, "source" -> source))

  def fileFormat(source: String, format: String, path: String): AnalysisException =
    BloomIndexErrors.error("BLOOM_INDEX_ICEBERG_FILE_FORMAT", Map("source" -> source, "format" -> format, "path" -> path))

  def unavailable(source: String): AnalysisException =
    BloomIndexErrors.error("BLOOM_INDEX_ICEBERG_UNAVAILABLE", Map("source" -> source))
}
