package bloomindex.index

import scala.collection.mutable

import bloomindex.BloomIndexConf
import bloomindex.sbbf.{Sbbf, SbbfSerde}

import org.apache.datasketches.hll.HllSketch
import org.apache.spark.internal.Logging
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.functions._
import org.apache.spark.sql.types._
import org.apache.spark.storage.StorageLevel

/** What one build produced: index rows written under `dir`, plus global filters if asked. */
case class BuildResult(files: Long, bytes: Long, filterBytes: Long, filesFromFooters: Long,
    globalNdv: Map[String, Long])

/**
 * The index build, Spark jobs over the files to index, one filter per (file, column):
 *
 *  1. Parquet sources (without a global filter): [[FooterFilters]] takes each (file, column)
 *     whose footer carries fitting Bloom filters in every row group, without reading data.
 *  2. Everything else: one read of the data ([[BuildScan]]: columnar batches hashed column by
 *     column), where each task counts each file's distinct hashes exactly and sizes and fills
 *     its filter when the file ends ([[DistinctPass]]). Files Spark splits over tasks merge
 *     their distinct hashes through a shuffle; files too large to count in memory, and the
 *     global filters of a CREATE or full refresh (sized from the table-wide HLL estimate), get
 *     a second read ([[InsertPass]]).
 *
 * Rows are written as Parquet under the operation's own folder: nothing is visible until the
 * log commits it.
 */
object IndexBuilder extends Logging {

  val IndexSchema: StructType = StructType(Seq(
    StructField("file_path", StringType, nullable = false),
    StructField("file_size", LongType, nullable = false),
    StructField("modification_time", LongType, nullable = false),
    StructField("column", StringType, nullable = false),
    StructField("row_count", LongType, nullable = false),
    StructField("null_count", LongType, nullable = false),
    StructField("ndv", LongType, nullable = false),
    StructField("filter", BinaryType, nullable = false),
    StructField("built_from", StringType, nullable = false)))

  val GlobalSchema: StructType = StructType(Seq(
    StructField("column", StringType, nullable = false),
    StructField("ndv", LongType, nullable = false),
    StructField("filter", BinaryType, nullable = false)))

  /**
   * Builds index rows for `files` of `relation` into `dir` (and global filters into
   * `dir/_global` when the spec asks for them). `baseGlobal` (column -> serialized filter) is
   * OR-ed into the new global filters, for incremental refreshes; `carried` are index rows of
   * unchanged files to write alongside.
   */
  def build(
      spark: SparkSession,
      spec: IndexSpec,
      relation: HadoopFsRelation,
      files: Seq[SourceFile],
      dir: String,
      carried: Option[DataFrame],
      baseGlobal: Map[String, Array[Byte]],
      baseGlobalNdv: Map[String, Long] = Map.empty): BuildResult = {
    val run = new BuildRun(spark, spec, relation, files, dir, baseGlobal)
    try {
      val newRows = run.rows()
      val all = carried.map(c => c.select(IndexSchema.fieldNames.map(col).toIndexedSeq: _*).unionByName(newRows))
        .getOrElse(newRows)
      // The folder is this operation's own (and may already hold _global): append is safe.
      val t0 = System.nanoTime()
      all.write.mode("append").parquet(dir)
      logInfo(f"Bloom index ${spec.name}: writing ${files.size} files' rows took ${(System.nanoTime() - t0) / 1e9}%.2f s")
    } finally run.release()
    val (oldFiles, oldBytes, oldFilterBytes, oldFooter) = carried.map(carriedTotals).getOrElse((0L, 0L, 0L, 0L))
    // After an incremental refresh the global count is an upper bound: old + new files' counts.
    val globalNdv = if (!spec.global) Map.empty[String, Long]
      else spec.columns.map(c => c.name -> (run.globalNdv.getOrElse(c.name, 0L) + baseGlobalNdv.getOrElse(c.name, 0L))).toMap
    BuildResult(oldFiles + files.size, oldBytes + files.map(_.size).sum, oldFilterBytes + run.filterBytes,
      oldFooter + run.filesFromFooters, globalNdv)
  }

  def globalDir(dir: String): String = new org.apache.hadoop.fs.Path(dir, "_global").toString

  /** Files, bytes, filter bytes and all-footer files of carried index rows, in one job. */
  private def carriedTotals(rows: DataFrame): (Long, Long, Long, Long) = {
    val r = rows.groupBy("file_path").agg(max("file_size").as("size"), sum(length(col("filter"))).as("fb"),
      min(when(col("built_from") === "footer", 1).otherwise(0)).as("footer"))
      .agg(count(lit(1)), sum("size"), sum("fb"), sum("footer")).head()
    def orZero(i: Int): Long = Option(r.get(i)).map(_.asInstanceOf[Number].longValue()).getOrElse(0L)
    (orZero(0), orZero(1), orZero(2), orZero(3))
  }

