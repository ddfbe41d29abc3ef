package bloomindex.text

import org.scalatest.funsuite.AnyFunSuite

import bloomindex.text.Requirement.{AllOf, NotPrunable, Or}
import bloomindex.text.TextCases.Spark
import bloomindex.text.TextSearch.Operand

class TextSearchSuite extends AnyFunSuite {

  private val grams3 = TextFilterSpec.ngrams(3)
  private val grams2 = TextFilterSpec.ngrams(2)
  private val words = TextFilterSpec.tokens
  private val lowerGrams2 = TextFilterSpec(TextKind.NGrams(2), CaseFolding.Lower)
  private val lowerWords = TextFilterSpec(TextKind.Tokens(), CaseFolding.Lower)

  private def all(units: String*): Requirement = AllOf(units)

  private def notPrunable(r: Requirement, why: String): Unit = r match {
    case NotPrunable(reason) => assert(reason.contains(why), reason)
    case other => fail(s"expected nothing required ($why), got $other")
  }

  test("n-grams: every n-gram of every literal run of n or more code points") {
    assert(TextSearch.like(grams3, "%abcdef%") == all("abc", "bcd", "cde", "def"))
    assert(TextSearch.like(grams3, "abc%xyz") == all("abc", "xyz"))
    assert(TextSearch.like(grams3, "%abc_def%") == all("abc", "def"), "_ splits the run")
    assert(TextSearch.like(grams3, "%ab_cdef%") == all("cde", "def"))
    notPrunable(TextSearch.like(grams3, "%ab_cd%"), "no literal run of 3")
    notPrunable(TextSearch.like(grams3, "%ab%"), "no literal run of 3")
    notPrunable(TextSearch.equalTo(grams3, "ab"), "no literal run of 3")
    notPrunable(TextSearch.like(grams3, "%"), "no literal run")
    assert(TextSearch.like(grams3, "%abab%") == all("aba", "bab"), "each gram once")
    assert(TextSearch.like(TextFilterSpec.ngrams(1), "_x%") == all("x"))
  }

  test("n-grams count code points: a surrogate pair is one, a combining mark one of its own") {
    assert(TextSearch.contains(grams2, "a\uD83D\uDE00b") == all("a\uD83D\uDE00", "\uD83D\uDE00b"))
    assert(TextSearch.contains(grams3, "e\u0301x") == all("e\u0301x"))
    notPrunable(TextSearch.contains(grams3, "\uD83D\uDE00\uD83D\uDE00"), "no literal run of 3")
  }

  test("escapes: Spark's rules, the escape character checked before the wildcards") {
    assert(TextSearch.like(grams3, "%ab\\%cd%") == all("ab%", "b%c", "%cd"))
    assert(TextSearch.like(grams3, "%ab#_cd%", '#') == all("ab_", "b_c", "_cd"))
    assert(TextSearch.like(grams3, "%a\\\\b%") == all("a\\b"))
    assert(TextSearch.like(grams3, "x##y%", '#') == all("x#y"))
    // ESCAPE '%': '%' is never a wildcard, "%%" is a literal '%'.
    assert(TextSearch.like(grams3, "ab%%c", '%') == all("ab%", "b%c"))
    notPrunable(TextSearch.like(grams3, "ab%c", '%'), "precedes 'c'")
    notPrunable(TextSearch.like(grams3, "abcdef\\"), "ends with the escape character")
    notPrunable(TextSearch.like(grams3, "%\\abcdef%"), "precedes 'a'")
    // A letter as the escape: 'a' before 'a' is a literal 'a', before '%' a literal '%'.
    assert(TextSearch.like(grams3, "xaaya%%", 'a') == all("xay", "ay%"))
    notPrunable(TextSearch.like(grams3, "xaayaz%", 'a'), "precedes 'z'")
  }

