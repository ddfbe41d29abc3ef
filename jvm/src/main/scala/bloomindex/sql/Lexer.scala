package bloomindex.sql

import java.util.Locale

import scala.collection.mutable.ArrayBuffer

/** Splits a statement into words, `quoted` identifiers, numbers, strings and symbols. */
private[sql] object Lexer {

  sealed trait Kind
  case object Word extends Kind
  case object Quoted extends Kind
  case object Number extends Kind
  case object Str extends Kind
  case object Symbol extends Kind
  case object End extends Kind

  case class Token(kind: Kind, text: String, start: Int) {
    lazy val upper: String = text.toUpperCase(Locale.ROOT)
  }

  class LexError(msg: String) extends RuntimeException(msg)

  def tokenize(s: String): IndexedSeq[Token] = {
    val out = ArrayBuffer[Token]()
    var i = 0
    val n = s.length
    while (i < n) {
      val c = s.charAt(i)
      if (c.isWhitespace) i += 1
      else if (c == '-' && i + 1 < n && s.charAt(i + 1) == '-') {
        // As Spark's lexer: a backslash at the end of the line carries the comment on.
        while (i < n && s.charAt(i) != '\n') i += (if (s.charAt(i) == '\\' && i + 1 < n && s.charAt(i + 1) == '\n') 2 else 1)
      } else if (c == '/' && i + 1 < n && s.charAt(i + 1) == '*') {
        i = afterComment(s, i)
      } else if ((c == 'r' || c == 'R') && i + 1 < n && (s.charAt(i + 1) == '\'' || s.charAt(i + 1) == '"')) {
        // R'...' and R"...": Spark's raw strings, no escapes.
        val close = s.indexOf(s.charAt(i + 1), i + 2)
        if (close < 0) throw new LexError("unterminated string")
        out += Token(Str, s.substring(i + 2, close), i)
        i = close + 1
      } else if (c == '`') {
        val (text, after) = quoted(s, i, '`', doubling = true)
        out += Token(Quoted, text, i)
        i = after
      } else if (c == '\'' || c == '"') {
        val (text, after) = quoted(s, i, c, doubling = false)
        out += Token(Str, text, i)
        i = after
      } else if (c.isDigit || (c == '.' && i + 1 < n && s.charAt(i + 1).isDigit && !lastIsWord(out))) {
        val start = i
        while (i < n && (s.charAt(i).isDigit || s.charAt(i) == '.')) i += 1
        if (i < n && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
          var j = i + 1
          if (j < n && (s.charAt(j) == '-' || s.charAt(j) == '+')) j += 1
          if (j < n && s.charAt(j).isDigit) {
            i = j
            while (i < n && s.charAt(i).isDigit) i += 1
          }
        }
        if (i < n && (s.charAt(i).isLetter || s.charAt(i) == '_')) {
          // Spark allows identifiers that start with a digit, like 1st_col.
          while (i < n && (s.charAt(i).isLetterOrDigit || s.charAt(i) == '_')) i += 1
          out += Token(Word, s.substring(start, i), start)
        } else out += Token(Number, s.substring(start, i), start)
      } else if (c.isLetter || c == '_') {
        val start = i
        while (i < n && (s.charAt(i).isLetterOrDigit || s.charAt(i) == '_')) i += 1
        out += Token(Word, s.substring(start, i), start)
      } else {
        out += Token(Symbol, c.toString, i)
        i += 1
      }
    }
    out += Token(End, "", n)
    out.toIndexedSeq
  }

  private def lastIsWord(out: ArrayBuffer[Token]): Boolean =
    out.nonEmpty && (out.last.kind == Word || out.last.kind == Quoted)

  private def quoted(s: String, start: Int, q: Char, doubling: Boolean): (String, Int) = {
    val sb = new StringBuilder
    var i = start + 1
    while (i < s.length) {
      val c = s.charAt(i)
      if (c == q) {
        if (doubling && i + 1 < s.length && s.charAt(i + 1) == q) { sb += q; i += 2 }
        else return (sb.toString, i + 1)
      } else if (c == '\\' && !doubling && i + 1 < s.length) {
        i = unescape(s, i, sb)
      } else { sb += c; i += 1 }
    }
    throw new LexError(s"unterminated ${if (q == '`') "quoted identifier" else "string"}")
  }

  /**
   * `/* ... */` from `start`, nested as Spark's lexer nests them (`/* /* */ x */` is one
   * comment): the index after its end.
   */
  private def afterComment(s: String, start: Int): Int = {
    var depth = 0
    var i = start
    while (i + 1 < s.length) {
      if (s.charAt(i) == '/' && s.charAt(i + 1) == '*') { depth += 1; i += 2 }
      else if (s.charAt(i) == '*' && s.charAt(i + 1) == '/') {
        depth -= 1
        i += 2
        if (depth == 0) return i
      } else i += 1
    }
    throw new LexError("unterminated comment")
  }

  /**
   * The escape at `s(i) == '\\'` appended to `sb` as Spark's parser reads a string literal
   * (`SparkParserUtils.unescapeSQLString`): `\uXXXX`, `\UXXXXXXXX`, three octal digits
   * `[01][0-7][0-7]`, `\0 \b \n \r \t \Z`, `\%` and `\_` kept with their backslash (as
   * MySQL), any other character as it is; as Spark reads a statement's property values, whatever
   * `spark.sql.parser.escapedStringLiterals` says (it applies to expressions' literals only).
   * Returns the index after it.
   */
  private def unescape(s: String, i: Int, sb: StringBuilder): Int = {
    def hex(from: Int, len: Int): Boolean =
      from + len <= s.length && (from until from + len).forall(j => Character.digit(s.charAt(j), 16) >= 0)
    val e = s.charAt(i + 1)
    // \UXXXXXXXX's code point, where eight hex digits follow (-1 otherwise: never valid).
    lazy val codePoint = if (hex(i + 2, 8)) java.lang.Long.parseLong(s.substring(i + 2, i + 10), 16) else -1L
    if (e == 'u' && hex(i + 2, 4)) { sb += Integer.parseInt(s.substring(i + 2, i + 6), 16).toChar; i + 6 }
    else if (e == 'U' && codePoint >= 0 && codePoint <= Character.MAX_CODE_POINT) {
      sb.appendAll(Character.toChars(codePoint.toInt))
      i + 10
    } else if ((e == '0' || e == '1') && i + 3 < s.length && isOctal(s.charAt(i + 2)) && isOctal(s.charAt(i + 3))) {
      sb += Integer.parseInt(s.substring(i + 1, i + 4), 8).toChar
      i + 4
    } else {
      e match {
        case '0' => sb += '\u0000'
        case 'b' => sb += '\b'
        case 'n' => sb += '\n'
        case 'r' => sb += '\r'
        case 't' => sb += '\t'
        case 'Z' => sb += '\u001A'
        case '%' | '_' => sb += '\\' += e
        case other => sb += other
      }
      i + 2
    }
  }

  private def isOctal(c: Char): Boolean = c >= '0' && c <= '7'
}
