package bloomindex.text

import java.util.Locale

import com.ibm.icu.lang.UCharacter
import com.ibm.icu.util.ULocale

/**
 * The settings of a text filter: what it holds for each value ([[TextKind]]) and the case folding
 * applied first ([[CaseFolding]]). Its [[fingerprint]] belongs in the index's decoding fingerprint:
 * two filters answer alike only if their fingerprints are equal, the Unicode data they were computed
 * with included.
 *
 * {{{
 *   val spec = TextFilterSpec(TextKind.NGrams(3), CaseFolding.Lower)
 *   spec.settings                                  // "ngrams(3) case=lower"
 *   spec.fingerprint                               // "text/1 ngrams(3) case=lower unicode=icu-17.0.0.0"
 *   TextFilterSpec.parse("tokens case=lower")      // TextFilterSpec(Tokens(NotLetterOrDigit), Lower)
 *   spec.units("Hello")                            // Set("hel", "ell", "llo")
 * }}}
 */
final case class TextFilterSpec(kind: TextKind, folding: CaseFolding = CaseFolding.Off) {

  /** The settings in words, version-free; [[TextFilterSpec.parse]] reads them back. */
  def settings: String = s"${kind.settings} case=${folding.name}"

  /**
   * The settings and the versions of the Unicode data they depend on: a case mapping or a
   * letter/digit classification may change with the Unicode version of ICU or of the JDK, and a
   * filter computed under one may then miss what a query computed under another requires.
   */
  def fingerprint: String = {
    val versions = (folding.version.toSeq ++ kind.version.toSeq).distinct
    s"text/1 $settings" + (if (versions.isEmpty) "" else versions.mkString(" unicode=", ",", ""))
  }

  /** The distinct tokens or n-grams of `value`, after case folding. */
  def units(value: String): Set[String] = TextUnits.distinct(this, value)

  /** Each token or n-gram of `value` (repeats included), after case folding, as UTF-8 bytes. */
  def foreachUnit(value: String, visitor: UnitVisitor): Unit = TextUnits.foreach(this, value, visitor)

  /**
   * As [[foreachUnit]] for a value given as UTF-8 bytes, read as Spark's `UTF8String.toString` reads
   * them (malformed input replaced as the JDK's decoder does). Without case folding only: Spark's
   * `lower()` reads malformed input another way (see [[CaseFolding.Lower]]).
   */
  def foreachUnitUtf8(bytes: Array[Byte], offset: Int, length: Int, visitor: UnitVisitor): Unit =
    TextUnits.foreachUtf8(this, bytes, offset, length, visitor)
}

object TextFilterSpec {

  def tokens: TextFilterSpec = TextFilterSpec(TextKind.Tokens())

  def ngrams(n: Int): TextFilterSpec = TextFilterSpec(TextKind.NGrams(n))

  private val NGramsWord = """ngrams\((\d{1,3})\)""".r

  /** Reads [[TextFilterSpec.settings]]: `tokens [separators=...] [case=...]` or `ngrams(n) [case=...]`. */
  def parse(settings: String): TextFilterSpec = {
    val words = settings.trim.split("\\s+").toList
    def option(key: String): Option[String] = words.tail.collectFirst { case w if w.startsWith(key + "=") => w.drop(key.length + 1) }
    val unknown = words.tail.filterNot(w => w.startsWith("case=") || w.startsWith("separators="))
    if (unknown.nonEmpty) throw new IllegalArgumentException(s"text filter settings: unknown ${unknown.mkString(", ")} in '$settings'")
    val folding = option("case").map(CaseFolding.named).getOrElse(CaseFolding.Off)
    val kind = words.head match {
      case "tokens" => TextKind.Tokens(option("separators").map(Separators.named).getOrElse(Separators.NotLetterOrDigit))
      case NGramsWord(n) if option("separators").isEmpty => TextKind.NGrams(n.toInt)
      case NGramsWord(_) => throw new IllegalArgumentException(s"text filter settings: separators apply to tokens only: '$settings'")
      case other => throw new IllegalArgumentException(s"text filter settings: '$other' is neither tokens nor ngrams(n)")
    }
    TextFilterSpec(kind, folding)
  }
}

/** What a text filter holds for each value. */
sealed abstract class TextKind {
  def settings: String
  private[text] def version: Option[String]
}

object TextKind {

  /** The maximal runs of code points that are not separators. */
  final case class Tokens(separators: Separators = Separators.NotLetterOrDigit) extends TextKind {
    def settings: String = s"tokens separators=${separators.name}"
    private[text] def version: Option[String] = separators.version
  }

  /** Every run of `n` consecutive code points; a value shorter than `n` code points has none. */
  final case class NGrams(n: Int) extends TextKind {
    require(n >= 1 && n <= MaxN, s"n-grams: n must be in [1, $MaxN], not $n")
    def settings: String = s"ngrams($n)"
    private[text] def version: Option[String] = None
  }

  val MaxN: Int = 16
}

/**
 * Which code points end a token. A value and a pattern are split by the same rule, after the same
 * case folding, so the rule may be anything deterministic.
 */
sealed abstract class Separators {
  def name: String
  def isSeparator(codePoint: Int): Boolean
  private[text] def version: Option[String]
}