  test("tokens: only those the pattern bounds by a separator or its edge on both sides") {
    assert(TextSearch.like(words, "foo bar%") == all("foo"))
    notPrunable(TextSearch.like(words, "%foo%"), "no literal token")
    assert(TextSearch.like(words, "% foo %") == all("foo"))
    assert(TextSearch.like(words, "%foo bar baz%") == all("bar"))
    notPrunable(TextSearch.like(words, "_foo_"), "no literal token")
    notPrunable(TextSearch.like(words, "% foo_"), "no literal token")
    notPrunable(TextSearch.like(words, "foo%bar"), "no literal token")
    assert(TextSearch.like(words, "foo %bar") == all("foo"))
    assert(TextSearch.like(words, "%-foo.%") == all("foo"))
    assert(TextSearch.like(words, "%\\%foo\\%%") == all("foo"), "an escaped % is a literal separator")
    assert(TextSearch.equalTo(words, " foo--bar ") == all("foo", "bar"))
    notPrunable(TextSearch.equalTo(words, " - "), "no literal token")
    assert(TextSearch.contains(words, "a foo b") == all("foo"))
    assert(TextSearch.startsWith(words, "foo bar") == all("foo"))
    assert(TextSearch.endsWith(words, "foo bar") == all("bar"))
    assert(TextSearch.like(TextFilterSpec(TextKind.Tokens(Separators.Only.of("/"))), "%/api v1/%") == all("api v1"))
  }

  test("ILIKE folds the whole pattern as Spark does, then reads it") {
    notPrunable(TextSearch.ilike(grams3, "%ABC%"), "does not fold case")
    assert(TextSearch.ilike(lowerGrams2, "%ABC%") == all("ab", "bc"))
    // A final sigma before '%' folds to ς, as Spark's lower('%ΑΣ%') does: a value 'ΑΣΑ' is no match.
    assert(TextSearch.ilike(lowerGrams2, "%ΑΣ%") == all("ας"))
    assert(TextSearch.ilike(lowerGrams2, "%ΑΣΑ%") == all("ασ", "σα"))
    // İ folds to two code points, i and U+0307.
    assert(TextSearch.ilike(lowerGrams2, "%İX%") == all("i\u0307", "\u0307x"))
    assert(TextSearch.ilike(lowerWords, "% ERROR %") == all("error"))
    assert(TextSearch.ilike(lowerGrams2, "STRAẞE") == all("st", "tr", "ra", "aß", "ße"))
    // The escape character is not folded: ESCAPE 'A' no longer escapes anything once 'A%' is 'a%'.
    assert(TextSearch.ilike(lowerGrams2, "xyA%", 'A') == all("xy", "ya"))
  }

  test("a folded filter answers lower(c) and ILIKE; of a case-sensitive predicate only =") {
    assert(TextSearch.like(lowerGrams2, "%ab%", on = Operand.Lower) == all("ab"))
    notPrunable(TextSearch.like(lowerGrams2, "%ab%"), "case-sensitive")
    notPrunable(TextSearch.contains(lowerGrams2, "ab"), "case-sensitive")
    notPrunable(TextSearch.like(grams2, "%ab%", on = Operand.Lower), "does not fold case")
    assert(TextSearch.equalTo(lowerGrams2, "ABC") == all("ab", "bc"), "c = 'ABC' implies lower(c) = 'abc'")
    assert(TextSearch.like(lowerGrams2, "AB\\%") == all("ab", "b%"), "a LIKE without wildcards is =")
    assert(TextSearch.equalTo(lowerGrams2, "ABC", Operand.Lower) == all("AB", "BC"), "lower(c) = 'ABC' is never true; sound all the same")
  }

