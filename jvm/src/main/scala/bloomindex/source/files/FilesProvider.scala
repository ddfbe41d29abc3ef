package bloomindex.source.files

import java.util.Locale

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import bloomindex.catalog.{Decision, IndexCatalog}
import bloomindex.compat.SparkShim
import bloomindex.errors.BloomIndexErrors
import bloomindex.log.{ColumnDecoding, LogEntry, SourceSpec}
import bloomindex.pruning.{BloomPrunedFileIndex, ExplainContext, ScanExplain, ScanHistory, ScanPruner}
import bloomindex.source.{DecodingContext, FileIndexes, Relocation, ScanSource, SessionTables, Snapshot, SourceFile,
  SourceIdentity, SourceProvider, SourceProviders, SourceResolver}

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.bloomindex.{BloomIndexSQLConf, Schemas}
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.expressions.{Expression, SubqueryExpression}
import org.apache.spark.sql.catalyst.planning.PhysicalOperation
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan}
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.datasources.{CatalogFileIndex, DataSourceUtils, FileIndex, FileStatusCache,
  HadoopFsRelation, InMemoryFileIndex, InsertIntoHadoopFsRelationCommand, LogicalRelation, PartitioningAwareFileIndex}
import org.apache.spark.sql.execution.datasources.parquet.ParquetOptions
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2Relation, DataSourceV2ScanRelation, DataSourceV2Strategy,
  FileScan, FileTable}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.{StructField, StructType}

/**
 * Plain files of Spark's file sources (`parquet`, `orc`, `csv`, `json`, `avro`, `text`), read
 * through the V1 path (`HadoopFsRelation`: catalog tables, `format.`path``, DataFrames) or the
 * V2 path (`FileTable`, `FileScan`). A source is a catalog table (by name) or root folders; its
 * files are what its file index lists, identified by path, size and modification time, which a
 * file rewritten in place changes. Listed last among the providers: it takes any file relation
 * no table format claimed.
 *
 * Pruning: V1 scans in the optimizer, before statistics (the relation's file index replaced by
 * a [[BloomPrunedFileIndex]]); V2 scans at planning (their scan node only exists after the
 * optimizer's push-down: a [[BloomPrunedV2FileIndex]] over the kept files).
 */
final class FilesProvider extends SourceProvider with ScanPruner {
  import FilesProvider._

  override def name: String = "files"

  /** Any format no provider listed before this one records. */
  override def records(format: String): Boolean = true

  override def pathFormats: Set[String] = PathFormats

  override def resolvePath(spark: SparkSession, format: String, path: String): (SourceSpec, DataFrame) = {
    SourceProviders.requireExists(spark, new Path(path))
    val df = pathFrame(spark, SourceSpec(None, format, Seq(path), Map.empty, Nil), None)
    (spec(None, SourceResolver.relation(df, s"$format.`$path`")), df)
  }

  override def resolveFrame(df: DataFrame, table: Option[String], what: String, named: Boolean): Option[SourceSpec] =
    SourceResolver.v2Files(df) match {
      // A path read through DataSource V2 (`spark.sql.sources.useV1SourceList` without its
      // format): the same folders, which the build reads through V1 (pathFrame).
      case Seq(r) if table.isEmpty && df.queryExecution.analyzed.collectLeaves().size == 1 =>
        val t = r.table.asInstanceOf[FileTable]
        Some(spec(None, t.formatName.toLowerCase(Locale.ROOT), t.fileIndex.rootPaths, r.options.asCaseSensitiveMap().asScala.toMap,
          t.fileIndex.partitionSchema))
      case _ => Some(spec(table, SourceResolver.relation(df, what)))
    }

  private def spec(table: Option[String], rel: HadoopFsRelation): SourceSpec = {
    val format = rel.fileFormat match {
      case r: DataSourceRegister => r.shortName()
      case other => throw BloomIndexErrors.unsupportedFileFormat(other.getClass.getName)
    }
    spec(table, format, rel.location.rootPaths, rel.options, rel.partitionSchema)
  }

  /** A source of `format` over `roots`, read with `options` (less the paths the roots are). */
  private def spec(table: Option[String], format: String, roots: Seq[Path], options: Map[String, String],
      partitions: StructType): SourceSpec =
    SourceSpec(table, format, roots.map(_.toString), options.filter { case (k, _) => k != "path" && k != "paths" },
      partitions.fieldNames.toSeq)

