package bloomindex.text

import scala.collection.mutable

import bloomindex.text.Requirement.NotPrunable

/**
 * What a string predicate requires of a text filter ([[TextFilterSpec]]): the tokens or n-grams
 * every matching value holds. A file whose filter lacks one holds no match and may be skipped; when
 * nothing can be required the answer is [[Requirement.NotPrunable]], with the reason.
 *
 * {{{
 *   val grams = TextFilterSpec.ngrams(3)
 *   TextSearch.like(grams, "%abcdef%")                     // AllOf(abc, bcd, cde, def)
 *   TextSearch.contains(grams, "ab")                       // NotPrunable: no run of 3 or more
 *   val words = TextFilterSpec(TextKind.Tokens(), CaseFolding.Lower)
 *   TextSearch.ilike(words, "% ERROR %")                   // AllOf(error)
 *   TextSearch.like(words, "foo bar%", on = Operand.Lower) // AllOf(foo): bar may go on
 * }}}
 *
 * ==Design==
 * '''Units.''' A value's units are taken from its case-folded form, code point by code point (a
 * surrogate pair is one code point, a combining mark one of its own): the maximal runs of
 * non-separators (tokens), or every run of n code points (n-grams; a value shorter than n has none).
 *
 * '''LIKE.''' Spark reads a pattern code point by code point: `_` is one code point, `%` any
 * number, the escape character makes `_`, `%` or itself literal and is an error before anything
 * else or at the end ([[LikePattern.parse]]). A match lays each literal run (a maximal sequence of
 * literal code points) over equal consecutive code points of the value, the pattern's ends over the
 * value's ends. So a matching value holds every n-gram of every run of n or more code points; and a
 * run of non-separators that has, in the pattern, a literal separator or the pattern's end on each
 * side lies in the value between separators or ends: it is one of the value's tokens. `_` and `%`
 * bound nothing (either may stand for letters), so `'foo bar%'` requires `foo` and not `bar`, and
 * `'%foo%'` nothing. Short values are safe to leave out: a value that can match a pattern requiring
 * an n-gram is at least n long. An invalid pattern requires nothing: Spark fails the query, and
 * skipping every file would turn the error into an empty answer.
 *
 * '''Other predicates''' are patterns: `contains(c, s)`, `instr(c, s) > 0` and `locate(s, c) > 0`
 * are `'%s%'`, `startswith` `'s%'`, `endswith` `'%s'`, `=` `'s'` (with s literal throughout); `IN`
 * is the [[Requirement.or]] of its `=`s. `RLIKE` ([[RegexRuns]]) requires the literal runs of a
 * subset of Java regular expressions, unanchored (`find`). `AND` and `OR` combine requirements
 * ([[Requirement.and]], [[Requirement.or]]); `NOT` requires nothing.
 *
 * '''Case folding.''' A filter folds with Spark's own `lower()` ([[CaseFolding]]), so it holds the
 * units of `lower(c)` and answers predicates on `lower(c)` ([[Operand.Lower]]) with the pattern as
 * it is. `c ILIKE p` is Spark's `lower(c) LIKE lower(p)`: the pattern is folded whole, wildcards
 * and escapes included, as Spark folds it, and only then read: folding depends on context (a `Σ` is
 * `ς` before a `%`, `σ` before a letter) and may change the length (`İ` is two code points), so a
 * pattern's pieces must not be folded apart. A case-sensitive predicate on `c` requires nothing of
 * a folded filter, except `=` (and a LIKE without wildcards): `c = s` implies `lower(c) = lower(s)`.
 * A filter that does not fold requires nothing for `ILIKE` or `lower(c)`.
 *
 * '''What the caller must check''' (not known here): the column is UTF8_BINARY (under UTF8_LCASE,
 * LIKE matches by Java's case-insensitive regular expressions and `contains` by per-code-point
 * lowering, neither of which is `lower()`); a folded filter's folding is the one Spark's `lower()`
 * runs with (`spark.sql.icu.caseMappings.enabled`: [[CaseFolding.Lower]] or [[CaseFolding.LowerJdk]],
 * the JVM's default locale [[CaseFolding.foldsAsRoot]]); the fingerprint at build and at query agree.
 */
object TextSearch {

  /** What a predicate compares: the column's value, or `lower()` of it. */
  sealed abstract class Operand
  object Operand {
    case object Value extends Operand
    case object Lower extends Operand
  }

  /** `c LIKE pattern ESCAPE escape` (or `lower(c) LIKE ...` with [[Operand.Lower]]). */
  def like(spec: TextFilterSpec, pattern: String, escape: Char = '\\', on: Operand = Operand.Value): Requirement =
    LikePattern.parse(pattern, escape) match {
      case Left(invalid) => NotPrunable(invalid)
      case Right(elements) if !LikePattern.hasWildcard(elements) => equalTo(spec, LikePattern.literalOf(elements), on)
      case Right(elements) => ifApplicable(spec, on)(required(spec.kind, elements))
    }

