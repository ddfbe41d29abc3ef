package bloomindex.indexing

import scala.reflect.ClassTag

import bloomindex.filter.FilterAlgorithm
import bloomindex.hash.FieldHasher
import bloomindex.log.ColumnSpec
import bloomindex.source.{DecodingContext, SourceFile, SourceResolver}
import bloomindex.text.TextFilterSpec

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, Expression, FileSourceConstantMetadataAttribute}
import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.execution.datasources.{FileIndex, FilePartition, HadoopFsRelation, PartitionDirectory}
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types.{DataType, StructType}
import org.apache.spark.sql.vectorized.ColumnarBatch
import org.apache.spark.unsafe.types.UTF8String

/**
 * One batch of one file's rows with the wanted columns hashed ([[FieldHasher]]): what both
 * build passes consume. A task's batches come file after file; the object is reused.
 */
final class HashedBatch(numColumns: Int) {
  /** The file, in [[SourceResolver.normalize]]d form. */
  var path: String = _
  var numRows: Int = 0
  /** Per column: the hashes of its non-null values in `hashes(i)(0 until counts(i))`. */
  val hashes: Array[Array[Long]] = Array.fill(numColumns)(new Array[Long](0))
  /**
   * Per column: how many hashes are in `hashes(i)`; -1 when the column is not wanted. One per
   * non-null value, except for a text filter: one per token or n-gram of each value.
   */
  val counts: Array[Int] = new Array[Int](numColumns)
  /** Per column: how many of the batch's values are not null. */
  val values: Array[Int] = new Array[Int](numColumns)

  private[bloomindex] def buffer(i: Int, n: Int): Array[Long] = {
    if (hashes(i).length < n) hashes(i) = new Array[Long](math.max(n, 1024))
    hashes(i)
  }

  /** Appends `h` to column `i`'s hashes, growing the buffer (a text filter's count is unbounded). */
  private[bloomindex] def append(i: Int, h: Long): Unit = {
    val k = counts(i)
    if (k == hashes(i).length) hashes(i) = java.util.Arrays.copyOf(hashes(i), math.max(1024, k * 2))
    hashes(i)(k) = h
    counts(i) = k + 1
  }
}

/**
 * Reads exactly `files` of a source (no listing: their sizes and times are known) and hands
 * each task's rows, hashed, to a consumer. Parquet and ORC go through the vectorized readers'
 * columnar batches, hashed column by column without turning them into rows; other formats
 * (CSV, JSON, or a columnar read Spark declines) go through rows, gathered into batches.
 *
 * `wanted` maps each file to the columns to hash in it; a file the scan meets that is not in
 * it is an error (the build must never index a file it was not asked for).
 */
