package bloomindex.index

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import bloomindex.BloomIndexConf

import org.apache.datasketches.hll.HllSketch
import org.apache.spark.internal.Logging
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.storage.StorageLevel
import org.apache.spark.util.CollectionAccumulator

/**
 * The jobs of one build (see [[IndexBuilder]]). In the common case there are two: the
 * footer check (Parquet only) and one job that reads the data and writes the index rows as
 * it goes, nothing cached. Split files and global filters cache the data pass's output (a
 * shuffle and a second job use it); files too large to count exactly, and new global
 * filters, add a second read whose rows are appended.
 */
private final class BuildRun(
    spark: SparkSession,
    spec: IndexSpec,
    relation: HadoopFsRelation,
    files: Seq[SourceFile],
    dir: String,
    baseGlobal: Map[String, Array[Byte]]) extends Logging {

  import DistinctPass._

  private val sc = spark.sparkContext
  private val cols = spec.columns.toArray
  private val n = cols.length
  private val maxDistinct = BloomIndexConf.maxDistinct(spark)
  private val cached = mutable.ArrayBuffer[RDD[_]]()
  /** (path, column, filter bytes, from the footer) of every row written; tasks re-run may repeat one. */
  private val written: CollectionAccumulator[(String, Int, Int, Boolean)] = sc.collectionAccumulator("bloomindex rows")
  private var globals: Map[String, Long] = Map.empty
  private lazy val hadoopConf = FooterFilters.hadoopConf(spark)

  private def rows: Map[(String, Int), (Int, Boolean)] =
    written.value.asScala.map { case (p, i, len, footer) => (p, i) -> (len, footer) }.toMap

  def globalNdv: Map[String, Long] = globals

  def filterBytes: Long = rows.valuesIterator.map(_._1.toLong).sum

  /** Files none of whose data was read: every column's filter came from the footer. */
  def filesFromFooters: Long = rows.toSeq.groupBy(_._1._1).count { case (_, rs) => rs.forall(_._2._2) }.toLong

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
    if (files.isEmpty) {
      if (spec.global) IndexBuilder.writeGlobals(spark, spec, dir, Map.empty, Map.empty, baseGlobal,
        cols.map(c => IndexFilters.globalBytes(c, 1)))
      IndexBuilder.writeRows(carried.getOrElse(spark.createDataFrame(sc.emptyRDD[Row], IndexBuilder.IndexSchema)), dir)
      return
    }
    val candidates = footerCandidates()
    val wanted = wantedExcept(files, candidates)
    val rejected = sc.collectionAccumulator[(String, Int, String)]("bloomindex footer filters not used")
    val footerRows = if (candidates.isEmpty) None else Some(footerFilters(candidates, rejected))
    val dataFiles = files.filter(f => wanted.contains(f.path))
    val needs = sc.collectionAccumulator[NeedsInsert]("bloomindex files to read again")
    val data = if (dataFiles.isEmpty) None else Some(dataPass(dataFiles, wanted, needs))
    val newRows = toRows(footerRows.toSeq ++ data.map(_._1).toSeq)
    timed(s"writing the rows of ${files.size} files (${dataFiles.size} read)") {
      IndexBuilder.writeRows(carried.map(_.unionByName(newRows)).getOrElse(newRows), dir)
    }
    // Footer filters found unfit on reading them (over the fpp, sizes differ): from the data.
    val unfit = rejected.value.asScala.toSeq.distinct
    var allWanted = wanted
    if (unfit.nonEmpty) {
      logInfo(s"Bloom index ${spec.name}: ${unfit.size} footer filters not used, built from the data" +
        unfit.map(_._3).groupBy(identity).toSeq.sortBy(-_._2.size).take(5).map { case (why, k) => s"; ${k.size} x $why" }.mkString)
      val again = unfit.groupBy(_._1).map { case (p, xs) => p -> cols.indices.map(i => xs.exists(_._2 == i)).toArray }
      val againFiles = files.filter(f => again.contains(f.path))
      timed(s"writing the rows of ${againFiles.size} files whose footer filters did not fit") {
        IndexBuilder.writeRows(toRows(Seq(dataPass(againFiles, again, needs)._1)), dir)
      }
      allWanted = allWanted ++ again.map { case (p, w) => p -> allWanted.get(p).map(_.zip(w).map(x => x._1 || x._2)).getOrElse(w) }
    }
    secondPass(allWanted, data.map(_._2), needs.value.asScala.toSeq.distinct)
  } finally cached.foreach(_.unpersist(blocking = false))

  /** Index rows of `filters`, noting each one in [[written]] as it goes to the writer. */
  private def toRows(filters: Seq[RDD[FileFilter]]): DataFrame = {
    val byPath = sc.broadcast(files.map(f => f.path -> (f.size, f.modificationTime)).toMap)
    val names = cols.map(_.name)
    val acc = written
    val rows = sc.union(filters).map { f =>
      val (size, mtime) = byPath.value(f.path)
      acc.add((f.path, f.column, f.filter.length, f.fromFooter))
      Row(f.path, size, mtime, names(f.column), f.rows, f.nulls, f.ndv, f.filter, if (f.fromFooter) "footer" else "data")
    }
    spark.createDataFrame(rows, IndexBuilder.IndexSchema)
  }

  /** For each file, the columns not taken from its footer (files with none are left out). */
  private def wantedExcept(fs: Seq[SourceFile], fromFooter: Set[(String, Int)]): Map[String, Array[Boolean]] =
    fs.map(f => f.path -> cols.indices.map(i => !fromFooter((f.path, i))).toArray).filter(_._2.exists(identity)).toMap

  /** The (file, column) pairs whose footers qualify (their filters are checked when read). */
  private def footerCandidates(): Set[(String, Int)] =
    if (spec.source.format != "parquet" || !BloomIndexConf.footerFilters(spark)) Set.empty
    else if (spec.global) {
      logInfo(s"Bloom index ${spec.name}: a global filter needs every value, so every file's data is read")
      Set.empty
    } else {
      val seen = timed("checking Parquet footers")(
        FooterFilters.check(spark, hadoopConf, files, cols.toSeq).map(o => (o.path, o.column, o.ok, o.reason)).collect())
      val ok = seen.collect { case (p, i, true, _) => (p, i) }.toSet
      val reasons = seen.collect { case (_, i, false, why) => s"${cols(i).name}: $why" }.groupBy(identity)
      logInfo(s"Bloom index ${spec.name}: ${ok.size} of ${seen.length} (file, column) filters may come from " +
        "Parquet footers" + reasons.toSeq.sortBy(-_._2.length).take(5).map { case (why, k) => s"; ${k.length} x $why" }.mkString)
      ok
    }

  /** The footer filters of `pairs` that fit; the others are reported to `rejected`. */
  private def footerFilters(pairs: Set[(String, Int)],
      rejected: CollectionAccumulator[(String, Int, String)]): RDD[FileFilter] = {
    val footerFiles = files.filter(f => cols.indices.exists(i => pairs((f.path, i))))
    FooterFilters.read(spark, hadoopConf, footerFiles, cols.toSeq, sc.broadcast(pairs)).flatMap { o =>
      if (o.filter.isEmpty) rejected.add((o.path, o.column, o.reason))
      o.filter
    }
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
    val pass = scan.run(wantedB) { (task, batches) =>
      DistinctPass.task(batches, assigned(task), wantedB.value, colsL, split, mdx, knownGlobalSizes, global, report)
    }
    val first = if (split.nonEmpty || global) cache(pass) else pass
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
        xs.foreach(x => a(x.column) = IndexFilters.fileBytes(cols(x.column), IndexFilters.headroom(x.ndv, x.rows - x.nulls)))
        p -> a
      }
      val again = files.filter(f => if (globalPending) wanted.contains(f.path) else sizes.contains(f.path))
      logInfo(s"Bloom index ${spec.name}: reading ${again.size} files again (${needs.size} filters over " +
        s"${BloomIndexConf.MaxDistinct}${if (globalPending) ", global filters" else ""})")
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
        timed(s"writing the rows of ${needs.map(_.path).distinct.size} files read again") {
          IndexBuilder.writeRows(toRows(Seq(filters)), dir)
        }
      }
    }
    if (spec.global) {
      IndexBuilder.writeGlobals(spark, spec, dir, globalBits,
        cols.indices.map(i => i -> globals(cols(i).name)).toMap, baseGlobal, globalSizes)
    }
  }
}
