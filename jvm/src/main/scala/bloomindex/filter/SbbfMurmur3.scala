package bloomindex.filter

import java.nio.{ByteBuffer, ByteOrder}

import bloomindex.sbbf.{SbbfKernel, SbbfKernels, SbbfSizing}
/**
 * The earlier blocked design Parquet first specified (`../shared/reference/000_*`), bit for
 * bit what parquet-mr and parquet-cpp wrote before the format moved to XXH64: the same blocks
 * of eight 32-bit words and the same salt as [[Sbbf]], but
 *  - the hash is MurmurHash3 x64 128 (seed 1361930890, low 64 bits) of the plain encoding
 *    ([[bloomindex.hash.Murmur3Hash]]),
 *  - the block is the high 32 bits of the hash masked to the block count, `(h >>> 32) & (z - 1)`,
 *    so sizes are powers of two (32 B to 128 MiB),
 *  - on disk, a 12-byte header of three little-endian int32 (numBytes, hash = 0 for
 *    MURMUR3_X64_128, algorithm = 0 for BLOCK) precedes the bitset.
 *
 * {{{
 *   val f = SbbfMurmur3.forNdv(ndv = 4, fpp = 0.01)
 *   f.insert(Murmur3Hash.hashBytes("hello".getBytes(UTF_8)))
 *   f.toBytes      // what parquet-testing's bloom_filter.bin holds, for its four strings
 * }}}
 *
 * The bits live in an [[Sbbf]] and every operation goes through its kernels (scalar or Vector
 * API): a hash is first remapped so that the spec's multiply-shift block selection picks the
 * block this design's mask picks (the low `log2 z` bits of the high word are rotated to its
 * top), the low 32 bits are kept as they are.
 */
final class SbbfMurmur3 private (private[filter] val bits: Sbbf) extends BloomFilter {

  private val log2Blocks = Integer.numberOfTrailingZeros(bits.numBlocks)

  def algorithm: FilterAlgorithm = FilterAlgorithm.SplitBlockMurmur3

  def numBytes: Int = bits.numBytes

  def numBlocks: Int = bits.numBlocks

  def kernel: SbbfKernel = bits.kernel

  /** The hash whose multiply-shift block is this design's masked block; same low 32 bits. */
  private[filter] def remap(h: Long): Long =
    (Integer.rotateRight((h >>> 32).toInt, log2Blocks).toLong << 32) | (h & 0xFFFFFFFFL)

  def insert(hash: Long): Unit = bits.insert(remap(hash))

  def mightContain(hash: Long): Boolean = bits.mightContain(remap(hash))

  def insertAll(hashes: Array[Long], from: Int, until: Int): Unit = {
    BloomFilter.checkRange(hashes.length, from, until)
    val scratch = new Array[Long](math.min(until - from, SbbfMurmur3.Chunk))
    var start = from
    while (start < until) {
      val n = remapInto(hashes, start, until, scratch)
      bits.insertAll(scratch, 0, n)
      start += n
    }
  }

  def checkAll(hashes: Array[Long], from: Int, until: Int, out: Array[Boolean], outOffset: Int): Unit = {
    BloomFilter.checkRange(hashes.length, from, until)
    BloomFilter.checkRange(out.length, outOffset, outOffset + (until - from))
    val scratch = new Array[Long](math.min(until - from, SbbfMurmur3.Chunk))
    var start = from
    while (start < until) {
      val n = remapInto(hashes, start, until, scratch)
      bits.checkAll(scratch, 0, n, out, outOffset + start - from)
      start += n
    }
  }

  private def remapInto(hashes: Array[Long], start: Int, until: Int, scratch: Array[Long]): Int = {
    val n = math.min(until - start, scratch.length)
    var i = 0
    while (i < n) { scratch(i) = remap(hashes(start + i)); i += 1 }
    n
  }

  def merge(other: BloomFilter): this.type = other match {
    case o: SbbfMurmur3 if o.numBytes == numBytes => bits.merge(o.bits); this
    case _ => BloomFilter.mergeError(this, other)
  }

  def copy(): SbbfMurmur3 = new SbbfMurmur3(bits.copy())

  def withKernel(k: SbbfKernel): SbbfMurmur3 = new SbbfMurmur3(bits.withKernel(k))

  def bitsetBytes: Array[Byte] = bits.bitsetBytes

