package bloomindex.sbbf

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.execution.vectorized.WritableColumnVector
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.ColumnVector

/**
 * Hashes values of one Spark type out of rows and column vectors, per [[ParquetHash]].
 *
 * Each subclass has its own column loop so that the per-value call in it is monomorphic and
 * the JIT inlines it; a shared loop over a virtual `hash(vector, i)` would not be.
 */
sealed abstract class FieldHasher {

  /** Hash of the non-null field `ordinal` of `row`. */
  def hashRow(row: InternalRow, ordinal: Int): Long

  /** Hash of the non-null value at `rowId` of `vector`. */
  def hashVector(vector: ColumnVector, rowId: Int): Long

  /** Hashes the non-null values of rows `[0, numRows)` into `out`; returns how many. */
  def hashColumn(vector: ColumnVector, numRows: Int, out: Array[Long]): Int
}

object FieldHasher {

  def forType(dt: DataType): FieldHasher = dt match {
    case ByteType => ByteHasher
    case ShortType => ShortHasher
    case IntegerType | DateType => IntHasher
    case LongType | TimestampType | TimestampNTZType => LongHasher
    case FloatType => FloatHasher
    case DoubleType => DoubleHasher
    case _: StringType | BinaryType => BytesHasher
    case t: DecimalType if t.precision <= Decimal.MAX_INT_DIGITS => new CompactDecimalHasher(t, asInt = true)
    case t: DecimalType if t.precision <= Decimal.MAX_LONG_DIGITS => new CompactDecimalHasher(t, asInt = false)
    case t: DecimalType => new WideDecimalHasher(t)
    case other => throw new IllegalArgumentException(s"type: ${other.sql} cannot be hashed")
  }

  private object ByteHasher extends FieldHasher {
    def hashRow(row: InternalRow, ordinal: Int): Long = ParquetHash.hashInt(row.getByte(ordinal))
    def hashVector(v: ColumnVector, i: Int): Long = ParquetHash.hashInt(v.getByte(i))
    def hashColumn(v: ColumnVector, numRows: Int, out: Array[Long]): Int = {
      var n = 0
      var i = 0
      while (i < numRows) {
        if (!v.isNullAt(i)) { out(n) = ParquetHash.hashInt(v.getByte(i)); n += 1 }
        i += 1
      }
      n
    }
  }

  private object ShortHasher extends FieldHasher {
    def hashRow(row: InternalRow, ordinal: Int): Long = ParquetHash.hashInt(row.getShort(ordinal))
    def hashVector(v: ColumnVector, i: Int): Long = ParquetHash.hashInt(v.getShort(i))
    def hashColumn(v: ColumnVector, numRows: Int, out: Array[Long]): Int = {
      var n = 0
      var i = 0
      while (i < numRows) {
        if (!v.isNullAt(i)) { out(n) = ParquetHash.hashInt(v.getShort(i)); n += 1 }
        i += 1
      }
      n
    }
  }

  private object IntHasher extends FieldHasher {
    def hashRow(row: InternalRow, ordinal: Int): Long = ParquetHash.hashInt(row.getInt(ordinal))
    def hashVector(v: ColumnVector, i: Int): Long = ParquetHash.hashInt(v.getInt(i))
    def hashColumn(v: ColumnVector, numRows: Int, out: Array[Long]): Int = {
      var n = 0
      var i = 0
      while (i < numRows) {
        if (!v.isNullAt(i)) { out(n) = ParquetHash.hashInt(v.getInt(i)); n += 1 }
        i += 1
      }
      n
    }
  }

  private object LongHasher extends FieldHasher {
    def hashRow(row: InternalRow, ordinal: Int): Long = ParquetHash.hashLong(row.getLong(ordinal))
    def hashVector(v: ColumnVector, i: Int): Long = ParquetHash.hashLong(v.getLong(i))
    def hashColumn(v: ColumnVector, numRows: Int, out: Array[Long]): Int = {
      var n = 0
      var i = 0
      while (i < numRows) {
        if (!v.isNullAt(i)) { out(n) = ParquetHash.hashLong(v.getLong(i)); n += 1 }
        i += 1
      }
      n
    }
  }

