package bloomindex.join

import bloomindex.hash.{FieldHasher, ParquetHash, PlainHash}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.ColumnVector

/**
 * Hashes a join key's non-null values as the indexed column stores them, so a key value is
 * looked up in the column's filter exactly when some stored value could equal it.
 *
 * Each method writes the hash to `out(i)` and returns true, or returns false when no value of
 * the indexed type equals the key (an integral key outside the indexed type's range): the row
 * certainly has no match. Serializable: it travels with the plan to the executors.
 */
sealed abstract class KeyHash extends Serializable {
  def hashRow(row: InternalRow, ordinal: Int, out: Array[Long], i: Int): Boolean
  def hashVector(vector: ColumnVector, rowId: Int, out: Array[Long], i: Int): Boolean
  /** The hash of one non-null Catalyst value of the key's type; None: certainly absent. */
  def hashValue(value: Any): Option[Long]
}

object KeyHash {

  /**
   * How to look keys of `keyType` up in a filter over a column of `indexedType`, or why
   * that cannot be done exactly. Same types hash as the column does; integral types of
   * different widths convert exactly or not at all (a key out of range matches nothing).
   * Floating point keys are refused: Spark's join treats every NaN as equal and -0.0 as 0.0,
   * whatever bits the column stores. Collated strings are refused: equal strings may differ
   * in bytes. `hash` is the column's filter design's hash of the plain encoding.
   */
  def forTypes(keyType: DataType, indexedType: DataType, hash: PlainHash = ParquetHash): Either[String, KeyHash] =
    (keyType, indexedType) match {
      case (_, FloatType | DoubleType) | (FloatType | DoubleType, _) =>
        Left(s"floating point key (${keyType.sql}): the join equates NaNs and signed zeros whatever their bits")
      case (k: StringType, i: StringType) =>
        if (k.sql == "STRING" && i.sql == "STRING") Right(Exact(indexedType, hash))
        else Left(s"collated string key (${keyType.sql} against ${indexedType.sql})")
      case (k, i) if integralWidth(k) > 0 && integralWidth(i) > 0 =>
        if (k == i) Right(Exact(i, hash)) else Right(Integral(k, i, hash))
      case (k, i) if k == i && ParquetHash.isIndexable(i) => Right(Exact(i, hash))
      case _ => Left(s"key type ${keyType.sql} differs from the indexed type ${indexedType.sql}")
    }

  /** Bytes of an integral type, 0 for any other type. */
  private[join] def integralWidth(dt: DataType): Int = dt match {
    case ByteType => 1
    case ShortType => 2
    case IntegerType => 4
    case LongType => 8
    case _ => 0
  }

  /** The key type is the indexed type: the column's own hasher. */
  final case class Exact(dataType: DataType, hash: PlainHash = ParquetHash) extends KeyHash {
    @transient private lazy val hasher = FieldHasher.forType(dataType, hash)
    def hashRow(row: InternalRow, ordinal: Int, out: Array[Long], i: Int): Boolean = {
      out(i) = hasher.hashRow(row, ordinal); true
    }
    def hashVector(vector: ColumnVector, rowId: Int, out: Array[Long], i: Int): Boolean = {
      out(i) = hasher.hashVector(vector, rowId); true
    }
    def hashValue(value: Any): Option[Long] = Some(hash.hashValue(value, dataType))
  }

  /** Integral key of another width than the indexed integral column: converted exactly. */
  final case class Integral(keyType: DataType, indexedType: DataType, hash: PlainHash = ParquetHash) extends KeyHash {
    private val (min, max) = indexedType match {
      case ByteType => (Byte.MinValue.toLong, Byte.MaxValue.toLong)
      case ShortType => (Short.MinValue.toLong, Short.MaxValue.toLong)
      case IntegerType => (Int.MinValue.toLong, Int.MaxValue.toLong)
      case _ => (Long.MinValue, Long.MaxValue)
    }
    private val asLong = indexedType == LongType
    private val keyWidth = integralWidth(keyType)

    @inline private def put(v: Long, out: Array[Long], i: Int): Boolean =
      if (v < min || v > max) false
      else {
        out(i) = if (asLong) hash.hashLong(v) else hash.hashInt(v.toInt)
        true
      }

    def hashRow(row: InternalRow, ordinal: Int, out: Array[Long], i: Int): Boolean = keyWidth match {
      case 1 => put(row.getByte(ordinal).toLong, out, i)
      case 2 => put(row.getShort(ordinal).toLong, out, i)
      case 4 => put(row.getInt(ordinal).toLong, out, i)
      case _ => put(row.getLong(ordinal), out, i)
    }

    def hashVector(vector: ColumnVector, rowId: Int, out: Array[Long], i: Int): Boolean = keyWidth match {
      case 1 => put(vector.getByte(rowId).toLong, out, i)
      case 2 => put(vector.getShort(rowId).toLong, out, i)
      case 4 => put(vector.getInt(rowId).toLong, out, i)
      case _ => put(vector.getLong(rowId), out, i)
    }

    def hashValue(value: Any): Option[Long] = {
      val v = value match {
        case b: Byte => b.toLong
        case s: Short => s.toLong
        case n: Int => n.toLong
        case l: Long => l
        case other => throw new IllegalArgumentException(s"value: ${other.getClass.getName} is not ${keyType.sql}")
      }
      val out = new Array[Long](1)
      if (put(v, out, 0)) Some(out(0)) else None
    }
  }
}