  test("IN is the OR of its =, AND and OR combine, NOT and unknowns require nothing") {
    assert(TextSearch.in(grams3, Seq("abcd", "xyz")) == Or(Seq(all("abc", "bcd"), all("xyz"))))
    notPrunable(TextSearch.in(grams3, Seq("abcd", "xy")), "no literal run of 3")
    notPrunable(TextSearch.in(grams3, Nil), "empty IN")
    val ab = TextSearch.contains(grams3, "abcd")
    val nothing = TextSearch.contains(grams3, "x")
    assert(ab.and(nothing) == ab && nothing.and(ab) == ab)
    assert(!ab.or(nothing).prunable)
    assert(ab.and(TextSearch.contains(grams3, "bcde")) == all("abc", "bcd", "cde"))
    val either = ab.or(TextSearch.contains(grams3, "xyz"))
    assert(either.mayMatch(Set("abc", "bcd")) && either.mayMatch(Set("xyz")) && !either.mayMatch(Set("abc", "xyz".take(2))))
    assert(either.units == Seq("abc", "bcd", "xyz"))
    assert(either.describe == "(all of ['abc', 'bcd'] or all of ['xyz'])")
  }

  test("RLIKE: literal runs of plain concatenations; alternation, flags and unknown escapes give up") {
    assert(TextSearch.rlike(grams3, "abc.*def") == all("abc", "def"))
    assert(TextSearch.rlike(grams2, "ab(c|d)ef") == all("ab", "ef"))
    assert(TextSearch.rlike(grams3, "abcd?e") == all("abc"), "d? may be absent")
    assert(TextSearch.rlike(grams2, "ab+c") == all("ab"))
    assert(TextSearch.rlike(grams3, "xab{2}c") == all("xab"))
    assert(TextSearch.rlike(grams3, "a\\.b") == all("a.b"))
    assert(TextSearch.rlike(grams3, "\\Qa.b|c\\E") == all("a.b", ".b|", "b|c"))
    assert(TextSearch.rlike(grams3, "[abc]def[^x-z]") == all("def"))
    assert(TextSearch.rlike(grams3, "^abc\\d+xyz$") == all("abc", "xyz"))
    assert(TextSearch.rlike(grams3, "ab\\tcd") == all("ab\t", "b\tc", "\tcd"))
    notPrunable(TextSearch.rlike(grams3, "abc|def"), "alternation")
    notPrunable(TextSearch.rlike(grams3, "(?i)abcdef"), "inline flags")
    notPrunable(TextSearch.rlike(grams3, "abc\\u0041def"), "escape")
    notPrunable(TextSearch.rlike(grams3, "abc("), "invalid")
    // Unanchored: the expression's ends are not the value's, so no token is bounded by them.
    notPrunable(TextSearch.rlike(words, "foo"), "no literal token")
    assert(TextSearch.rlike(words, "x foo y") == all("foo"))
    notPrunable(TextSearch.rlike(words, "^foo "), "no literal token")
  }

  test("RLIKE is read as Java reads it: its quotes removed first, wherever they stand, and \\c with the character after it") {
    // Java takes every \Q...\E out before parsing: an empty one joins its neighbours.
    notPrunable(TextSearch.rlike(grams3, "(\\Q\\E?i)abc"), "inline flags")
    assert(Spark.rlike("xABCx", "(\\Q\\E?i)abc").contains(true))
    assert(!TextSearch.rlike(grams3, "[\\Q\\E]abc]").prunable)
    assert(Spark.rlike("cat", "[\\Q\\E]abc]").contains(true))
    // \c] is one control character: the class runs to the second ']'.
    assert(Spark.rlike("cat", "[\\c]abc]").contains(true))
    assert(!TextSearch.rlike(grams3, "[\\c]abc]").prunable)
    assert(Spark.rlike("zz", "(\\c)abc){0}").contains(true))
    assert(!TextSearch.rlike(grams3, "(\\c)abc){0}").prunable)
    // Quotes still read, at the top level and in a class; a digit first in a quote too.
    assert(TextSearch.rlike(grams3, "\\Qa.b\\E\\Q\\Ec") == all("a.b", ".bc"))
    assert(TextSearch.rlike(grams3, "x[\\Q]\\E]yzw") == all("yzw"))
    assert(TextSearch.rlike(grams3, "a\\Q12\\E") == all("a12"))
    assert(TextSearch.rlike(grams3, "\\x41bc") == all("Abc"))
  }
}