  private object FloatHasher extends FieldHasher {
    def hashRow(row: InternalRow, ordinal: Int): Long = ParquetHash.hashFloat(row.getFloat(ordinal))
    def hashVector(v: ColumnVector, i: Int): Long = ParquetHash.hashFloat(v.getFloat(i))
    def hashColumn(v: ColumnVector, numRows: Int, out: Array[Long]): Int = {
      var n = 0
      var i = 0
      while (i < numRows) {
        if (!v.isNullAt(i)) { out(n) = ParquetHash.hashFloat(v.getFloat(i)); n += 1 }
        i += 1
      }
      n
    }
  }

  private object DoubleHasher extends FieldHasher {
    def hashRow(row: InternalRow, ordinal: Int): Long = ParquetHash.hashDouble(row.getDouble(ordinal))
    def hashVector(v: ColumnVector, i: Int): Long = ParquetHash.hashDouble(v.getDouble(i))
    def hashColumn(v: ColumnVector, numRows: Int, out: Array[Long]): Int = {
      var n = 0
      var i = 0
      while (i < numRows) {
        if (!v.isNullAt(i)) { out(n) = ParquetHash.hashDouble(v.getDouble(i)); n += 1 }
        i += 1
      }
      n
    }
  }

  /** Strings (of any collation) and binaries: the bytes, hashed where they lie. */
  private object BytesHasher extends FieldHasher {
    def hashRow(row: InternalRow, ordinal: Int): Long = row match {
      case u: UnsafeRow => ParquetHash.hashUnsafeRowBytes(u, ordinal)
      case _ => row.get(ordinal, BinaryType) match {
        case b: Array[Byte] => ParquetHash.hashBytes(b)
        case _ => ParquetHash.hashUTF8(row.getUTF8String(ordinal))
      }
    }

    def hashVector(v: ColumnVector, i: Int): Long = v match {
      // getUTF8String is a view of the vector's bytes for binaries too; getBinary would copy.
      case w: WritableColumnVector if !w.hasDictionary => ParquetHash.hashUTF8(w.getUTF8String(i))
      case _ if v.dataType() == BinaryType => ParquetHash.hashBytes(v.getBinary(i))
      case _ => ParquetHash.hashUTF8(v.getUTF8String(i))
    }

    def hashColumn(v: ColumnVector, numRows: Int, out: Array[Long]): Int = {
      var n = 0
      var i = 0
      while (i < numRows) {
        if (!v.isNullAt(i)) { out(n) = hashVector(v, i); n += 1 }
        i += 1
      }
      n
    }
  }

  /** Decimals of up to 18 digits: Spark keeps the unscaled value as an int or a long. */
  private final class CompactDecimalHasher(dt: DecimalType, asInt: Boolean) extends FieldHasher {
    private def hashUnscaled(u: Long): Long = if (asInt) ParquetHash.hashInt(u.toInt) else ParquetHash.hashLong(u)

    def hashRow(row: InternalRow, ordinal: Int): Long = row match {
      case u: UnsafeRow => hashUnscaled(u.getLong(ordinal))
      case _ => ParquetHash.hashDecimal(row.getDecimal(ordinal, dt.precision, dt.scale), dt)
    }

    def hashVector(v: ColumnVector, i: Int): Long = v match {
      case w: WritableColumnVector if !w.hasDictionary =>
        hashUnscaled(if (asInt) w.getInt(i).toLong else w.getLong(i))
      case _ => ParquetHash.hashDecimal(v.getDecimal(i, dt.precision, dt.scale), dt)
    }

    def hashColumn(v: ColumnVector, numRows: Int, out: Array[Long]): Int = {
      var n = 0
      var i = 0
      while (i < numRows) {
        if (!v.isNullAt(i)) { out(n) = hashVector(v, i); n += 1 }
        i += 1
      }
      n
    }
  }

  /** Decimals over 18 digits: a FIXED_LEN_BYTE_ARRAY per value (allocates, unlike the others). */
  private final class WideDecimalHasher(dt: DecimalType) extends FieldHasher {
    def hashRow(row: InternalRow, ordinal: Int): Long =
      ParquetHash.hashDecimal(row.getDecimal(ordinal, dt.precision, dt.scale), dt)

    def hashVector(v: ColumnVector, i: Int): Long =
      ParquetHash.hashDecimal(v.getDecimal(i, dt.precision, dt.scale), dt)

    def hashColumn(v: ColumnVector, numRows: Int, out: Array[Long]): Int = {
      var n = 0
      var i = 0
      while (i < numRows) {
        if (!v.isNullAt(i)) { out(n) = hashVector(v, i); n += 1 }
        i += 1
      }
      n
    }
  }
}