  def toBytes: Array[Byte] = {
    val buf = ByteBuffer.allocate(SbbfMurmur3.HeaderBytes + numBytes).order(ByteOrder.LITTLE_ENDIAN)
    buf.putInt(numBytes).putInt(SbbfMurmur3.HashMurmur3X64).putInt(SbbfMurmur3.AlgorithmBlock)
    buf.put(bitsetBytes)
    buf.array()
  }

  override def equals(o: Any): Boolean = o match {
    case m: SbbfMurmur3 => bits == m.bits
    case _ => false
  }

  override def hashCode(): Int = bits.hashCode() * 31 + 1

  override def toString: String = s"SbbfMurmur3($numBytes bytes, ${kernel.name})"
}

object SbbfMurmur3 {

  val HeaderBytes = 12
  private val HashMurmur3X64 = 0
  private val AlgorithmBlock = 0
  private val Chunk = 1024

  /** An empty filter of `numBytes`: a power of two from 32 bytes to 128 MiB. */
  def apply(numBytes: Int, kernel: SbbfKernel = SbbfKernels.default): SbbfMurmur3 = {
    checkNumBytes(numBytes)
    new SbbfMurmur3(Sbbf(numBytes, kernel))
  }

  /**
   * Sized for `ndv` values at `fpp`: power of two by the spec's formula, as Arrow and the old
   * parquet-cpp rounded it; `Exact` takes the smallest power of two whose split-block false
   * positive rate meets `fpp` (the formula undershoots a blocked filter).
   */
  def numBytes(ndv: Long, fpp: Double, sizing: SbbfSizing.Sizing): Int = sizing match {
    case SbbfSizing.Sizing.PowerOfTwo => SbbfSizing.powerOfTwoBytes(ndv, fpp)
    case SbbfSizing.Sizing.Exact =>
      val exact = SbbfSizing.exactBytes(ndv, fpp)
      val p2 = Integer.highestOneBit(exact)
      if (p2 == exact) exact else math.min(p2 << 1, SbbfSizing.MaxBytes)
  }

  def forNdv(ndv: Long, fpp: Double, sizing: SbbfSizing.Sizing = SbbfSizing.Sizing.PowerOfTwo): SbbfMurmur3 =
    apply(numBytes(ndv, fpp, sizing))

  /** A filter over a copy of a bitset (little-endian words, no header). */
  def fromBitset(bytes: Array[Byte]): SbbfMurmur3 = {
    checkNumBytes(bytes.length)
    new SbbfMurmur3(Sbbf.fromBitset(bytes))
  }

  /**
   * Reads the 12-byte header and the bitset. Refuses a hash or algorithm other than 0, a size
   * that is not a power of two from 32 bytes to 128 MiB, and a length that disagrees with it.
   */
  def fromBytes(bytes: Array[Byte]): SbbfMurmur3 = {
    if (bytes.length < HeaderBytes) throw new IllegalArgumentException(
      s"bytes: ${bytes.length} bytes are too short for the 12-byte header of an sbbf-murmur3 filter")
    val buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    val n = buf.getInt(0)
    val hash = buf.getInt(4)
    val alg = buf.getInt(8)
    if (hash != HashMurmur3X64) throw new IllegalArgumentException(
      s"bytes: unsupported hash $hash in an sbbf-murmur3 header (0 = MURMUR3_X64_128)")
    if (alg != AlgorithmBlock) throw new IllegalArgumentException(
      s"bytes: unsupported algorithm $alg in an sbbf-murmur3 header (0 = BLOCK)")
    checkNumBytes(n)
    if (bytes.length - HeaderBytes != n) throw new IllegalArgumentException(
      s"bytes: header says $n bytes of bitset, ${bytes.length - HeaderBytes} follow")
    new SbbfMurmur3(Sbbf.fromBitset(bytes, HeaderBytes, n))
  }

  /** Over `bits` itself (for [[FilterAlgorithm.wrapShared]]). */
  private[filter] def wrap(bits: Sbbf): SbbfMurmur3 = {
    checkNumBytes(bits.numBytes)
    new SbbfMurmur3(bits)
  }

  def checkNumBytes(numBytes: Int): Unit =
    if (numBytes < SbbfSizing.MinBytes || numBytes > SbbfSizing.MaxBytes || Integer.bitCount(numBytes) != 1) {
      throw new IllegalArgumentException(
        s"numBytes: must be a power of two between ${SbbfSizing.MinBytes} and ${SbbfSizing.MaxBytes}, got $numBytes")
    }
}