  override def dataFrame(spark: SparkSession, s: SourceSpec): DataFrame = s.table match {
    case Some(t) =>
      SourceResolver.relist(spark, t)
      spark.table(t)
    case None => pathFrame(spark, s, None)
  }

  /**
   * A path source listed anew, its schema `schema` or inferred (a Parquet folder's from the one
   * file Spark's inference reads, without Spark's pass over the listing: [[parquetFrame]]).
   */
  private def pathFrame(spark: SparkSession, s: SourceSpec, schema: Option[StructType]): DataFrame = {
    // Path reads share the session's file status cache: drop it so deletes are seen.
    FileStatusCache.getOrCreate(spark).invalidateAll()
    FilesProvider.readV1(spark, s.format) {
      val reader = spark.read.format(s.format).options(s.options)
      schema match {
        case Some(given) => reader.schema(given).load(s.paths: _*)
        case None => parquetFrame(spark, s).getOrElse(reader.load(s.paths: _*))
      }
    }
  }

  override def queryFrame(spark: SparkSession, s: SourceSpec): DataFrame = s.table match {
    case Some(t) => spark.table(t)
    case None => dataFrame(spark, s)
  }

  /**
   * A path source read with the schema a write of this session wrote: listed (after the session's
   * file status cache is dropped, as [[dataFrame]]) without inferring the schema, which for
   * Parquet is a Spark job reading a footer. Catalog tables keep theirs in the catalog: None.
   */
  override def writtenFrame(spark: SparkSession, s: SourceSpec, schema: StructType): Option[DataFrame] =
    if (s.table.isDefined) None else Some(pathFrame(spark, s, Some(schema)))

  /** A path source's fresh frame was listed when it was made, after the cache was dropped: not listed again. */
  override def snapshotOfFresh(spark: SparkSession, s: SourceSpec, frame: DataFrame): Snapshot =
    if (s.table.isDefined) snapshot(spark, s, Some(frame))
    else {
      val rel = SourceResolver.relation(frame, s.display)
      Snapshot(rel, SourceResolver.filesOf(rel), None)
    }

  override def snapshot(spark: SparkSession, s: SourceSpec, frame: Option[DataFrame]): Snapshot = {
    val rel = SourceResolver.relation(frame.getOrElse(dataFrame(spark, s)), s.display)
    rel.location.refresh()
    Snapshot(rel, SourceResolver.filesOf(rel), None)
  }

  /**
   * A path source is listed without inferring its schema (which for Parquet sorts every path and
   * reads a footer: seconds at 100,000 files): an empty schema is given, the listing is the same.
   */
  override def currentFiles(spark: SparkSession, s: SourceSpec): (Seq[SourceFile], Option[Long]) =
    if (s.table.isDefined) super.currentFiles(spark, s)
    else {
      FileStatusCache.getOrCreate(spark).invalidateAll()
      // A format that refuses an empty schema is listed as a query would read it.
      val df = try Some(listedOnly(spark, s))
        catch { case scala.util.control.NonFatal(_) => None }
      // Listed just now, after the cache was dropped: no refresh (a second listing) needed.
      df.map(df => (SourceResolver.filesOf(SourceResolver.relation(df, s.display)), None: Option[Long]))
        .getOrElse(super.currentFiles(spark, s))
    }

  override def claims(plan: LogicalPlan): Boolean = plan match {
    case LogicalRelation(_: HadoopFsRelation, _, _, _, _) => true
    case DataSourceV2Relation(_: FileTable, _, _, _, _, _) => true
    // Type patterns, not the case classes' extractors: their arity differs between Spark versions.
    case s: DataSourceV2ScanRelation => s.scan.isInstanceOf[FileScan]
    case _ => false
  }

  override def describe(plan: LogicalPlan): Option[ScanSource] = plan match {
    case LogicalRelation(rel: HadoopFsRelation, _, table, _, _) => Some(of(rel, table))
    case r @ DataSourceV2Relation(t: FileTable, _, _, _, _, _) => Some(ofV2(r, t.dataSchema, t.fileIndex))
    case s: DataSourceV2ScanRelation => s.scan match {
      case scan: FileScan => Some(ofV2(s.relation, scan.dataSchema, FileIndexes.unwrap(scan.fileIndex)))
      case _ => None
    }
    case _ => None
  }

