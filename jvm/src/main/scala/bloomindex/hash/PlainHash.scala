package bloomindex.hash

import java.math.{BigDecimal => JBigDecimal, BigInteger}
import java.nio.ByteOrder

import net.openhft.hashing.{Access, LongHashFunction}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.ColumnVector
import org.apache.spark.unsafe.types.UTF8String

/**
 * A 64-bit hash of a Spark value's Parquet PLAIN encoding (the table in [[ParquetHash]]),
 * for one hash function. The encoding rules are the same for every filter design; only the
 * function applied to the encoded bytes differs: XXH64 ([[ParquetHash]], Parquet's split block
 * filters and the classic design) or MurmurHash3 x64 128 ([[Murmur3Hash]], the deprecated
 * blocked design).
 *
 * {{{
 *   ParquetHash.hashLong(42L)                 // XXH64 of 42 as 8 little-endian bytes
 *   Murmur3Hash.hashValue(UTF8String.fromString("hello"), StringType)
 *   Murmur3Hash.hasher(LongType).hashColumn(vector, numRows, out)
 * }}}
 */
abstract class PlainHash(fn: LongHashFunction) extends Serializable {

  /** "xxh64" or "murmur3": for messages. */
  def name: String

  // zero-allocation-hashing hashes primitives in native order; Parquet's plain encoding is LE.
  private val swap = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN
  private val unsafe: Access[AnyRef] = Access.unsafe[AnyRef]()

  def hashInt(v: Int): Long = fn.hashInt(if (swap) Integer.reverseBytes(v) else v)

  def hashLong(v: Long): Long = fn.hashLong(if (swap) java.lang.Long.reverseBytes(v) else v)

  def hashFloat(v: Float): Long = hashInt(java.lang.Float.floatToRawIntBits(v))

  def hashDouble(v: Double): Long = hashLong(java.lang.Double.doubleToRawLongBits(v))

  def hashBytes(b: Array[Byte]): Long = fn.hashBytes(b)

  def hashBytes(b: Array[Byte], offset: Int, length: Int): Long = fn.hashBytes(b, offset, length)

  /** Hashes the string's UTF-8 bytes where they lie (on or off heap), without copying them. */
  def hashUTF8(s: UTF8String): Long = hashMemory(s.getBaseObject, s.getBaseOffset, s.numBytes)

  /** `base`/`offset` as Spark's `Platform` addresses memory: an array and its byte offset, or null and an address. */
  def hashMemory(base: AnyRef, offset: Long, length: Int): Long = fn.hash(base, unsafe, offset, length.toLong)

  /** Hash of an unscaled decimal value stored at `precision`, as Spark's Parquet writer stores it. */
  def hashUnscaled(unscaled: BigInteger, precision: Int): Long =
    if (precision <= Decimal.MAX_INT_DIGITS) hashInt(unscaled.intValueExact())
    else if (precision <= Decimal.MAX_LONG_DIGITS) hashLong(unscaled.longValueExact())
    else {
      val n = ParquetHash.decimalBytes(precision)
      val minimal = unscaled.toByteArray
      if (minimal.length > n) throw new IllegalArgumentException(
        s"value: unscaled $unscaled does not fit decimal($precision)")
      val out = new Array[Byte](n)
      val fill: Byte = if (unscaled.signum() < 0) -1 else 0
      java.util.Arrays.fill(out, 0, n - minimal.length, fill)
      System.arraycopy(minimal, 0, out, n - minimal.length, minimal.length)
      hashBytes(out)
    }

  /** Hash of a decimal as a column of type `dt` stores it; the value must fit `dt` exactly. */
  def hashDecimal(d: Decimal, dt: DecimalType): Long =
    if (dt.precision <= Decimal.MAX_LONG_DIGITS && d.scale == dt.scale && d.precision <= dt.precision) {
      val unscaled = d.toUnscaledLong
      if (dt.precision <= Decimal.MAX_INT_DIGITS) hashInt(unscaled.toInt) else hashLong(unscaled)
    } else {
      hashUnscaled(rescale(d.toJavaBigDecimal, dt), dt.precision)
    }

