package bloomindex.filter

/**
 * A Bloom filter over 64-bit hashes, of any of the [[FilterAlgorithm]]s: what an index holds
 * per (file, column) and per column globally.
 *
 * {{{
 *   val alg = FilterAlgorithm.fromName("classic")
 *   val f = alg.forNdv(ndv = 100000, fpp = 0.01)
 *   f.insert(alg.hash.hashLong(42L))
 *   f.mightContain(alg.hash.hashLong(42L))       // true
 *   val back = alg.fromBytes(f.toBytes)           // the design's serialized form
 * }}}
 *
 * Hashes are the design's [[bloomindex.hash.PlainHash]] of a value's Parquet plain encoding
 * (`algorithm.hash`). Not thread-safe for inserts; concurrent checks on a filter nobody
 * inserts into are safe.
 */
trait BloomFilter {

  def algorithm: FilterAlgorithm

  /** Bytes of the bit set (without any header). */
  def numBytes: Int

  def insert(hash: Long): Unit

  /** False when `hash` was certainly never inserted. */
  def mightContain(hash: Long): Boolean

  /** Inserts `hashes(from until until)`. */
  def insertAll(hashes: Array[Long], from: Int, until: Int): Unit

  /** `out(outOffset + k) = mightContain(hashes(from + k))`. */
  def checkAll(hashes: Array[Long], from: Int, until: Int, out: Array[Boolean], outOffset: Int): Unit

  /** Bit `k` of `bitmap` answers `hashes(from + k)`; returns how many may be present. */
  def checkAllBitmap(hashes: Array[Long], from: Int, until: Int, bitmap: Array[Long]): Int = {
    BloomFilter.checkRange(hashes.length, from, until)
    val n = until - from
    val needed = (n + 63) >>> 6
    if (bitmap.length < needed) throw new IllegalArgumentException(
      s"bitmap: ${bitmap.length} words cannot hold $n results")
    val out = new Array[Boolean](math.min(n, 4096))
    var count = 0
    var start = 0
    java.util.Arrays.fill(bitmap, 0, needed, 0L)
    while (start < n) {
      val end = math.min(n, start + out.length)
      checkAll(hashes, from + start, from + end, out, 0)
      var k = start
      while (k < end) {
        if (out(k - start)) { bitmap(k >>> 6) |= 1L << (k & 63); count += 1 }
        k += 1
      }
      start = end
    }
    count
  }

  /** ORs `other` (same design and shape) into this filter: afterwards it holds both sets. */
  def merge(other: BloomFilter): this.type

  def copy(): BloomFilter

  /** The bit set alone, in the design's on-disk byte order. */
  def bitsetBytes: Array[Byte]

  /** The design's serialized form (header + bit set); `algorithm.fromBytes` reads it back. */
  def toBytes: Array[Byte]
}

object BloomFilter {

  private[bloomindex] def checkRange(length: Int, from: Int, until: Int): Unit =
    if (from < 0 || until < from || until > length) {
      throw new IndexOutOfBoundsException(s"range [$from, $until) of an array of $length")
    }

  private[bloomindex] def mergeError(into: BloomFilter, other: BloomFilter): Nothing =
    throw new IllegalArgumentException(
      s"other: cannot merge $other into $into (the design and the size must be the same)")
}