  /** A V1 scan of `rel`, a relation of catalog table `table` if it is one. */
  def of(rel: HadoopFsRelation, table: Option[CatalogTable]): ScanSource = {
    val index = FileIndexes.unwrap(rel.location)
    ScanSource(this, table.map(_.identifier.unquotedString), SourceResolver.formatOf(rel), index.rootPaths, rel.options,
      rel.dataSchema, index, table.map(_.createTime))
  }

  private def ofV2(r: DataSourceV2Relation, dataSchema: StructType, index: FileIndex): ScanSource = {
    val format = r.table match {
      case t: FileTable => t.formatName.toLowerCase(Locale.ROOT)
      case other => other.name()
    }
    ScanSource(this, r.identifier.map(_.toString), format, index.rootPaths,
      r.options.asCaseSensitiveMap().asScala.toMap, dataSchema, index)
  }

  override def scanOf(spark: SparkSession, s: SourceSpec, rel: HadoopFsRelation): ScanSource =
    of(rel, s.table.flatMap(SourceResolver.catalogTable(spark, _))).copy(table = s.table)

  override def decoding(conf: SQLConf, scan: ScanSource, field: StructField): ColumnDecoding =
    DecodingContext.fileColumn(conf, scan.format, scan.options, scan.dataSchema, field)

  /** A file index of plain files keeps the listing it took, while a file may be rewritten in place since. */
  override def listingMayBeStale: Boolean = true

  /**
   * An index over a catalog table answers for that table, by name (also where the target names
   * it less qualified); one over folders (`format.`path``) answers for any read of those folders,
   * by path or through a catalog table over them, also reads of more folders than the index's,
   * and reads by path of what lies inside them (a partition's folder, a glob, one file). A file
   * is skipped by its path, size and time, whatever the read's root: a file the index does not
   * hold as it is now is read anyway, and a read's column types, reader options and column
   * positions are compared per column, as its decoding context.
   */
  override def sameSource(index: SourceSpec, target: SourceIdentity): Boolean =
    target.provider == name && (whole(index, target) || under(index, target))

  /** A read by path of what lies inside an index's folder, and not of the folder itself. */
  override def readsInside(index: SourceSpec, target: SourceIdentity): Boolean =
    target.provider == name && !whole(index, target) && under(index, target)

  /**
   * The index's own source: its table, or a read of its folders (and maybe more), on the same
   * store where both name theirs ([[SourceProviders.comparableRoots]]).
   */
  private def whole(index: SourceSpec, target: SourceIdentity): Boolean = index.table match {
    case Some(t) => target.table.contains(t) || target.table.exists(x => t.endsWith("." + x))
    case None =>
      val (mine, theirs) = SourceProviders.comparableRoots(SourceProviders.identity(index), target)
      mine.subsetOf(theirs) && (target.table.isEmpty || mine == theirs)
  }

  /** A read by path of a folder or file inside one of the index's folders ([[FilesProvider.inside]]). */
  private def under(index: SourceSpec, target: SourceIdentity): Boolean =
    index.table.isEmpty && target.table.isEmpty && {
      val (mine, theirs) = SourceProviders.comparableRoots(SourceProviders.identity(index), target)
      theirs.exists(r => mine.exists(p => FilesProvider.inside(r, p)))
    }

  /**
   * A catalog table whose recorded name no longer names a table: renamed by another engine or
   * cluster (a rename through this session is followed as it happens, `TableEvents`), it is the
   * one table of the same database at the recorded location, of the recorded format, created
   * when the recorded one was ([[SessionTables.relocate]]). A managed table's rename moves its
   * folder: it is not found (ORPHANED, as before).
   */
  override def relocate(spark: SparkSession, entry: LogEntry): Relocation = {
    val s = entry.spec.source
    if (s.table.isEmpty) super.relocate(spark, entry)
    else if (exists(spark, s)) Relocation.Here
    else SessionTables.relocate(spark, entry, SessionTables.provides(_, s.format), s"format ${s.format}", createTime = true)
  }

  /**
   * A scan of another catalog table than the index's, over exactly the index's folder: maybe the
   * index's table renamed by another engine.
   */
  override def mayBeRenamed(index: SourceSpec, target: SourceIdentity): Boolean =
    target.provider == name && index.table.isDefined && target.table.isDefined &&
      SourceProviders.sameRoots(index, target)

