package bloomindex.indexing

import scala.collection.mutable

import bloomindex.filter.BloomFilter
import bloomindex.log.ColumnSpec

import org.apache.datasketches.hll.{HllSketch, Union}
import org.apache.spark.HashPartitioner
import org.apache.spark.rdd.RDD

/** One index row's content for a file and column, before the file's size and time are added. */
final case class FileFilter(path: String, column: Int, rows: Long, nulls: Long, ndv: Long,
    filter: Array[Byte], fromFooter: Boolean)

/**
 * The build's one read of the data: each task collects the hashes of the file it is reading,
 * one buffer per column ([[DistinctHashes]]), and when the file ends counts the distinct ones
 * exactly, sizes that file's filter from the count and inserts exactly those hashes. A file read by a single
 * task (the common case) is finished inside the task: no shuffle.
 *
 * Two cases leave work for later:
 *  - a file Spark splits over several tasks: each task sends its distinct hashes as a
 *    [[DistinctPass.Partial]], merged per (file, column) by [[DistinctPass.mergePartials]];
 *  - more than `maxDistinct` distinct hashes (memory): the buffer turns into an HLL sketch
 *    and the file is read again by [[InsertPass]], sized from the estimate.
 *
 * With a global filter, each task also sketches its distinct hashes per column (for the
 * table-wide count) and, when the global filter's size is already known (an incremental
 * refresh extends the existing one), inserts them into its partial global filter.
 */
object DistinctPass {

  sealed trait Out extends Serializable
  final case class Done(f: FileFilter) extends Out
  /** Part of a split file's work: its distinct `hashes`, or (too many) an HLL `sketch`. */
  final case class Partial(path: String, column: Int, rows: Long, nulls: Long, hashes: Array[Long],
      sketch: Array[Byte]) extends Out
  /** A task's share of the global filters: a partial filter (or null) and a sketch (or null). */
  final case class TaskGlobal(column: Int, bitset: Array[Byte], sketch: Array[Byte]) extends Out

  /** A file whose filter must be filled by [[InsertPass]], at a size from `ndv` (an estimate). */
  final case class NeedsInsert(path: String, column: Int, rows: Long, nulls: Long, ndv: Long)

  /**
   * One task. `assigned`: the files Spark gave this task, so that a file without a single row
   * still gets its (empty) filters; `overflowed` hears of each file of a single task whose
   * distinct count went over `maxDistinct` (its filter is left to [[InsertPass]]).
   */
  def task(
      batches: Iterator[HashedBatch],
      assigned: Array[String],
      wantedByFile: Map[String, Array[Boolean]],
      cols: Array[ColumnSpec],
      split: Set[String],
      maxDistinct: Int,
      globalSizes: Array[Int],
      globalSketch: Boolean,
      overflowed: NeedsInsert => Unit): Iterator[Out] = new Iterator[Out] {
    private val n = cols.length
    private val queue = mutable.Queue[Out]()
    private var path: String = _
    private val wanted = new Array[Boolean](n)
    private var rows = 0L
    private val nonNull = new Array[Long](n)
    private val scratch = new DistinctHashes.Scratch
    private val sets = Array.fill(n)(new DistinctHashes(scratch))
    private val overflow = new Array[HllSketch](n)
    private val globals: Array[BloomFilter] = IndexFilters.ofBytes(cols.toSeq, globalSizes)
    private val unions: Array[Union] = if (globalSketch) Array.fill(n)(IndexFilters.union()) else null
    private var finished = false
    private val seen = mutable.HashSet[String]()

    def hasNext: Boolean = { fill(); queue.nonEmpty }

    def next(): Out = { fill(); queue.dequeue() }

    private def fill(): Unit = while (queue.isEmpty && !finished) {
      if (batches.hasNext) add(batches.next())
      else {
        if (path != null) finish()
        emitUnseen()
        emitGlobals()
        finished = true
      }
    }

    private def add(b: HashedBatch): Unit = {
      if (b.path != path) {
        if (path != null) finish()
        path = b.path
        seen += path
        rows = 0L
        var i = 0
        while (i < n) {
          wanted(i) = b.counts(i) >= 0
          nonNull(i) = 0L
          sets(i).clear()
          overflow(i) = null
          i += 1
        }
      }
      rows += b.numRows
      var i = 0
      while (i < n) {
        if (wanted(i)) {
          val k = b.counts(i)
          nonNull(i) += b.values(i)
          if (overflow(i) != null) IndexFilters.sketchOf(b.hashes(i), 0, k, overflow(i))
          else {
            sets(i).add(b.hashes(i), 0, k)
            if (sets(i).size > maxDistinct && sets(i).distinct() > maxDistinct) {
              overflow(i) = IndexFilters.sketchOf(sets(i).keys, 0, sets(i).size, IndexFilters.sketch())
              sets(i).clear()
            }
          }
        }
        i += 1
      }
    }

    private def finish(): Unit = {
      var i = 0
      while (i < n) {
        if (wanted(i)) {
          val nulls = rows - nonNull(i)
          if (overflow(i) != null) {
            if (unions != null) unions(i).update(overflow(i))
            if (split.contains(path)) queue += Partial(path, i, rows, nulls, null, overflow(i).toCompactByteArray)
            else overflowed(NeedsInsert(path, i, rows, nulls,
              math.min(math.round(overflow(i).getEstimate), IndexFilters.distinctBound(cols(i), rows - nulls))))
          } else {
            val d = sets(i)
            val count = d.distinct()
            if (globals.nonEmpty) globals(i).insertAll(d.keys, 0, count)
            if (unions != null) { var k = 0; while (k < count) { unions(i).update(d.keys(k)); k += 1 } }
            if (split.contains(path)) queue += Partial(path, i, rows, nulls, d.toArray, null)
            else queue += Done(fileFilter(path, i, rows, nulls, d, cols(i)))
          }
          sets(i).clear()
          overflow(i) = null
        }
        i += 1
      }
      path = null
    }

    /** Files of this task that had no batch at all: no rows, so empty filters. */
    private def emitUnseen(): Unit = assigned.foreach { p =>
      if (!seen.contains(p)) {
        val w = wantedByFile(p)
        var i = 0
        while (i < n) {
          if (w(i)) {
            if (split.contains(p)) queue += Partial(p, i, 0L, 0L, Array.emptyLongArray, null)
            else queue += Done(FileFilter(p, i, 0L, 0L, 0L, IndexFilters.empty(cols(i)).toBytes, fromFooter = false))
          }
          i += 1
        }
      }
    }

    private def emitGlobals(): Unit =
      if (globals.nonEmpty || unions != null) {
        var i = 0
        while (i < n) {
          queue += TaskGlobal(i, if (globals.nonEmpty) globals(i).bitsetBytes else null,
            if (unions != null) unions(i).getResult.toCompactByteArray else null)
          i += 1
        }
      }
  }

