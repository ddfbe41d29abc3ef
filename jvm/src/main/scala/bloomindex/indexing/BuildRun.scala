package bloomindex.indexing

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import bloomindex.crypto.IndexEncryption
import bloomindex.filter.FilterAlgorithm
import bloomindex.log.IndexSpec
import bloomindex.source.{SourceFile, SourceProviders}
import bloomindex.layout.{IndexFiles, IndexLayout, IndexRow, IndexSchemas}
import bloomindex.compat.ConfWritable

import org.apache.datasketches.hll.HllSketch
import org.apache.spark.internal.Logging
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.storage.StorageLevel
import org.apache.spark.util.CollectionAccumulator

/**
 * The jobs of one build (see [[IndexBuilder]]). In the common case there are one or two:
 * for Parquet, one that writes the filters the files' footers carry; then, for the files (and
 * columns) without fitting ones, one that reads the data and writes the index rows as it
 * goes, nothing cached. Split files and global filters cache the data pass's output (a
 * shuffle and a second job use it); files too large to count exactly, and new global
 * filters, add a second read whose rows are appended. Rows from more tasks than a column keeps
 * probe files are cached by the read and written by fewer tasks ([[sized]]).
 */
private final class BuildRun(
    spark: SparkSession,
    spec: IndexSpec,
    relation: HadoopFsRelation,
    allFiles: Seq[SourceFile],
    dir: String,
    baseGlobal: Map[String, Array[Byte]],
    reusedRows: Seq[IndexFiles.RowWritten] = Nil,
    prebuilt: Seq[FileFilter] = Nil,
    baseGlobalNdv: Map[String, Long] = Map.empty) extends Logging {

  import DistinctPass._

  private val sc = spark.sparkContext
  /** Prebuilt filters up to this many bytes are written on the driver. */
  private val DriverWriteBytes = 64L << 20
  /**
   * The files to read: those without `prebuilt` rows (built by the write that wrote them,
   * [[WriteTaskFilters]]; never with global filters, which need every value).
   */
  private val files: Seq[SourceFile] = {
    require(prebuilt.isEmpty || !spec.global, "prebuilt filters with a global filter")
    val done = prebuilt.iterator.map(_.path).toSet
    allFiles.filterNot(f => done.contains(f.path))
  }
  private val cols = spec.columns.toArray
  private val n = cols.length
  private val maxDistinct = spark.sessionState.conf.getConf(BloomIndexSQLConf.BUILD_MAX_DISTINCT_PER_FILE)
  private val cached = mutable.ArrayBuffer[RDD[_]]()
  /** Every row written, carried ones included. */
  private val written = mutable.ArrayBuffer[IndexFiles.RowWritten]()
  private var globals: Map[String, Long] = Map.empty
  private lazy val hadoopConf = ConfWritable.broadcast(spark)
  /** How the rows are encrypted ([[IndexEncryption]]), recorded in `dir` before the build. */
  private lazy val encryption = IndexEncryption.plan(driverConf, dir)
  /** The session's Hadoop configuration, on the driver (what [[hadoopConf]] ships to tasks). */
  private lazy val driverConf = spark.sessionState.newHadoopConf()
  /**
   * The columns whose filters are written block-major ([[ProbeFile]]): all, in the layouts
   * that have probe files.
   */
  lazy val probes: Map[String, FilterAlgorithm] =
    if (!layout.probed) Map.empty else cols.map(c => c.name -> c.algorithm).toMap

  /** The data's layout ([[IndexLayout.forBuild]]; `blocks`: a test asks for log format 4's). */
  lazy val layout: IndexLayout = IndexBuilder.layoutFor(spark, dir)

  def globalNdv: Map[String, Long] = globals

  /** Every row written, carried ones included (for [[IndexSummary]]). */
  def rowsWritten: Seq[IndexFiles.RowWritten] = written.toSeq

  /**
   * The source files this version's rows are of (written, and kept in earlier versions' probe
   * files), in one pass over the rows (a refresh of a million files carries a million rows):
   * how many, their bytes (each file's size once), how many had no data read (every column's
   * filter from the footer), and the filters' bytes (every row's).
   */
  def indexed(): BuildRun.Indexed = {
    final class OfFile(val size: Long) { var fromFooters = true }
    val byPath = new java.util.HashMap[String, OfFile]()
    var filterBytes = 0L
    (written.iterator ++ reusedRows.iterator).foreach { r =>
      filterBytes += r.filterBytes
      var f = byPath.get(r.path)
      if (f == null) { f = new OfFile(r.fileSize); byPath.put(r.path, f) }
      if (!r.fromFooter) f.fromFooters = false
    }
    var (bytes, fromFooters) = (0L, 0L)
    byPath.values.forEach { f => bytes += f.size; if (f.fromFooters) fromFooters += 1 }
    BuildRun.Indexed(byPath.size.toLong, bytes, fromFooters, filterBytes)
  }

  private def timed[T](what: String)(f: => T): T = {
    val t0 = System.nanoTime()
    try f finally logInfo(f"Bloom index ${spec.name}: $what took ${(System.nanoTime() - t0) / 1e9}%.2f s")
  }

  private def cache[T](rdd: RDD[T]): RDD[T] = {
    cached += rdd
    rdd.persist(StorageLevel.MEMORY_AND_DISK)
  }

  /** Index rows as Parquet into `dir`: `carried` ones and those of the new files. */
  def write(carried: Option[DataFrame]): Unit = try {
    var unwritten = carried
    if (prebuilt.nonEmpty) {
      // Rows the write's tasks built: written (with the carried ones) without reading data; few
      // of them, alone, on the driver (no Spark job).
      val bytes = prebuilt.iterator.map(_.filter.length.toLong).sum
      timed(s"writing the rows of ${prebuilt.map(_.path).distinct.size} files their write built") {
        if (unwritten.isEmpty && bytes <= DriverWriteBytes) {
          val byPath = allFiles.map(f => f.path -> f).toMap
          val names = cols.map(_.name)
          written ++= IndexFiles.writeOnDriver(prebuilt.iterator.map { f =>
            val file = byPath(f.path)
            IndexRow(f.path, file.size, file.modificationTime, names(f.column), f.rows, f.nulls, f.ndv, f.filter, "data")
          }, dir, driverConf, encryption, probes, layout == IndexLayout.Blocks).flatMap(_.rows)
        } else {
          val slices = math.max(1, math.min(sc.defaultParallelism * 4L, bytes / DriverWriteBytes + 1).toInt)
          writeRows(Seq(sc.parallelize(prebuilt, slices)), unwritten)
        }
      }
      unwritten = None
    }
    if (files.isEmpty) {
      if (spec.global) IndexBuilder.writeGlobals(spark, spec, dir, Map.empty, Map.empty, baseGlobal,
        cols.map(c => IndexFilters.globalBytes(c, 1)), baseGlobalNdv)
      if (prebuilt.isEmpty) writeRows(Nil, unwritten)
      return
    }
    val needs = sc.collectionAccumulator[NeedsInsert]("bloomindex files to read again")
    // Parquet: first the filters its files carry, with the carried rows; the pairs whose
    // footers do not qualify come back in `rejected`. Otherwise every file is read.
    val wanted: Map[String, Array[Boolean]] =
      if (!footersApply) files.map(f => f.path -> Array.fill(n)(true)).toMap
      else {
        val rejected = sc.collectionAccumulator[(String, Int, String)]("bloomindex footer filters not used")
        timed(s"writing the footer filters of ${files.size} files")(writeRows(Seq(footerFilters(rejected)), unwritten))
        unwritten = None
        val unfit = rejected.value.asScala.toSeq.distinct
        logInfo(s"Bloom index ${spec.name}: ${files.size * n - unfit.size} of ${files.size * n} (file, column) " +
          "filters from Parquet footers" + unfit.map(u => s"${cols(u._2).name}: ${u._3}").groupBy(identity).toSeq
            .sortBy(-_._2.size).take(5).map { case (why, k) => s"; ${k.size} x $why" }.mkString)
        unfit.groupBy(_._1).map { case (p, xs) => p -> cols.indices.map(i => xs.exists(_._2 == i)).toArray }
      }
    val dataFiles = files.filter(f => wanted.contains(f.path))
    val data = if (dataFiles.isEmpty) None else Some(dataPass(dataFiles, wanted, needs))
    data.foreach { case (filters, _) =>
      timed(s"writing the rows of ${dataFiles.size} files (reading them, unless cached)")(writeRows(Seq(filters), unwritten))
    }
    secondPass(wanted, data.map(_._2), needs.value.asScala.toSeq.distinct)
  } finally cached.foreach(_.unpersist(blocking = false))

  /** Writes the index rows of `filters` and `carried` into `dir` in one job ([[IndexFiles]]). */
  private def writeRows(filters: Seq[RDD[FileFilter]], carried: Option[DataFrame]): Unit = {
    val byPath = sc.broadcast(allFiles.map(f => f.path -> (f.size, f.modificationTime)).toMap)
    val names = cols.map(_.name)
    val fresh = filters.map(_.map { f =>
      val (size, mtime) = byPath.value(f.path)
      IndexRow(f.path, size, mtime, names(f.column), f.rows, f.nulls, f.ndv, f.filter, if (f.fromFooter) "footer" else "data")
    })
    val old = carried.map(_.select(IndexSchemas.IndexSchema.fieldNames.map(col).toIndexedSeq: _*).rdd.map { r =>
      IndexRow(r.getString(0), r.getLong(1), r.getLong(2), r.getString(3), r.getLong(4), r.getLong(5), r.getLong(6),
        r.getAs[Array[Byte]](7), r.getString(8))
    })
    val all = fresh ++ old
    val failOnce = Option(spark.sessionState.conf.getConf(BloomIndexSQLConf.TEST_FAIL_INDEX_WRITE_ONCE)).filter(_.nonEmpty)
    if (all.nonEmpty) written ++= IndexFiles.write(sized(sc.union(all)), dir, hadoopConf, encryption, probes,
      layout == IndexLayout.Blocks, failOnce).flatMap(_.rows)
    else IndexFiles.write(sc.emptyRDD[IndexRow], dir, hadoopConf, encryption, probes, layout == IndexLayout.Blocks)
  }

  /**
   * The rows in at most `max(64, 4 x default parallelism)` tasks: each task writes one index file
   * per column, and a query opens every file of the columns it probes. Many small source files
   * (one data-pass task per 32 of them) would otherwise make thousands of tiny index files; the
   * tasks are merged without a shuffle, so the read keeps 4 tasks per core at least.
   */
  private def fewFiles(rows: RDD[IndexRow]): RDD[IndexRow] =
    if (rows.getNumPartitions > maxWriteTasks) rows.coalesce(maxWriteTasks) else rows

  private def maxWriteTasks: Int = math.max(64, sc.defaultParallelism * 4)

  /**
   * Probe files sized by their bytes, not by the tasks that read the data: a query's first read
   * of a column is one request per probe file (on an object store, each a request's latency and
   * its client's work on the driver). Where the rows come from more tasks than a column keeps
   * probe files (`spark.bloomindex.refresh.maxProbeFiles`, the bound a refresh compacts to), they
   * are cached as the tasks that read the data compute them (one job, every task), then written
   * by one task per `spark.bloomindex.optimize.targetFileBytes` of the largest column's rows (the
   * size OPTIMIZE writes; at most [[fewFiles]]' bound). Layouts without probe files: [[fewFiles]].
   */
  private def sized(rows: RDD[IndexRow]): RDD[IndexRow] = {
    val maxFiles = spark.sessionState.conf.getConf(BloomIndexSQLConf.REFRESH_MAX_PROBE_FILES)
    if (!layout.probed || rows.getNumPartitions <= maxFiles) return fewFiles(rows)
    val kept = cache(rows)
    val bytes = kept.mapPartitions { it =>
      val byColumn = mutable.HashMap.empty[String, Long]
      it.foreach(r => byColumn(r.column) = byColumn.getOrElse(r.column, 0L) + BuildRun.probeBytes(r))
      byColumn.iterator // pairs: a task's result of types Spark registers with Kryo
    }.collect().groupMapReduce(_._1)(_._2)(_ + _)
    val largest = bytes.values.maxOption.getOrElse(0L)
    val parts = math.min(math.min(rows.getNumPartitions, maxWriteTasks).toLong,
      IndexFiles.probeFilesFor(largest, spark.sessionState.conf.getConf(BloomIndexSQLConf.OPTIMIZE_TARGET_FILE_BYTES))).toInt
    logInfo(s"Bloom index ${spec.name}: rows of ${rows.getNumPartitions} tasks (largest column about $largest bytes) " +
      s"written as $parts probe files per column")
    kept.coalesce(parts)
  }

  private def footersApply: Boolean =
    if (!SourceProviders.of(spec.source).footerFilters(spec.source) || !spark.sessionState.conf.getConf(BloomIndexSQLConf.BUILD_FOOTER_FILTERS)) false
    else if (!cols.exists(_.algorithm == FilterAlgorithm.SplitBlock)) false // footers hold sbbf filters only
    else if (spec.global) {
      logInfo(s"Bloom index ${spec.name}: a global filter needs every value, so every file's data is read")
      false
    } else if (!FooterFilters.sampleHasFilters(spark, files, cols.toSeq,
        spark.sessionState.conf.parquetFieldIdReadEnabled &&
          org.apache.spark.sql.execution.datasources.parquet.ParquetUtils.hasFieldIds(relation.dataSchema))) {
      logInfo(s"Bloom index ${spec.name}: sampled Parquet footers carry no Bloom filter for the columns; reading the data")
      false
    } else true

  /** The footer filters that qualify and fit; the other (file, column) pairs go to `rejected`. */
  private def footerFilters(rejected: CollectionAccumulator[(String, Int, String)]): RDD[FileFilter] =
    FooterFilters.read(spark, hadoopConf, files, cols.toSeq, relation.dataSchema, relation.options).flatMap { o =>
      if (o.filter.isEmpty) rejected.add((o.path, o.column, o.reason))
      o.filter
    }

  /**
   * The data pass over `dataFiles` (columns per `wanted`): the filters to write, and the pass's
   * own output (cached when split files or global filters need it again, for [[secondPass]]).
   */
  private def dataPass(dataFiles: Seq[SourceFile], wanted: Map[String, Array[Boolean]],
      needs: CollectionAccumulator[NeedsInsert]): (RDD[FileFilter], RDD[Out]) = {
    val scan = new BuildScan(spark, relation, dataFiles, cols.toSeq)
    logInfo(s"Bloom index ${spec.name}: reading ${dataFiles.size} files " +
      s"(${if (scan.columnar) "columnar batches" else "rows"}, ${scan.splitFiles.size} split over tasks)")
    val split = scan.splitFiles
    val assigned = scan.filesByPartition
    // Global filters are filled in this pass when their size is already known (an incremental
    // refresh keeps the existing filter's size), else in a second read sized from the HLL union.
    val knownGlobalSizes: Array[Int] =
      if (spec.global && baseGlobal.nonEmpty) cols.map(c => c.algorithm.fromBytes(baseGlobal(c.name)).numBytes)
      else Array.empty
    val wantedB = sc.broadcast(wanted)
    val (colsL, mdx, global) = (cols, maxDistinct, spec.global)
    val report = (x: NeedsInsert) => needs.add(x)
    val pass = scan.run(wantedB, countFiles = true) { (task, batches) =>
      DistinctPass.task(batches, assigned(task), wantedB.value, colsL, split, mdx, knownGlobalSizes, global, report)
    }
    // Cached (for the second pass), and then computed in a job of its own before anything else
    // runs on it. Files over the distinct limit are reported to the driver (`needs`) as the
    // output is computed; a task of a later job that computed it and failed after it was cached
    // (in its index file write) would run again from the cache without reporting, and those
    // files would get no row. Here a task ends right after its output is cached, and the
    // reports of its successful run count.
    val first = if (split.isEmpty && !global) pass else {
      val kept = cache(pass)
      timed(s"reading ${dataFiles.size} files (cached for the second pass)")(kept.count())
      kept
    }
    // Files Spark planned no task for (none seen so far; empty ones, should it skip them) hold nothing.
    val unplanned = dataFiles.map(_.path).toSet -- assigned.iterator.flatten
    val empty = for (p <- unplanned.toSeq; i <- cols.indices if wanted(p)(i))
      yield FileFilter(p, i, 0L, 0L, 0L, IndexFilters.empty(cols(i)).toBytes, fromFooter = false)
    val done = first.flatMap { case Done(f) => Some(f); case _ => None }.union(sc.parallelize(empty, 1))
    if (split.isEmpty) (done, first)
    else {
      val merged = DistinctPass.mergePartials(first.flatMap { case p: Partial => Some(p); case _ => None },
        cols, mdx, math.max(1, math.min(split.size * n, sc.defaultParallelism)))
      val fromSplit = merged.flatMap {
        case Left(f) => Some(f)
        case Right(x) => report(x); None
      }
      (done.union(fromSplit), first)
    }
  }

  /**
   * After the rows of the first read are written: global filters (sized from the HLL union
   * unless known), and a second read for files over the distinct limit, whose rows are appended.
   */
  private def secondPass(wanted: Map[String, Array[Boolean]], first: Option[RDD[Out]],
      needs: Seq[NeedsInsert]): Unit = {
    var globalBits = Map.empty[Int, Array[Byte]] // filled partial global filters, OR-ed
    var globalSizes = Array.empty[Int]
    val globalPending = spec.global && baseGlobal.isEmpty
    if (spec.global) {
      val taskGlobals = first.get.flatMap { case g: TaskGlobal => Some(g); case _ => None }
      val unions = Array.fill(n)(IndexFilters.union())
      taskGlobals.map(g => (g.column, g.sketch)).collect().foreach { case (i, sk) => unions(i).update(HllSketch.heapify(sk)) }
      val est = unions.map(u => math.round(u.getEstimate))
      globals = cols.indices.map(i => cols(i).name -> est(i)).toMap
      if (globalPending) {
        globalSizes = cols.indices.map(i => IndexFilters.globalBytes(cols(i), IndexFilters.headroom(est(i), Long.MaxValue))).toArray
      } else {
        globalSizes = cols.map(c => c.algorithm.fromBytes(baseGlobal(c.name)).numBytes)
        globalBits = taskGlobals.flatMap(g => Option(g.bitset).map(g.column -> _)).reduceByKey(InsertPass.or _).collect().toMap
      }
    }
    if (needs.nonEmpty || globalPending) {
      val sizes: Map[String, Array[Int]] = needs.groupBy(_.path).map { case (p, xs) =>
        val a = new Array[Int](n)
        xs.foreach(x => a(x.column) = IndexFilters.fileBytes(cols(x.column), IndexFilters.headroom(x.ndv, IndexFilters.distinctBound(cols(x.column), x.rows - x.nulls))))
        p -> a
      }
      val again = files.filter(f => if (globalPending) wanted.contains(f.path) else sizes.contains(f.path))
      logInfo(s"Bloom index ${spec.name}: reading ${again.size} files again (${needs.size} filters over " +
        s"${BloomIndexSQLConf.BUILD_MAX_DISTINCT_PER_FILE.key}${if (globalPending) ", global filters" else ""})")
      val wantedAgain = sc.broadcast(again.map(f => f.path ->
        (if (globalPending) wanted(f.path) else sizes(f.path).map(_ > 0))).toMap)
      // The files read again also fill the global filters: the first pass left their values out.
      val fill = globalSizes
      val colsF = cols.toSeq
      val second = cache(new BuildScan(spark, relation, again, cols.toSeq).run(wantedAgain)(
        (_, batches) => InsertPass.task(batches, colsF, sizes, fill)).reduceByKey(InsertPass.or _))
      if (spec.global) {
        val more = second.filter(_._1._1 == InsertPass.GlobalKey).map { case ((_, i), b) => i -> b }.collect()
        more.foreach { case (i, b) => globalBits += i -> globalBits.get(i).map(InsertPass.or(_, b)).getOrElse(b) }
      }
      if (needs.nonEmpty) {
        val info = sc.broadcast(needs.map(x => (x.path, x.column) -> x).toMap)
        val filters = second.filter(_._1._1 != InsertPass.GlobalKey).map { case (key, bits) =>
          val x = info.value(key)
          val c = colsF(x.column)
          FileFilter(x.path, x.column, x.rows, x.nulls, x.ndv, c.algorithm.fromBitset(bits, c.fpp).toBytes, fromFooter = false)
        }
        timed(s"writing the rows of ${needs.map(_.path).distinct.size} files read again")(writeRows(Seq(filters), None))
      }
    }
    if (spec.global) {
      IndexBuilder.writeGlobals(spark, spec, dir, globalBits,
        cols.indices.map(i => i -> globals(cols(i).name)).toMap, baseGlobal, globalSizes, baseGlobalNdv)
    }
  }
}

private object BuildRun {

  /** What [[BuildRun.indexed]] counts: source files, their bytes, those whose filters all came from footers, the filters' bytes. */
  final case class Indexed(count: Long, bytes: Long, fromFooters: Long, filterBytes: Long)

  /** About what `r` takes in a probe file: its filter, its file's name (footers store paths under a shared prefix) and its numbers. */
  def probeBytes(r: IndexRow): Long = r.filter.length.toLong + (r.path.length - r.path.lastIndexOf('/') - 1) + 16
}