  override def footerFilters(s: SourceSpec): Boolean = s.format.toLowerCase(Locale.ROOT) == "parquet"

  /** A file sink's micro-batches (`FileSink[<path>]`, Spark's `FileStreamSink`). */
  override def writtenBySink(description: String): Option[SourceIdentity] = description match {
    case FilesProvider.FileSink(path) => Some(SourceIdentity.of(name, None, Seq(path)))
    case _ => None
  }

  /** `INSERT` into a file source table or folder, and DataFrame writes to a path. */
  override def writtenBy(command: LogicalPlan): Option[SourceIdentity] = command match {
    case i: InsertIntoHadoopFsRelationCommand =>
      Some(SourceIdentity.of(name, i.catalogTable.map(_.identifier.unquotedString), Seq(i.outputPath.toString)))
    case _ => None
  }

  // ---------------------------------------------------------------- pruning

  override def pruneFiltered(spark: SparkSession, f: Filter): Option[LogicalPlan] = f.child match {
    case l @ LogicalRelation(rel: HadoopFsRelation, _, _, _, _) if !rel.location.isInstanceOf[BloomPrunedFileIndex] =>
      val partitionFilters = partitionFiltersOf(f.condition, rel)
      val base = partitionPruned(partitionFilters, rel)
      val (listing, files, unfiltered) = FilesProvider.listing(base, partitionFilters)
      ScanHistory.decide(spark, f, f.condition, of(rel, l.catalogTable), files, unfiltered).map { d =>
        val kept = for (at <- d.kept; of <- listing) yield new BloomPrunedFileIndex.Kept(new SparkShim.ListingMark(of), at.map(files(_)))
        val idx = new BloomPrunedFileIndex(base, d.skipped, d.info, kept, d.check)
        f.copy(child = SparkShim.withRelation(l, rel.copy(location = idx)(rel.sparkSession)))
      }
    case _ => None
  }

  /**
   * The conjuncts of `condition` Spark prunes `rel`'s partitions by (deterministic, no subquery,
   * on partition columns only); none for an unpartitioned relation. The condition sits right on
   * the relation: its attributes are the relation's own.
   */
  private def partitionFiltersOf(condition: Expression, rel: HadoopFsRelation): Seq[Expression] =
    if (rel.partitionSchema.isEmpty) Nil
    else {
      val filters = SparkShim.conjuncts(condition).filter(f => f.deterministic && !SubqueryExpression.hasSubquery(f))
      DataSourceUtils.getPartitionFiltersAndDataFilters(rel.partitionSchema, filters)._1
    }

  /**
   * A catalog table's file index, narrowed to the partitions `partitionFilters` select, as
   * Spark's PruneFileSourcePartitions (which runs after the pruning rule) would: so that only
   * those partitions are listed and probed. Other file indexes are returned as they are (their
   * partitions are pruned where they are listed: [[FilesProvider.listing]]).
   */
  private def partitionPruned(partitionFilters: Seq[Expression], rel: HadoopFsRelation): FileIndex =
    rel.location match {
      case c: CatalogFileIndex if partitionFilters.nonEmpty => c.filterPartitions(partitionFilters)
      case other => other
    }