  /**
   * The filter of a file read whole by one task (or written by one, [[WriteTaskFilters]]): its
   * `d`istinct hashes of column `c`, counted exactly, sized for that count (empty without rows).
   */
  def fileFilter(path: String, column: Int, rows: Long, nulls: Long, d: DistinctHashes, c: ColumnSpec): FileFilter = {
    val count = d.distinct()
    val f = if (rows == 0) IndexFilters.empty(c) else IndexFilters.ofDistinct(c, d.keys, count)
    FileFilter(path, column, rows, nulls, count, f.toBytes, fromFooter = false)
  }

  /** Merges the [[Partial]]s of each (file, column): a finished filter, or a file for [[InsertPass]]. */
  def mergePartials(parts: RDD[Partial], cols: Array[ColumnSpec], maxDistinct: Int,
      numPartitions: Int): RDD[Either[FileFilter, NeedsInsert]] =
    parts.map(p => (p.path, p.column) -> p)
      .combineByKeyWithClassTag[Merge](Merge.of _, (m: Merge, p: Partial) => m.add(Merge.of(p), maxDistinct),
        (a: Merge, b: Merge) => a.add(b, maxDistinct), new HashPartitioner(numPartitions), mapSideCombine = false)
      .map { case ((path, column), m) => m.result(path, column, cols(column)) }

  /** Partials of one (file, column) merged so far: counts, and its hashes or a sketch. */
  final class Merge(var rows: Long, var nulls: Long, var set: DistinctHashes, var sketch: Array[Byte])
    extends Serializable {

    def add(o: Merge, maxDistinct: Int): Merge = {
      rows += o.rows
      nulls += o.nulls
      if (sketch == null && o.sketch == null) {
        set.addAll(o.set)
        if (set.size > maxDistinct && set.distinct() > maxDistinct) toSketch()
      } else {
        toSketch()
        val u = IndexFilters.union()
        u.update(HllSketch.heapify(sketch))
        if (o.sketch != null) u.update(HllSketch.heapify(o.sketch))
        else u.update(IndexFilters.sketchOf(o.set.keys, 0, o.set.distinct(), IndexFilters.sketch()))
        sketch = u.getResult.toCompactByteArray
      }
      this
    }

    private def toSketch(): Unit = if (sketch == null) {
      sketch = IndexFilters.sketchOf(set.keys, 0, set.distinct(), IndexFilters.sketch()).toCompactByteArray
      set = null
    }

    def result(path: String, column: Int, c: ColumnSpec): Either[FileFilter, NeedsInsert] =
      if (rows == 0) {
        Left(FileFilter(path, column, 0L, 0L, 0L, IndexFilters.empty(c).toBytes, fromFooter = false))
      } else if (sketch == null) {
        val count = set.distinct()
        Left(FileFilter(path, column, rows, nulls, count, IndexFilters.ofDistinct(c, set.keys, count).toBytes,
          fromFooter = false))
      } else {
        val nonNull = rows - nulls
        val est = math.min(math.round(HllSketch.heapify(sketch).getEstimate), IndexFilters.distinctBound(c, nonNull))
        Right(NeedsInsert(path, column, rows, nulls, est))
      }
  }

  object Merge {
    def of(p: Partial): Merge = {
      val set = if (p.hashes == null) null else {
        val s = new DistinctHashes(null)
        s.add(p.hashes, 0, p.hashes.length)
        s
      }
      new Merge(p.rows, p.nulls, set, p.sketch)
    }
  }
}