  private[index] def writeGlobals(
      spark: SparkSession,
      spec: IndexSpec,
      dir: String,
      built: Map[Int, Array[Byte]],
      globalNdv: Map[Int, Long],
      baseGlobal: Map[String, Array[Byte]],
      sizes: Array[Int]): Unit = {
    val rows = spec.columns.indices.map { i =>
      val name = spec.columns(i).name
      // A column with no non-null value in the new files still gets its global filter.
      val f = built.get(i).map(b => Sbbf.fromBitset(b)).getOrElse(IndexFilters.ofBytes(sizes(i)))
      baseGlobal.get(name).foreach(b => f.merge(Sbbf.fromParquetBytes(b)))
      Row(name, globalNdv.getOrElse(i, 0L), f.toParquetBytes)
    }
    spark.createDataFrame(spark.sparkContext.parallelize(rows, 1), GlobalSchema)
      .write.mode("error").parquet(globalDir(dir))
  }
}

/** One build's jobs and what they leave cached until the rows are written. */
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
  /** (path, column) -> (filter bytes, from the footer) of every new row. */
  private val written = mutable.Map[(String, Int), (Int, Boolean)]()
  private var globals: Map[String, Long] = Map.empty

  def globalNdv: Map[String, Long] = globals

  def filterBytes: Long = written.valuesIterator.map(_._1.toLong).sum

  def filesFromFooters: Long =
    written.toSeq.groupBy(_._1._1).count { case (_, rows) => rows.forall(_._2._2) }.toLong

  def release(): Unit = cached.foreach(_.unpersist(blocking = false))

  private def timed[T](what: String)(f: => T): T = {
    val t0 = System.nanoTime()
    try f finally logInfo(f"Bloom index ${spec.name}: $what took ${(System.nanoTime() - t0) / 1e9}%.2f s")
  }

  private def cache[T](rdd: RDD[T]): RDD[T] = {
    cached += rdd
    rdd.persist(StorageLevel.MEMORY_AND_DISK)
  }

  /** Runs the jobs; the returned rows are computed from cached results when written. */
  def rows(): DataFrame = {
    if (files.isEmpty) {
      if (spec.global) IndexBuilder.writeGlobals(spark, spec, dir, Map.empty, Map.empty, baseGlobal,
        cols.map(c => IndexFilters.globalBytes(c, 1)))
      return spark.createDataFrame(sc.emptyRDD[Row], IndexBuilder.IndexSchema)
    }
    val footer = footerFilters()
    val fromFooter = footer.map(_._2).getOrElse(Set.empty)
    val wanted: Map[String, Array[Boolean]] = files.map(f => f.path -> cols.indices.map(i => !fromFooter((f.path, i))).toArray)
      .filter(_._2.exists(identity)).toMap
    val data = if (wanted.isEmpty) Seq.empty else fromData(files.filter(f => wanted.contains(f.path)), wanted)
    // Files (or columns) that produced no batch at all have no rows: they are indexed, and hold nothing.
    val empty = for {
      (path, w) <- wanted.toSeq
      i <- cols.indices if w(i) && !written.contains((path, i))
    } yield FileFilter(path, i, 0L, 0L, 0L, IndexFilters.empty().toParquetBytes, fromFooter = false)
    empty.foreach(f => written((f.path, f.column)) = (f.filter.length, false))
    val all = sc.union(footer.map(_._1).toSeq ++ data :+ sc.parallelize(empty, 1))
    val byPath = sc.broadcast(files.map(f => f.path -> (f.size, f.modificationTime)).toMap)
    val names = cols.map(_.name)
    val rows = all.map { f =>
      val (size, mtime) = byPath.value(f.path)
      Row(f.path, size, mtime, names(f.column), f.rows, f.nulls, f.ndv, f.filter, if (f.fromFooter) "footer" else "data")
    }
    spark.createDataFrame(rows, IndexBuilder.IndexSchema)
  }

  /** The footer path: usable filters, and which (file, column) they cover. */
  private def footerFilters(): Option[(RDD[FileFilter], Set[(String, Int)])] =
    if (spec.source.format != "parquet" || !BloomIndexConf.footerFilters(spark)) None
    else if (spec.global) {
      // The global filter needs every value, so the data is read anyway.
      logInfo(s"Bloom index ${spec.name}: global filters need the data; footer filters not used")
      None
    } else {
      val outcomes = cache(FooterFilters.read(spark, files, cols.toSeq))
      val seen = timed("reading footers")(
        outcomes.map(o => (o.path, o.column, o.filter.map(_.filter.length), o.reason)).collect())
      val ok = seen.collect { case (p, i, Some(len), _) => written((p, i)) = (len, true); (p, i) }.toSet
      val reasons = seen.collect { case (_, i, None, why) => s"${cols(i).name}: $why" }.groupBy(identity)
      logInfo(s"Bloom index ${spec.name}: ${ok.size} of ${seen.length} (file, column) filters from Parquet footers" +
        reasons.toSeq.sortBy(-_._2.length).take(5).map { case (why, k) => s"; ${k.length} x $why" }.mkString)
      Some((outcomes.flatMap(_.filter), ok))
    }

  /** The data path for `dataFiles` (columns per `wanted`); returns the filters as RDDs. */
  private def fromData(dataFiles: Seq[SourceFile], wanted: Map[String, Array[Boolean]]): Seq[RDD[FileFilter]] = {
    val scan = new BuildScan(spark, relation, dataFiles, cols.toSeq)
    val split = scan.splitFiles
    // Global filters: filled in this read when their size is already known (an incremental
    // refresh keeps the existing filter's size), else in a second read sized from the HLL union.
    val knownGlobalSizes: Array[Int] =
      if (spec.global && baseGlobal.nonEmpty) cols.map(c => Sbbf.fromParquetBytes(baseGlobal(c.name)).numBytes)
      else Array.empty
    val wantedB = sc.broadcast(wanted)
    val (global, sketch, mdx) = (knownGlobalSizes, spec.global, maxDistinct)
    val colsB = cols
    val first = cache(scan.run(wantedB)(batches => DistinctPass.task(batches, colsB, split, mdx, global, sketch)))
    val summary = timed(s"reading the data of ${dataFiles.size} files (columnar: ${scan.columnar})")(first.map {
      case Done(f) => (f.path, f.column, f.filter.length, null: Array[Byte])
      case p: Partial => (p.path, p.column, -1, null)
      case g: TaskGlobal => (null, g.column, 0, g.sketch)
    }.collect())
    summary.foreach { case (p, i, len, _) => if (p != null && len >= 0) written((p, i)) = (len, false) }
    val out = mutable.ArrayBuffer[RDD[FileFilter]](first.flatMap { case Done(f) => Some(f); case _ => None })

    // Files split over tasks, and files whose sets outgrew memory: merge, or leave to a second read.
    var needs = Seq.empty[NeedsInsert]
    if (summary.exists(_._3 == -1)) {
      val parts = first.flatMap { case p: Partial => Some(p); case _ => None }
      val merged = cache(DistinctPass.mergePartials(parts, cols, mdx,
        math.max(1, math.min(summary.count(_._3 == -1), sc.defaultParallelism))))
      val seen = merged.map {
        case Left(f) => Left((f.path, f.column, f.filter.length))
        case Right(x) => Right(x)
      }.collect()
      seen.foreach { case Left((p, i, len)) => written((p, i)) = (len, false); case _ => }
      needs = seen.collect { case Right(x) => x }.toSeq
      out += merged.flatMap(_.left.toOption)
    }

    var globalBits = Map.empty[Int, Array[Byte]]
    var globalSizes = knownGlobalSizes
    if (spec.global) {
      val unions = Array.fill(n)(IndexFilters.union())
      summary.foreach { case (null, i, _, sk) => unions(i).update(HllSketch.heapify(sk)); case _ => }
      val est = unions.map(u => math.round(u.getEstimate))
      globals = cols.indices.map(i => cols(i).name -> est(i)).toMap
      if (globalSizes.isEmpty) {
        globalSizes = cols.indices.map(i => IndexFilters.globalBytes(cols(i), IndexFilters.headroom(est(i), Long.MaxValue))).toArray
      } else {
        globalBits = first.flatMap { case TaskGlobal(i, bits, _) if bits != null => Some(i -> bits); case _ => None }
          .reduceByKey(InsertPass.or _).collect().toMap
      }
    }

    // The second read: files that need it, and every file when the global filters were not filled yet.
    val globalPending = spec.global && knownGlobalSizes.isEmpty
    if (needs.nonEmpty || globalPending) {
      val sizes: Map[String, Array[Int]] = needs.groupBy(_.path).map { case (p, xs) =>
        val a = new Array[Int](n)
        xs.foreach(x => a(x.column) = IndexFilters.fileBytes(cols(x.column), IndexFilters.headroom(x.ndv, x.rows - x.nulls)))
        p -> a
      }
      val again = if (globalPending) dataFiles else dataFiles.filter(f => sizes.contains(f.path))
      val wantedAgain = sc.broadcast(again.map(f => f.path ->
        (if (globalPending) wanted(f.path) else sizes(f.path).map(_ > 0))).toMap)
      val fill = if (globalPending) globalSizes else Array.empty[Int]
      val second = cache(new BuildScan(spark, relation, again, cols.toSeq).run(wantedAgain)(
        batches => InsertPass.task(batches, sizes, fill)).reduceByKey(InsertPass.or _))
      if (globalPending) globalBits = second.filter(_._1._1 == InsertPass.GlobalKey).map { case ((_, i), b) => i -> b }
        .collect().toMap
      val info = needs.map(x => (x.path, x.column) -> x).toMap
      needs.foreach(x => written((x.path, x.column)) = (SbbfSerde.serializedLength(sizes(x.path)(x.column)), false))
      val infoB = sc.broadcast(info)
      out += second.filter(_._1._1 != InsertPass.GlobalKey).map { case (key, bits) =>
        val x = infoB.value(key)
        FileFilter(x.path, x.column, x.rows, x.nulls, x.ndv, Sbbf.fromBitset(bits).toParquetBytes, fromFooter = false)
      }
    }
    if (spec.global) {
      IndexBuilder.writeGlobals(spark, spec, dir, globalBits, globals.map { case (c, v) => cols.indexWhere(_.name == c) -> v },
        baseGlobal, globalSizes)
    }
    out.toSeq
  }
}