  override def planPruned(spark: SparkSession, plan: LogicalPlan): Seq[SparkPlan] = plan match {
    // A type pattern: DataSourceV2ScanRelation's arity differs between Spark versions (SparkShim).
    case PhysicalOperation(_, filters, s: DataSourceV2ScanRelation) if s.scan.isInstanceOf[FileScan] =>
      val scan = s.scan.asInstanceOf[FileScan]
      v2Decision(spark, filters, s.relation, scan, recordAs = Some(s))
        .filter(_.skipped.nonEmpty)
        .flatMap(d => BloomPrunedV2FileIndex.prune(spark, scan, d))
        .map { newScan =>
          val pruned = plan.transformUp { case rel: DataSourceV2ScanRelation if rel eq s => SparkShim.withScan(s, newScan) }
          // Sessions that run strategies are classic ones.
          new DataSourceV2Strategy(spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession]).apply(pruned)
        }
        .getOrElse(Nil)
    case _ => Nil
  }

  /**
   * What the indexes decide for a V2 file scan under `filters` (None: no filter, pruning off, an
   * already pruned scan, or no index over the source); the scan is recorded in the workload
   * history as `recordAs` (its node) when planning it, not when explaining it.
   */
  private def v2Decision(spark: SparkSession, filters: Seq[Expression], r: DataSourceV2Relation,
      scan: FileScan, recordAs: Option[AnyRef] = None): Option[Decision] =
    if (filters.isEmpty || !filters.forall(_.deterministic) || !spark.sessionState.conf.getConf(BloomIndexSQLConf.PRUNING_ENABLED) ||
        scan.fileIndex.isInstanceOf[BloomPrunedV2FileIndex]) None
    else {
      val files = FilesProvider.statuses(scan.fileIndex.listFiles(scan.partitionFilters, scan.dataFilters))
      val source = ofV2(r, scan.dataSchema, FileIndexes.unwrap(scan.fileIndex))
      recordAs match {
        case Some(key) => ScanHistory.decide(spark, key, ScanPruner.conjunction(filters), source, files)
        case None => new IndexCatalog(spark).decide(ScanPruner.conjunction(filters), source, files)
      }
    }

  override def explain(ctx: ExplainContext, node: LogicalPlan): Option[ScanExplain] = node match {
    case s: DataSourceV2ScanRelation if s.scan.isInstanceOf[FileScan] =>
      // V2 scans are pruned at planning: the same decision, for the filters right above the scan.
      val what = s.relation.identifier.map(_.toString).getOrElse(s.relation.table.name())
      Some(ScanExplain(what, v2Decision(ctx.spark, ctx.filtersOn(s), s.relation, s.scan.asInstanceOf[FileScan]).map(_.info),
        s"scan of $what: no Bloom index pruned this V2 scan"))
    case LogicalRelation(rel: HadoopFsRelation, _, table, _, _) =>
      // V1 scans were pruned by the optimizer: the decision is in the optimized plan's file index.
      val (roots, info) = rel.location match {
        case b: BloomPrunedFileIndex => (b.delegate.rootPaths, Some(b.info))
        case other => (other.rootPaths, None)
      }
      val what = table.map(_.identifier.unquotedString).getOrElse(roots.headOption.map(_.toString).getOrElse("?"))
      // The rule leaves a scan over an index as it was only when no filter of it reads an indexed column.
      lazy val indexed = try new IndexCatalog(ctx.spark).anyIndexFor(of(rel, table)) catch { case NonFatal(_) => false }
      Some(ScanExplain(what, info, s"scan of $what: " + (if (info.isEmpty && indexed) "not pruned: no filter on it " +
        "that its Bloom indexes read (an equality, IN or text predicate on an indexed column)" else "no Bloom index for this source")))
    case _ => None
  }
}

object FilesProvider {

  /**
   * Whether the root `root` is a folder or file strictly inside the folder `folder` (both
   * [[SourceProviders.normalizeRoot]]ed, or both [[SourceProviders.qualifiedRoot]]ed), where a
   * listing of `folder` looks: not under a name Spark's listing leaves out ([[hidden]]), and not
   * inside a file system's root (`folder`'s path empty), which holds everything.
   */
  private[files] def inside(root: String, folder: String): Boolean = {
    val store = folder.indexOf("://")
    val path = if (store < 0) folder else { val p = folder.indexOf('/', store + 3); if (p < 0) "" else folder.substring(p) }
    path.nonEmpty && root.length > folder.length + 1 && root.startsWith(folder) && root.charAt(folder.length) == '/' &&
      root.substring(folder.length + 1).split('/').forall(n => !hidden(n))
  }

  /**
   * Whether Spark's listing of a folder leaves out an entry of this name, and all below it, by
   * its default rule (`HadoopFSUtils.shouldFilterOutPathName`, whose signature differs between
   * Spark 4.2 and 4.3): `_temporary`, a sink's `_spark_metadata`, `.staging`, a `._COPYING_`
   * file; not a partition's `_x=1`, nor `_metadata` and `_common_metadata`. Where a session hides
   * more, a read under it is taken as inside and finds none of its files held: they are read.
   */
  private[files] def hidden(name: String): Boolean =
    !(name.startsWith("_common_metadata") || name.startsWith("_metadata")) &&
      ((name.startsWith("_") && !name.contains("=")) || name.startsWith(".") || name.endsWith("._COPYING_"))

