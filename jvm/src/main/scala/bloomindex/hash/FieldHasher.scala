package bloomindex.hash

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.execution.vectorized.WritableColumnVector
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.ColumnVector

/**
 * Hashes values of one Spark type out of rows and column vectors, per [[ParquetHash]] (or
 * another [[PlainHash]]: the same encoding under another hash function).
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

  /** The XXH64 hasher ([[ParquetHash]]) for `dt`. */
  def forType(dt: DataType): FieldHasher = forType(dt, ParquetHash)

  def forType(dt: DataType, hash: PlainHash): FieldHasher = dt match {
    case ByteType => new ByteHasher(hash)
    case ShortType => new ShortHasher(hash)
    case IntegerType | DateType => new IntHasher(hash)
    case LongType | TimestampType | TimestampNTZType => new LongHasher(hash)
    case FloatType => new FloatHasher(hash)
    case DoubleType => new DoubleHasher(hash)
    case s: StringType if CollationKeys.keyed(s) => new CollationKeyHasher(s, hash)
    case _: StringType | BinaryType => new BytesHasher(hash)
    case t: DecimalType if t.precision <= Decimal.MAX_INT_DIGITS => new CompactDecimalHasher(t, asInt = true, hash)
    case t: DecimalType if t.precision <= Decimal.MAX_LONG_DIGITS => new CompactDecimalHasher(t, asInt = false, hash)
    case t: DecimalType => new WideDecimalHasher(t, hash)
    case other => throw new IllegalArgumentException(s"type: ${other.sql} cannot be hashed")
  }

  private final class ByteHasher(h: PlainHash) extends FieldHasher {
    def hashRow(row: InternalRow, ordinal: Int): Long = h.hashInt(row.getByte(ordinal))
    def hashVector(v: ColumnVector, i: Int): Long = h.hashInt(v.getByte(i))
    def hashColumn(v: ColumnVector, numRows: Int, out: Array[Long]): Int = {
      var n = 0
      var i = 0
      while (i < numRows) {
        if (!v.isNullAt(i)) { out(n) = h.hashInt(v.getByte(i)); n += 1 }
        i += 1
      }
      n
    }
  }

  private final class ShortHasher(h: PlainHash) extends FieldHasher {
    def hashRow(row: InternalRow, ordinal: Int): Long = h.hashInt(row.getShort(ordinal))
    def hashVector(v: ColumnVector, i: Int): Long = h.hashInt(v.getShort(i))
    def hashColumn(v: ColumnVector, numRows: Int, out: Array[Long]): Int = {
      var n = 0
      var i = 0
      while (i < numRows) {
        if (!v.isNullAt(i)) { out(n) = h.hashInt(v.getShort(i)); n += 1 }
        i += 1
      }
      n
    }
  }

  private final class IntHasher(h: PlainHash) extends FieldHasher {
    def hashRow(row: InternalRow, ordinal: Int): Long = h.hashInt(row.getInt(ordinal))
    def hashVector(v: ColumnVector, i: Int): Long = h.hashInt(v.getInt(i))
    def hashColumn(v: ColumnVector, numRows: Int, out: Array[Long]): Int = {
      var n = 0
      var i = 0
      while (i < numRows) {
        if (!v.isNullAt(i)) { out(n) = h.hashInt(v.getInt(i)); n += 1 }
        i += 1
      }
      n
    }
  }

  private final class LongHasher(h: PlainHash) extends FieldHasher {
    def hashRow(row: InternalRow, ordinal: Int): Long = h.hashLong(row.getLong(ordinal))
    def hashVector(v: ColumnVector, i: Int): Long = h.hashLong(v.getLong(i))
    def hashColumn(v: ColumnVector, numRows: Int, out: Array[Long]): Int = {
      var n = 0
      var i = 0
      while (i < numRows) {
        if (!v.isNullAt(i)) { out(n) = h.hashLong(v.getLong(i)); n += 1 }
        i += 1
      }
      n
    }
  }

  private final class FloatHasher(h: PlainHash) extends FieldHasher {
    def hashRow(row: InternalRow, ordinal: Int): Long = h.hashFloat(row.getFloat(ordinal))
    def hashVector(v: ColumnVector, i: Int): Long = h.hashFloat(v.getFloat(i))
    def hashColumn(v: ColumnVector, numRows: Int, out: Array[Long]): Int = {
      var n = 0
      var i = 0
      while (i < numRows) {
        if (!v.isNullAt(i)) { out(n) = h.hashFloat(v.getFloat(i)); n += 1 }
        i += 1
      }
      n
    }
  }

  private final class DoubleHasher(h: PlainHash) extends FieldHasher {
    def hashRow(row: InternalRow, ordinal: Int): Long = h.hashDouble(row.getDouble(ordinal))
    def hashVector(v: ColumnVector, i: Int): Long = h.hashDouble(v.getDouble(i))
    def hashColumn(v: ColumnVector, numRows: Int, out: Array[Long]): Int = {
      var n = 0
      var i = 0
      while (i < numRows) {
        if (!v.isNullAt(i)) { out(n) = h.hashDouble(v.getDouble(i)); n += 1 }
        i += 1
      }
      n
    }
  }

  /** Strings compared by their bytes, and binaries: the bytes, hashed where they lie. */
  private final class BytesHasher(h: PlainHash) extends FieldHasher {
    def hashRow(row: InternalRow, ordinal: Int): Long = row match {
      case u: UnsafeRow => h.hashUnsafeRowBytes(u, ordinal)
      case _ => row.get(ordinal, BinaryType) match {
        case b: Array[Byte] => h.hashBytes(b)
        case _ => h.hashUTF8(row.getUTF8String(ordinal))
      }
    }

    def hashVector(v: ColumnVector, i: Int): Long = v match {
      // getUTF8String is a view of the vector's bytes for binaries too; getBinary would copy.
      case w: WritableColumnVector if !w.hasDictionary => h.hashUTF8(w.getUTF8String(i))
      case _ if v.dataType() == BinaryType => h.hashBytes(v.getBinary(i))
      case _ => h.hashUTF8(v.getUTF8String(i))
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

  /**
   * Collated strings ([[CollationKeys]]): the collation key of each value (allocates one per
   * value). Its own column loop, as every hasher here (see the class comment).
   */
  private final class CollationKeyHasher(dt: StringType, h: PlainHash) extends FieldHasher {
    def hashRow(row: InternalRow, ordinal: Int): Long = h.hashBytes(CollationKeys.of(row.getUTF8String(ordinal), dt))

    def hashVector(v: ColumnVector, i: Int): Long = h.hashBytes(CollationKeys.of(v.getUTF8String(i), dt))

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
  private final class CompactDecimalHasher(dt: DecimalType, asInt: Boolean, h: PlainHash) extends FieldHasher {
    private def hashUnscaled(u: Long): Long = if (asInt) h.hashInt(u.toInt) else h.hashLong(u)

    def hashRow(row: InternalRow, ordinal: Int): Long = row match {
      case u: UnsafeRow => hashUnscaled(u.getLong(ordinal))
      case _ => h.hashDecimal(row.getDecimal(ordinal, dt.precision, dt.scale), dt)
    }

    def hashVector(v: ColumnVector, i: Int): Long = v match {
      case w: WritableColumnVector if !w.hasDictionary =>
        hashUnscaled(if (asInt) w.getInt(i).toLong else w.getLong(i))
      case _ => h.hashDecimal(v.getDecimal(i, dt.precision, dt.scale), dt)
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
  private final class WideDecimalHasher(dt: DecimalType, h: PlainHash) extends FieldHasher {
    def hashRow(row: InternalRow, ordinal: Int): Long =
      h.hashDecimal(row.getDecimal(ordinal, dt.precision, dt.scale), dt)

    def hashVector(v: ColumnVector, i: Int): Long =
      h.hashDecimal(v.getDecimal(i, dt.precision, dt.scale), dt)

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
