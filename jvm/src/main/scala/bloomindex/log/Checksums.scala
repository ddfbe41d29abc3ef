package bloomindex.log

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.ConcurrentHashMap
import java.util.zip.CRC32C

import scala.jdk.CollectionConverters._

/**
 * Checksums of the index's own files (log format 6 on, see [[LogJson.ChecksumsSince]]): CRC32C
 * (the JDK's, hardware-accelerated where the CPU has it). CRC32C finds every error of one to
 * three bits and every burst of up to 32 bits in the bytes it covers, and any other change but
 * for one chance in 2^32.
 *
 *  - JSON documents (log entries, `_summary.json`) end with a last field `"crc32c":"xxxxxxxx"`
 *    (8 lower-case hex digits) over the document's UTF-8 text before it ([[seal]], [[unseal]]):
 *    the documents stay plain JSON, and the field is found and checked before they are parsed.
 *  - Probe files ([[bloomindex.layout.ProbeFile]] format 3): one CRC32C after each block row of
 *    each section, and one over the footer in the trailer.
 *  - Global filters: a `checksum` field in each row, over the column's name and its filter.
 *
 * Damage found while reading (a block row or a section that fails its checksum) is recorded
 * here for this JVM ([[recordDamage]]): DESCRIBE reports it, and the next REFRESH builds the
 * files that part of the index held again instead of keeping the damaged probe file.
 */
object Checksums {

  /** The JSON field of a sealed document. */
  val Field = "crc32c"
  private val TailStart = ",\"" + Field + "\":\""

  /** A checksum that does not match: the bytes changed since they were written. */
  final class Mismatch(msg: String) extends java.io.IOException(msg)

  def crc32c(b: Array[Byte], off: Int, len: Int): Int = {
    val c = new CRC32C()
    c.update(b, off, len)
    c.getValue.toInt
  }

  def crc32c(b: Array[Byte]): Int = crc32c(b, 0, b.length)

  private def hex(v: Int): String = f"$v%08x"

  /** `json` (an object: `{...}`) with its checksum as its last field. */
  def seal(json: String): String = {
    val t = json.trim
    require(t.startsWith("{") && t.endsWith("}") && t.length > 2, "a sealed document is a non-empty JSON object")
    val body = t.substring(0, t.length - 1) + TailStart
    body + hex(crc32c(body.getBytes(UTF_8))) + "\"}"
  }

  /** A sealed document without its checksum field (tools and tests); other text as it is. */
  def strip(text: String): String = {
    val t = text.trim
    val at = t.lastIndexOf(TailStart)
    if (at < 0 || unseal(t).isEmpty) text else t.substring(0, at) + "}"
  }

  /**
   * Checks the checksum of a sealed document: None when `text` has none (a document written
   * before checksums, or one whose checksum field is damaged), Some(true) when it matches,
   * Some(false) when it does not.
   */
  def unseal(text: String): Option[Boolean] = {
    var end = text.length
    while (end > 0 && Character.isWhitespace(text.charAt(end - 1))) end -= 1
    val at = text.lastIndexOf(TailStart, end)
    if (at < 0 || end - (at + TailStart.length) != 10 || text.charAt(end - 1) != '}' || text.charAt(end - 2) != '"') {
      return None
    }
    val digits = text.substring(at + TailStart.length, end - 2)
    if (!digits.forall(c => (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return None
    val body = text.substring(0, at + TailStart.length)
    Some(java.lang.Long.parseLong(digits, 16).toInt == crc32c(body.getBytes(UTF_8)))
  }

  /**
   * Checks the document `text` (`what` names it): a checksum present must match; one is
   * required when `required`, or when the text names the field at all (its seal was damaged).
   * Throws [[Mismatch]] otherwise.
   */
  def verify(text: String, required: Boolean, what: String): Unit = unseal(text) match {
    case Some(true) =>
    case Some(false) => throw new Mismatch(s"$what fails its checksum (CRC32C): changed since it was written")
    case None if required || text.contains("\"" + Field + "\"") =>
      throw new Mismatch(s"$what has no valid checksum (CRC32C) field")
    case None =>
  }

  // Damage found by reads in this JVM: index file -> what is wrong (and the parts: probe file sections).
  private val damage = new ConcurrentHashMap[String, (String, Set[Int])]()

  /** Records that `sections` (of a probe file; empty for a whole file) of index file `file` failed a checksum. */
  def recordDamage(file: String, why: String, sections: Set[Int] = Set.empty): Unit =
    damage.merge(file, (why, sections), (a, b) => (a._1, a._2 ++ b._2))

  /** The damage recorded for `file`: what is wrong and the sections concerned (empty: all of it). */
  def damageOf(file: String): Option[(String, Set[Int])] = Option(damage.get(file))

  /** Every recorded damage whose file lies under `prefix`, as (file, why). */
  def damageUnder(prefix: String): Seq[(String, String)] =
    damage.asScala.iterator.filter(_._1.startsWith(prefix)).map { case (f, (w, _)) => (f, w) }.toSeq.sortBy(_._1)

  /** Forgets what was recorded (tests: a fresh driver). */
  def resetDamage(): Unit = damage.clear()
}
