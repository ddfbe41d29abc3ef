package bloomindex.filter

import java.nio.{ByteBuffer, ByteOrder}

import bloomindex.hash.ParquetHash
import bloomindex.sbbf.{SbbfKernel, SbbfKernels, SbbfSizing}
/**
 * Parquet's split block Bloom filter: `numBlocks` blocks of eight 32-bit words, exactly as
 * the Parquet spec defines it, so the bitset is bit for bit what parquet-java and Arrow
 * write for the same hashes.
 *
 * {{{
 *   val f = Sbbf.forNdv(ndv = 1000000, fpp = 0.01)
 *   f.insertAll(hashes, 0, hashes.length)
 *   f.mightContain(ParquetHash.hashLong(42L))
 *   val bytes = f.toParquetBytes   // Thrift header + little-endian bitset
 * }}}
 *
 * Hashes are XXH64 of the value's Parquet plain encoding ([[ParquetHash]]). Not thread-safe
 * for inserts; concurrent checks on a filter nobody inserts into are safe. The `sbbf`
 * [[FilterAlgorithm]]; `sbbf-murmur3` keeps its bits in one of these too.
 */
final class Sbbf private (private[bloomindex] val words: Array[Int], val kernel: SbbfKernel) extends BloomFilter {

  def algorithm: FilterAlgorithm = FilterAlgorithm.SplitBlock

  def numBlocks: Int = words.length >>> 3

  def numBytes: Int = words.length * 4

  def insert(hash: Long): Unit = kernel.insert(words, hash)

  def mightContain(hash: Long): Boolean = kernel.check(words, hash)

  def insertAll(hashes: Array[Long], from: Int, until: Int): Unit = {
    checkRange(hashes.length, from, until)
    kernel.insertAll(words, hashes, from, until)
  }

  /** `out(outOffset + k) = mightContain(hashes(from + k))`. */
  def checkAll(hashes: Array[Long], from: Int, until: Int, out: Array[Boolean], outOffset: Int): Unit = {
    checkRange(hashes.length, from, until)
    checkRange(out.length, outOffset, outOffset + (until - from))
    kernel.checkAll(words, hashes, from, until, out, outOffset)
  }

  /** Bit `k` of `bitmap` answers `hashes(from + k)`; returns how many may be present. */
  override def checkAllBitmap(hashes: Array[Long], from: Int, until: Int, bitmap: Array[Long]): Int = {
    checkRange(hashes.length, from, until)
    kernel.checkAllBitmap(words, hashes, from, until, bitmap)
  }

  /** ORs `other` into this filter: afterwards it holds both sets. Sizes must match. */
  def merge(other: BloomFilter): this.type = other match {
    case o: Sbbf if o.numBytes == numBytes =>
      var i = 0
      while (i < words.length) {
        words(i) |= o.words(i)
        i += 1
      }
      this
    case o: Sbbf => throw new IllegalArgumentException(
      s"other: cannot merge a filter of ${o.numBytes} bytes into one of $numBytes bytes")
    case _ => BloomFilter.mergeError(this, other)
  }

  /** The same bits, checked and filled by another kernel. */
  def withKernel(k: SbbfKernel): Sbbf = new Sbbf(words, k)

  def copy(): Sbbf = new Sbbf(words.clone(), kernel)

  /** The bitset as Parquet stores it: the words in little-endian order. */
  def bitsetBytes: Array[Byte] = {
    val out = new Array[Byte](numBytes)
    copyBitsetInto(out, 0)
    out
  }

  /** Writes [[bitsetBytes]] into `out` at `offset`. */
  def copyBitsetInto(out: Array[Byte], offset: Int): Unit =
    ByteBuffer.wrap(out, offset, numBytes).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().put(words)

  /** Parquet's serialized form: the Thrift compact `BloomFilterHeader`, then the bitset. */
  def toParquetBytes: Array[Byte] = SbbfSerde.write(this)

  def toBytes: Array[Byte] = toParquetBytes

  override def equals(o: Any): Boolean = o match {
    case s: Sbbf => java.util.Arrays.equals(words, s.words)
    case _ => false
  }

  override def hashCode(): Int = java.util.Arrays.hashCode(words)

  override def toString: String = s"Sbbf($numBytes bytes, ${kernel.name})"

  private def checkRange(length: Int, from: Int, until: Int): Unit = BloomFilter.checkRange(length, from, until)
}

object Sbbf {

  /** An empty filter of `numBytes` bytes (a multiple of 32, at most 128 MiB). */
  def apply(numBytes: Int, kernel: SbbfKernel = SbbfKernels.default): Sbbf = {
    SbbfSizing.checkNumBytes(numBytes)
    new Sbbf(new Array[Int](numBytes / 4), kernel)
  }

  /** An empty filter sized for `ndv` distinct values at false positive rate `fpp`. */
  def forNdv(
      ndv: Long,
      fpp: Double,
      sizing: SbbfSizing.Sizing = SbbfSizing.Sizing.PowerOfTwo,
      kernel: SbbfKernel = SbbfKernels.default): Sbbf =
    apply(SbbfSizing.numBytes(ndv, fpp, sizing), kernel)

  /** A filter over a copy of a bitset in Parquet's layout (little-endian words). */
  def fromBitset(bytes: Array[Byte], offset: Int, length: Int): Sbbf = {
    SbbfSizing.checkNumBytes(length)
    if (offset < 0 || offset + length > bytes.length) {
      throw new IllegalArgumentException(
        s"bytes: bitset of $length bytes at $offset overruns ${bytes.length} bytes")
    }
    val words = new Array[Int](length / 4)
    ByteBuffer.wrap(bytes, offset, length).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(words)
    new Sbbf(words, SbbfKernels.default)
  }

  def fromBitset(bytes: Array[Byte]): Sbbf = fromBitset(bytes, 0, bytes.length)

  /**
   * A filter over `words` themselves, not a copy (for a bitset shared read-only, such as a
   * broadcast one): nobody may insert into it.
   */
  private[bloomindex] def wrap(words: Array[Int]): Sbbf = {
    SbbfSizing.checkNumBytes(words.length * 4)
    new Sbbf(words, SbbfKernels.default)
  }

  /** Reads Parquet's serialized form (header + bitset); see [[SbbfSerde]]. */
  def fromParquetBytes(bytes: Array[Byte]): Sbbf = SbbfSerde.read(bytes)
}
