package bloomindex.catalog

import java.nio.charset.StandardCharsets.UTF_8

/**
 * One page of a ListObjectsV2 answer, read from its XML bytes: each object's key, size and
 * modification time (ms), whether the listing goes on and the token to continue with.
 *
 * Why not the AWS SDK's own reading: it builds a DOM of the whole page, then an `S3Object` per
 * entry through builders, and parses each time with a `DateTimeFormatter`: at 100,000 objects
 * about 1.5 s of CPU on the driver (bench/README.md, `make bench-s3-latency`), the largest part
 * of the check against storage on S3. This reads the bytes once, keeps only the three fields,
 * and reads a time of S3's form (`2026-11-27T10:00:00.000Z`) by arithmetic.
 *
 * It reads what S3 writes and refuses the rest ([[Malformed]]): the caller then lets the SDK read
 * the same bytes. Refused: a root other than `ListBucketResult`, a document type, tags that do
 * not nest, a character reference or entity it does not know, a carriage return in a field
 * (an XML reader turns it into a line feed: left to the SDK to do exactly that), a comment,
 * instruction or CDATA section inside a field (the SDK's reader keeps only the text after it), a
 * field given twice, a prefixed name, a declared encoding other than UTF-8 or bytes that are not
 * UTF-8, a size that is not a decimal number, a time of another form, keys URL-encoded (an
 * `EncodingType`: the SDK decodes them), a truncated page without a continuation token, and a
 * `KeyCount` other than the entries and common prefixes read. Comments, instructions and CDATA
 * between elements, and attributes, are skipped as XML has them. An entry without a key, size
 * or time is left out, as the SDK's reading leaves it with a null the caller skips.
 */
