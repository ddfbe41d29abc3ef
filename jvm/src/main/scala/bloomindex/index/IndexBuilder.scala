package bloomindex.index

import scala.collection.mutable

import bloomindex.filter.BloomFilter

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.functions._
import org.apache.spark.sql.types._

/** What one build produced: index rows written under `dir`, plus global filters if asked. */
case class BuildResult(files: Long, bytes: Long, filterBytes: Long, globalNdv: Map[String, Long])

/**
 * The index build: two distributed passes over the files to index, both Spark jobs.
 *
 *  1. Statistics, grouped by `_metadata.file_path`: row count, and per column the null count
 *     and an HLL sketch of the values' distinct count (DataSketches, via `hll_sketch_agg`);
 *     the sketches are also unioned for the table-wide count the global filter is sized from.
 *  2. Filters: each task hashes its rows (Parquet plain encoding, the column's filter design's
 *     hash) into one filter per (file, column) of the column's design ([[ColumnSpec.algorithm]])
 *     sized from that file's count, and into a global filter per column; partial filters of the
 *     same file (a file split over tasks) are OR-merged as bit sets by a shuffle on (file, column).
 *
 * Rows are written as Parquet under the operation's own folder: nothing is visible until the
 * log commits it.
 */
object IndexBuilder {

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

  private val HllLgK = 11

  /**
   * Builds index rows for `files` into `dir` (and global filters into `dir/_global` when the
   * spec asks for them). `baseGlobal` (column -> serialized filter) is OR-ed into the new
   * global filters, for incremental refreshes; `carried` are index rows of unchanged files to
   * write alongside.
   */
  def build(
      spark: SparkSession,
      spec: IndexSpec,
      files: Seq[SourceFile],
      dir: String,
      carried: Option[DataFrame],
      baseGlobal: Map[String, Array[Byte]],
      baseGlobalNdv: Map[String, Long] = Map.empty): BuildResult = {
    val byPath = files.map(f => f.path -> f).toMap
    val (newRows, cleanup) =
      if (files.isEmpty) {
        if (spec.global) writeGlobals(spark, spec, dir, Seq.empty, Map.empty, baseGlobal,
          spec.columns.map(c => c.algorithm.numBytes(1, c.fpp, c.sizing)).toArray)
        (spark.createDataFrame(spark.sparkContext.emptyRDD[Row], IndexSchema), () => ())
      } else buildRows(spark, spec, files, byPath, baseGlobal, dir)
    try {
      val all = carried.map(c => c.select(IndexSchema.fieldNames.map(col).toIndexedSeq: _*).unionByName(newRows))
        .getOrElse(newRows)
      // The folder is this operation's own (and may already hold _global): append is safe.
      all.write.mode("append").parquet(dir)
    } finally cleanup()
    val written = spark.read.schema(IndexSchema).parquet(dir)
    // One job for the totals: per file its size (the same on each of its rows) and filter bytes.
    val totals = written.groupBy("file_path").agg(max("file_size").as("size"), sum(length(col("filter"))).as("fb"))
      .agg(count(lit(1)), sum("size"), sum("fb")).head()
    def orZero(i: Int): Long = Option(totals.get(i)).map(_.asInstanceOf[Number].longValue()).getOrElse(0L)
    val (indexedFiles, bytes, filterBytes) = (orZero(0), orZero(1), orZero(2))
    // After an incremental refresh the global count is an upper bound: old + new files' counts.
    val globalNdv = if (spec.global) readGlobalNdv(spark, dir).map { case (c, n) => c -> (n + baseGlobalNdv.getOrElse(c, 0L)) }
      else Map.empty[String, Long]
    BuildResult(indexedFiles, bytes, filterBytes, globalNdv)
  }

  def globalDir(dir: String): String = new org.apache.hadoop.fs.Path(dir, "_global").toString

  private def readGlobalNdv(spark: SparkSession, dir: String): Map[String, Long] =
    spark.read.schema(GlobalSchema).parquet(globalDir(dir)).collect()
      .map(r => r.getString(0) -> r.getLong(1)).toMap

  private case class FileStats(rows: Long, nonNull: Array[Long], ndv: Array[Long], numBytes: Array[Int])

