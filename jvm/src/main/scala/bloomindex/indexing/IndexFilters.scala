package bloomindex.indexing

import bloomindex.filter.BloomFilter
import bloomindex.log.ColumnSpec

import org.apache.datasketches.hll.{HllSketch, Union}

/**
 * Where the build creates filters and decides their sizes: every per-file, global and empty
 * filter of an index comes from here, and distinct-count sketches too. Filters are of the
 * column's design ([[ColumnSpec.algorithm]]).
 */
object IndexFilters {

  /** Distinct counts that are estimated (files too large to count exactly, global filters) use HLL with 2^11 buckets. */
  val HllLgK = 11

  /**
   * An estimate is within a few percent either way: size for 5% more (at most the non-null
   * count), so an underestimate does not push the filter over its fpp target.
   */
  def headroom(estimate: Long, nonNull: Long): Long = math.min(math.ceil(estimate * 1.05).toLong, nonNull)

  /**
   * The most distinct hashes a file's filter of `c` can hold: one per non-null value, but a text
   * filter holds its values' tokens or n-grams, any number of them.
   */
  def distinctBound(c: ColumnSpec, nonNull: Long): Long = if (c.isText) Long.MaxValue else nonNull

  /** Bytes of a file's filter for `ndv` distinct values (the column's `ndv` option wins). */
  def fileBytes(c: ColumnSpec, ndv: Long): Int =
    c.algorithm.numBytes(c.ndv.getOrElse(math.max(ndv, 1L)), c.fpp, c.sizing)

  /** An empty filter for one file's values of column `c`, `ndv` of them distinct. */
  def forFile(c: ColumnSpec, ndv: Long): BloomFilter = ofBytes(c, fileBytes(c, ndv))

  /** A file's filter holding `hashes(0 until count)`, its distinct hashes, sized for their count. */
  def ofDistinct(c: ColumnSpec, hashes: Array[Long], count: Int): BloomFilter = {
    val f = forFile(c, count)
    f.insertAll(hashes, 0, count)
    f
  }

  /** The filter of a file with no rows. */
  def empty(c: ColumnSpec): BloomFilter = ofBytes(c, c.algorithm.minBytes)

  /** An empty filter of a size decided earlier (by [[fileBytes]] or [[globalBytes]], or an existing filter's). */
  def ofBytes(c: ColumnSpec, numBytes: Int): BloomFilter = c.algorithm.empty(numBytes, c.fpp)

  /** Bytes of a global filter for a table-wide estimate of `ndv` distinct values. */
  def globalBytes(c: ColumnSpec, ndv: Long): Int = c.algorithm.numBytes(math.max(ndv, 1L), c.fpp, c.sizing)

  /** Filters of the columns `cols` with the sizes `sizes` (one per column). */
  def ofBytes(cols: Seq[ColumnSpec], sizes: Array[Int]): Array[BloomFilter] =
    sizes.indices.map(i => ofBytes(cols(i), sizes(i))).toArray

  def sketch(): HllSketch = new HllSketch(HllLgK)

  def union(): Union = new Union(HllLgK)

  def sketchOf(hashes: Array[Long], from: Int, until: Int, into: HllSketch): HllSketch = {
    var i = from
    while (i < until) { into.update(hashes(i)); i += 1 }
    into
  }
}
