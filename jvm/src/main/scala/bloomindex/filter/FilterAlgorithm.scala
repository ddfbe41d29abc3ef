package bloomindex.filter

import java.util.Locale

import bloomindex.hash.{FieldHasher, Murmur3Hash, ParquetHash, PlainHash}
import bloomindex.sbbf.SbbfSizing
import bloomindex.sbbf.SbbfSizing.Sizing

import org.apache.spark.sql.types.DataType

/**
 * A Bloom filter design an index can hold, by the name `CREATE BLOOM INDEX ... OPTIONS
 * (algorithm = '...')` and the index log use:
 *
 * | name           | design                                              | hash    | sizes            |
 * |----------------|-----------------------------------------------------|---------|------------------|
 * | `sbbf`         | Parquet's split block filter (the default)          | XXH64   | 32 B multiples   |
 * | `sbbf-murmur3` | the earlier blocked design, bloom_filter.bin's      | Murmur3 | powers of two    |
 * | `classic`      | m bits, k hash functions (parquet-mr's first)       | XXH64   | 8 B multiples    |
 *
 * Every design hashes a Spark value's Parquet plain encoding ([[PlainHash]]); `hash` is the
 * function, `hasher(dt)` the column hasher.
 *
 * {{{
 *   val alg = FilterAlgorithm.fromName("sbbf-murmur3")
 *   val f = alg.forNdv(ndv = 10000, fpp = 0.01, Sizing.Exact)
 *   f.insert(alg.hash.hashLong(7L))
 *   alg.fromBytes(f.toBytes) == f
 * }}}
 */
sealed abstract class FilterAlgorithm(val name: String) extends Serializable {

  def hash: PlainHash

  def hasher(dt: DataType): FieldHasher = hash.hasher(dt)

  /** Bit set bytes for `ndv` distinct values at false positive rate `fpp`. */
  def numBytes(ndv: Long, fpp: Double, sizing: Sizing): Int

  /**
   * An empty filter of `numBytes` (from [[numBytes]]) for a column whose target rate is `fpp`:
   * the classic design takes its number of hash functions from it, the blocked ones set 8 bits.
   */
  def empty(numBytes: Int, fpp: Double): BloomFilter

  def forNdv(ndv: Long, fpp: Double, sizing: Sizing = Sizing.PowerOfTwo): BloomFilter =
    empty(numBytes(ndv, fpp, sizing), fpp)

  /** The bit set alone (`filter.bitsetBytes`) of a filter made by `empty(_, fpp)`. */
  def fromBitset(bits: Array[Byte], fpp: Double): BloomFilter

  /** The design's serialized form (`filter.toBytes`); bad input is an IllegalArgumentException. */
  def fromBytes(bytes: Array[Byte]): BloomFilter

  /** The smallest filter: for files with no value. */
  def minBytes: Int

  /** The false positive rate theory expects of `numBytes` holding `ndv` values, sized for `fpp`. */
  def expectedFpp(numBytes: Int, ndv: Long, fpp: Double): Double

  /**
   * The filter's bits as one serializable value to broadcast: its own arrays, not a copy, of
   * types any `spark.serializer` takes unregistered (an array; `classic`: its words and hash count
   * as a pair). [[wrapShared]] turns it back into a filter, on any JVM, without copying.
   */
  def shared(filter: BloomFilter): AnyRef

  /** A read-only filter over a [[shared]] value (nobody may insert into it): no copy. */
  def wrapShared(state: AnyRef): BloomFilter

  protected def notMine(what: Any): Nothing = throw new IllegalArgumentException(
    s"filter: $what is not an $name filter")

  override def toString: String = name
}

object FilterAlgorithm {

  /** Parquet's split block Bloom filter: [[Sbbf]]. */
  case object SplitBlock extends FilterAlgorithm("sbbf") {
    def hash: PlainHash = ParquetHash
    def numBytes(ndv: Long, fpp: Double, sizing: Sizing): Int = SbbfSizing.numBytes(ndv, fpp, sizing)
    def empty(numBytes: Int, fpp: Double): Sbbf = Sbbf(numBytes)
    def fromBitset(bits: Array[Byte], fpp: Double): Sbbf = Sbbf.fromBitset(bits)
    def fromBytes(bytes: Array[Byte]): Sbbf = Sbbf.fromParquetBytes(bytes)
    def minBytes: Int = SbbfSizing.MinBytes
    def expectedFpp(numBytes: Int, ndv: Long, fpp: Double): Double = SbbfSizing.expectedFpp(numBytes, ndv)
    def shared(filter: BloomFilter): AnyRef = filter match {
      case s: Sbbf => s.words
      case other => notMine(other)
    }
    def wrapShared(state: AnyRef): Sbbf = state match {
      case words: Array[Int] => Sbbf.wrap(words)
      case other => notMine(other)
    }
  }

