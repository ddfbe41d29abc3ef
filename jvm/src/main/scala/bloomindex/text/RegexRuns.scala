package bloomindex.text

import java.util.regex.{Pattern, PatternSyntaxException}

import scala.collection.mutable.ArrayBuffer

import bloomindex.text.LikePattern.Many

/**
 * The literal runs every string a Java regular expression finds a match in must contain (Spark's
 * `RLIKE`: `Pattern.compile(regex).matcher(value).find(0)`, unanchored), as [[LikePattern]] elements:
 * the runs between [[LikePattern.Many]]s, which stand for whatever is not analysed.
 *
 * The subset read: literal code points, escaped non-alphanumerics (`\.`), `\t \n \r \f \a \e`,
 * `\Q...\E`, concatenation, and quantifiers (`*`, `?`, `{0,m}` drop the literal they follow;
 * `+`, `{n,m}` with n >= 1 keep it; either ends the run). Opaque, each ending a run: `.`, `^`, `$`, classes `[...]`, groups `(...)`
 * whatever they hold, `\d \w \s \b \p{..}` and the like. Anything else gives up (`Left`): an
 * alternation `|` at the top level, inline flags `(?i)`, escapes such as `\x41 \0101 \1 \k<n>`, and
 * an invalid expression (Spark fails the query).
 */
private[text] object RegexRuns {

  private val OpaqueEscapes = "dDwWsSbBAGZzhHvVRX"
  private val ControlEscapes = "tnrfae"
  private val ControlChars = Array(0x09, 0x0A, 0x0D, 0x0C, 0x07, 0x1B)

  def parse(regex: String): Either[String, Array[Int]] = {
    try Pattern.compile(regex)
    catch { case _: PatternSyntaxException => return Left("the regular expression is invalid (Spark fails the query)") }
    val cps = regex.codePoints().toArray
    def at(i: Int): Int = if (i < cps.length) cps(i) else -1
    val out = ArrayBuffer[Int](Many)
    var lastIsLiteral = false
    def literal(c: Int): Unit = { out += c; lastIsLiteral = true }
    def breakRun(): Unit = { if (out.last != Many) out += Many; lastIsLiteral = false }
    var i = 0
    while (i < cps.length) {
      cps(i) match {
        case '\\' =>
          val d = at(i + 1)
          if (d == 'Q') {
            val end = quoteEnd(cps, i + 2)
            (i + 2 until end).foreach(j => literal(cps(j)))
            i = end + 2
          } else if (d < 128 && !Character.isLetterOrDigit(d)) { literal(d); i += 2 }
          else if (ControlEscapes.indexOf(d) >= 0) { literal(ControlChars(ControlEscapes.indexOf(d))); i += 2 }
          else if (OpaqueEscapes.indexOf(d) >= 0 && !(d == 'b' && at(i + 2) == '{')) { breakRun(); i += 2 }
          else if ((d == 'p' || d == 'P') && at(i + 2) == '{') { breakRun(); i = cps.indexOf('}'.toInt, i + 3) + 1 }
          else if (d == 'p' || d == 'P') { breakRun(); i += 3 }
          else return Left(s"the escape \\${new String(Character.toChars(d))} is outside the subset analysed")
        case '|' => return Left("an alternation at the top level")
        case '(' =>
          if (at(i + 1) == '?' && "=!:><".indexOf(at(i + 2)) < 0) return Left("inline flags change how literals match")
          groupEnd(cps, i) match {
            case Some(end) => breakRun(); i = end + 1
            case None => return Left("a group outside the subset analysed")
          }
        case '[' =>
          classEnd(cps, i) match {
            case Some(end) => breakRun(); i = end + 1
            case None => return Left("a character class outside the subset analysed")
          }
        case q @ ('*' | '?' | '+' | '{') =>
          val (min, next) = if (q == '{') {
            val close = cps.indexOf('}'.toInt, i)
            val digits = new String(cps, i + 1, close - i - 1).takeWhile(_.isDigit)
            if (digits.isEmpty) return Left("a quantifier outside the subset analysed")
            (BigInt(digits), close + 1)
          } else (BigInt(if (q == '+') 1 else 0), i + 1)
          if (lastIsLiteral && min == 0) out.remove(out.length - 1)
          breakRun()
          i = if (at(next) == '?' || at(next) == '+') next + 1 else next
        case '.' | '^' | '$' | ')' | ']' | '}' => breakRun(); i += 1
        case c => literal(c); i += 1
      }
    }
    breakRun()
    Right(out.toArray)
  }

  /** Index of the `\E` closing a `\Q` whose text starts at `from`, or the end. */
  private def quoteEnd(cps: Array[Int], from: Int): Int = {
    var j = from
    while (j < cps.length && !(cps(j) == '\\' && j + 1 < cps.length && cps(j + 1) == 'E')) j += 1
    j
  }

  /**
   * Index of the `]` closing the class opening at `start`; None where Java's reading is in doubt:
   * a `]` first in the class or in any class nested in it (`[a[]x]yz]`: Java may read it as a
   * member, so where the class ends is not known), and a class not closed.
   */
  private def classEnd(cps: Array[Int], start: Int): Option[Int] = {
    var j = start + 1
    if (j < cps.length && cps(j) == '^') j += 1
    if (j < cps.length && cps(j) == ']') return None
    while (j < cps.length) {
      cps(j) match {
        case '\\' if j + 1 < cps.length && cps(j + 1) == 'Q' => j = quoteEnd(cps, j + 2) + 2
        case '\\' => j += 2
        case '[' =>
          // A nested class (a union or `&&` intersection member), read by the same rules.
          classEnd(cps, j) match {
            case Some(end) => j = end + 1
            case None => return None
          }
        case ']' => return Some(j)
        case _ => j += 1
      }
    }
    None
  }

  /** Index of the `)` closing the group opening at `start`. */
  private def groupEnd(cps: Array[Int], start: Int): Option[Int] = {
    var j = start + 1
    var depth = 1
    while (j < cps.length) {
      cps(j) match {
        case '\\' if j + 1 < cps.length && cps(j + 1) == 'Q' => j = quoteEnd(cps, j + 2) + 2
        case '\\' => j += 2
        case '[' =>
          classEnd(cps, j) match {
            case Some(end) => j = end + 1
            case None => return None
          }
        case '(' => depth += 1; j += 1
        case ')' =>
          depth -= 1
          if (depth == 0) return Some(j)
          j += 1
        case _ => j += 1
      }
    }
    None
  }
}