final class BuildScan(spark: SparkSession, relation: HadoopFsRelation, files: Seq[SourceFile],
    columns: Seq[ColumnSpec]) {

  // The source columns read: a column with an equality and a text filter is read once.
  private val names = columns.map(_.sourceName).distinct

  private val scanDf = {
    val exact = new HadoopFsRelation(new ExactFileIndex(files), new StructType(), relation.dataSchema,
      None, relation.fileFormat, BuildScan.readerOptions(relation))(spark)
    spark.baseRelationToDataFrame(exact)
      .select((names.map(n => col(s"`${n.replace("`", "``")}`")) :+ col("_metadata.file_path")): _*)
  }

  private val scan: Option[FileSourceScanExec] = scanDf.queryExecution.executedPlan.collectFirst {
    case s: FileSourceScanExec if s.supportsColumnar => s
  }

  /** True when the batches come from a vectorized reader (for tests and logs). */
  def columnar: Boolean = scan.isDefined

  private val rdd: Either[RDD[ColumnarBatch], RDD[InternalRow]] = scan match {
    case Some(s) => Left(s.executeColumnar())
    case None => Right(scanDf.queryExecution.toRdd)
  }

  /** The files of each task (scan partition), normalized; a file split over tasks is in each of them. */
  val filesByPartition: Array[Array[String]] = rdd.fold(_.partitions, _.partitions).map {
    case p: FilePartition => p.files.map(f => SourceResolver.normalize(f.filePath.toPath))
    case other => throw new IllegalStateException(
      s"index build: expected Spark's file partitions from the scan, got ${other.getClass.getName}")
  }

  /** Files Spark reads in more than one task (larger than `spark.sql.files.maxPartitionBytes`). */
  val splitFiles: Set[String] =
    filesByPartition.flatten.groupBy(identity).collect { case (p, occurrences) if occurrences.length > 1 => p }.toSet

  /**
   * `consume(task, batches)` over every task's batches; `task` indexes [[filesByPartition]].
   * `countFiles`: the files read are counted for the build's progress ([[BuildProgress]]).
   */
  def run[T: ClassTag](wanted: Broadcast[Map[String, Array[Boolean]]], countFiles: Boolean = false)(
      consume: (Int, Iterator[HashedBatch]) => Iterator[T]): RDD[T] = {
    val types = columns.map(c => DataType.fromDDL(c.dataType)).toArray
    val algorithms = columns.map(_.algorithm).toArray
    val texts = columns.map(_.text.map(_.spec).orNull).toArray
    // Each index column's position among the source columns read.
    val sources = columns.map(c => names.indexOf(c.sourceName)).toArray
    val delay = spark.sessionState.conf.getConf(BloomIndexSQLConf.TEST_BUILD_TASK_DELAY_MS)
    val counted = BuildProgress.filesCountedBy(filesByPartition)
    val progress = if (countFiles) BuildProgress.start(spark.sparkContext, counted.sum.toLong) else None
    def counting(i: Int, out: Iterator[T]): Iterator[T] = progress match {
      case None => out
      case Some(acc) => new Iterator[T] {
        private var added = false
        override def hasNext: Boolean = {
          val more = out.hasNext
          if (!more && !added) { acc.add(counted(i).toLong); added = true }
          more
        }
        override def next(): T = out.next()
      }
    }
    rdd match {
      case Left(batches) =>
        val ordinals = scanOrdinals(scan.get)
        batches.mapPartitionsWithIndex { (i, it) =>
          if (delay > 0) Thread.sleep(delay)
          counting(i, consume(i, BuildScan.fromColumnar(it, types, algorithms, texts, sources, ordinals, wanted.value)))
        }
      case Right(rows) =>
        rows.mapPartitionsWithIndex { (i, it) =>
          if (delay > 0) Thread.sleep(delay)
          counting(i, consume(i, BuildScan.fromRows(it, types, algorithms, texts, sources, wanted.value)))
        }
    }
  }

  /** Ordinals of the source columns read ([[names]]) in the scan's batches, then that of the file path. */
  private def scanOrdinals(s: FileSourceScanExec): Array[Int] = {
    val out = s.output
    def isPath(a: Attribute) = a.name == "file_path" && (a match {
      case r: AttributeReference => FileSourceConstantMetadataAttribute.unapply(r).isDefined
      case _ => false
    })
    val data = names.map { n =>
      val i = out.indexWhere(a => a.name == n && !isPath(a))
      require(i >= 0, s"column $n missing from the scan's output ${out.mkString(", ")}")
      i
    }
    val path = out.indexWhere(isPath)
    require(path >= 0, s"file path missing from the scan's output ${out.mkString(", ")}")
    (data :+ path).toArray
  }
}

object BuildScan {

  /**
   * The options a build reads `relation` with: the source's own, except that text formats
   * (CSV, JSON) are always read PERMISSIVE. That mode keeps every row and, field by field, every
   * value that parses, so a column's filter holds every value a query in any mode can see:
   * DROPMALFORMED drops rows a query reading fewer columns would keep, FAILFAST stops on a
   * malformed column the query may never read.
   *
   * And never `ignoreCorruptFiles` (the option, which wins over the session's
   * `spark.sql.files.ignoreCorruptFiles`): under it Spark's scan ends a file quietly at its first
   * unreadable part and keeps the rows before it, and a filter of those rows stored under the
   * whole file's identity would skip the file for a value after the damage, which a query's own
   * read may reach (its statistics skip the damaged row group). A build meeting such a file fails,
   * naming it, and stores nothing.
   *
   * Nor `ignoreMissingFiles`: under it a file deleted or moved away between the build's listing
   * and its read gives no rows and no error, and its empty filter, stored under the identity the
   * listing gave, would skip the file if it came back unchanged (a move back keeps the path,
   * size and time). The build fails instead, naming the file; a REFRESH lists the files again.
   */
  def readerOptions(relation: HadoopFsRelation): Map[String, String] = {
    val own = relation.options.filter { case (k, _) =>
      k != "path" && k != "paths" && !k.equalsIgnoreCase(IgnoreCorruptFiles) && !k.equalsIgnoreCase(IgnoreMissingFiles)
    } + (IgnoreCorruptFiles -> "false") + (IgnoreMissingFiles -> "false")
    SourceResolver.formatOf(relation) match {
      case f if DecodingContext.TextFormats.contains(f) =>
        own.filter { case (k, _) => !k.equalsIgnoreCase("mode") } + ("mode" -> "PERMISSIVE")
      // Every Avro file, whatever its name: a query under Avro's `ignoreExtension = false` (or the
      // Hadoop setting) reads no rows of a file not named `*.avro`, so its filter may hold more.
      // Through the Hadoop setting, which the reader's option would override (and which, unlike
      // the option, Spark does not warn of as deprecated).
      case "avro" =>
        own.filter { case (k, _) => !k.equalsIgnoreCase("ignoreExtension") &&
          !k.equalsIgnoreCase(DecodingContext.AvroIgnoreWithoutExtension) } +
          (DecodingContext.AvroIgnoreWithoutExtension -> "false")
      case _ => own
    }
  }

  /** Spark's per-read option for `spark.sql.files.ignoreCorruptFiles` (`FileSourceOptions`). */
  private val IgnoreCorruptFiles = "ignoreCorruptFiles"
  /** Spark's per-read option for `spark.sql.files.ignoreMissingFiles` (`FileSourceOptions`). */
  private val IgnoreMissingFiles = "ignoreMissingFiles"

  private val RowBatch = 4096

  /** Turns `_metadata.file_path` values into the normalized form, once per file. */
  private final class PathCache(wanted: Map[String, Array[Boolean]]) {
    private var raw: UTF8String = _
    var path: String = _
    var columns: Array[Boolean] = _

    def isCurrent(p: UTF8String): Boolean = raw != null && raw == p

    def set(p: UTF8String): Boolean = {
      if (isCurrent(p)) return false
      raw = p.clone()
      path = SourceResolver.normalize(p.toString)
      columns = wanted.getOrElse(path, throw new IllegalStateException(
        s"index build read files it was not asked to index, e.g. $path"))
      true
    }
  }

  // Each column hashes with its filter design's hash (XXH64, or Murmur3 for sbbf-murmur3); a
  // text filter hashes its values' tokens or n-grams (null for the others).
  private def hashersOf(types: Array[DataType], algorithms: Array[FilterAlgorithm]): Array[FieldHasher] =
    types.indices.map(i => algorithms(i).hasher(types(i))).toArray

  private def textHashersOf(texts: Array[TextFilterSpec], algorithms: Array[FilterAlgorithm]): Array[TextHasher] =
    texts.indices.map(i => if (texts(i) == null) null else new TextHasher(texts(i), algorithms(i).hash)).toArray

  private def fromColumnar(batches: Iterator[ColumnarBatch], types: Array[DataType],
      algorithms: Array[FilterAlgorithm], texts: Array[TextFilterSpec], sources: Array[Int], ordinals: Array[Int],
      wanted: Map[String, Array[Boolean]]): Iterator[HashedBatch] = {
    val n = types.length
    val pathOrdinal = ordinals(ordinals.length - 1)
    val hashers = hashersOf(types, algorithms)
    val textHashers = textHashersOf(texts, algorithms)
    val out = new HashedBatch(n)
    val paths = new PathCache(wanted)
    batches.map { b =>
      val rows = b.numRows()
      paths.set(b.column(pathOrdinal).getUTF8String(0))
      out.path = paths.path
      out.numRows = rows
      var i = 0
      while (i < n) {
        val v = b.column(ordinals(sources(i)))
        if (!paths.columns(i)) { out.counts(i) = -1; out.values(i) = 0 }
        else if (textHashers(i) != null) {
          out.counts(i) = 0
          var nonNull = 0
          var r = 0
          while (r < rows) {
            if (!v.isNullAt(r)) { textHashers(i).hash(v.getUTF8String(r), out, i); nonNull += 1 }
            r += 1
          }
          out.values(i) = nonNull
        } else {
          out.counts(i) = hashers(i).hashColumn(v, rows, out.buffer(i, rows))
          out.values(i) = out.counts(i)
        }
        i += 1
      }
      out
    }
  }

  /** Rows are (source value..., path); a batch ends at a new file or after [[RowBatch]] rows. */
  private def fromRows(rows: Iterator[InternalRow], types: Array[DataType], algorithms: Array[FilterAlgorithm],
      texts: Array[TextFilterSpec], sources: Array[Int],
      wanted: Map[String, Array[Boolean]]): Iterator[HashedBatch] = new Iterator[HashedBatch] {
    private val n = types.length
    private val pathOrdinal = sources.max + 1
    private val hashers = hashersOf(types, algorithms)
    private val textHashers = textHashersOf(texts, algorithms)
    private val out = new HashedBatch(n)
    private val paths = new PathCache(wanted)
    private var pending: InternalRow = _ // first row of the next batch (another file)

    def hasNext: Boolean = pending != null || rows.hasNext

    def next(): HashedBatch = {
      var row = if (pending != null) pending else rows.next()
      pending = null
      paths.set(row.getUTF8String(pathOrdinal))
      out.path = paths.path
      var i = 0
      while (i < n) {
        out.counts(i) = if (paths.columns(i)) 0 else -1
        out.values(i) = 0
        out.buffer(i, RowBatch)
        i += 1
      }
      var k = 0
      var more = true
      while (more) {
        i = 0
        while (i < n) {
          val s = sources(i)
          if (out.counts(i) >= 0 && !row.isNullAt(s)) {
            if (textHashers(i) != null) textHashers(i).hash(row.getUTF8String(s), out, i)
            else {
              out.hashes(i)(out.counts(i)) = hashers(i).hashRow(row, s)
              out.counts(i) += 1
            }
            out.values(i) += 1
          }
          i += 1
        }
        k += 1
        more = false
        if (k < RowBatch && rows.hasNext) {
          val r = rows.next()
          if (paths.isCurrent(r.getUTF8String(pathOrdinal))) { row = r; more = true }
          else pending = r.copy() // the first row of the next file's batch
        }
      }
      out.numRows = k
      out
    }
  }
}

/** Exactly the given files, as listed by the caller: no listing, no partition discovery. */
private final class ExactFileIndex(files: Seq[SourceFile]) extends FileIndex {
  private val statuses = files.map(f => new FileStatus(f.size, false, 1, 0L, f.modificationTime, new Path(f.path)))

  override def rootPaths: Seq[Path] = statuses.map(_.getPath)

  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] =
    Seq(PartitionDirectory(InternalRow.empty, statuses.toArray))

  override def inputFiles: Array[String] = files.map(_.path).toArray

  override def refresh(): Unit = ()

  override def sizeInBytes: Long = files.map(_.size).sum

  override def partitionSchema: StructType = new StructType()
}
