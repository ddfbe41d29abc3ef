package bloomindex.text

import java.util.regex.{Pattern, PatternSyntaxException}

import scala.collection.mutable.ArrayBuffer

import bloomindex.text.LikePattern.Many

/**
 * The literal runs every string a Java regular expression finds a match in must contain (Spark's
 * `RLIKE`: `Pattern.compile(regex).matcher(value).find(0)`, unanchored), as [[LikePattern]] elements:
 * the runs between [[LikePattern.Many]]s, which stand for whatever is not analysed.
 *
 * The expression is first rewritten as Java rewrites it before parsing it ([[withoutQuotes]]:
 * every `\Q...\E` replaced by its text escaped, wherever it stands), so what is read is what Java
 * reads: an empty `\Q\E` joins its neighbours (`(\Q\E?i)` is `(?i)`), and a quote inside a class or
 * group is read as its escaped text.
 *
 * The subset read: literal code points, escaped non-alphanumerics (`\.`), `\t \n \r \f \a \e`,
 * `\xhh`, concatenation, and quantifiers (`*`, `?`, `{0,m}` drop the literal they follow;
 * `+`, `{n,m}` with n >= 1 keep it; either ends the run). Opaque, each ending a run: `.`, `^`, `$`, classes `[...]`, groups `(...)`
 * whatever they hold, `\d \w \s \b \p{..}` and the like. Anything else gives up (`Left`): an
 * alternation `|` at the top level, inline flags `(?i)`, escapes such as `\x{41} \u0041 \0101 \1 \k<n>`, and
 * an invalid expression (Spark fails the query). So does comments mode turned on anywhere, inside a
 * group too (`(?x)`, `(?x:`): Java then ignores whitespace and reads `#` to the end of the line as a
 * comment, which may hide the `)` a group seems to end at (`((?x)#)abc\n)` is one group: every
 * value matches, and `abc` is no requirement; an audit found it required).
 */
private[text] object RegexRuns {

  private val OpaqueEscapes = "dDwWsSbBAGZzhHvVRX"
  private val ControlEscapes = "tnrfae"
  private val ControlChars = Array(0x09, 0x0A, 0x0D, 0x0C, 0x07, 0x1B)

  def parse(regex: String): Either[String, Array[Int]] = {
    try Pattern.compile(regex)
    catch { case _: PatternSyntaxException => return Left("the regular expression is invalid (Spark fails the query)") }
    val cps = withoutQuotes(regex.codePoints().toArray)
    if (setsCommentsMode(cps)) return Left("comments mode (?x) changes where groups end")
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
          if (d < 128 && !Character.isLetterOrDigit(d)) { literal(d); i += 2 }
          else if (d == 'x' && hex(at(i + 2)) >= 0 && hex(at(i + 3)) >= 0) { literal(hex(at(i + 2)) * 16 + hex(at(i + 3))); i += 4 }
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

  /**
   * Whether an inline flag group (`(?flags)` or `(?flags:`, escapes skipped) anywhere in `cps` holds
   * `x`, turned on or off: a `(?` in a class counts too (giving up there costs nothing but pruning).
   */
  private[text] def setsCommentsMode(cps: Array[Int]): Boolean = {
    var j = 0
    while (j < cps.length) {
      if (cps(j) == '\\') j += escapeLength(cps, j)
      else {
        if (cps(j) == '(' && j + 1 < cps.length && cps(j + 1) == '?') {
          var k = j + 2
          var x = false
          while (k < cps.length && (Character.isLetter(cps(k)) || cps(k) == '-')) { x ||= cps(k) == 'x'; k += 1 }
          if (x && k < cps.length && (cps(k) == ')' || cps(k) == ':')) return true
        }
        j += 1
      }
    }
    false
  }

  private def hex(c: Int): Int = if (c >= 0 && c < 128) Character.digit(c, 16) else -1

  /**
   * `cps` with every `\Q...\E` quote replaced by its text escaped, as `java.util.regex.Pattern`
   * does before it parses anything (its `RemoveQEQuoting`): in a quote, ASCII letters and
   * non-ASCII code points stay as they are, other ASCII characters get a backslash, a backslash
   * not starting `\E` becomes `\\`, and a digit first in a quote is written `\x3d` (so that it
   * cannot continue an escape before the quote); outside quotes an escape's two characters are
   * copied as they are. A quote not closed runs to the end.
   */
  private[text] def withoutQuotes(cps: Array[Int]): Array[Int] = {
    val out = ArrayBuffer[Int]()
    var inQuote = false
    var first = false
    var i = 0
    while (i < cps.length) {
      val c = cps(i)
      i += 1
      if (!inQuote) {
        if (c == '\\' && i < cps.length && cps(i) == 'Q') { inQuote = true; first = true; i += 1 }
        else {
          out += c
          if (c == '\\' && i < cps.length) { out += cps(i); i += 1 }
        }
      } else {
        if (c >= 128 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) out += c
        else if (c >= '0' && c <= '9') { if (first) out ++= Seq('\\', 'x', '3'); out += c }
        else if (c != '\\') { out += '\\'; out += c }
        else if (i < cps.length && cps(i) == 'E') { inQuote = false; i += 1 }
        else { out += '\\'; out += '\\' }
        first = false
      }
    }
    out.toArray
  }

  /** Characters an escape at `j` spans: `\c` takes the character after it (`\c]` is one control character). */
  private def escapeLength(cps: Array[Int], j: Int): Int = if (j + 1 < cps.length && cps(j + 1) == 'c') 3 else 2

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
        case '\\' => j += escapeLength(cps, j)
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
        case '\\' => j += escapeLength(cps, j)
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
