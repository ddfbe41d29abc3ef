package bloomindex.hash

import java.math.BigInteger

import net.openhft.hashing.LongHashFunction
import org.apache.spark.sql.types._

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
 * for a predicate is the query side's decision, not the hash's. The same encoding hashed with
 * MurmurHash3 instead is [[Murmur3Hash]]; both are [[PlainHash]]es.
 */
object ParquetHash extends PlainHash(LongHashFunction.xx()) {

  def name: String = "xxh64"

  /** Bytes of the FIXED_LEN_BYTE_ARRAY Spark writes for a decimal of this precision. */
  def decimalBytes(precision: Int): Int = {
    require(precision > 0 && precision <= DecimalType.MAX_PRECISION, s"precision: $precision")
    // Smallest n with 2^(8n - 1) > 10^precision - 1.
    var n = 1
    val limit = BigInteger.TEN.pow(precision)
    while (BigInteger.ONE.shiftLeft(8 * n - 1).compareTo(limit) < 0) n += 1
    n
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
}