private[catalog] object S3ListPage {

  /** The page's objects (the first `count` of each array), whether it is truncated and its next token. */
  final class Page(val keys: Array[String], val sizes: Array[Long], val modified: Array[Long], val count: Int,
      val truncated: Boolean, val next: String)

  /** Bytes this reader does not take: the caller lets the SDK read them. */
  final class Malformed(message: String) extends Exception(message)

  private def fail(message: String): Nothing = throw new Malformed(message)

  /** A name's bytes as this reader compares them with a tag's, in place (no `String` per tag). */
  private def ascii(name: String): Array[Byte] = name.getBytes(java.nio.charset.StandardCharsets.US_ASCII)

  // Elements read, by where they are: the root, its children and an entry's.
  private val Root = ascii("ListBucketResult")
  private val Contents = ascii("Contents")
  private val Prefixes = ascii("CommonPrefixes")
  private val EncodingType = ascii("EncodingType")
  private val IsTruncated = ascii("IsTruncated")
  private val NextContinuationToken = ascii("NextContinuationToken")
  private val KeyCount = ascii("KeyCount")
  private val Key = ascii("Key")
  private val Size = ascii("Size")
  private val LastModified = ascii("LastModified")

  // The field being read (0: none).
  private final val FieldTruncated = 1
  private final val FieldNext = 2
  private final val FieldKeyCount = 3
  private final val FieldKey = 4
  private final val FieldSize = 5
  private final val FieldModified = 6

  /** The page `bytes` hold. */
  def parse(bytes: Array[Byte]): Page = new Reader(bytes).page()

  private final class Reader(b: Array[Byte]) {
    private val n = b.length
    private var i = 0
    // Open elements' names, the root first: where each one's bytes start in `b`, and how many.
    private var openAt = new Array[Int](16)
    private var openLength = new Array[Int](16)
    private var depth = 0
    // The field being read (a Field* constant, 0: none): its text so far, held as one byte range
    // while it is a single plain run.
    private var field = 0
    private var runStart = -1
    private var runEnd = -1
    private val text = new java.lang.StringBuilder()
    // The entry being read.
    private var key: String = null
    private var size = -1L
    private var time = Long.MinValue
    // The page.
    private var keys = new Array[String](1024)
    private var sizes = new Array[Long](1024)
    private var times = new Array[Long](1024)
    private var count = 0
    private var entries = 0
    private var prefixes = 0
    private var keyCount = -1L
    private var truncated = false
    private var truncatedSeen = false
    private var next: String = null
    private var rootSeen = false

    def page(): Page = {
      while (i < n) {
        if (b(i) == '<') markup() else chars()
      }
      if (depth != 0) fail("unclosed element " + openName(depth - 1))
      if (!rootSeen) fail("no ListBucketResult")
      if (truncated && (next == null || next.isEmpty)) fail("a truncated page without a continuation token")
      if (keyCount >= 0 && keyCount != entries + prefixes) {
        fail(s"KeyCount $keyCount, but $entries entries and $prefixes common prefixes")
      }
      new Page(keys, sizes, times, count, truncated, next)
    }

    private def startsWith(s: String): Boolean = {
      if (i + s.length > n) return false
      var k = 0
      while (k < s.length) { if (b(i + k) != s.charAt(k)) return false; k += 1 }
      true
    }

    /** The position of `s` at or after `from`; fails when absent. */
    private def find(s: String, from: Int): Int = {
      var j = from
      val first = s.charAt(0).toByte
      while (j + s.length <= n) {
        if (b(j) == first) {
          var k = 1
          while (k < s.length && b(j + k) == s.charAt(k)) k += 1
          if (k == s.length) return j
        }
        j += 1
      }
      fail("unterminated markup, expected " + s)
    }

    /** Whether the name of `length` bytes at `at` is `name`. */
    private def is(at: Int, length: Int, name: Array[Byte]): Boolean =
      length == name.length && java.util.Arrays.equals(b, at, at + length, name, 0, length)

    /** Whether open element `d` (0: the root) is `name`. */
    private def openIs(d: Int, name: Array[Byte]): Boolean = is(openAt(d), openLength(d), name)

    /** The name of `length` bytes at `at`, for a message. */
    private def nameText(at: Int, length: Int): String = new String(b, at, length, UTF_8)

    /** Open element `d`'s name, for a message. */
    private def openName(d: Int): String = nameText(openAt(d), openLength(d))

    private def markup(): Unit = {
      val kind = if (i + 1 < n) b(i + 1) else 0
      if (kind == '?' || kind == '!') {
        // In a field only text and references: the SDK's reader keeps the last run of text before
        // a comment, instruction or CDATA section, where XML keeps all of it.
        if (field != 0) fail("markup inside field " + openName(depth - 1))
        if (kind == '?') {
          val end = find("?>", i + 2)
          if (startsWith("<?xml")) declaration(new String(b, i, end - i, UTF_8))
          i = end + 2
        } else if (startsWith("<!--")) i = find("-->", i + 4) + 3
        else if (startsWith("<![CDATA[")) i = find("]]>", i + 9) + 3
        else fail("document type or declaration")
      } else if (kind == '/') {
        val end = nameEnd(i + 2)
        val length = end - (i + 2)
        var j = end
        while (j < n && isSpace(b(j))) j += 1
        if (j >= n || b(j) != '>') fail("malformed end tag " + nameText(i + 2, length))
        if (depth == 0 || openLength(depth - 1) != length ||
            !java.util.Arrays.equals(b, i + 2, end, b, openAt(depth - 1), openAt(depth - 1) + length)) {
          fail("end tag " + nameText(i + 2, length) + " does not close " +
            (if (depth == 0) "anything" else openName(depth - 1)))
        }
        close()
        i = j + 1
      } else {
        val end = nameEnd(i + 1)
        // Attributes: skipped, quotes respected (a '>' may stand in a value).
        var j = end
        var quote: Byte = 0
        while (j < n && (quote != 0 || b(j) != '>')) {
          if (quote != 0) { if (b(j) == quote) quote = 0 }
          else if (b(j) == '"' || b(j) == '\'') quote = b(j)
          j += 1
        }
        if (j >= n) fail("unterminated start tag " + nameText(i + 1, end - i - 1))
        val empty = b(j - 1) == '/'
        openElement(i + 1, end - i - 1)
        if (empty) close()
        i = j + 1
      }
    }

    /** The XML declaration: bytes in another encoding than UTF-8 are the SDK's to read. */
    private def declaration(text: String): Unit = {
      val at = text.indexOf("encoding")
      if (at >= 0) {
        val value = text.substring(at + "encoding".length).trim.stripPrefix("=").trim
        if (value.length < 2) fail("XML declaration " + text)
        val quote = value.charAt(0)
        val end = value.indexOf(quote, 1)
        if ((quote != '"' && quote != '\'') || end < 0 || !value.substring(1, end).equalsIgnoreCase("UTF-8")) {
          fail("XML declaration " + text)
        }
      }
    }

    private def isSpace(c: Byte): Boolean = c == ' ' || c == '\n' || c == '\t' || c == '\r'

    /** Where the name starting at `from` ends; a prefixed name (`s3:Key`) is refused: the SDK matches its local part, this reader would not. */
    private def nameEnd(from: Int): Int = {
      var j = from
      var prefixed = false
      while (j < n && !isSpace(b(j)) && b(j) != '>' && b(j) != '/') { if (b(j) == ':') prefixed = true; j += 1 }
      if (j == from) fail("markup without a name")
      if (prefixed) fail("prefixed name " + nameText(from, j - from))
      j
    }

    /** The element whose name is the `length` bytes at `at` opens. */
    private def openElement(at: Int, length: Int): Unit = {
      if (field != 0) fail("element " + nameText(at, length) + " inside field " + openName(depth - 1))
      if (depth == 0) {
        if (rootSeen) fail("a second root element " + nameText(at, length))
        if (!is(at, length, Root)) fail("root element " + nameText(at, length) + ", not ListBucketResult")
        rootSeen = true
      }
      if (depth == openAt.length) {
        openAt = java.util.Arrays.copyOf(openAt, depth * 2)
        openLength = java.util.Arrays.copyOf(openLength, depth * 2)
      }
      openAt(depth) = at
      openLength(depth) = length
      depth += 1
      field = 0
      if (depth == 2) {
        if (is(at, length, Contents)) { key = null; size = -1L; time = Long.MinValue }
        // Keys URL-encoded (`EncodingType` url: the SDK decodes them) are the SDK's to read.
        else if (is(at, length, EncodingType)) fail("keys encoded (EncodingType)")
        else if (is(at, length, IsTruncated)) field = FieldTruncated
        else if (is(at, length, NextContinuationToken)) field = FieldNext
        else if (is(at, length, KeyCount)) field = FieldKeyCount
      } else if (depth == 3 && openIs(1, Contents)) {
        if (is(at, length, Key)) field = FieldKey
        else if (is(at, length, Size)) field = FieldSize
        else if (is(at, length, LastModified)) field = FieldModified
      }
      if (field != 0) { runStart = -1; text.setLength(0) }
    }

    private def close(): Unit = {
      if (field != 0) {
        val value = if (runStart >= 0) utf8(runStart, runEnd) else text.toString
        val read = field
        field = 0
        // A field given twice: the SDK's reader refuses the page.
        def twice(): Nothing = fail("a second " + openName(depth - 1))
        read match {
          case FieldTruncated =>
            if (truncatedSeen) twice()
            truncated = value match {
              case "true" => true
              case "false" => false
              case other => fail("IsTruncated " + other)
            }
            truncatedSeen = true
          case FieldNext => if (next != null) twice(); next = value
          case FieldKeyCount => if (keyCount != -1L) twice(); keyCount = decimal(value, "KeyCount")
          case FieldKey => if (key != null) twice(); key = value
          case FieldSize => if (size != -1L) twice(); size = decimal(value, "Size")
          case FieldModified => if (time != Long.MinValue) twice(); time = S3ListPage.millis(value)
        }
      } else if (depth == 2 && openIs(1, Contents)) {
        entries += 1
        if (key != null && size >= 0 && time != Long.MinValue) {
          if (count == keys.length) {
            keys = java.util.Arrays.copyOf(keys, count * 2)
            sizes = java.util.Arrays.copyOf(sizes, count * 2)
            times = java.util.Arrays.copyOf(times, count * 2)
          }
          keys(count) = key; sizes(count) = size; times(count) = time
          count += 1
        }
      } else if (depth == 2 && openIs(1, Prefixes)) prefixes += 1
      depth -= 1
    }

    /** Character data up to the next markup: kept where a field is being read. */
    private def chars(): Unit = {
      var j = i
      while (j < n && b(j) != '<') j += 1
      if (field != 0) piece(i, j)
      else if (depth == 0) {
        var k = i
        while (k < j) { if (!isSpace(b(k))) fail("text outside the root element"); k += 1 }
      }
      i = j
    }

    /** Text `from` until `until` of the field being read. */
    private def piece(from: Int, until: Int): Unit = {
      var plain = true
      var k = from
      while (k < until) {
        val c = b(k)
        if (c == '\r') fail("a carriage return in a field")
        if (c == '&') plain = false
        k += 1
      }
      if (plain && runStart < 0 && text.length == 0) { runStart = from; runEnd = until }
      else {
        if (runStart >= 0) { text.append(utf8(runStart, runEnd)); runStart = -1 }
        if (plain) text.append(utf8(from, until))
        else references(from, until)
      }
    }

    /** Bytes `from` until `until` as UTF-8; bytes that are not UTF-8 are the SDK's to refuse. */
    private def utf8(from: Int, until: Int): String = {
      var k = from
      while (k < until && b(k) >= 0) k += 1
      if (k == until) new String(b, from, until - from, java.nio.charset.StandardCharsets.ISO_8859_1) // ASCII
      else try {
        UTF_8.newDecoder()
          .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
          .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
          .decode(java.nio.ByteBuffer.wrap(b, from, until - from)).toString
      } catch { case _: java.nio.charset.CharacterCodingException => fail("bytes that are not UTF-8") }
    }

    /** Text with references (`&amp;`, `&#38;`, `&#x26;` ...) read. */
    private def references(from: Int, until: Int): Unit = {
      var k = from
      while (k < until) {
        var amp = k
        while (amp < until && b(amp) != '&') amp += 1
        if (amp > k) text.append(utf8(k, amp))
        if (amp < until) {
          var semi = amp + 1
          while (semi < until && b(semi) != ';') semi += 1
          if (semi >= until) fail("unterminated reference")
          val name = new String(b, amp + 1, semi - amp - 1, UTF_8)
          name match {
            case "amp" => text.append('&')
            case "lt" => text.append('<')
            case "gt" => text.append('>')
            case "quot" => text.append('"')
            case "apos" => text.append('\'')
            case _ if name.length > 1 && name.charAt(0) == '#' =>
              val code = try {
                if (name.charAt(1) == 'x') Integer.parseInt(name.substring(2), 16) else Integer.parseInt(name.substring(1), 10)
              } catch { case _: NumberFormatException => fail("character reference &" + name + ";") }
              if (code < 0 || code > Character.MAX_CODE_POINT || (code >= 0xD800 && code <= 0xDFFF)) {
                fail("character reference &" + name + ";")
              }
              text.appendCodePoint(code)
            case _ => fail("entity &" + name + ";")
          }
          k = semi + 1
        } else k = until
      }
    }
  }

  private def decimal(value: String, field: String): Long = {
    if (value.isEmpty || value.length > 18) fail(field + " " + value)
    var v = 0L
    var k = 0
    while (k < value.length) {
      val c = value.charAt(k)
      if (c < '0' || c > '9') fail(field + " " + value)
      v = v * 10 + (c - '0')
      k += 1
    }
    v
  }

  /**
   * Milliseconds since the epoch of a time in S3's form, `yyyy-MM-ddTHH:mm:ss[.fraction]Z`, as
   * `Instant.parse(value).toEpochMilli` gives them (the fraction cut to milliseconds); any other
   * form is [[Malformed]].
   */
  def millis(value: String): Long = {
    // Written for a small compiled form (C2 compiles it in a first query where the warm-up did
    // not): no tuple, no boxing, the failure's message built out of line.
    val len = value.length
    if (len < 20 || value.charAt(4) != '-' || value.charAt(7) != '-' || value.charAt(10) != 'T' ||
        value.charAt(13) != ':' || value.charAt(16) != ':' || value.charAt(len - 1) != 'Z' ||
        (len > 20 && (value.charAt(19) != '.' || len == 21 || len > 30))) badTime(value)
    val year = digits(value, 0, 4)
    val month = digits(value, 5, 2)
    val day = digits(value, 8, 2)
    val hour = digits(value, 11, 2)
    val minute = digits(value, 14, 2)
    val second = digits(value, 17, 2)
    if (hour > 23 || minute > 59 || second > 59 || month < 1 || month > 12 || day < 1 || day > monthDays(year, month)) {
      badTime(value)
    }
    var fraction = 0
    if (len > 20) {
      digits(value, 20, len - 21) // every digit checked, the first three kept
      var k = 20
      while (k < 23) { fraction = fraction * 10 + (if (k < len - 1) value.charAt(k) - '0' else 0); k += 1 }
    }
    epochDay(year, month, day) * 86400000L + ((hour * 60L + minute) * 60L + second) * 1000L + fraction
  }

  /** The decimal number of `count` digits of `value` from `from`; anything else is [[Malformed]]. */
  private def digits(value: String, from: Int, count: Int): Int = {
    var v = 0
    var k = from
    while (k < from + count) {
      val c = value.charAt(k)
      if (c < '0' || c > '9') badTime(value)
      v = v * 10 + (c - '0')
      k += 1
    }
    v
  }

  private def badTime(value: String): Nothing = fail("LastModified " + value)

  /** Days in `month` (1 to 12) of `year` in the proleptic Gregorian calendar, as `java.time` counts them. */
  private def monthDays(year: Int, month: Int): Int =
    if (month == 2) (if ((year & 3) == 0 && (year % 100 != 0 || year % 400 == 0)) 29 else 28)
    else if (month == 4 || month == 6 || month == 9 || month == 11) 30 else 31

  /**
   * Days from 1970-01-01 to the date (valid, proleptic Gregorian, year 0 to 9999), as
   * `LocalDate.toEpochDay` counts them: the days-from-civil rule in eras of 400 years, the
   * year taken to start in March so that a leap day falls at its end.
   */
  private def epochDay(year: Int, month: Int, day: Int): Long = {
    val y = if (month <= 2) year - 1 else year
    val era = (if (y >= 0) y else y - 399) / 400
    val yearOfEra = y - era * 400
    val dayOfYear = (153 * (if (month > 2) month - 3 else month + 9) + 2) / 5 + day - 1
    val dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    era * 146097L + dayOfEra - 719468L
  }
}
