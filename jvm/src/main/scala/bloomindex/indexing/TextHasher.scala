package bloomindex.indexing

import bloomindex.hash.PlainHash
import bloomindex.text.{CaseFolding, TextFilterSpec, UnitVisitor}

import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

/**
 * Hashes a value's tokens or n-grams ([[TextFilterSpec]]) into a [[HashedBatch]] column, each
 * unit's UTF-8 bytes with the column's filter design's hash: the bytes a query hashes for a unit
 * it requires (`hash.hashBytes(unit.getBytes(UTF_8))`).
 *
 * Without case folding the units are taken from the value's bytes where they lie, read as Spark's
 * `UTF8String.toString` reads them; with folding from the string Spark's `lower()` lowers:
 * `toValidString` under ICU's mapping, `toString` under the JDK's ([[CaseFolding]]).
 */
final class TextHasher(spec: TextFilterSpec, hash: PlainHash) {
  private var out: HashedBatch = _
  private var column = 0
  private val visitor: UnitVisitor = (b: Array[Byte], off: Int, len: Int) => out.append(column, hash.hashBytes(b, off, len))

  def hash(v: UTF8String, batch: HashedBatch, i: Int): Unit = {
    out = batch
    column = i
    spec.folding match {
      case CaseFolding.Off =>
        v.getBaseObject match {
          case a: Array[Byte] => spec.foreachUnitUtf8(a, (v.getBaseOffset - Platform.BYTE_ARRAY_OFFSET).toInt, v.numBytes, visitor)
          case _ =>
            val b = v.getBytes
            spec.foreachUnitUtf8(b, 0, b.length, visitor)
        }
      case CaseFolding.Lower => spec.foreachUnit(v.toValidString, visitor)
      case CaseFolding.LowerJdk => spec.foreachUnit(v.toString, visitor)
    }
  }
}
