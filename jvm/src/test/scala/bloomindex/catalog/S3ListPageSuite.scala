package bloomindex.catalog

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

/**
 * The reader of ListObjectsV2 pages (issue 26: the check against storage on S3 without the SDK's
 * DOM): on documents written as S3 writes them, and on random ones written in the forms XML
 * allows for the same text (references, attributes; comments and CDATA between elements), it
 * reads what the JDK's XML parser reads; what the SDK's reader would read otherwise (a comment
 * inside a field, a field twice, a prefixed name, encoded keys ...), it refuses, so the SDK reads it.
 */
class S3ListPageSuite extends AnyFunSuite {
  import S3ListPage.{Malformed, parse}

  private val Ns = "http://s3.amazonaws.com/doc/2006-03-01/"

  private def entry(key: String, time: String = "2026-11-27T10:00:00.000Z", size: String = "42"): String =
    s"<Contents><Key>$key</Key><LastModified>$time</LastModified><ETag>&quot;d41d8&quot;</ETag>" +
      s"<Size>$size</Size><StorageClass>STANDARD</StorageClass></Contents>"

  private def doc(body: String, truncated: Boolean = false, extra: String = ""): Array[Byte] =
    ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + s"<ListBucketResult xmlns=\"$Ns\"><Name>b</Name><Prefix>t/</Prefix>" +
      s"$extra<MaxKeys>1000</MaxKeys><IsTruncated>$truncated</IsTruncated>$body</ListBucketResult>").getBytes(UTF_8)

  private def objects(p: S3ListPage.Page): Seq[(String, Long, Long)] =
    (0 until p.count).map(i => (p.keys(i), p.sizes(i), p.modified(i)))

  test("a page as S3 writes it: keys, sizes, times, truncation and the token") {
    val p = parse(doc(entry("t/a&amp;b &lt;c&gt; &#x1F600; &#233;.parquet") + entry("t/part-1", "2024-02-29T23:59:59.999Z", "0") +
      "<CommonPrefixes><Prefix>t/sub/</Prefix></CommonPrefixes>",
      truncated = true, extra = "<KeyCount>3</KeyCount><NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>"))
    assert(objects(p) == Seq(
      ("t/a&b <c> \uD83D\uDE00 \u00E9.parquet", 42L, java.time.Instant.parse("2026-11-27T10:00:00Z").toEpochMilli),
      ("t/part-1", 0L, java.time.Instant.parse("2024-02-29T23:59:59.999Z").toEpochMilli)))
    assert(p.truncated && p.next == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")
    val last = parse(doc("", extra = "<KeyCount>0</KeyCount>"))
    assert(last.count == 0 && !last.truncated && last.next == null)
  }

  test("an entry without a key, size or time is left out, as the SDK's null is skipped") {
    val p = parse(doc("<Contents><Key>t/a</Key><Size>1</Size></Contents>" + entry("t/b") +
      "<Contents><LastModified>2026-11-27T10:00:00.000Z</LastModified><Size>1</Size></Contents>"))
    assert(objects(p).map(_._1) == Seq("t/b"))
  }

  test("what S3 does not write is refused, not guessed at") {
    val refused = Seq(
      "<ListAllMyBucketsResult/>",
      "<!DOCTYPE x [<!ENTITY e \"t/x\">]><ListBucketResult><Contents><Key>&e;</Key></Contents></ListBucketResult>",
      new String(doc(entry("t/&unknown;")), UTF_8),
      new String(doc(entry("t/&#xD800;")), UTF_8), // a lone surrogate
      new String(doc(entry("t/&#1114112;")), UTF_8), // beyond Unicode
      new String(doc(entry("t/a\r\nb")), UTF_8), // an XML reader makes it "t/a\nb": the SDK's to do
      new String(doc(entry("t/a", size = "-1")), UTF_8),
      new String(doc(entry("t/a", size = "1e3")), UTF_8),
      new String(doc(entry("t/a", time = "2026-11-27T10:00:00+01:00")), UTF_8),
      new String(doc(entry("t/a", time = "2026-02-30T10:00:00.000Z")), UTF_8),
      new String(doc(entry("t/a", time = "2026-11-27T24:00:00.000Z")), UTF_8),
      new String(doc(entry("t/a", time = "Fri, 27 Nov 2026 10:00:00 GMT")), UTF_8),
      new String(doc(entry("t/a"), extra = "<KeyCount>2</KeyCount>"), UTF_8), // fewer entries than S3 counted
      new String(doc(entry("t/a%20b"), extra = "<EncodingType>url</EncodingType>"), UTF_8), // the SDK decodes "t/a b"
      // The SDK's reader keeps only the text after a comment, instruction or CDATA in a field.
      new String(doc(entry("t/a<!-- c -->b")), UTF_8),
      new String(doc(entry("t/a<?pi x?>b")), UTF_8),
      new String(doc(entry("t/a<![CDATA[b]]>")), UTF_8),
      new String(doc(entry("t/a", size = "1</Size><Size>2")), UTF_8), // a field twice: the SDK refuses it
      new String(doc(entry("t/a") + "<Contents><Key>t/b</Key><Key>t/c</Key></Contents>"), UTF_8),
      new String(doc(entry("t/a"), extra = "<IsTruncated>false</IsTruncated>"), UTF_8),
      new String(doc("<Contents><s3:Key>t/a</s3:Key></Contents>"), UTF_8), // the SDK reads the local name
      new String(doc(entry("t/a")), UTF_8).replace("encoding=\"UTF-8\"", "encoding=\"ISO-8859-1\""),
      new String(doc("", truncated = true), UTF_8), // truncated, no token to go on with
      new String(doc("", truncated = true, extra = "<NextContinuationToken></NextContinuationToken>"), UTF_8),
      new String(doc("<IsTruncated>maybe</IsTruncated>"), UTF_8),
      new String(doc("<Contents><Key>t/<b>x</b></Key></Contents>"), UTF_8),
      "<ListBucketResult><Contents></ListBucketResult>",
      "<ListBucketResult><Contents>",
      "<ListBucketResult/><ListBucketResult/>",
      "<ListBucketResult/>trailing",
      "")
    refused.foreach { xml =>
      intercept[Malformed](parse(xml.getBytes(UTF_8)))
    }
    // Bytes that are not UTF-8 in a key: the SDK's parser refuses them; so does this reader.
    val bytes = doc(entry("t/a\u00E9"))
    val at = new String(bytes, java.nio.charset.StandardCharsets.ISO_8859_1).indexOf("t/a") + 3
    bytes(at + 1) = 'x'.toByte // the second byte of 'é' (0xC3 0xA9) broken
    intercept[Malformed](parse(bytes))
    // Comments and CDATA between elements, and a declared UTF-8, are read past.
    val p = parse(doc("<!-- a --><Contents><![CDATA[ x ]]><Key>t/a</Key><!-- b --><Size>1</Size>" +
      "<LastModified>2026-11-27T10:00:00.000Z</LastModified></Contents>"))
    assert(objects(p).map(_._1) == Seq("t/a"))
  }

  test("times: S3's form read as Instant.parse reads it, to the millisecond") {
    val rnd = new scala.util.Random(26)
    (0 until 20000).foreach { _ =>
      val seconds = rnd.nextLong(253402300799L + 62167219200L) - 62167219200L // years 0 to 9999
      val nanos = rnd.nextInt(1000000000)
      val t = java.time.Instant.ofEpochSecond(seconds, nanos)
      val text = java.time.format.DateTimeFormatter.ISO_INSTANT.format(t) // 0 to 9 fraction digits, as the value needs
      assert(S3ListPage.millis(text) == java.time.Instant.parse(text).toEpochMilli, text)
      val s3 = java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(java.time.ZoneOffset.UTC).format(t)
      assert(S3ListPage.millis(s3) == java.time.Instant.parse(s3).toEpochMilli, s3)
    }
  }

  test("times: every month and day java.time takes, and only those, in leap and common years back to year 0") {
    // Instant.parse refuses a day the month does not have (29 February of 1900 and 2023, 31 April),
    // month 0 and 13, day 0: so must this reader, and it must agree on every date it takes.
    for (year <- Seq(0, 4, 100, 400, 1582, 1600, 1899, 1900, 1969, 1970, 1972, 2000, 2023, 2024, 2100, 9999);
         month <- 0 to 13; day <- 0 to 32) {
      val text = f"$year%04d-$month%02d-$day%02dT23:59:59.999Z"
      val expected = try Some(java.time.Instant.parse(text).toEpochMilli) catch { case _: java.time.format.DateTimeParseException => None }
      expected match {
        case Some(ms) => assert(S3ListPage.millis(text) == ms, text)
        case None => intercept[S3ListPage.Malformed](S3ListPage.millis(text))
      }
    }
  }

  test("random pages in the forms XML allows S3 to use: the same objects as the JDK's XML parser reads") {
    val rnd = new scala.util.Random(2026)
    val alphabet = "ab/=_-. +&<>\"'%\u00E9\u4E2D\t\n\uD83D\uDE00"
    def randomKey(): String = {
      val b = new java.lang.StringBuilder("t/")
      (0 until 1 + rnd.nextInt(12)).foreach { _ =>
        val i = rnd.nextInt(alphabet.length)
        if (Character.isHighSurrogate(alphabet.charAt(i))) b.append(alphabet, i, i + 2)
        else if (!Character.isLowSurrogate(alphabet.charAt(i))) b.append(alphabet.charAt(i))
      }
      b.toString
    }
    // The text written as XML may write it: plain where allowed, a named or numeric reference.
    def written(text: String): String = {
      val out = new java.lang.StringBuilder
      var k = 0
      while (k < text.length) {
        val cp = text.codePointAt(k)
        val s = new String(Character.toChars(cp))
        out.append(rnd.nextInt(6) match {
          case 0 => s"&#$cp;"
          case 1 => s"&#x${Integer.toHexString(cp)};"
          case _ => cp match {
            case '&' => "&amp;"
            case '<' => "&lt;"
            case '>' => if (rnd.nextBoolean()) "&gt;" else ">"
            case '"' => if (rnd.nextBoolean()) "&quot;" else "\""
            case '\'' => if (rnd.nextBoolean()) "&apos;" else "'"
            case c if c < 0x20 && c != '\t' && c != '\n' => s"&#$c;"
            case _ => s
          }
        })
        k += Character.charCount(cp)
      }
      out.toString
    }
    (0 until 300).foreach { round =>
      val n = rnd.nextInt(20)
      val entries = (0 until n).map { i =>
        val key = randomKey()
        val size = if (rnd.nextInt(10) == 0) None else Some(rnd.nextLong(1L << 40))
        val time = if (rnd.nextInt(10) == 0) None else Some(java.time.Instant.ofEpochMilli(rnd.nextLong(4102444800000L)).toString)
        val ws = if (rnd.nextBoolean()) "\n  " else ""
        val between = if (rnd.nextBoolean()) "<!-- c --><![CDATA[ d ]]>" else ""
        s"$ws<Contents$ws>$between<Key attr='x>y'>${written(key)}</Key>$ws$between" +
          time.map(t => s"<LastModified>$t</LastModified>").getOrElse("") +
          s"<Owner><ID>o</ID><DisplayName/></Owner>" + size.map(s => s"<Size>$s</Size>").getOrElse("") +
          (if (rnd.nextBoolean()) "<ChecksumAlgorithm>CRC64NVME</ChecksumAlgorithm>" else "") + s"</Contents>$ws"
      }
      val truncated = rnd.nextBoolean()
      val bytes = doc(entries.mkString + "<!-- end --><?pi x?>", truncated,
        extra = s"<KeyCount>$n</KeyCount>" + (if (truncated) s"<NextContinuationToken>${written("tok&" + round)}</NextContinuationToken>" else ""))
      val p = parse(bytes)
      // The oracle: the JDK's DOM of the same bytes.
      val dom = javax.xml.parsers.DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(new java.io.ByteArrayInputStream(bytes))
      val root = dom.getDocumentElement
      def child(e: org.w3c.dom.Element, name: String): Option[String] = {
        val nodes = e.getChildNodes
        (0 until nodes.getLength).map(nodes.item).collectFirst { case c: org.w3c.dom.Element if c.getTagName == name => c.getTextContent }
      }
      val contents = root.getElementsByTagName("Contents")
      val expected = (0 until contents.getLength).map(contents.item(_).asInstanceOf[org.w3c.dom.Element]).flatMap { c =>
        for (k <- child(c, "Key"); s <- child(c, "Size"); t <- child(c, "LastModified"))
          yield (k, s.toLong, java.time.Instant.parse(t).toEpochMilli)
      }
      assert(objects(p) == expected, new String(bytes, UTF_8))
      assert(p.truncated == child(root, "IsTruncated").contains("true"))
      assert(Option(p.next) == child(root, "NextContinuationToken"))
    }
  }
}
