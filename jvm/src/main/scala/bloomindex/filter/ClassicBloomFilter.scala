package bloomindex.filter

import java.nio.{ByteBuffer, ByteOrder}

import bloomindex.sbbf.SbbfSizing
/**
 * The first Bloom filter of parquet-mr's statistics (`../shared/reference/004_*`), after Hive
 * and Guava: `m` bits kept as 64-bit words, `k` positions per value from the two 32-bit halves
 * of one 64-bit hash (Kirsch and Mitzenmacher), see [[ClassicKernel]]. The hash is XXH64 of
 * the plain encoding, as for `sbbf`.
 *
 * {{{
 *   val f = ClassicBloomFilter.forNdv(ndv = 1000000, fpp = 0.01)   // k = 7
 *   f.insertAll(hashes, 0, hashes.length)
 *   f.toBytes    // int32 LE numBits, int32 LE numHashFunctions, then the words LE
 * }}}
 *
 * Sizing follows the classic formulas: `k = round(-log2 fpp)` (the optimum `m / n ln 2` for
 * the optimal `m`, which does not depend on `n`), and `m` the smallest multiple of 64 bits
 * whose rate `(1 - e^(-k n / m))^k` meets `fpp` (`Exact`), or that size rounded up to a power
 * of two bytes (`PowerOfTwo`), from 8 bytes to 128 MiB.
 */
final class ClassicBloomFilter private (
    private[filter] val words: Array[Long],
    val numHashes: Int,
    val kernel: ClassicKernel) extends BloomFilter {

  def algorithm: FilterAlgorithm = FilterAlgorithm.Classic

  def numBits: Int = words.length << 6

  def numBytes: Int = words.length * 8

  def insert(hash: Long): Unit = ClassicKernel.insert(words, numHashes, hash)

  def mightContain(hash: Long): Boolean = ClassicKernel.check(words, numHashes, hash)

  def insertAll(hashes: Array[Long], from: Int, until: Int): Unit = {
    BloomFilter.checkRange(hashes.length, from, until)
    kernel.insertAll(words, numHashes, hashes, from, until)
  }

  def checkAll(hashes: Array[Long], from: Int, until: Int, out: Array[Boolean], outOffset: Int): Unit = {
    BloomFilter.checkRange(hashes.length, from, until)
    BloomFilter.checkRange(out.length, outOffset, outOffset + (until - from))
    kernel.checkAll(words, numHashes, hashes, from, until, out, outOffset)
  }

  def merge(other: BloomFilter): this.type = other match {
    case o: ClassicBloomFilter if o.numBits == numBits && o.numHashes == numHashes =>
      var i = 0
      while (i < words.length) { words(i) |= o.words(i); i += 1 }
      this
    case _ => BloomFilter.mergeError(this, other)
  }

  def copy(): ClassicBloomFilter = new ClassicBloomFilter(words.clone(), numHashes, kernel)

  def withKernel(k: ClassicKernel): ClassicBloomFilter = new ClassicBloomFilter(words, numHashes, k)

  def bitsetBytes: Array[Byte] = {
    val buf = ByteBuffer.allocate(numBytes).order(ByteOrder.LITTLE_ENDIAN)
    buf.asLongBuffer().put(words)
    buf.array()
  }

  def toBytes: Array[Byte] = {
    val buf = ByteBuffer.allocate(ClassicBloomFilter.HeaderBytes + numBytes).order(ByteOrder.LITTLE_ENDIAN)
    buf.putInt(numBits).putInt(numHashes)
    buf.asLongBuffer().put(words)
    buf.array()
  }

  /** The rate to expect once `ndv` distinct values are in. */
  def expectedFpp(ndv: Long): Double = ClassicBloomFilter.expectedFpp(numBits.toLong, numHashes, ndv)

  override def equals(o: Any): Boolean = o match {
    case c: ClassicBloomFilter => numHashes == c.numHashes && java.util.Arrays.equals(words, c.words)
    case _ => false
  }

  override def hashCode(): Int = java.util.Arrays.hashCode(words) * 31 + numHashes

  override def toString: String = s"ClassicBloomFilter($numBytes bytes, k = $numHashes, ${kernel.name})"
}

object ClassicBloomFilter {

  val HeaderBytes = 8
  val MinBytes = 8
  val MaxBytes: Int = SbbfSizing.MaxBytes
  val MaxHashes = 64

  /** An empty filter of `numBytes` (a multiple of 8, 8 B to 128 MiB) setting `numHashes` bits per value. */
  def apply(numBytes: Int, numHashes: Int, kernel: ClassicKernel = ClassicKernels.default): ClassicBloomFilter = {
    checkNumBytes(numBytes)
    checkNumHashes(numHashes)
    new ClassicBloomFilter(new Array[Long](numBytes / 8), numHashes, kernel)
  }