  /**
   * `body`, which reads a path source of `format`, with that format read through DataSource V1
   * (`spark.sql.sources.useV1SourceList`; the session's setting is put back after): index builds
   * and maintenance read a file relation, also where the session's queries of the format go
   * through V2 (their V2 file scans are pruned all the same).
   */
  private[files] def readV1[T](spark: SparkSession, format: String)(body: => T): T = {
    val conf = spark.sessionState.conf
    val key = SQLConf.USE_V1_SOURCE_LIST.key
    val list = conf.getConf(SQLConf.USE_V1_SOURCE_LIST)
    if (list.toLowerCase(Locale.ROOT).split(",").map(_.trim).contains(format.toLowerCase(Locale.ROOT))) body
    else {
      val set = conf.contains(key)
      conf.setConfString(key, s"$list,$format")
      try body finally { if (set) conf.setConfString(key, list) else conf.unsetConf(key) }
    }
  }

  /**
   * The statuses of a file index's listing, in its order, in one array (a scan of a million
   * files: no collection built and copied again per file; the catalog probes them by position).
   */
  private[files] def statuses(dirs: Seq[org.apache.spark.sql.execution.datasources.PartitionDirectory]): IndexedSeq[org.apache.hadoop.fs.FileStatus] = {
    var n = 0
    dirs.foreach(d => n += d.files.size)
    val out = new Array[org.apache.hadoop.fs.FileStatus](n)
    var k = 0
    dirs.foreach(_.files.foreach { f => out(k) = f.fileStatus; k += 1 })
    scala.collection.immutable.ArraySeq.unsafeWrapArray(out)
  }

  /**
   * What a V1 scan of `index` reads, for a decision: a partitioned or other file index's
   * `listFiles` of the partitions `partitionFilters` select; for an unpartitioned `PartitioningAwareFileIndex` (a folder read by path, an
   * unpartitioned catalog table) its `allFiles`, the listing before `listFiles`' last filter,
   * which the decision's probe applies instead (`true`: unfiltered; see
   * [[bloomindex.catalog.IndexCatalog.decide]]). That filter looks at every file's name: at a
   * million files, a third of a second on the planning thread, and the wrapping of each status
   * `listFiles` does next as much again. `allFiles` itself, where it is no more than the roots'
   * folders in the listing, is taken from the listing ([[SparkShim.allFilesOf]]). First, the
   * object that is the index's listing then, if it has one ([[SparkShim.listingOf]]: taken before
   * the files, so that a `refresh` between the two makes it not the index's listing any more,
   * never the reverse).
   */
  private[files] def listing(index: FileIndex, partitionFilters: Seq[Expression] = Nil)
      : (Option[AnyRef], IndexedSeq[org.apache.hadoop.fs.FileStatus], Boolean) =
    index match {
      case p: PartitioningAwareFileIndex if p.partitionSchema.isEmpty =>
        val of = SparkShim.listingOf(p)
        (of, of.flatMap(SparkShim.allFilesOf(p, _)).getOrElse(p.allFiles() match {
          case s: IndexedSeq[org.apache.hadoop.fs.FileStatus] => s
          case other =>
            // A list (the roots' files, flatMapped): into an array of its size, not grown.
            val out = new Array[org.apache.hadoop.fs.FileStatus](other.size)
            var k = 0
            other.foreach { f => out(k) = f; k += 1 }
            scala.collection.immutable.ArraySeq.unsafeWrapArray(out)
        }), true)
      // A partitioned folder's index lists the partitions the scan reads (the scan prunes them
      // so too: FileSourceScanExec's listFiles with the same filters), not every partition.
      case other => (None, statuses(other.listFiles(partitionFilters, Nil)), false)
    }

