package bloomindex.text

import java.util.Locale

import scala.util.Random

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.unsafe.types.UTF8String

/** Random values and patterns for the text properties, and the oracles they are checked against. */
object TextCases {

  /** How many random cases each property runs: 8,000 (CI), or BLOOMINDEX_TEXT_CASES (100,000 in `make test-nightly-text`). */
  val Count: Int = sys.env.get("BLOOMINDEX_TEXT_CASES").map(_.toInt).getOrElse(8000)

  /**
   * Code points chosen to be awkward: separators that are LIKE wildcards or escapes, letters whose
   * lower case is longer (İ), context-dependent (Σ), or the same as another's (K, ẞ), a titlecase
   * digraph, combining marks, supplementary letters with and without case, an emoji, a non-ASCII digit.
   */
  val Alphabet: IndexedSeq[String] = IndexedSeq(
    "a", "b", "c", "x", "A", "B", "C", "X", "1", "2",
    " ", "-", "_", "%", ".", "\\", "#", "\n",
    "é", "É", "ß", "ẞ", "ǅ", "ǆ", "Ǆ", "Σ", "σ", "ς", "İ", "ı", "i", "I", "\u212A",
    "\u0301", "\u0307", "\uD83D\uDE00", "\uD801\uDC00", "\uD801\uDC28", "\uD835\uDC00", "\u0663")

  val Escapes: IndexedSeq[Char] = IndexedSeq('\\', '\\', '\\', '\\', '#', '!', 'a', '%', '_', 'σ')

  def letter(rng: Random): String = Alphabet(rng.nextInt(Alphabet.size))

  def value(rng: Random): String =
    if (rng.nextInt(12) == 0) "" else Seq.fill(1 + rng.nextInt(12))(letter(rng)).mkString

  def codePoints(s: String): Array[String] = s.codePoints().toArray.map(cp => new String(Character.toChars(cp)))

  /** `s` with each code point upper-cased, lower-cased or left, at random. */
  def recase(s: String, rng: Random): String = codePoints(s).map { c =>
    rng.nextInt(3) match {
      case 0 => c.toUpperCase(Locale.ROOT)
      case 1 => c.toLowerCase(Locale.ROOT)
      case _ => c
    }
  }.mkString

  /** A LIKE pattern built from `s`'s code points, so that it often matches `s`; sometimes invalid. */
  def likePattern(s: String, escape: Char, rng: Random): String = {
    val cps = codePoints(s)
    val out = new StringBuilder
    val one = if (escape == '_') None else Some("_")
    val many = if (escape == '%') None else Some("%")
    def lit(c: String): Unit = {
      if (c == escape.toString || c == "%" || c == "_") out.append(escape)
      out.append(c)
    }
    if (rng.nextInt(3) == 0) many.foreach(out.append)
    var i = 0
    while (i < cps.length) {
      val r = rng.nextInt(100)
      if (r < 55) { lit(cps(i)); i += 1 }
      else if (r < 68) { out.append(one.getOrElse(cps(i))); i += 1 }
      else if (r < 82) { many.foreach(out.append); i += rng.nextInt(4) }
      else if (r < 88) many.foreach(out.append)
      else if (r < 94) { lit(letter(rng)); i += 1 }
      else lit(letter(rng))
    }
    if (rng.nextInt(3) == 0) many.foreach(out.append)
    rng.nextInt(40) match {
      case 0 => out.append(escape) // Spark: ends with the escape character
      case 1 => // escape before 'b' (never special here), between two code points
        val at = out.toString.offsetByCodePoints(0, rng.nextInt(out.toString.codePointCount(0, out.length) + 1))
        out.insert(at, s"${escape}b")
      case _ =>
    }
    out.toString
  }

  /** A piece of `s` (a prefix, a suffix, a middle part, all of it), sometimes altered. */
  def piece(s: String, rng: Random): String = {
    val cps = codePoints(s)
    val from = rng.nextInt(cps.length + 1)
    val until = from + rng.nextInt(cps.length - from + 1)
    val p = rng.nextInt(4) match {
      case 0 => cps.take(until)
      case 1 => cps.drop(from)
      case 2 => cps.slice(from, until)
      case _ => cps
    }
    if (rng.nextInt(6) == 0 && p.nonEmpty) p.updated(rng.nextInt(p.length), letter(rng)).mkString else p.mkString
  }

