package bloomindex.hash

import java.math.BigInteger
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets.UTF_8

import org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter
import org.apache.parquet.io.api.Binary
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

class ParquetHashSuite extends AnyFunSuite {

  private val parquetJava = new BlockSplitBloomFilter(32)

  private def le(n: Int)(fill: ByteBuffer => Unit): Array[Byte] = {
    val b = ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN)
    fill(b)
    b.array()
  }

  test("fixed-width values hash as parquet-java hashes them") {
    for (v <- Seq(0, 1, -1, Int.MinValue, Int.MaxValue, 42)) {
      assert(ParquetHash.hashInt(v) == parquetJava.hash(v))
      assert(ParquetHash.hashInt(v) == ParquetHash.hashBytes(le(4)(_.putInt(v))))
    }
    for (v <- Seq(0L, -1L, Long.MinValue, Long.MaxValue, 1234567890123L)) {
      assert(ParquetHash.hashLong(v) == parquetJava.hash(v))
    }
    for (v <- Seq(0.0f, -0.0f, Float.NaN, Float.PositiveInfinity, 1.5f, Float.MinPositiveValue)) {
      assert(ParquetHash.hashFloat(v) == parquetJava.hash(v))
    }
    for (v <- Seq(0.0, -0.0, Double.NaN, Double.NegativeInfinity, math.Pi, Double.MinPositiveValue)) {
      assert(ParquetHash.hashDouble(v) == parquetJava.hash(v))
    }
    assert(ParquetHash.hashDouble(0.0) != ParquetHash.hashDouble(-0.0), "raw bits: -0.0 and 0.0 differ")
  }

  test("strings and binaries hash their bytes, wherever the bytes lie") {
    for (s <- Seq("", "a", "héllo wörld", "日本語", "x" * 10000)) {
      val bytes = s.getBytes(UTF_8)
      val expected = parquetJava.hash(Binary.fromConstantByteArray(bytes))
      assert(ParquetHash.hashUTF8(UTF8String.fromString(s)) == expected)
      assert(ParquetHash.hashBytes(bytes) == expected)
      val padded = Array[Byte](9, 9, 9) ++ bytes
      assert(ParquetHash.hashUTF8(UTF8String.fromBytes(padded, 3, bytes.length)) == expected)
    }
  }

  test("decimals hash their unscaled value in the physical type Spark writes") {
    val d9 = DecimalType(9, 2)
    assert(ParquetHash.hashValue(Decimal(BigDecimal("-1234567.89"), 9, 2), d9) == ParquetHash.hashInt(-123456789))
    val d18 = DecimalType(18, 3)
    assert(ParquetHash.hashValue(Decimal(BigDecimal("1.5"), 18, 3), d18) == ParquetHash.hashLong(1500L))
    // decimal(20, 2): FIXED_LEN_BYTE_ARRAY of 9 bytes, big-endian two's complement.
    val d20 = DecimalType(20, 2)
    assert(ParquetHash.decimalBytes(20) == 9)
    assert(ParquetHash.hashValue(Decimal(BigDecimal("-0.01"), 20, 2), d20) == ParquetHash.hashBytes(Array.fill[Byte](9)(-1)))
    val big = new BigInteger("123456789012345678901234567890")
    val expected = new Array[Byte](ParquetHash.decimalBytes(38))
    val raw = big.toByteArray
    System.arraycopy(raw, 0, expected, expected.length - raw.length, raw.length)
    assert(ParquetHash.hashUnscaled(big, 38) == ParquetHash.hashBytes(expected))
    // A value with the column's scale given at another scale hashes the same.
    assert(ParquetHash.hashDecimal(Decimal(BigDecimal("1.5")), d18) == ParquetHash.hashLong(1500L))
    assert(intercept[IllegalArgumentException](ParquetHash.hashDecimal(Decimal(BigDecimal("1.2345")), d18))
      .getMessage.contains("fractional digits"))
    // Spark's own table of FIXED_LEN_BYTE_ARRAY sizes.
    for (p <- 19 to 38) assert(ParquetHash.decimalBytes(p) == Decimal.minBytesForPrecision(p))
  }

  test("unsupported types fail with a message naming the type") {
    for (dt <- Seq(BooleanType, ArrayType(IntegerType), StructType(Nil), MapType(IntegerType, IntegerType),
        CalendarIntervalType, NullType)) {
      val e = intercept[IllegalArgumentException](ParquetHash.hasher(dt))
      assert(e.getMessage.contains(dt.sql), e.getMessage)
    }
  }

  private val types = Seq(ByteType, ShortType, IntegerType, LongType, FloatType, DoubleType, DateType,
    TimestampType, TimestampNTZType, StringType, BinaryType, DecimalType(7, 2), DecimalType(15, 4),
    DecimalType(30, 5))

  private def value(dt: DataType, i: Int): Any = dt match {
    case ByteType => i.toByte
    case ShortType => (i * 31).toShort
    case IntegerType | DateType => i * 7919 - 50000
    case LongType | TimestampType | TimestampNTZType => i.toLong * 1000003L - 77L
    case FloatType => i * 0.5f - 3
    case DoubleType => i * 0.25 - 11
    case StringType => UTF8String.fromString("s" * (i % 5) + i)
    case BinaryType => Array.tabulate[Byte](i % 7)(j => (i + j).toByte)
    case t: DecimalType => Decimal(BigDecimal(i * 37 - 500, t.scale), t.precision, t.scale)
  }

  test("rows, unsafe rows and column vectors hash every type alike, nulls skipped") {
    for (dt <- types) {
      val n = 200
      val values: Seq[Any] = (0 until n).map(i => if (i % 9 == 0) null else value(dt, i))
      val expected = values.filter(_ != null).map(ParquetHash.hashValue(_, dt)).toArray

      val generic = values.map(v => new GenericInternalRow(Array[Any](v)): InternalRow)
      val out = new Array[Long](n)
      assert(ParquetHash.hashRows(generic.iterator, 0, dt, out) == expected.length)
      assert(out.take(expected.length).toSeq == expected.toSeq, s"generic rows, $dt")

      val project = UnsafeProjection.create(Array[DataType](dt))
      val unsafe = generic.map(r => project(r).copy())
      java.util.Arrays.fill(out, 0L)
      assert(ParquetHash.hashRows(unsafe.iterator, 0, dt, out) == expected.length)
      assert(out.take(expected.length).toSeq == expected.toSeq, s"unsafe rows, $dt")

      val vector = new OnHeapColumnVector(n, dt)
      try {
        values.zipWithIndex.foreach { case (v, i) => put(vector, dt, i, v) }
        java.util.Arrays.fill(out, 0L)
        assert(ParquetHash.hashColumn(vector, n, out) == expected.length)
        assert(out.take(expected.length).toSeq == expected.toSeq, s"column vector, $dt")
      } finally vector.close()
    }
  }

  private def put(v: OnHeapColumnVector, dt: DataType, i: Int, value: Any): Unit =
    if (value == null) v.putNull(i)
    else (dt, value) match {
      case (ByteType, b: Byte) => v.putByte(i, b)
      case (ShortType, s: Short) => v.putShort(i, s)
      case (_, x: Int) => v.putInt(i, x)
      case (_, x: Long) => v.putLong(i, x)
      case (_, x: Float) => v.putFloat(i, x)
      case (_, x: Double) => v.putDouble(i, x)
      case (_, s: UTF8String) => v.putByteArray(i, s.getBytes)
      case (_, b: Array[Byte]) => v.putByteArray(i, b)
      case (t: DecimalType, d: Decimal) => v.putDecimal(i, d, t.precision)
    }
}