  /**
   * A Parquet folder as `spark.read.parquet` reads it without a schema, the same relation (its
   * listing, partition columns, data schema, options), without Spark's inference going over the
   * whole listing: Parquet's inference, unless it merges schemas, reads the footer of one file
   * (`ParquetUtils.inferSchema`: the first `_common_metadata`, else the first `_metadata`, else
   * the first other file, in the order of the paths' strings), but first sorts every listed
   * status by its path's string, made again on each comparison: about 12 to 15 s at a million
   * files (bench/README.md). Here the folder is listed once with an empty schema, nothing
   * inferred (as [[currentFiles]] lists it), that file is found in one pass, the format infers the schema from
   * it alone (the same call Spark makes, on the one file Spark's would read), and the relation
   * takes it as Spark's `DataSource` does (every field nullable). None (the caller reads the
   * folder as Spark does) for other formats, a merging read (`mergeSchema`), a file sink's
   * folder (listed from its log), a folder without files or whose inferred schema Spark would
   * refuse (a name twice), and any failure on the way (a footer unreadable): Spark's read then
   * says why.
   */
  private[source] def parquetFrame(spark: SparkSession, s: SourceSpec): Option[DataFrame] = {
    val conf = spark.sessionState.conf
    if (!s.format.equalsIgnoreCase("parquet")) return None
    // Within the try: an option Spark refuses (a bad `compression`, say) is for Spark's read to
    // report, in its own order (a missing folder first).
    try {
      if (new ParquetOptions(CaseInsensitiveMap(s.options), conf).mergeSchema) return None
      val listed = listedOnly(spark, s)
      val rel = SourceResolver.relation(listed, s.display)
      // Spark's own listing of a folder (a file sink's output, listed from its `_spark_metadata`
      // log, takes another path in Spark's DataSource: its schema is not made nullable there).
      val files = rel.location match {
        case p: InMemoryFileIndex if p.getClass == classOf[InMemoryFileIndex] => p.allFiles()
        case _ => return None
      }
      parquetSchemaFile(files)
        .flatMap(f => rel.fileFormat.inferSchema(spark, rel.options - "path", Seq(f)))
        .filter(data => data.nonEmpty && !repeatsName(data, conf.caseSensitiveAnalysis))
        .map(data => spark.baseRelationToDataFrame(rel.copy(dataSchema = Schemas.asNullable(data))(rel.sparkSession)))
    } catch {
      case scala.util.control.NonFatal(_) => None
    }
  }

  /**
   * Path source `s` listed, nothing inferred: read with an empty schema (its partition columns
   * are still inferred from the paths, as without a schema). Throws for a format that refuses an
   * empty schema.
   */
  private def listedOnly(spark: SparkSession, s: SourceSpec): DataFrame = FilesProvider.readV1(spark, s.format) {
    spark.read.format(s.format).options(s.options).schema(new StructType()).load(s.paths: _*)
  }

  /**
   * The file Parquet's inference reads when it does not merge schemas, of `files` (a listing):
   * the first `_common_metadata`, else the first `_metadata`, else the first other file, by the
   * path's string (`String.compareTo`, as Spark sorts them); None for no file.
   */
  private[source] def parquetSchemaFile(files: Seq[org.apache.hadoop.fs.FileStatus]): Option[org.apache.hadoop.fs.FileStatus] = {
    // Per kind (0: _common_metadata, 1: _metadata, 2: any other), the first so far and its path's string.
    val first = new Array[org.apache.hadoop.fs.FileStatus](3)
    val key = new Array[String](3)
    files.foreach { f =>
      val kind = f.getPath.getName match {
        case "_common_metadata" => 0
        case "_metadata" => 1
        case _ => 2
      }
      val path = f.getPath.toString
      if (first(kind) == null || path.compareTo(key(kind)) < 0) { first(kind) = f; key(kind) = path }
    }
    first.find(_ != null)
  }

  /** Whether `schema` holds a name twice among the fields of one struct, nested ones too (under `caseSensitive` or not). */
  private def repeatsName(schema: org.apache.spark.sql.types.DataType, caseSensitive: Boolean): Boolean = {
    import org.apache.spark.sql.types.{ArrayType, MapType}
    schema match {
      case st: StructType =>
        val names = st.fieldNames.map(n => if (caseSensitive) n else n.toLowerCase(Locale.ROOT))
        names.distinct.length != names.length || st.fields.exists(f => repeatsName(f.dataType, caseSensitive))
      case a: ArrayType => repeatsName(a.elementType, caseSensitive)
      case m: MapType => repeatsName(m.keyType, caseSensitive) || repeatsName(m.valueType, caseSensitive)
      case _ => false
    }
  }

  /** How Spark's file sink describes itself in a streaming query's progress. */
  private val FileSink = """FileSink\[(.+)\]""".r

  /** Formats `format.`path`` may name. */
  val PathFormats: Set[String] = Set("parquet", "orc", "csv", "json", "avro", "text")
}