  /** Passes 1 and 2 for `files`; returns the rows and what to release once they are written. */
  private def buildRows(
      spark: SparkSession,
      spec: IndexSpec,
      files: Seq[SourceFile],
      byPath: Map[String, SourceFile],
      baseGlobal: Map[String, Array[Byte]],
      dir: String): (DataFrame, () => Unit) = {
    val source = SourceResolver.readFiles(spark, spec.source, files.map(_.path))
    val cols = spec.columns
    val data = source.select((col("_metadata.file_path").as("__path") +:
      cols.indices.map(i => col(quote(cols(i).name)).as(s"__c$i"))): _*)

    // Pass 1: statistics per file, and the union of their sketches for the global count.
    val aggs = count(lit(1)).as("rows") +: cols.indices.flatMap { i =>
      val c = col(s"__c$i")
      Seq(count(c).as(s"nn$i"), hll_sketch_agg(when(c.isNotNull, xxhash64(c)), lit(HllLgK)).as(s"hll$i"))
    }
    val stats = data.groupBy("__path").agg(aggs.head, aggs.tail: _*).persist()
    val (fileStats, globalNdv) = try {
      val perFile = stats.select((col("__path") +: col("rows") +: cols.indices.flatMap(i =>
        Seq(col(s"nn$i"), hll_sketch_estimate(col(s"hll$i"))))): _*).collect()
      val fileStats = perFile.map { r =>
        val nonNull = cols.indices.map(i => r.getLong(2 + 2 * i)).toArray
        val ndv = cols.indices.map(i => math.min(r.getLong(3 + 2 * i), nonNull(i))).toArray
        // The HLL estimate is within a few percent either way: size for 5% more (at most the
        // non-null count), so an underestimate does not push the file over its fpp target.
        val numBytes = cols.indices.map { i =>
          val sized = math.min(math.ceil(ndv(i) * 1.05).toLong, nonNull(i))
          cols(i).algorithm.numBytes(cols(i).ndv.getOrElse(math.max(sized, 1L)), cols(i).fpp, cols(i).sizing)
        }.toArray
        SourceResolver.normalize(r.getString(0)) -> FileStats(r.getLong(1), nonNull, ndv, numBytes)
      }.toMap
      val globalNdv: Map[Int, Long] =
        if (!spec.global) Map.empty
        else {
          val ests = cols.indices.map(i => hll_sketch_estimate(hll_union_agg(col(s"hll$i"))))
          val r = stats.agg(ests.head, ests.tail: _*).head()
          cols.indices.map(i => i -> Option(r.get(i)).map(_.asInstanceOf[Number].longValue()).getOrElse(0L)).toMap
        }
      (fileStats, globalNdv)
    } finally stats.unpersist()
    val unknown = fileStats.keySet -- byPath.keySet
    if (unknown.nonEmpty) throw new IllegalStateException(
      s"index build read files it was not asked to index, e.g. ${unknown.head}")

    // Global filters keep the size of the ones they extend (incremental refresh).
    val globalSizes: Array[Int] =
      if (!spec.global) Array.empty
      else cols.indices.map { i =>
        baseGlobal.get(cols(i).name).map(b => cols(i).algorithm.fromBytes(b).numBytes).getOrElse(
          cols(i).algorithm.numBytes(math.max(globalNdv.getOrElse(i, 0L), 1L), cols(i).fpp, cols(i).sizing))
      }.toArray

    // Pass 2: filters, partial per task, OR-merged per (file, column) and per global column.
    val sc = spark.sparkContext
    val sizes = sc.broadcast(fileStats.map { case (p, s) => p -> s.numBytes })
    val types = cols.map(c => DataType.fromDDL(c.dataType)).toArray
    val colSpecs = cols.toArray
    val merged = data.queryExecution.toRdd
      .mapPartitions(rows => buildPartition(rows, types, colSpecs, sizes.value, globalSizes))
      .reduceByKey(orBitsets _)
      .persist(org.apache.spark.storage.StorageLevel.MEMORY_AND_DISK)
    if (spec.global) {
      val globals = merged.filter(_._1._1 == GlobalKey).map { case ((_, i), bits) => i -> bits }.collect()
      writeGlobals(spark, spec, dir, globals.toSeq, globalNdv, baseGlobal, globalSizes)
    }
    val statsB = sc.broadcast(fileStats.map { case (p, s) => p -> (s.rows, s.nonNull, s.ndv) })
    val filesB = sc.broadcast(byPath)
    val names = cols.map(_.name).toArray
    val fileRows = merged.filter(_._1._1 != GlobalKey).map { case ((path, i), bits) =>
      val f = filesB.value(path)
      val (rows, nonNull, ndv) = statsB.value(path)
      Row(path, f.size, f.modificationTime, names(i), rows, rows - nonNull(i), ndv(i),
        colSpecs(i).algorithm.fromBitset(bits, colSpecs(i).fpp).toBytes, "data")
    }
    // Files with no rows at all still get (empty) filters: they are indexed, and hold nothing.
    val empty = files.filterNot(f => fileStats.contains(f.path)).flatMap { f =>
      colSpecs.map(c => Row(f.path, f.size, f.modificationTime, c.name, 0L, 0L, 0L,
        c.algorithm.empty(c.algorithm.minBytes, c.fpp).toBytes, "data"))
    }
    val rows = spark.createDataFrame(fileRows.union(sc.parallelize(empty, 1)), IndexSchema)
    (rows, () => { merged.unpersist(); sizes.destroy(); statsB.destroy(); filesB.destroy() })
  }

