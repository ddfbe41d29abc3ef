package bloomindex.text

import java.nio.charset.StandardCharsets.UTF_8

import scala.collection.mutable

/**
 * Receives the units of a value one at a time as UTF-8 bytes: `utf8(offset until offset + length)`.
 * The array is the value's and is reused: hash the bytes, do not keep the array.
 *
 * {{{
 *   spec.foreachUnit(value, (b, off, len) => hashes += ParquetHash.hashBytes(b, off, len))
 * }}}
 */
trait UnitVisitor {
  def visit(utf8: Array[Byte], offset: Int, length: Int): Unit
}

/**
 * The units of values: tokens or n-grams by code point of the case-folded value. A unit's bytes are
 * the UTF-8 encoding of the unit's string as `String.getBytes(UTF_8)` writes it (a lone surrogate
 * as `?`), so a query hashes `unit.getBytes(UTF_8)` and meets the bytes a build hashed.
 */
private[text] object TextUnits {

  def distinct(spec: TextFilterSpec, value: String): Set[String] = {
    val out = mutable.LinkedHashSet.empty[String]
    foreach(spec, value, (b, off, len) => out += new String(b, off, len, UTF_8))
    out.toSet
  }

  def foreach(spec: TextFilterSpec, value: String, visitor: UnitVisitor): Unit = {
    val folded = spec.folding.fold(value)
    val bytes = folded.getBytes(UTF_8)
    val cps = new CodePointCursor(folded)
    emit(spec.kind, bytes, cps, visitor)
  }

  def foreachUtf8(spec: TextFilterSpec, bytes: Array[Byte], offset: Int, length: Int, visitor: UnitVisitor): Unit = {
    require(spec.folding == CaseFolding.Off, s"units from UTF-8 bytes: the filter folds case (${spec.folding.name}); pass the string Spark lowers")
    if (Utf8.isValid(bytes, offset, length)) emit(spec.kind, bytes, new Utf8Cursor(bytes, offset, offset + length), visitor)
    else foreach(spec, new String(bytes, offset, length, UTF_8), visitor)
  }

  /** Walks code points, giving each one's value and the byte offset where it starts in the UTF-8 form. */
  private[text] abstract class Cursor {
    /** Byte offset of the next code point (or of the end). */
    def offset: Int
    def hasNext: Boolean
    /** The next code point; moves past it. */
    def next(): Int
  }

  private final class CodePointCursor(s: String) extends Cursor {
    private var i = 0
    var offset = 0
    def hasNext: Boolean = i < s.length
    def next(): Int = {
      val cp = s.codePointAt(i)
      i += Character.charCount(cp)
      offset += (if (cp < 0x80) 1 else if (cp < 0x800) 2 else if (cp >= 0xD800 && cp <= 0xDFFF) 1 else if (cp < 0x10000) 3 else 4)
      cp
    }
  }

  /** Over valid UTF-8 only ([[Utf8.isValid]]). */
  private final class Utf8Cursor(b: Array[Byte], start: Int, end: Int) extends Cursor {
    var offset: Int = start
    def hasNext: Boolean = offset < end
    def next(): Int = {
      val b0 = b(offset) & 0xFF
      if (b0 < 0x80) { offset += 1; b0 }
      else if (b0 < 0xE0) { val cp = ((b0 & 0x1F) << 6) | (b(offset + 1) & 0x3F); offset += 2; cp }
      else if (b0 < 0xF0) { val cp = ((b0 & 0x0F) << 12) | ((b(offset + 1) & 0x3F) << 6) | (b(offset + 2) & 0x3F); offset += 3; cp }
      else {
        val cp = ((b0 & 0x07) << 18) | ((b(offset + 1) & 0x3F) << 12) | ((b(offset + 2) & 0x3F) << 6) | (b(offset + 3) & 0x3F)
        offset += 4
        cp
      }
    }
  }

  private def emit(kind: TextKind, bytes: Array[Byte], cps: Cursor, visitor: UnitVisitor): Unit = kind match {
    case TextKind.NGrams(n) =>
      // starts(k % (n + 1)): byte offset of code point k; a gram ends where code point k + n starts.
      val starts = new Array[Int](n + 1)
      var k = 0
      starts(0) = cps.offset
      while (cps.hasNext) {
        cps.next()
        k += 1
        starts(k % (n + 1)) = cps.offset
        if (k >= n) {
          val from = starts((k - n) % (n + 1))
          visitor.visit(bytes, from, cps.offset - from)
        }
      }
    case TextKind.Tokens(separators) =>
      var from = cps.offset
      while (cps.hasNext) {
        val at = cps.offset
        if (separators.isSeparator(cps.next())) {
          if (at > from) visitor.visit(bytes, from, at - from)
          from = cps.offset
        }
      }
      if (cps.offset > from) visitor.visit(bytes, from, cps.offset - from)
  }
}

/** Well-formed UTF-8 (the Unicode standard's table 3-7): what the JDK's decoder reads unchanged. */
private[text] object Utf8 {

  def isValid(b: Array[Byte], offset: Int, length: Int): Boolean = {
    val end = offset + length
    var i = offset
    def cont(j: Int, lo: Int, hi: Int): Boolean = j < end && (b(j) & 0xFF) >= lo && (b(j) & 0xFF) <= hi
    while (i < end) {
      val b0 = b(i) & 0xFF
      if (b0 < 0x80) i += 1
      else if (b0 >= 0xC2 && b0 <= 0xDF) { if (!cont(i + 1, 0x80, 0xBF)) return false; i += 2 }
      else if (b0 >= 0xE0 && b0 <= 0xEF) {
        val lo = if (b0 == 0xE0) 0xA0 else 0x80
        val hi = if (b0 == 0xED) 0x9F else 0xBF
        if (!cont(i + 1, lo, hi) || !cont(i + 2, 0x80, 0xBF)) return false
        i += 3
      } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        val lo = if (b0 == 0xF0) 0x90 else 0x80
        val hi = if (b0 == 0xF4) 0x8F else 0xBF
        if (!cont(i + 1, lo, hi) || !cont(i + 2, 0x80, 0xBF) || !cont(i + 3, 0x80, 0xBF)) return false
        i += 4
      } else return false
    }
    true
  }
}