  def forNdv(ndv: Long, fpp: Double, sizing: SbbfSizing.Sizing = SbbfSizing.Sizing.Exact): ClassicBloomFilter =
    apply(numBytes(ndv, fpp, sizing), numHashesFor(fpp))

  /** `k` for a target rate: `round(-log2 fpp)`, at least 1. */
  def numHashesFor(fpp: Double): Int = {
    SbbfSizing.checkFpp(fpp)
    val k = math.max(1L, math.round(-math.log(fpp) / math.log(2)))
    if (k > MaxHashes) throw new IllegalArgumentException(
      s"fpp: $fpp needs $k hash functions, more than the classic design's $MaxHashes")
    k.toInt
  }

  /** The classic rate `(1 - e^(-k n / m))^k` of `numBits` bits holding `ndv` values. */
  def expectedFpp(numBits: Long, numHashes: Int, ndv: Long): Double = {
    SbbfSizing.checkNdv(ndv)
    if (ndv == 0) 0.0 else math.pow(-math.expm1(-numHashes.toDouble * ndv / numBits), numHashes)
  }

  def numBytes(ndv: Long, fpp: Double, sizing: SbbfSizing.Sizing): Int = {
    SbbfSizing.checkNdv(ndv)
    val k = numHashesFor(fpp)
    // expectedFpp falls as words are added: binary search the smallest count meeting the target.
    var lo = 1
    var hi = MaxBytes / 8
    val exact =
      if (expectedFpp(hi.toLong * 64, k, ndv) > fpp) MaxBytes
      else {
        while (lo < hi) {
          val mid = lo + (hi - lo) / 2
          if (expectedFpp(mid.toLong * 64, k, ndv) <= fpp) hi = mid else lo = mid + 1
        }
        lo * 8
      }
    sizing match {
      case SbbfSizing.Sizing.Exact => exact
      case SbbfSizing.Sizing.PowerOfTwo =>
        val p2 = Integer.highestOneBit(exact)
        if (p2 == exact) exact else math.min(p2 << 1, MaxBytes)
    }
  }

  /** A filter over a copy of a bit set (little-endian 64-bit words, no header). */
  def fromBitset(bytes: Array[Byte], numHashes: Int): ClassicBloomFilter = fromBitset(bytes, 0, bytes.length, numHashes)

  private def fromBitset(bytes: Array[Byte], offset: Int, length: Int, numHashes: Int): ClassicBloomFilter = {
    checkNumBytes(length)
    checkNumHashes(numHashes)
    val words = new Array[Long](length / 8)
    ByteBuffer.wrap(bytes, offset, length).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(words)
    new ClassicBloomFilter(words, numHashes, ClassicKernels.default)
  }

  /** Reads [[ClassicBloomFilter#toBytes]]; refuses bad sizes, bad `k` and a wrong length. */
  def fromBytes(bytes: Array[Byte]): ClassicBloomFilter = {
    if (bytes.length < HeaderBytes) throw new IllegalArgumentException(
      s"bytes: ${bytes.length} bytes are too short for the 8-byte header of a classic filter")
    val buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    val numBits = buf.getInt(0)
    val k = buf.getInt(4)
    if (numBits <= 0 || numBits % 64 != 0 || numBits / 8 > MaxBytes) throw new IllegalArgumentException(
      s"bytes: numBits must be a positive multiple of 64 up to ${MaxBytes.toLong * 8}, got $numBits")
    if (bytes.length - HeaderBytes != numBits / 8) throw new IllegalArgumentException(
      s"bytes: header says ${numBits / 8} bytes of bit set, ${bytes.length - HeaderBytes} follow")
    fromBitset(bytes, HeaderBytes, numBits / 8, k)
  }

  /** A filter over `words` themselves and `numHashes` ([[FilterAlgorithm.shared]]'s state). */
  private[filter] def wrap(words: Array[Long], numHashes: Int): ClassicBloomFilter = {
    checkNumBytes(words.length * 8)
    checkNumHashes(numHashes)
    new ClassicBloomFilter(words, numHashes, ClassicKernels.default)
  }

  def checkNumBytes(numBytes: Int): Unit =
    if (numBytes < MinBytes || numBytes > MaxBytes || numBytes % 8 != 0) {
      throw new IllegalArgumentException(
        s"numBytes: must be a multiple of 8 between $MinBytes and $MaxBytes, got $numBytes")
    }

  def checkNumHashes(k: Int): Unit =
    if (k < 1 || k > MaxHashes) throw new IllegalArgumentException(
      s"numHashes: must be between 1 and $MaxHashes, got $k")
}
