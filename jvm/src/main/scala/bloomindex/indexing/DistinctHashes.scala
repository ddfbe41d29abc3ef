package bloomindex.indexing

/**
 * The distinct values among a stream of 64-bit hashes, counted exactly: hashes are appended
 * as they come and, when the buffer is large or the caller asks, sorted on their high 22
 * bits (two radix passes of 11 bits) and deduplicated in place. Appends are sequential and
 * the sort touches memory in order, so this is several times cheaper than a hash set over
 * the same random keys; and a filter fed the sorted result writes its blocks in order.
 *
 * Memory: 8 bytes per buffered hash, up to `compactAt` before the first deduplication, plus
 * a scratch array as large as the buffer while sorting (shareable between instances that do
 * not sort at the same time, see [[DistinctHashes.Scratch]]).
 *
 * {{{
 *   val d = new DistinctHashes(new DistinctHashes.Scratch)
 *   d.add(hashes, 0, n)
 *   val count = d.distinct()          // sorts and deduplicates
 *   filter.insertAll(d.keys, 0, count)
 * }}}
 */
final class DistinctHashes(@transient private var scratch: DistinctHashes.Scratch,
    compactAt: Int = DistinctHashes.DefaultCompactAt) extends Serializable {

  private var buf = new Array[Long](1024)
  private var len = 0
  private var deduplicated = true

  /** The buffer: after [[distinct]], its first `distinct()` entries are the distinct hashes. */
  def keys: Array[Long] = buf

  /** Hashes held: the distinct count after [[distinct]], an upper bound before. */
  def size: Int = len

  def clear(): Unit = { len = 0; deduplicated = true }

  def add(hashes: Array[Long], from: Int, until: Int): Unit = {
    val k = until - from
    if (k <= 0) return
    if (len + k > buf.length) {
      if (buf.length >= compactAt) distinct()
      if (len + k > buf.length) buf = java.util.Arrays.copyOf(buf, math.max(len + k, buf.length * 2))
    }
    System.arraycopy(hashes, from, buf, len, k)
    len += k
    deduplicated = false
  }

  /** Adds another instance's hashes. */
  def addAll(o: DistinctHashes): Unit = add(o.buf, 0, o.len)

  /** Sorts and deduplicates what is held; returns the distinct count. */
  def distinct(): Int = {
    if (!deduplicated) {
      if (scratch == null) scratch = new DistinctHashes.Scratch
      len = DistinctHashes.sortDistinct(buf, len, scratch.get(len))
      deduplicated = true
    }
    len
  }

  /** The distinct hashes, in a new array. */
  def toArray: Array[Long] = java.util.Arrays.copyOf(buf, distinct())
}

object DistinctHashes {

  /** Deduplicate in place once this many hashes are buffered (8 MB). */
  val DefaultCompactAt: Int = 1 << 20

  /** A reusable sort buffer. */
  final class Scratch {
    private var a = new Array[Long](0)
    def get(n: Int): Array[Long] = {
      if (a.length < n) a = new Array[Long](math.max(n, a.length + a.length / 2))
      a
    }
  }

  private val Bits = 11
  private val Buckets = 1 << Bits
  /** The sort key: the high 22 bits (a filter's block index grows with the high 32). */
  private val Shift = 64 - 2 * Bits

  /**
   * Sorts `a(0 until n)` by the unsigned value of its high 22 bits (LSD radix, two passes
   * through `tmp` and back), then deduplicates each run of equal high bits in place (short
   * runs by insertion sort, long ones by `Arrays.sort`). Leaves the distinct hashes in
   * `a(0 until result)`, ordered by their high bits.
   */
  private[bloomindex] def sortDistinct(a: Array[Long], n: Int, tmp: Array[Long]): Int = {
    val count = new Array[Int](Buckets * 2)
    var i = 0
    while (i < n) {
      val v = a(i)
      count((v >>> Shift).toInt & (Buckets - 1)) += 1
      count(Buckets + (v >>> (Shift + Bits)).toInt) += 1
      i += 1
    }
    scatter(a, tmp, n, count, 0, Shift)
    scatter(tmp, a, n, count, Buckets, Shift + Bits)
    var k = 0
    i = 0
    while (i < n) {
      val high = a(i) >>> Shift
      var j = i + 1
      while (j < n && (a(j) >>> Shift) == high) j += 1
      if (j - i > 1) {
        if (j - i <= 16) insertionSort(a, i, j) else java.util.Arrays.sort(a, i, j)
      }
      // k <= i: the run is read before anything is written over it.
      var m = i
      while (m < j) {
        if (m == i || a(m) != a(m - 1)) { a(k) = a(m); k += 1 }
        m += 1
      }
      i = j
    }
    k
  }

  private def scatter(src: Array[Long], dst: Array[Long], n: Int, count: Array[Int], base: Int, shift: Int): Unit = {
    var sum = 0
    var d = 0
    while (d < Buckets) { val c = count(base + d); count(base + d) = sum; sum += c; d += 1 }
    var i = 0
    while (i < n) {
      val v = src(i)
      val slot = base + ((v >>> shift).toInt & (Buckets - 1))
      dst(count(slot)) = v
      count(slot) += 1
      i += 1
    }
  }

  private def insertionSort(a: Array[Long], from: Int, until: Int): Unit = {
    var i = from + 1
    while (i < until) {
      val v = a(i)
      var j = i - 1
      while (j >= from && a(j) > v) { a(j + 1) = a(j); j -= 1 }
      a(j + 1) = v
      i += 1
    }
  }
}