  private def rescale(v: JBigDecimal, dt: DecimalType): BigInteger = {
    val scaled = try v.setScale(dt.scale) catch {
      case _: ArithmeticException => throw new IllegalArgumentException(
        s"value: $v has more than ${dt.scale} fractional digits for ${dt.simpleString}")
    }
    if (scaled.precision > dt.precision) throw new IllegalArgumentException(
      s"value: $v does not fit ${dt.simpleString}")
    scaled.unscaledValue
  }

  /**
   * Hash of one Catalyst (internal) value of type `dt`: Int for int/date, Long for
   * bigint/timestamps, UTF8String, Array[Byte], Decimal, Byte, Short, Float, Double.
   */
  def hashValue(value: Any, dt: DataType): Long = (dt, value) match {
    case (ByteType, v: Byte) => hashInt(v.toInt)
    case (ShortType, v: Short) => hashInt(v.toInt)
    case (IntegerType | DateType, v: Int) => hashInt(v)
    case (LongType | TimestampType | TimestampNTZType, v: Long) => hashLong(v)
    case (FloatType, v: Float) => hashFloat(v)
    case (DoubleType, v: Double) => hashDouble(v)
    case (s: StringType, v: UTF8String) if CollationKeys.keyed(s) => hashBytes(CollationKeys.of(v, s))
    case (_: StringType, v: UTF8String) => hashUTF8(v)
    case (BinaryType, v: Array[Byte]) => hashBytes(v)
    case (t: DecimalType, v: Decimal) => hashDecimal(v, t)
    case _ =>
      ParquetHash.checkIndexable(dt)
      throw new IllegalArgumentException(
        s"value: ${if (value == null) "null" else value.getClass.getName} is not a ${dt.sql} value")
  }

  /** The hasher for columns of type `dt`; fails for types a filter cannot hold. */
  def hasher(dt: DataType): FieldHasher = {
    ParquetHash.checkIndexable(dt)
    FieldHasher.forType(dt, this)
  }

  /**
   * Hashes the non-null values of rows `[0, numRows)` of `vector` into `out` (which must
   * have room for `numRows`) and returns how many it wrote. Nulls are skipped: Parquet never
   * inserts them.
   */
  def hashColumn(vector: ColumnVector, numRows: Int, out: Array[Long]): Int =
    hasher(vector.dataType()).hashColumn(vector, numRows, out)

  /** Hashes field `ordinal` of each row, skipping nulls; returns how many it wrote. */
  def hashRows(rows: Iterator[InternalRow], ordinal: Int, dt: DataType, out: Array[Long]): Int = {
    val h = hasher(dt)
    var n = 0
    while (rows.hasNext) {
      val row = rows.next()
      if (!row.isNullAt(ordinal)) {
        out(n) = h.hashRow(row, ordinal)
        n += 1
      }
    }
    n
  }

  // Where an UnsafeRow keeps a variable-length field: offset in the high 32 bits of its slot.
  private[bloomindex] def hashUnsafeRowBytes(row: UnsafeRow, ordinal: Int): Long = {
    val offsetAndSize = row.getLong(ordinal)
    hashMemory(row.getBaseObject, row.getBaseOffset + (offsetAndSize >>> 32), offsetAndSize.toInt)
  }
}

/**
 * MurmurHash3 x64 128 of the plain encoding, the first (low) 64 bits of its little-endian
 * result, with parquet-mr's seed 1361930890: the hash of the deprecated blocked design
 * (`../shared/reference/000_*`), checked against parquet-testing's `bloom_filter.bin`.
 */
// The seed is parquet-mr's DEFAULT_SEED (a System.nanoTime() it once drew); parquet-cpp copied it.
object Murmur3Hash extends PlainHash(LongHashFunction.murmur_3(1361930890L)) {
  def name: String = "murmur3"
  val Seed: Int = 1361930890
}