object Separators {

  /**
   * Every code point that is not a letter or digit by its Unicode general category
   * (`Character.isLetterOrDigit`): spaces, punctuation, symbols, emoji, unassigned code points and
   * combining marks (a decomposed `e` + U+0301 ends a token after the `e`). The categories are the
   * JDK's, whose Unicode version the fingerprint records.
   */
  case object NotLetterOrDigit extends Separators {
    def name: String = "not-letter-or-digit"
    private val ascii = Array.tabulate(128)(c => !Character.isLetterOrDigit(c))
    def isSeparator(cp: Int): Boolean = if (cp < 128) ascii(cp) else !Character.isLetterOrDigit(cp)
    private[text] def version: Option[String] = Some(s"jdk-${Runtime.version().feature()}")
  }

  /** Exactly these code points. */
  final case class Only(codePoints: Set[Int]) extends Separators {
    require(codePoints.nonEmpty && codePoints.forall(Character.isValidCodePoint), "separators: a non-empty set of code points")
    def name: String = codePoints.toSeq.sorted.map(cp => f"U+$cp%04X").mkString(",")
    def isSeparator(cp: Int): Boolean = codePoints.contains(cp)
    private[text] def version: Option[String] = None
  }

  object Only {
    /** The code points of `chars`: `Only.of(" ,;")`. */
    def of(chars: String): Only = Only(chars.codePoints().toArray.toSet)
  }

  private val CodePoint = """U\+([0-9A-Fa-f]{4,6})""".r

  def named(name: String): Separators =
    if (name == NotLetterOrDigit.name) NotLetterOrDigit
    else Only(name.split(',').map {
      case CodePoint(hex) => Integer.parseInt(hex, 16)
      case other => throw new IllegalArgumentException(s"separators: '$other' is not a code point such as U+0020")
    }.toSet)
}

/**
 * The case folding applied to a value before its units are taken, and to a pattern before its
 * requirements are (for `ILIKE`). It must be exactly Spark's `lower()`, which `ILIKE` applies to
 * both sides: Spark 4's `Lower` (UTF8_BINARY) maps with ICU when `spark.sql.icu.caseMappings.enabled`
 * (default true) and with `String.toLowerCase()` otherwise, both full mappings in the JVM's default
 * locale with context (a final `Σ` becomes `ς`, `İ` becomes `i` + U+0307: the length in code points
 * may change). Both foldings here use the root locale: equal to Spark's unless the default locale's
 * language is Turkish, Azeri or Lithuanian ([[CaseFolding.foldsAsRoot]]).
 */
sealed abstract class CaseFolding {
  def name: String
  def fold(s: String): String
  private[text] def version: Option[String]
}

object CaseFolding {

  case object Off extends CaseFolding {
    def name: String = "none"
    def fold(s: String): String = s
    private[text] def version: Option[String] = None
  }

  /**
   * ICU's lower-case mapping, root locale: Spark's `lower()` under the default
   * `spark.sql.icu.caseMappings.enabled=true`. Spark lowers a non-ASCII value's `toValidString`,
   * so a builder passes that string (it differs from `toString` on malformed UTF-8 only).
   */
  case object Lower extends CaseFolding {
    def name: String = "lower"
    def fold(s: String): String = if (isAscii(s)) asciiLower(s) else UCharacter.toLowerCase(ULocale.ROOT, s)
    private[text] def version: Option[String] = Some(s"icu-${UCharacter.getUnicodeVersion}")
  }

  /**
   * The JDK's lower-case mapping, root locale: Spark's `lower()` with
   * `spark.sql.icu.caseMappings.enabled=false`, which lowers `toString`. It differs from ICU's
   * beyond the Unicode version: `"ΑΣ_Β"` is `"ας_β"` in ICU, `"ασ_β"` in the JDK.
   */
  case object LowerJdk extends CaseFolding {
    def name: String = "lower-jdk"
    def fold(s: String): String = if (isAscii(s)) asciiLower(s) else s.toLowerCase(Locale.ROOT)
    private[text] def version: Option[String] = Some(s"jdk-${Runtime.version().feature()}")
  }

  def named(name: String): CaseFolding = Seq(Off, Lower, LowerJdk).find(_.name == name).getOrElse(
    throw new IllegalArgumentException(s"case folding: '$name' is none of none, lower, lower-jdk"))

  /** Whether lower-casing in `locale` is lower-casing in the root locale (Java and ICU special-case tr, az, lt). */
  def foldsAsRoot(locale: Locale): Boolean = !Set("tr", "az", "lt").contains(locale.getLanguage)

  private def isAscii(s: String): Boolean = {
    var i = 0
    while (i < s.length) { if (s.charAt(i) >= 0x80) return false; i += 1 }
    true
  }

  private def asciiLower(s: String): String = {
    var i = 0
    while (i < s.length && !(s.charAt(i) >= 'A' && s.charAt(i) <= 'Z')) i += 1
    if (i == s.length) s
    else {
      val cs = s.toCharArray
      while (i < cs.length) { if (cs(i) >= 'A' && cs(i) <= 'Z') cs(i) = (cs(i) + 32).toChar; i += 1 }
      new String(cs)
    }
  }
}
