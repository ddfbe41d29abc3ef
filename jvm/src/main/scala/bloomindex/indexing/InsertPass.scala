package bloomindex.indexing

import scala.collection.mutable

import bloomindex.filter.BloomFilter
import bloomindex.log.ColumnSpec
/**
 * The second read, for what [[DistinctPass]] could not finish in one: files whose distinct
 * sets outgrew the memory limit (their sizes now come from HLL estimates), and global
 * filters whose size was not known before the table-wide count. Each task inserts its
 * hashes into partial filters of known sizes; the caller OR-merges them per key.
 */
object InsertPass {

  /** The key of a column's global filter among the per-file keys. */
  val GlobalKey = "\u0000global"

  /**
   * `sizes`: per file, the filter bytes of each column to fill (0: not this column);
   * `globalSizes`: the global filters' bytes (empty: none to fill).
   */
  def task(batches: Iterator[HashedBatch], cols: Seq[ColumnSpec], sizes: Map[String, Array[Int]],
      globalSizes: Array[Int]): Iterator[((String, Int), Array[Byte])] =
    new Iterator[((String, Int), Array[Byte])] {
      private val globals: Array[BloomFilter] = IndexFilters.ofBytes(cols, globalSizes)
      private val queue = mutable.Queue[((String, Int), Array[Byte])]()
      private var path: String = _
      private var filters: Array[BloomFilter] = Array.empty
      private var finished = false

      def hasNext: Boolean = { fill(); queue.nonEmpty }

      def next(): ((String, Int), Array[Byte]) = { fill(); queue.dequeue() }

      // A file's partial filters leave as soon as the file ends, so a task holds one file's.
      private def finish(): Unit = if (path != null) {
        filters.indices.foreach(i => if (filters(i) != null) queue += ((path, i) -> filters(i).bitsetBytes))
        path = null
      }

      private def fill(): Unit = while (queue.isEmpty && !finished) {
        if (!batches.hasNext) {
          finish()
          globals.indices.foreach(i => queue += ((GlobalKey, i) -> globals(i).bitsetBytes))
          finished = true
        } else {
          val b = batches.next()
          if (b.path != path) {
            finish()
            path = b.path
            filters = sizes.getOrElse(path, Array.empty[Int]).zipWithIndex
              .map { case (s, i) => if (s > 0) IndexFilters.ofBytes(cols(i), s) else null }
          }
          var i = 0
          while (i < b.counts.length) {
            val k = b.counts(i)
            if (k > 0) {
              if (i < filters.length && filters(i) != null) filters(i).insertAll(b.hashes(i), 0, k)
              if (globals.nonEmpty) globals(i).insertAll(b.hashes(i), 0, k)
            }
            i += 1
          }
        }
      }
    }

  def or(a: Array[Byte], b: Array[Byte]): Array[Byte] = {
    var i = 0
    while (i < a.length) { a(i) = (a(i) | b(i)).toByte; i += 1 }
    a
  }
}
