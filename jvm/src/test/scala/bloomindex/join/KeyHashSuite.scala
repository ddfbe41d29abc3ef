package bloomindex.join

import bloomindex.hash.ParquetHash

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

class KeyHashSuite extends AnyFunSuite {

  private def hashOf(kh: KeyHash, v: Any): Option[Long] = kh.hashValue(v)

  test("same types hash as the column stores them") {
    val cases: Seq[(DataType, Any)] = Seq(
      IntegerType -> 42, LongType -> -7L, DateType -> 19000, TimestampType -> 1234567L,
      StringType -> UTF8String.fromString("日本"), BinaryType -> Array[Byte](1, 2),
      DecimalType(10, 2) -> Decimal(BigDecimal("12.34"), 10, 2), ShortType -> 3.toShort)
    cases.foreach { case (dt, v) =>
      val kh = KeyHash.forTypes(dt, dt).toOption.get
      assert(hashOf(kh, v).contains(ParquetHash.hashValue(v, dt)), dt)
    }
  }

  test("integral keys of another width convert exactly or are certainly absent") {
    val wideKey = KeyHash.forTypes(LongType, IntegerType).toOption.get
    assert(hashOf(wideKey, 5L).contains(ParquetHash.hashInt(5)))
    assert(hashOf(wideKey, Int.MinValue.toLong).contains(ParquetHash.hashInt(Int.MinValue)))
    assert(hashOf(wideKey, Int.MaxValue.toLong + 1).isEmpty)
    assert(hashOf(wideKey, Long.MinValue).isEmpty)
    val narrowKey = KeyHash.forTypes(ShortType, LongType).toOption.get
    assert(hashOf(narrowKey, (-3).toShort).contains(ParquetHash.hashLong(-3L)))
    val byteColumn = KeyHash.forTypes(IntegerType, ByteType).toOption.get
    assert(hashOf(byteColumn, 127).contains(ParquetHash.hashInt(127)))
    assert(hashOf(byteColumn, 128).isEmpty)
  }

  test("rows and column vectors hash like single values") {
    val kh = KeyHash.forTypes(LongType, IntegerType).toOption.get
    val values = Array(0L, -1L, 1L << 40, Int.MaxValue.toLong)
    val vector = new OnHeapColumnVector(values.length, LongType)
    values.zipWithIndex.foreach { case (v, i) => vector.putLong(i, v) }
    val out = new Array[Long](values.length)
    values.indices.foreach { i =>
      val fromVector = kh.hashVector(vector, i, out, i)
      assert(fromVector == hashOf(kh, values(i)).isDefined)
      if (fromVector) assert(hashOf(kh, values(i)).contains(out(i)))
      val fromRow = kh.hashRow(InternalRow(values(i)), 0, out, i)
      assert(fromRow == fromVector)
    }
    vector.close()
  }

  test("floating point, collated strings and other type pairs are refused") {
    assert(KeyHash.forTypes(DoubleType, DoubleType).isLeft)
    assert(KeyHash.forTypes(FloatType, FloatType).isLeft)
    assert(KeyHash.forTypes(LongType, DoubleType).isLeft)
    assert(KeyHash.forTypes(StringType("UTF8_LCASE"), StringType).isLeft)
    assert(KeyHash.forTypes(StringType, LongType).isLeft)
    assert(KeyHash.forTypes(DecimalType(12, 2), DecimalType(10, 2)).isLeft)
    assert(KeyHash.forTypes(TimestampNTZType, TimestampType).isLeft)
    assert(KeyHash.forTypes(BooleanType, BooleanType).isLeft)
  }
}