  private def writeGlobals(
      spark: SparkSession,
      spec: IndexSpec,
      dir: String,
      built: Seq[(Int, Array[Byte])],
      globalNdv: Map[Int, Long],
      baseGlobal: Map[String, Array[Byte]],
      sizes: Array[Int]): Unit = {
    val rows = spec.columns.indices.map { i =>
      val c = spec.columns(i)
      // A column with no non-null value in the new files still gets its global filter.
      val f = built.find(_._1 == i).map(b => c.algorithm.fromBitset(b._2, c.fpp)).getOrElse(c.algorithm.empty(sizes(i), c.fpp))
      baseGlobal.get(c.name).foreach(b => f.merge(c.algorithm.fromBytes(b)))
      Row(c.name, globalNdv.getOrElse(i, 0L), f.toBytes)
    }
    spark.createDataFrame(spark.sparkContext.parallelize(rows, 1), GlobalSchema)
      .write.mode("error").parquet(globalDir(dir))
  }

  private val GlobalKey = "\u0000global"

  private def quote(name: String): String = s"`${name.replace("`", "``")}`"

  private def orBitsets(a: Array[Byte], b: Array[Byte]): Array[Byte] = {
    var i = 0
    while (i < a.length) { a(i) = (a(i) | b(i)).toByte; i += 1 }
    a
  }

  /** One task of pass 2: rows are (path, value...); emits partial filters' bit sets. */
  private def buildPartition(
      rows: Iterator[InternalRow],
      types: Array[DataType],
      cols: Array[ColumnSpec],
      sizes: Map[String, Array[Int]],
      globalSizes: Array[Int]): Iterator[((String, Int), Array[Byte])] = {
    val hashers = types.indices.map(i => cols(i).algorithm.hasher(types(i))).toArray
    val n = types.length
    def empty(i: Int, size: Int): BloomFilter = cols(i).algorithm.empty(size, cols(i).fpp)
    val globals = globalSizes.indices.map(i => empty(i, globalSizes(i))).toArray
    val done = mutable.ArrayBuffer[((String, Int), Array[Byte])]()
    var currentPath: org.apache.spark.unsafe.types.UTF8String = null
    var current: Array[BloomFilter] = null
    var currentKey: String = null
    val open = mutable.HashMap[String, Array[BloomFilter]]()
    while (rows.hasNext) {
      val row = rows.next()
      val p = row.getUTF8String(0)
      if (currentPath == null || currentPath != p) {
        currentPath = p.clone()
        currentKey = SourceResolver.normalize(p.toString)
        current = open.getOrElseUpdate(currentKey, sizes(currentKey).indices.map(i => empty(i, sizes(currentKey)(i))).toArray)
      }
      var i = 0
      while (i < n) {
        if (!row.isNullAt(i + 1)) {
          val h = hashers(i).hashRow(row, i + 1)
          current(i).insert(h)
          if (globals.nonEmpty) globals(i).insert(h)
        }
        i += 1
      }
    }
    open.foreach { case (path, fs) => fs.indices.foreach(i => done += ((path, i) -> fs(i).bitsetBytes)) }
    globals.indices.foreach(i => done += ((GlobalKey, i) -> globals(i).bitsetBytes))
    done.iterator
  }
}
