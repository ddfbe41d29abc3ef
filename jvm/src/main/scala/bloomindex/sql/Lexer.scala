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
        while (i < n && s.charAt(i) != '\n') i += 1
      } else if (c == '/' && i + 1 < n && s.charAt(i + 1) == '*') {
        val close = s.indexOf("*/", i + 2)
        if (close < 0) throw new LexError("unterminated comment")
        i = close + 2
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
        sb += s.charAt(i + 1)
        i += 2
      } else { sb += c; i += 1 }
    }
    throw new LexError(s"unterminated ${if (q == '`') "quoted identifier" else "string"}")
  }
}
