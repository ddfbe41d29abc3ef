package bloomindex.text

import java.nio.charset.StandardCharsets.UTF_8

import scala.collection.mutable
import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

class TextUnitsSuite extends AnyFunSuite {

  private def grams(n: Int, folding: CaseFolding = CaseFolding.Off) = TextFilterSpec(TextKind.NGrams(n), folding)
  private val words = TextFilterSpec.tokens

  test("n-grams by code point; a value shorter than n has none") {
    assert(grams(3).units("abcd") == Set("abc", "bcd"))
    assert(grams(3).units("abab") == Set("aba", "bab"))
    assert(grams(3).units("ab").isEmpty && grams(3).units("").isEmpty)
    assert(grams(1).units("aab") == Set("a", "b"))
    assert(grams(2).units("a\uD83D\uDE00b") == Set("a\uD83D\uDE00", "\uD83D\uDE00b"), "a surrogate pair is one code point")
    assert(grams(2).units("e\u0301x") == Set("e\u0301", "\u0301x"), "a combining mark is a code point of its own")
    assert(grams(3).units("\uD83D\uDE00\uD83D\uDE00").isEmpty)
  }

  test("tokens: maximal runs of letters and digits, by code point") {
    assert(words.units(" foo--bar 42 ") == Set("foo", "bar", "42"))
    assert(words.units("").isEmpty && words.units(" -_%. ").isEmpty)
    assert(words.units("a\uD83D\uDE00b") == Set("a", "b"), "an emoji separates")
    assert(words.units("cafe\u0301 x") == Set("cafe", "x"), "a combining mark separates")
    assert(words.units("\uD835\uDC00bc \u0663\u0664") == Set("\uD835\uDC00bc", "\u0663\u0664"), "supplementary letters, Arabic-Indic digits")
    assert(TextFilterSpec(TextKind.Tokens(Separators.Only.of("/"))).units("/api v1/x") == Set("api v1", "x"))
  }

  test("case folding first: the folded value's units, whatever its length") {
    val lower2 = grams(2, CaseFolding.Lower)
    assert(lower2.units("İX") == Set("i\u0307", "\u0307x"), "İ is two code points once lower-cased")
    assert(lower2.units("ΑΣ") == Set("ας"), "final sigma")
    assert(lower2.units("ΑΣΑ") == Set("ασ", "σα"))
    assert(lower2.units("ẞ\u212A") == Set("ßk"))
    assert(lower2.units("ǄǅǆX") == Set("ǆǆ", "ǆx"))
    assert(lower2.units("\uD801\uDC00A") == Set("\uD801\uDC28a"), "a supplementary capital")
    assert(TextFilterSpec(TextKind.Tokens(), CaseFolding.Lower).units("İstanbul ERROR") == Set("i", "stanbul", "error"),
      "U+0307 from İ is a combining mark: a separator")
  }

  test("the bytes given are each unit's String.getBytes(UTF_8), lone surrogates too") {
    val rng = new Random(3)
    val extra = IndexedSeq("\uD800", "\uDC00", "\uDBFF")
    for (_ <- 1 to 2000) {
      val s = Seq.fill(rng.nextInt(10))(if (rng.nextInt(8) == 0) extra(rng.nextInt(3)) else TextCases.letter(rng)).mkString
      val cps = TextCases.codePoints(s)
      for (spec <- Seq(grams(1), grams(2), grams(3), words)) {
        val seen = mutable.ArrayBuffer.empty[Seq[Byte]]
        spec.foreachUnit(s, (b, off, len) => seen += b.slice(off, off + len).toSeq)
        val expected = spec.kind match {
          case TextKind.NGrams(n) => cps.sliding(n).filter(_.length == n).map(_.mkString).toSeq
          case TextKind.Tokens(sep) =>
            cps.foldLeft(Vector(Vector.empty[String])) { (acc, c) =>
              if (sep.isSeparator(c.codePointAt(0))) acc :+ Vector.empty else acc.init :+ (acc.last :+ c)
            }.filter(_.nonEmpty).map(_.mkString)
        }
        assert(seen == expected.map(_.getBytes(UTF_8).toSeq), s"$spec of ${s.map(_.toInt.toHexString)}")
      }
    }
  }

  test("UTF-8 bytes: valid ones read in place, malformed ones as the JDK decodes them; not with case folding") {
    def fromBytes(spec: TextFilterSpec, b: Array[Byte]): Set[String] = {
      val out = mutable.Set.empty[String]
      spec.foreachUnitUtf8(b, 0, b.length, (a, off, len) => out += new String(a, off, len, UTF_8))
      out.toSet
    }
    val valid = "ab\uD83D\uDE00é x".getBytes(UTF_8)
    assert(fromBytes(grams(2), valid) == grams(2).units("ab\uD83D\uDE00é x"))
    val malformed = Array[Byte]('a', 'b', 0xC0.toByte, 'c', 0xED.toByte, 0xA0.toByte, 0x80.toByte, 'd')
    assert(!Utf8.isValid(malformed, 0, malformed.length))
    assert(fromBytes(grams(2), malformed) == grams(2).units(new String(malformed, UTF_8)))
    assert(fromBytes(grams(2), malformed).contains("\uFFFDc"))
    assert(fromBytes(words, malformed) == Set("ab", "c", "d"))
    intercept[IllegalArgumentException](fromBytes(grams(2, CaseFolding.Lower), valid))
  }
}
