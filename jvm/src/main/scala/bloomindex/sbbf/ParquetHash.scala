package bloomindex.sbbf

import java.math.{BigDecimal => JBigDecimal, BigInteger}
import java.nio.ByteOrder

import net.openhft.hashing.{Access, LongHashFunction}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.ColumnVector
import org.apache.spark.unsafe.types.UTF8String

/**
 * XXH64 (seed 0) of a Spark value's Parquet PLAIN encoding: the hash Parquet's split block
 * Bloom filters are defined on, so a filter built here matches the one a Parquet writer
 * puts in its file for the same column.
 *
 * | Spark type                               | Parquet physical | bytes hashed                |
 * |------------------------------------------|------------------|-----------------------------|
 * | ByteType, ShortType, IntegerType, Date   | INT32            | 4 bytes LE, sign-extended   |
 * | LongType, Timestamp, TimestampNTZ        | INT64            | 8 bytes LE (microseconds)   |
 * | FloatType, DoubleType                    | FLOAT, DOUBLE    | raw IEEE bits, LE           |
 * | StringType (any collation), BinaryType   | BYTE_ARRAY       | the bytes, no length prefix |
 * | DecimalType(p, s), p <= 9 / <= 18        | INT32 / INT64    | unscaled value, LE          |
 * | DecimalType(p, s), p > 18                | FIXED_LEN_BYTE_ARRAY | unscaled, big-endian two's complement, minimal length for p |
 *
 * Collated strings hash their bytes like any string: whether a filter over them may be used
 * for a predicate is the query side's decision, not the hash's.
 */
object ParquetHash {

  private val xx: LongHashFunction = LongHashFunction.xx()
  private val unsafe: Access[AnyRef] = Access.unsafe[AnyRef]()
  // zero-allocation-hashing hashes primitives in native order; Parquet's plain encoding is LE.
  private val swap = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN

  def hashInt(v: Int): Long = xx.hashInt(if (swap) Integer.reverseBytes(v) else v)

  def hashLong(v: Long): Long = xx.hashLong(if (swap) java.lang.Long.reverseBytes(v) else v)

  def hashFloat(v: Float): Long = hashInt(java.lang.Float.floatToRawIntBits(v))

  def hashDouble(v: Double): Long = hashLong(java.lang.Double.doubleToRawLongBits(v))

  def hashBytes(b: Array[Byte]): Long = xx.hashBytes(b)

  def hashBytes(b: Array[Byte], offset: Int, length: Int): Long = xx.hashBytes(b, offset, length)

  /** Hashes the string's UTF-8 bytes where they lie (on or off heap), without copying them. */
  def hashUTF8(s: UTF8String): Long = hashMemory(s.getBaseObject, s.getBaseOffset, s.numBytes)

  /** `base`/`offset` as Spark's `Platform` addresses memory: an array and its byte offset, or null and an address. */
  def hashMemory(base: AnyRef, offset: Long, length: Int): Long = xx.hash(base, unsafe, offset, length.toLong)

  /** Bytes of the FIXED_LEN_BYTE_ARRAY Spark writes for a decimal of this precision. */
  def decimalBytes(precision: Int): Int = {
    require(precision > 0 && precision <= DecimalType.MAX_PRECISION, s"precision: $precision")
    // Smallest n with 2^(8n - 1) > 10^precision - 1.
    var n = 1
    val limit = BigInteger.TEN.pow(precision)
    while (BigInteger.ONE.shiftLeft(8 * n - 1).compareTo(limit) < 0) n += 1
    n
  }

  /** Hash of an unscaled decimal value stored at `precision`, as Spark's Parquet writer stores it. */
  def hashUnscaled(unscaled: BigInteger, precision: Int): Long =
    if (precision <= Decimal.MAX_INT_DIGITS) hashInt(unscaled.intValueExact())
    else if (precision <= Decimal.MAX_LONG_DIGITS) hashLong(unscaled.longValueExact())
    else {
      val n = decimalBytes(precision)
      val minimal = unscaled.toByteArray
      if (minimal.length > n) throw new IllegalArgumentException(
        s"value: unscaled $unscaled does not fit decimal($precision)")
      val out = new Array[Byte](n)
      val fill: Byte = if (unscaled.signum() < 0) -1 else 0
      java.util.Arrays.fill(out, 0, n - minimal.length, fill)
      System.arraycopy(minimal, 0, out, n - minimal.length, minimal.length)
      xx.hashBytes(out)
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

  /** True for the types a Bloom index can hold (see the table above). */
  def isIndexable(dt: DataType): Boolean = dt match {
    case ByteType | ShortType | IntegerType | DateType | LongType | TimestampType |
        TimestampNTZType | FloatType | DoubleType | BinaryType | _: DecimalType => true
    case _: StringType => true // any collation; CharType/VarcharType arrive as StringType
    case _ => false
  }

  def checkIndexable(dt: DataType): Unit =
    if (!isIndexable(dt)) throw new IllegalArgumentException(
      s"type: ${dt.sql} cannot be held in a Bloom filter (supported: tinyint, smallint, int, " +
        "bigint, float, double, decimal, string, binary, date, timestamp, timestamp_ntz)")

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
    case (_: StringType, v: UTF8String) => hashUTF8(v)
    case (BinaryType, v: Array[Byte]) => hashBytes(v)
    case (t: DecimalType, v: Decimal) => hashDecimal(v, t)
    case _ =>
      checkIndexable(dt)
      throw new IllegalArgumentException(
        s"value: ${if (value == null) "null" else value.getClass.getName} is not a ${dt.sql} value")
  }

  /** The hasher for columns of type `dt`; fails for types a filter cannot hold. */
  def hasher(dt: DataType): FieldHasher = {
    checkIndexable(dt)
    FieldHasher.forType(dt)
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
  private[sbbf] def hashUnsafeRowBytes(row: UnsafeRow, ordinal: Int): Long = {
    val offsetAndSize = row.getLong(ordinal)
    hashMemory(row.getBaseObject, row.getBaseOffset + (offsetAndSize >>> 32), offsetAndSize.toInt)
  }
}