  /** The deprecated blocked design with MurmurHash3: [[SbbfMurmur3]]. */
  case object SplitBlockMurmur3 extends FilterAlgorithm("sbbf-murmur3") {
    def hash: PlainHash = Murmur3Hash
    def numBytes(ndv: Long, fpp: Double, sizing: Sizing): Int = SbbfMurmur3.numBytes(ndv, fpp, sizing)
    def empty(numBytes: Int, fpp: Double): SbbfMurmur3 = SbbfMurmur3(numBytes)
    def fromBitset(bits: Array[Byte], fpp: Double): SbbfMurmur3 = SbbfMurmur3.fromBitset(bits)
    def fromBytes(bytes: Array[Byte]): SbbfMurmur3 = SbbfMurmur3.fromBytes(bytes)
    def minBytes: Int = SbbfSizing.MinBytes
    def expectedFpp(numBytes: Int, ndv: Long, fpp: Double): Double = {
      SbbfMurmur3.checkNumBytes(numBytes)
      SbbfSizing.expectedFpp(numBytes, ndv)
    }
    def shared(filter: BloomFilter): AnyRef = filter match {
      case m: SbbfMurmur3 => m.bits.words
      case other => notMine(other)
    }
    def wrapShared(state: AnyRef): SbbfMurmur3 = state match {
      case words: Array[Int] => SbbfMurmur3.wrap(Sbbf.wrap(words))
      case other => notMine(other)
    }
  }

  /** m bits and k hash functions: [[ClassicBloomFilter]]. */
  case object Classic extends FilterAlgorithm("classic") {
    def hash: PlainHash = ParquetHash
    def numBytes(ndv: Long, fpp: Double, sizing: Sizing): Int = ClassicBloomFilter.numBytes(ndv, fpp, sizing)
    def empty(numBytes: Int, fpp: Double): ClassicBloomFilter =
      ClassicBloomFilter(numBytes, ClassicBloomFilter.numHashesFor(fpp))
    def fromBitset(bits: Array[Byte], fpp: Double): ClassicBloomFilter =
      ClassicBloomFilter.fromBitset(bits, ClassicBloomFilter.numHashesFor(fpp))
    def fromBytes(bytes: Array[Byte]): ClassicBloomFilter = ClassicBloomFilter.fromBytes(bytes)
    def minBytes: Int = ClassicBloomFilter.MinBytes
    def expectedFpp(numBytes: Int, ndv: Long, fpp: Double): Double = {
      ClassicBloomFilter.checkNumBytes(numBytes)
      ClassicBloomFilter.expectedFpp(numBytes.toLong * 8, ClassicBloomFilter.numHashesFor(fpp), ndv)
    }
    def shared(filter: BloomFilter): AnyRef = filter match {
      case c: ClassicBloomFilter => (c.words, Int.box(c.numHashes))
      case other => notMine(other)
    }
    def wrapShared(state: AnyRef): ClassicBloomFilter = state match {
      case (words: Array[Long], k: Integer) => ClassicBloomFilter.wrap(words, k)
      case other => notMine(other)
    }
  }

  val Default: FilterAlgorithm = SplitBlock

  val all: Seq[FilterAlgorithm] = Seq(SplitBlock, SplitBlockMurmur3, Classic)

  def names: Seq[String] = all.map(_.name)

  /** By name, case-insensitively; anything else is an IllegalArgumentException naming the choices. */
  def fromName(name: String): FilterAlgorithm = {
    val n = Option(name).map(_.trim.toLowerCase(Locale.ROOT)).getOrElse("")
    all.find(_.name == n).getOrElse(throw new IllegalArgumentException(
      s"algorithm: unknown Bloom filter algorithm '$name' (expected one of ${names.map(a => s"'$a'").mkString(", ")})"))
  }
}