  /** A regular expression built from `s`, within and beyond what [[RegexRuns]] analyses. */
  def regex(s: String, rng: Random): String = {
    def quote(c: String): String = if (c.length == 1 && c.charAt(0) < 128 && !Character.isLetterOrDigit(c.charAt(0))) "\\" + c else c
    val out = new StringBuilder
    if (rng.nextInt(8) == 0) out.append("^")
    for (c <- codePoints(piece(s, rng))) rng.nextInt(100) match {
      case r if r < 58 => out.append(quote(c))
      case r if r < 64 => out.append(".")
      case r if r < 72 => out.append(quote(c)).append(Seq("*", "?", "+", "{0,2}", "{1,2}", "{2}", "*?", "++")(rng.nextInt(8)))
      case r if r < 76 => rng.nextInt(4) match {
        // Nested classes too, and one whose first member is ']' (`[c[]x]b]`: one class in Java).
        case 0 => out.append("[").append(quote(c)).append("[]x]b]")
        case 1 => out.append("[a[").append(quote(c)).append("]]")
        case _ => out.append("[").append(quote(c)).append("b]")
      }
      case r if r < 80 => out.append("(").append(quote(c)).append("|zz)")
      case r if r < 84 => out.append(Seq("\\d", "\\w", "\\s", "\\b", "\\S", "\\p{L}")(rng.nextInt(6)))
      case r if r < 88 => rng.nextInt(6) match {
        // Java removes quotes before it parses: an empty one joins its neighbours, and a quote
        // inside a class or group is read as its escaped text.
        case 0 => out.append("\\Q\\E").append(quote(c))
        case 1 => out.append("[\\Q\\E]").append(quote(c)).append("]")
        case 2 => out.append("(\\Q\\E?i)").append(quote(c))
        case 3 => out.append("[x\\Q").append(c).append("]\\E]")
        case _ => out.append("\\Q").append(c).append("\\E")
      }
      case r if r < 89 => out.append(Seq("[\\c]", "(\\c)", "[\\c[]")(rng.nextInt(3))).append(quote(c)).append(Seq("]", ")", "]]")(rng.nextInt(3)))
      case r if r < 92 => out.append(quote(letter(rng)))
      case r if r < 95 => out.append(Seq("\\t", "\\n", "\\x41", "\\u00e9")(rng.nextInt(4)))
      case _ =>
    }
    if (rng.nextInt(8) == 0) out.append("$")
    rng.nextInt(30) match {
      case 0 => "(?i)" + out
      case 1 => out.toString + "|" + quote(letter(rng))
      case 2 => out.toString + "("
      case _ => out.toString
    }
  }

  private def lit(s: String): Literal = Literal(UTF8String.fromString(s))

  /** Spark's own answers, evaluated without a session (the default SQLConf). */
  object Spark {
    /** `s LIKE p ESCAPE e`; None where Spark refuses the pattern. */
    def like(s: String, p: String, e: Char): Option[Boolean] = refused(Like(lit(s), lit(p), e).eval())

    def ilike(s: String, p: String, e: Char): Option[Boolean] = refused(ILike(lit(s), lit(p), e).replacement.eval())

    def lowerLike(s: String, p: String, e: Char): Option[Boolean] = refused(Like(Lower(lit(s)), lit(p), e).eval())

    def rlike(s: String, r: String): Option[Boolean] = refused(RLike(lit(s), lit(r)).eval())

    def lower(s: String): String = Lower(lit(s)).eval().toString

    private val noIcu = { val c = new SQLConf; c.setConf(SQLConf.ICU_CASE_MAPPINGS_ENABLED, false); c }

    /** `lower(s)` with spark.sql.icu.caseMappings.enabled=false. */
    def lowerWithoutIcu(s: String): String = SQLConf.withExistingConf(noIcu)(Lower(lit(s)).eval().toString)

    def contains(s: String, x: String): Boolean = Contains(lit(s), lit(x)).eval().asInstanceOf[Boolean]
    def startsWith(s: String, x: String): Boolean = StartsWith(lit(s), lit(x)).eval().asInstanceOf[Boolean]
    def endsWith(s: String, x: String): Boolean = EndsWith(lit(s), lit(x)).eval().asInstanceOf[Boolean]
    def equalTo(s: String, x: String): Boolean = EqualTo(lit(s), lit(x)).eval().asInstanceOf[Boolean]
    def instr(s: String, x: String): Int = StringInstr(lit(s), lit(x)).eval().asInstanceOf[Int]
    def locate(x: String, s: String): Int = new StringLocate(lit(x), lit(s)).eval().asInstanceOf[Int]

    private def refused(eval: => Any): Option[Boolean] =
      try Some(eval.asInstanceOf[Boolean]) catch { case _: Exception => None }
  }

  /**
   * LIKE read independently of [[LikePattern]]: a dynamic program over code points with Spark's
   * rules (escape first, then `_` and `%`). None where Spark refuses the pattern.
   */
  def referenceLike(value: String, pattern: String, escape: Char): Option[Boolean] = {
    sealed trait Tok
    case class Lit(cp: Int) extends Tok
    case object AnyOne extends Tok
    case object AnyRun extends Tok
    val p = pattern.codePoints().toArray
    val toks = Vector.newBuilder[Tok]
    var i = 0
    while (i < p.length) {
      if (p(i) == escape.toInt) {
        if (i + 1 >= p.length || !Set('_'.toInt, '%'.toInt, escape.toInt)(p(i + 1))) return None
        toks += Lit(p(i + 1)); i += 2
      } else {
        toks += (p(i) match { case '_' => AnyOne; case '%' => AnyRun; case c => Lit(c) })
        i += 1
      }
    }
    val t = toks.result()
    val v = value.codePoints().toArray
    // m(a)(b): v.drop(a) matches t.drop(b)
    val m = Array.ofDim[Boolean](v.length + 2, t.length + 1)
    m(v.length)(t.length) = true
    for (a <- v.length to 0 by -1; b <- t.length - 1 to 0 by -1) {
      m(a)(b) = t(b) match {
        case AnyRun => m(a)(b + 1) || (a < v.length && m(a + 1)(b))
        case AnyOne => a < v.length && m(a + 1)(b + 1)
        case Lit(c) => a < v.length && v(a) == c && m(a + 1)(b + 1)
      }
    }
    Some(m(0)(0))
  }
}