  /** `c ILIKE pattern ESCAPE escape`: Spark's `lower(c) LIKE lower(pattern) ESCAPE escape`. */
  def ilike(spec: TextFilterSpec, pattern: String, escape: Char = '\\'): Requirement =
    if (spec.folding == CaseFolding.Off) NotPrunable("ILIKE compares lower-cased values and the filter does not fold case")
    else like(spec, spec.folding.fold(pattern), escape, Operand.Lower)

  /** `contains(c, s)`, `instr(c, s) > 0`, `locate(s, c) > 0`, `c LIKE '%s%'` with s literal. */
  def contains(spec: TextFilterSpec, s: String, on: Operand = Operand.Value): Requirement =
    ifApplicable(spec, on)(required(spec.kind, LikePattern.containing(s)))

  def startsWith(spec: TextFilterSpec, s: String, on: Operand = Operand.Value): Requirement =
    ifApplicable(spec, on)(required(spec.kind, LikePattern.startingWith(s)))

  def endsWith(spec: TextFilterSpec, s: String, on: Operand = Operand.Value): Requirement =
    ifApplicable(spec, on)(required(spec.kind, LikePattern.endingWith(s)))

  /** `c = s`: every unit of s (of `lower(s)` for a folded filter and a case-sensitive `c = s`). */
  def equalTo(spec: TextFilterSpec, s: String, on: Operand = Operand.Value): Requirement = (spec.folding, on) match {
    case (CaseFolding.Off, Operand.Lower) => notFolded
    case (folding, Operand.Value) => required(spec.kind, LikePattern.exactly(folding.fold(s)))
    case (_, Operand.Lower) => required(spec.kind, LikePattern.exactly(s))
  }

  /** `c IN (values)`: one of the values' requirements. */
  def in(spec: TextFilterSpec, values: Seq[String], on: Operand = Operand.Value): Requirement =
    if (values.isEmpty) NotPrunable("an empty IN list")
    else values.map(equalTo(spec, _, on)).reduce(_ or _)

  /** `c RLIKE regex`: the literal runs of a subset of regular expressions ([[RegexRuns]]). */
  def rlike(spec: TextFilterSpec, regex: String, on: Operand = Operand.Value): Requirement =
    RegexRuns.parse(regex) match {
      case Left(why) => NotPrunable(why)
      case Right(elements) => ifApplicable(spec, on)(required(spec.kind, elements))
    }

  private def notFolded = NotPrunable("the predicate is on lower(c) and the filter does not fold case")

  private def ifApplicable(spec: TextFilterSpec, on: Operand)(requirement: => Requirement): Requirement =
    (spec.folding, on) match {
      case (CaseFolding.Off, Operand.Value) => requirement
      case (CaseFolding.Off, Operand.Lower) => notFolded
      case (_, Operand.Lower) => requirement
      case (_, Operand.Value) => NotPrunable("the filter folds case and the predicate is case-sensitive")
    }

  /** The units every value matching `elements` ([[LikePattern]]) holds. */
  private[text] def required(kind: TextKind, elements: Array[Int]): Requirement = {
    val units = mutable.LinkedHashSet.empty[String]
    def unit(from: Int, until: Int): Unit = units += new String(elements, from, until - from)
    kind match {
      case TextKind.NGrams(n) =>
        forEachRun(elements, _ >= 0) { (from, until) =>
          var k = from
          while (k + n <= until) { unit(k, k + n); k += 1 }
        }
        Requirement.allOf(units.toSeq, s"no literal run of $n or more characters")
      case TextKind.Tokens(separators) =>
        def isSeparator(e: Int) = e >= 0 && separators.isSeparator(e)
        forEachRun(elements, e => e >= 0 && !separators.isSeparator(e)) { (from, until) =>
          val boundedBefore = from == 0 || isSeparator(elements(from - 1))
          val boundedAfter = until == elements.length || isSeparator(elements(until))
          if (boundedBefore && boundedAfter) unit(from, until)
        }
        Requirement.allOf(units.toSeq, "no literal token with a separator or the value's edge on both sides")
    }
  }

  /** Calls `f(from, until)` for each maximal run of elements satisfying `in`. */
  private def forEachRun(elements: Array[Int], in: Int => Boolean)(f: (Int, Int) => Unit): Unit = {
    var i = 0
    while (i < elements.length) {
      if (!in(elements(i))) i += 1
      else {
        var j = i
        while (j < elements.length && in(elements(j))) j += 1
        f(i, j)
        i = j
      }
    }
  }
}
