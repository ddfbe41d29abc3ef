package bloomindex.layout

import java.io.{BufferedOutputStream, ByteArrayInputStream, DataInputStream, DataOutputStream, EOFException}
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets.UTF_8

import scala.collection.mutable

import bloomindex.filter.{FilterAlgorithm, SbbfSerde}
import bloomindex.log.Checksums
import bloomindex.sbbf.SbbfSizing

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataInputStream, Path}

/**
 * A column's filters as queries probe them: the filters of the files one build task indexed,
 * stored block-major (`column=<name>/_part-....probe`; the underscore hides it from Parquet
 * readers of the folder). Layout [[bloomindex.log.IndexData.Probes]] (log format 5): the probe
 * files are the column's only index data, and their entries carry each file's ndv and origin
 * (file format 2). Layout [[bloomindex.log.IndexData.Blocks]] (log format 4): next to the task's
 * Parquet file of the same rows, which holds the filters too (file format 1).
 *
 * A point lookup needs one 32-byte block of each file's split block filter: block
 * `((h >>> 32) * z) >>> 32` of a filter of z blocks. So the filters of files with the same z
 * are stored together as a matrix, block b of every one of them side by side: one read of
 * M x 32 bytes at `offset + b * M * 32` answers a hash for those M files. The classic design
 * (bits anywhere in the filter) is stored the same way with one block the size of the filter:
 * a probe reads all of them, as before.
 *
 * {{{
 *   "BIXPROBE"
 *   section 0: blocks x files x blockBytes bytes (file p's block b at (b * files + p) * blockBytes)
 *   section 1: ...
 *   footer: algorithm(UTF), sections(int), per section: offset(long) blockBytes(int) blocks(int) files(int);
 *           files(int), per file: path(int length + UTF-8), size, modificationTime, rowCount,
 *           nullCount (longs), section(int), position(int), numHashes(byte, classic only)
 *           [format 2: ndv(long), from footer(byte, 1 = the filter came from the file's Parquet footer)]
 *   [format 3: footer checksum(int): CRC32C of the footer and the next 8 bytes]
 *   format(int) footer length(int) "BIXPROBE"
 * }}}
 * Format 4 (the same sections, checksums and trailer) writes the file entries compactly: after
 * the sections, the folder all the file's paths share (int length + UTF-8, up to and with its
 * last '/'), files(int), then per file: the rest of its path (varint length + UTF-8), size,
 * modificationTime, rowCount, nullCount (zigzag varlongs), section, position (varints),
 * numHashes(byte), ndv (zigzag varlong), from footer(byte). Varints as Parquet's Thrift compact
 * protocol writes them (7 bits a byte, low first). Entries take a third (short names) to a half
 * of format 3's bytes (no folder repeated, no 8 bytes for a small number): fewer bytes to read from
 * an object store and to parse on the driver (issue 26).
 * Format 3 (log format 6 on) adds checksums ([[bloomindex.log.Checksums]]): each block row of a
 * section is followed by the CRC32C of its bytes (row b of a section at `offset + b * (rowBytes
 * + 4)`), and the trailer holds the CRC32C of the footer. A point lookup reads a block row and its
 * checksum in one read and checks exactly the bytes it uses; a row that fails answers "maybe" for
 * its files.
 * Format 5 (the same bytes as format 4) binds a file to its column: the footer's checksum covers
 * the column's name too (CRC32C of the footer, the format and the footer's length, then the name's
 * length (int) and UTF-8). A reader checks it against the column it reads the file for, so a probe
 * file moved into another column's folder (the task's files of every column have the same name,
 * and often the same length) fails its checksum as a damaged one does: its files are read, not
 * pruned, DESCRIBE shows the damage and the next REFRESH builds them again. Before format 5 such a
 * file was read as the other column's filters, a wrong answer.
 * A reader reads the trailer (16 bytes, 20 in format 3), then the footer, then the block rows it needs.
 * Numbers big-endian (java.io.DataOutput); the filter bits as Parquet lays them out
 * (little-endian words). A section holds at most [[SectionBytes]], so a task buffers at most
 * that per column, and a section's block row is at most that long.
 */
object ProbeFile {

  val Suffix = ".probe"
  private val Magic = "BIXPROBE".getBytes(UTF_8)
  /**
   * Format 5: the footer's checksum covers the column's name; format 4: compact file entries;
   * format 3: checksums (block rows, footer); format 2: entries with ndv and origin (layout
   * `probes`); format 1 (layout `blocks`) without.
   */
  val Format = 5
  val Formats: Set[Int] = Set(1, 2, 3, 4, 5)
  /** The first format with checksums. */
  val ChecksumsSince = 3
  /** The first format with compact file entries (a shared folder, varints). */
  val CompactSince = 4
  /** The first format whose footer checksum covers the column's name. */
  val ColumnBoundSince = 5
  private val CrcBytes = 4
  private val TrailerBytes = 8 + Magic.length
  /** A section's filter bytes at most: what a task buffers per column before writing. */
  val SectionBytes: Int = 32 << 20
  /** Footers above this are damage, not read. */
  private val MaxFooterBytes = 256 << 20

  /**
   * One matrix: `files` filters of `blocks` blocks of `blockBytes` each, block-major, at
   * `offset`; with `checked` (format 3) each block row followed by its CRC32C.
   */
  final case class Section(offset: Long, blockBytes: Int, blocks: Int, files: Int, checked: Boolean = false) {
    def rowBytes: Int = blockBytes * files
    /** A block row's bytes in the file: the row, and its checksum where there is one. */
    def rowStride: Int = rowBytes + (if (checked) CrcBytes else 0)
    def rowOffset(block: Int): Long = offset + block.toLong * rowStride
    /** The section's bytes in the file. */
    def length: Long = blocks.toLong * rowStride
  }

  /**
   * What a file's footer says: the sections, and per indexed file its row and place; `format` the
   * file's. Read for a query's load (`compact`, [[readFooter]]), the files are in `entries` and
   * `files` is empty.
   */
  final case class Footer(algorithm: FilterAlgorithm, sections: Array[Section], files: Array[FileEntry], bytesRead: Long,
      format: Int = Format, entries: Option[Entries] = None, tail: Array[Byte] = null, tailOffset: Long = -1L) {
    def checked: Boolean = format >= ChecksumsSince
    /** How many files the footer holds. */
    def fileCount: Int = entries.map(_.count).getOrElse(files.length)
  }

  /**
   * A footer's file entries as a query's load reads them: where each lies in the footer's bytes,
   * read in place, no string nor object per file (a million files' footers are 130 MB; issue 26).
   * Entry `i`: its path's UTF-8 bytes at `bytes(nameStart(i) until nameEnd(i))`, then its size,
   * modification time, row and null counts (longs), section and position (ints, the file's own
   * section numbers) and hash count (a byte), as [[Writer]] wrote them. Checked when parsed.
   */
  final class Entries private[ProbeFile] (val count: Int, val bytes: Array[Byte], starts: Array[Int], ends: Array[Int],
      val folder: Array[Byte] = Array.emptyByteArray, decoded: Entries.Decoded = null) {
    private val buf = ByteBuffer.wrap(bytes) // absolute reads only: safe from many threads
    /**
     * Entry `i`'s path is [[folder]] (format 4: the folder all the file's paths share; else
     * empty), then `bytes(nameStart(i) until nameEnd(i))`.
     */
    def nameStart(i: Int): Int = starts(i)
    def nameEnd(i: Int): Int = ends(i)
    def path(i: Int): String =
      if (folder.isEmpty) new String(bytes, starts(i), ends(i) - starts(i), UTF_8)
      else new String(folder, UTF_8) + new String(bytes, starts(i), ends(i) - starts(i), UTF_8)
    def size(i: Int): Long = if (decoded == null) buf.getLong(ends(i)) else decoded.numbers(4 * i)
    def modificationTime(i: Int): Long = if (decoded == null) buf.getLong(ends(i) + 8) else decoded.numbers(4 * i + 1)
    def rowCount(i: Int): Long = if (decoded == null) buf.getLong(ends(i) + 16) else decoded.numbers(4 * i + 2)
    def nullCount(i: Int): Long = if (decoded == null) buf.getLong(ends(i) + 24) else decoded.numbers(4 * i + 3)
    def section(i: Int): Int = if (decoded == null) buf.getInt(ends(i) + 32) else decoded.places(2 * i)
    def position(i: Int): Int = if (decoded == null) buf.getInt(ends(i) + 36) else decoded.places(2 * i + 1)
    def numHashes(i: Int): Int = if (decoded == null) bytes(ends(i) + 40) & 0xff else decoded.numHashes(i) & 0xff
  }

  object Entries {
    /** Format 4's numbers, decoded when parsed: per entry size, time, rows, nulls; section, position; hash count. */
    private[ProbeFile] final class Decoded(val numbers: Array[Long], val places: Array[Int], val numHashes: Array[Byte])
  }

  /** `ndv` is -1 and `fromFooter` false in format 1, which does not record them. */
  final case class FileEntry(path: String, size: Long, modificationTime: Long, rowCount: Long, nullCount: Long,
      section: Int, position: Int, numHashes: Int, ndv: Long = -1L, fromFooter: Boolean = false)

  /**
   * A serialized filter's place in a matrix: (blockBytes, blocks), its bit set in Parquet's
   * layout (bytes and offset: Parquet's own form is used where it lies), and its number of hash
   * functions (classic).
   */
  private def geometry(algorithm: FilterAlgorithm, filter: Array[Byte]): (Int, Int, Array[Byte], Int, Int) =
    if (algorithm == FilterAlgorithm.SplitBlock) {
      val (offset, numBytes) = SbbfSerde.locateBitset(filter)
      SbbfSizing.checkNumBytes(numBytes)
      (32, numBytes / 32, filter, offset, 0)
    } else algorithm.shared(algorithm.fromBytes(filter)) match {
      case words: Array[Int] =>
        val b = ByteBuffer.allocate(words.length * 4).order(ByteOrder.LITTLE_ENDIAN)
        b.asIntBuffer().put(words)
        (32, words.length / 8, b.array(), 0, 0)
      case (words: Array[Long], k: Integer) =>
        val b = ByteBuffer.allocate(words.length * 8).order(ByteOrder.LITTLE_ENDIAN)
        b.asLongBuffer().put(words)
        (words.length * 8, 1, b.array(), 0, k.intValue)
      case other => throw new IllegalArgumentException(s"filter state ${other.getClass.getName}")
    }

  /**
   * Writes one probe file of the column `column`: rows are added one at a time ([[add]]), the
   * filters of each (block size, block count) buffered until a section's worth, then written block-major.
   */
  final class Writer(conf: Configuration, path: Path, algorithm: FilterAlgorithm, column: String,
      sectionBytes: Int = SectionBytes, format: Int = Format) {
    require(Formats.contains(format), s"probe file format $format")
    private val checked = format >= ChecksumsSince
    private val fs = path.getFileSystem(conf)
    private val raw = fs.create(path, true)
    private val out = new DataOutputStream(new BufferedOutputStream(raw, 1 << 16))
    try out.write(Magic) catch { case t: Throwable => abort(); throw t }
    private var written: Long = Magic.length
    private val sections = mutable.ArrayBuffer[Section]()
    private val files = mutable.ArrayBuffer[FileEntry]()
    // Per (blockBytes, blocks): the bit sets waiting, and the entries (without section yet) they belong to.
    private val pending = mutable.LinkedHashMap[(Int, Int), mutable.ArrayBuffer[(Int, Array[Byte], Int)]]()
    private var pendingBytes = 0L

    def add(path: String, size: Long, modificationTime: Long, rowCount: Long, nullCount: Long, ndv: Long,
        fromFooter: Boolean, filter: Array[Byte]): Unit = {
      val (blockBytes, blocks, bits, offset, k) = geometry(algorithm, filter)
      files += FileEntry(path, size, modificationTime, rowCount, nullCount, -1, -1, k, ndv, fromFooter)
      pending.getOrElseUpdate((blockBytes, blocks), mutable.ArrayBuffer()) += ((files.size - 1, bits, offset))
      pendingBytes += blockBytes.toLong * blocks
      if (pendingBytes >= sectionBytes) flush()
    }

    /** Writes every waiting group as one section each. */
    private def flush(): Unit = {
      pending.foreach { case ((blockBytes, blocks), group) =>
        val m = group.size
        sections += Section(written, blockBytes, blocks, m, checked)
        val s = sections.size - 1
        group.indices.foreach { p =>
          val i = group(p)._1
          files(i) = files(i).copy(section = s, position = p)
        }
        // Block row by block row: block b of every file of the group, side by side.
        val bits = group.map(_._2).toArray
        val offsets = group.map(_._3).toArray
        val row = new Array[Byte](m * blockBytes)
        var b = 0
        while (b < blocks) {
          var p = 0
          while (p < m) {
            System.arraycopy(bits(p), offsets(p) + b * blockBytes, row, p * blockBytes, blockBytes)
            p += 1
          }
          out.write(row)
          if (checked) out.writeInt(Checksums.crc32c(row))
          b += 1
        }
        written += sections.last.length
      }
      pending.clear()
      pendingBytes = 0
    }

    /** Writes the rest and the footer, closes the file; returns its length. */
    def close(): Long = {
      try {
        flush()
        val footer = new java.io.ByteArrayOutputStream()
        val f = new DataOutputStream(footer)
        f.writeUTF(algorithm.name)
        f.writeInt(sections.size)
        sections.foreach { s => f.writeLong(s.offset); f.writeInt(s.blockBytes); f.writeInt(s.blocks); f.writeInt(s.files) }
        if (format >= CompactSince) writeCompact(f, files.toSeq)
        else {
          f.writeInt(files.size)
          files.foreach { e =>
            val p = e.path.getBytes(UTF_8)
            f.writeInt(p.length)
            f.write(p)
            f.writeLong(e.size); f.writeLong(e.modificationTime); f.writeLong(e.rowCount); f.writeLong(e.nullCount)
            f.writeInt(e.section); f.writeInt(e.position); f.writeByte(e.numHashes)
            if (format >= 2) { f.writeLong(e.ndv); f.writeByte(if (e.fromFooter) 1 else 0) }
          }
        }
        f.flush()
        footer.writeTo(out)
        if (checked) out.writeInt(footerCrc(footer.toByteArray, format, column))
        out.writeInt(format)
        out.writeInt(footer.size())
        out.write(Magic)
        written += footer.size() + TrailerBytes + (if (checked) CrcBytes else 0)
      } finally out.close()
      written
    }

    /** Closes without the footer (the file is then not readable as a probe file; the task failed). */
    def abort(): Unit = try out.close() catch { case _: Throwable => }
  }

  /** Format 4's file entries: the folder the paths share, then each entry compactly (see the format above). */
  private def writeCompact(f: DataOutputStream, files: Seq[FileEntry]): Unit = {
    val paths = files.map(_.path.getBytes(UTF_8))
    val shared = if (paths.isEmpty) 0 else sharedFolder(paths)
    f.writeInt(shared)
    if (shared > 0) f.write(paths.head, 0, shared)
    f.writeInt(files.size)
    files.zip(paths).foreach { case (e, p) =>
      writeVarLong(f, p.length - shared)
      f.write(p, shared, p.length - shared)
      writeVarLong(f, zigzag(e.size)); writeVarLong(f, zigzag(e.modificationTime))
      writeVarLong(f, zigzag(e.rowCount)); writeVarLong(f, zigzag(e.nullCount))
      writeVarLong(f, e.section); writeVarLong(f, e.position); f.writeByte(e.numHashes)
      writeVarLong(f, zigzag(e.ndv)); f.writeByte(if (e.fromFooter) 1 else 0)
    }
  }

  /** The length of the longest prefix every one of `paths` has that ends with '/' (0: none). */
  private def sharedFolder(paths: Seq[Array[Byte]]): Int = {
    val first = paths.head
    var len = first.lastIndexOf('/'.toByte) + 1
    paths.iterator.drop(1).foreach { p =>
      val m = java.util.Arrays.mismatch(first, 0, len, p, 0, math.min(len, p.length))
      if (m >= 0) len = m
      while (len > 0 && first(len - 1) != '/') len -= 1
    }
    len
  }

  private def zigzag(v: Long): Long = (v << 1) ^ (v >> 63)
  private def unzigzag(v: Long): Long = (v >>> 1) ^ -(v & 1)

  private def writeVarLong(f: DataOutputStream, v0: Long): Unit = {
    var v = v0
    while ((v & ~0x7FL) != 0) { f.writeByte(((v & 0x7F) | 0x80).toInt); v >>>= 7 }
    f.writeByte(v.toInt)
  }

  /** A varint at `b`'s position (at most 10 bytes), or `bad`. */
  private def readVarLong(b: ByteBuffer, bad: String => Nothing): Long = {
    var v = 0L
    var shift = 0
    while (true) {
      if (!b.hasRemaining) bad("truncated file entries")
      val x = b.get
      v |= (x & 0x7FL) << shift
      if (x >= 0) return v
      shift += 7
      if (shift > 63) bad("a number of more than 10 bytes")
    }
    v
  }

  /** A varint that must be an int in `0 to max`, or `bad`. */
  private def readVarInt(b: ByteBuffer, max: Int, what: String, bad: String => Nothing): Int = {
    val v = readVarLong(b, bad)
    if (v < 0 || v > max) bad(s"$what $v")
    v.toInt
  }

  /**
   * What [[parseCompact]] hands each entry to: a method of primitive parameters, so that a
   * million entries box no number (a function of eleven arguments boxed each of them).
   */
  private trait CompactVisitor {
    def counted(n: Int): Unit
    def visit(pathStart: Int, pathEnd: Int, size: Long, mtime: Long, rows: Long, nulls: Long, section: Int,
        position: Int, numHashes: Int, ndv: Long, fromFooter: Boolean): Unit
  }

  /**
   * Format 4's file entries at `b`'s position (the rest of the footer), checked as the older
   * formats' are: `visitor.counted(how many)`, then `visitor.visit` per entry in order; the
   * folder and the count returned.
   */
  private def parseCompact(b: ByteBuffer, algorithm: FilterAlgorithm, sections: Array[Section], bad: String => Nothing,
      visitor: CompactVisitor): (Array[Byte], Int) = {
    if (b.remaining() < 8) bad("no file count")
    val fl = b.getInt
    if (fl < 0 || fl > b.remaining() - 4) bad(s"a folder of $fl bytes")
    val folder = java.util.Arrays.copyOfRange(b.array(), b.position(), b.position() + fl)
    b.position(b.position() + fl)
    val n = b.getInt
    // An entry takes at least 11 bytes.
    if (n < 0 || n > b.remaining() / 11) bad(s"$n files")
    visitor.counted(n)
    val ns = sections.length
    var i = 0
    while (i < n) {
      val pl = readVarInt(b, Int.MaxValue, "a path of", bad)
      if (pl > b.remaining()) bad(s"a path of $pl bytes")
      val at = b.position()
      b.position(at + pl)
      def path = new String(folder, UTF_8) + new String(b.array(), at, pl, UTF_8)
      val size = unzigzag(readVarLong(b, bad))
      val mtime = unzigzag(readVarLong(b, bad))
      val rows = unzigzag(readVarLong(b, bad))
      val nulls = unzigzag(readVarLong(b, bad))
      val section = readVarInt(b, Int.MaxValue, "section", bad)
      val position = readVarInt(b, Int.MaxValue, "position", bad)
      if (b.remaining() < 1) bad("truncated file entries")
      val k = b.get & 0xff
      val ndv = unzigzag(readVarLong(b, bad))
      if (b.remaining() < 1) bad("truncated file entries")
      val fromFooter = b.get == 1
      if (section >= ns || position >= sections(section).files) bad(s"$path: section $section position $position")
      if (algorithm == FilterAlgorithm.Classic && k <= 0) bad(s"$path: $k hash functions")
      visitor.visit(at, at + pl, size, mtime, rows, nulls, section, position, k, ndv, fromFooter)
      i += 1
    }
    if (b.hasRemaining) bad(s"${b.remaining()} bytes after the file entries")
    (folder, n)
  }

  /** Opens `path` for positioned reads of its blocks (a random-access read policy where the store has one). */
  def open(conf: Configuration, path: Path, length: Option[Long]): FSDataInputStream = {
    val fs = path.getFileSystem(conf)
    val b = fs.openFile(path).opt("fs.option.openfile.read.policy", "random")
    length.foreach(l => b.opt("fs.option.openfile.length", l.toString))
    b.build().get()
  }

  /**
   * The footer's checksum: CRC32C of the footer, then the format and the footer's length (as the
   * trailer has them), then (format 5 on) the length and UTF-8 bytes of the column's name.
   */
  private def footerCrc(footer: Array[Byte], format: Int, column: String): Int =
    footerCrc(footer, 0, footer.length, format, column)

  /** [[footerCrc]] of the footer at `footer(from until from + length)`. */
  private def footerCrc(footer: Array[Byte], from: Int, length: Int, format: Int, column: String): Int = {
    val c = new java.util.zip.CRC32C()
    c.update(footer, from, length)
    c.update(ByteBuffer.allocate(8).putInt(format).putInt(length).array())
    if (format >= ColumnBoundSince) {
      val name = column.getBytes(UTF_8)
      c.update(ByteBuffer.allocate(4).putInt(name.length).array())
      c.update(name)
    }
    c.getValue.toInt
  }

  /**
   * The footer of the probe file `path` of `length` bytes (from the summary; its status is
   * read when None), read as a file of the column `column`. An IllegalStateException says what is
   * wrong with the file, a [[Checksums.Mismatch]] that its footer fails its checksum (format 5 on:
   * or that it is another column's). With `checksums` (data of log format 6 on) a file without
   * checksums (format before 3) is refused.
   *
   * With `tailBytes` > 0 and the length known, the file's last `tailBytes` bytes (at least the
   * trailer and the footer's checksum; the whole file when it is shorter) are read in one request,
   * and the footer parsed from them when it lies inside, as it does when `tailBytes` covers it: one
   * request per footer instead of two (trailer, then footer), which is what a footer costs on an
   * object store. A footer longer than the tail takes one more read, of the part the tail missed.
   * With `compact` and the footer inside the tail, the footer keeps the tail's bytes (`tail`, read
   * at `tailOffset`): the block rows they hold need no read of their own ([[BlockFilters.hold]]).
   */
  def readFooter(conf: Configuration, path: Path, length: Option[Long], column: String, checksums: Boolean = false,
      tailBytes: Long = 0L, compact: Boolean = false): Footer = {
    val len = length.getOrElse(path.getFileSystem(conf).getFileStatus(path).getLen)
    def bad(why: String) = throw new IllegalStateException(s"$path: not a probe file ($why)")
    val tail = TrailerBytes + CrcBytes
    if (len < Magic.length + TrailerBytes) bad(s"$len bytes")
    val in = open(conf, path, Some(len))
    try {
      // The tail: the trailer at its end, format 3's footer checksum before it, and as much of the
      // footer before that as the tail holds.
      val tailLen = math.min(len, math.max(tail.toLong,
        if (length.isEmpty) 0L else math.min(tailBytes, MaxFooterBytes.toLong + tail)))
      val trailer = new Array[Byte](tailLen.toInt)
      in.readFully(len - trailer.length, trailer)
      val at = trailer.length - TrailerBytes
      if (!java.util.Arrays.equals(trailer, at + 8, trailer.length, Magic, 0, Magic.length)) bad("no trailing magic")
      val t = ByteBuffer.wrap(trailer)
      val format = t.getInt(at)
      val footerLen = t.getInt(at + 4)
      if (!Formats.contains(format)) bad(s"format $format, this build reads ${Formats.toSeq.sorted.mkString(", ")}")
      val checked = format >= ChecksumsSince
      if (checksums && !checked) bad(s"format $format has no checksums, and this index's data has them")
      val crcLen = if (checked) CrcBytes else 0
      val end = len - TrailerBytes - crcLen // where the footer ends
      if (checked && at < CrcBytes) bad(s"$len bytes")
      if (footerLen < 0 || footerLen > MaxFooterBytes || footerLen > end - Magic.length) bad(s"footer of $footerLen bytes")
      // The footer where the tail holds it whole (read in place), else the part of it in the tail and
      // what lies before the tail in one more read.
      val endInTail = at - crcLen
      val inTail = math.min(footerLen, endInTail)
      val (footer, from) = if (inTail == footerLen) (trailer, endInTail - footerLen) else {
        val f = new Array[Byte](footerLen)
        System.arraycopy(trailer, endInTail - inTail, f, footerLen - inTail, inTail)
        in.readFully(end - footerLen, f, 0, footerLen - inTail)
        (f, 0)
      }
      if (checked && t.getInt(at - CrcBytes) != footerCrc(footer, from, footerLen, format, column)) {
        throw new Checksums.Mismatch(s"$path: probe file footer fails its checksum (CRC32C" +
          (if (format >= ColumnBoundSince) s"; damaged, or not a file of column $column" else "") + ")")
      }
      val parsed = parseFooter(footer, from, footerLen, format, end - footerLen, bad, compact)
        .copy(bytesRead = tailLen + (footerLen - inTail), format = format)
      if (compact && (footer eq trailer)) parsed.copy(tail = trailer, tailOffset = len - tailLen) else parsed
    } catch {
      case e: EOFException => bad(s"truncated: ${e.getMessage}")
    } finally in.close()
  }

  /**
   * The footer of each of `files` (path and length) of the column `column` of design `algorithm`, or what
   * is wrong with it (a file of another design is not used), read `threads` at a time, each with
   * a first read of its last `tailBytes(k)` bytes ([[readFooter]]); with `compact`, the files as
   * [[Entries]] (a query's load) rather than an entry object each.
   */
  def readEachFooter(conf: Configuration, files: Seq[(Path, Long)], threads: Int, column: String,
      algorithm: FilterAlgorithm, checksums: Boolean = false,
      tailBytes: Int => Long = _ => DefaultTailBytes, compact: Boolean = false): Array[Either[Throwable, Footer]] = {
    val out = new Array[Either[Throwable, Footer]](files.size)
    IndexStore.inParallel(threads, files.indices.map { k => () =>
      out(k) = try {
        val f = readFooter(conf, files(k)._1, Some(files(k)._2), column, checksums, tailBytes(k), compact)
        if (f.algorithm == algorithm) Right(f)
        else Left(new IllegalStateException(s"${files(k)._1}: a probe file of algorithm ${f.algorithm}, not $algorithm"))
      } catch { case scala.util.control.NonFatal(e) => Left(e) }
    })
    out
  }

  /** The tail [[readEachFooter]] reads first when not told: footers of up to about 500 files (paths of 80 bytes). */
  val DefaultTailBytes: Long = 64L << 10

  /**
   * The tail to read first of each of the probe files of `lengths` bytes that hold `filterBytes`
   * bytes of filters in all (the summary's figures): each file's share of the bytes that are not
   * filters (its footer, mostly), with a margin, and at least `minBytes`; 0 (two reads: trailer,
   * then footer) when `minBytes` is 0.
   *
   * The whole file instead where the bytes before that tail are at most `wholeGap` (block rows
   * that close are read as one range anyway, `spark.bloomindex.load.coalesceGapBytes`; < 0: never),
   * while the files read whole come to at most `wholeBudget` bytes in all: a small probe file is
   * one request, its footer and every block row, and a lookup of any value reads nothing more.
   */
  def tailEstimates(lengths: Array[Long], filterBytes: Long, minBytes: Long, wholeGap: Long = -1L,
      wholeBudget: Long = 0L): Array[Long] = {
    if (minBytes <= 0) return lengths.map(_ => 0L)
    val total = lengths.sum.toDouble
    val share = if (total <= 0) 1.0 else math.max(0.0, math.min(1.0, (total - filterBytes) / total))
    var whole = 0L
    lengths.map { n =>
      val tail = math.min(n, math.max(minBytes, (n * share * 1.25).toLong + (16L << 10)))
      if (wholeGap >= 0 && n - tail <= wholeGap && whole + n <= wholeBudget) { whole += n; n } else tail
    }
  }

  /** The footer at `bytes(from until from + length)`. */
  private def parseFooter(bytes: Array[Byte], from: Int, length: Int, format: Int, dataEnd: Long, bad: String => Nothing,
      compact: Boolean): Footer = {
    val in = new DataInputStream(new ByteArrayInputStream(bytes, from, length))
    val algorithm = try FilterAlgorithm.fromName(in.readUTF()) catch {
      case e: IllegalArgumentException => bad(e.getMessage)
    }
    val ns = in.readInt()
    if (ns < 0 || ns > length / 20) bad(s"$ns sections")
    val sections = Array.fill(ns) {
      val s = Section(in.readLong(), in.readInt(), in.readInt(), in.readInt(), format >= ChecksumsSince)
      if (s.blockBytes <= 0 || s.blocks <= 0 || s.files <= 0 || s.offset < Magic.length ||
        s.rowBytes.toLong != s.blockBytes.toLong * s.files || s.rowStride < 0 || s.offset + s.length > dataEnd) {
        bad(s"section $s out of bounds")
      }
      if (algorithm != FilterAlgorithm.Classic && s.blockBytes != 32) bad(s"section $s: blocks of ${s.blockBytes} bytes")
      s
    }
    // The file entries (most of the footer) straight from the bytes.
    val b = ByteBuffer.wrap(bytes, from + length - in.available(), in.available())
    if (format >= CompactSince) return compactFooter(b, algorithm, sections, format, bad, compact)
    if (b.remaining() < 4) bad("no file count")
    val n = b.getInt
    val fixed = if (format >= 2) 50 else 41 // an entry's bytes after its path
    if (n < 0 || n > length / (fixed + 4)) bad(s"$n files")
    if (compact) return Footer(algorithm, sections, Array.empty, 0L, format, Some(parseEntries(b, n, fixed, algorithm, sections, bad)))
    val files = Array.fill(n) {
      if (b.remaining() < 4) bad("truncated file entries")
      val pl = b.getInt
      if (pl < 0 || pl > b.remaining() - fixed) bad(s"a path of $pl bytes")
      val path = new String(bytes, b.position(), pl, UTF_8)
      b.position(b.position() + pl)
      val size = b.getLong
      val mtime = b.getLong
      val rowCount = b.getLong
      val nullCount = b.getLong
      val section = b.getInt
      val position = b.getInt
      val numHashes = b.get & 0xff
      // One entry each (a million in a large column's footers): ndv and origin read in place.
      val e = if (format >= 2) FileEntry(path, size, mtime, rowCount, nullCount, section, position, numHashes, b.getLong, b.get == 1)
        else FileEntry(path, size, mtime, rowCount, nullCount, section, position, numHashes)
      if (e.section < 0 || e.section >= ns || e.position < 0 || e.position >= sections(e.section).files) {
        bad(s"${e.path}: section ${e.section} position ${e.position}")
      }
      if (algorithm == FilterAlgorithm.Classic && e.numHashes <= 0) bad(s"${e.path}: ${e.numHashes} hash functions")
      e
    }
    if (b.hasRemaining) bad(s"${b.remaining()} bytes after the file entries")
    Footer(algorithm, sections, files, 0L)
  }

  /** [[parseFooter]]'s result for format 4's entries at `b`'s position. */
  private def compactFooter(b: ByteBuffer, algorithm: FilterAlgorithm, sections: Array[Section], format: Int,
      bad: String => Nothing, compact: Boolean): Footer = {
    val bytes = b.array()
    if (compact) {
      var starts, ends, places: Array[Int] = null
      var numbers: Array[Long] = null
      var hashCounts: Array[Byte] = null
      val (folder, n) = parseCompact(b, algorithm, sections, bad, new CompactVisitor {
        private var i = 0
        def counted(n: Int): Unit = {
          starts = new Array[Int](n); ends = new Array[Int](n); places = new Array[Int](2 * n)
          numbers = new Array[Long](4 * n); hashCounts = new Array[Byte](n)
        }
        def visit(at: Int, end: Int, size: Long, mtime: Long, rows: Long, nulls: Long, section: Int, position: Int,
            k: Int, ndv: Long, fromFooter: Boolean): Unit = {
          starts(i) = at; ends(i) = end
          numbers(4 * i) = size; numbers(4 * i + 1) = mtime; numbers(4 * i + 2) = rows; numbers(4 * i + 3) = nulls
          places(2 * i) = section; places(2 * i + 1) = position
          hashCounts(i) = k.toByte
          i += 1
        }
      })
      Footer(algorithm, sections, Array.empty, 0L, format,
        Some(new Entries(n, bytes, starts, ends, folder, new Entries.Decoded(numbers, places, hashCounts))))
    } else {
      // Paths as the entries hold them; the folder, known once all are read, put before each.
      val files = Array.newBuilder[FileEntry]
      val (folder, _) = parseCompact(b, algorithm, sections, bad, new CompactVisitor {
        def counted(n: Int): Unit = ()
        def visit(at: Int, end: Int, size: Long, mtime: Long, rows: Long, nulls: Long, section: Int, position: Int,
            k: Int, ndv: Long, fromFooter: Boolean): Unit =
          files += FileEntry(new String(bytes, at, end - at, UTF_8), size, mtime, rows, nulls, section, position, k, ndv, fromFooter)
      })
      val dir = new String(folder, UTF_8)
      Footer(algorithm, sections, files.result().map(e => if (dir.isEmpty) e else e.copy(path = dir + e.path)), 0L, format)
    }
  }

  /**
   * The `n` file entries at `b`'s position as [[Entries]] (in place in `b`'s array), checked as
   * [[parseFooter]] checks them (the same errors).
   */
  private def parseEntries(b: ByteBuffer, n: Int, fixed: Int, algorithm: FilterAlgorithm,
      sections: Array[Section], bad: String => Nothing): Entries = {
    val bytes = b.array()
    val ns = sections.length
    val starts = new Array[Int](n)
    val ends = new Array[Int](n)
    var i = 0
    while (i < n) {
      if (b.remaining() < 4) bad("truncated file entries")
      val pl = b.getInt
      if (pl < 0 || pl > b.remaining() - fixed) bad(s"a path of $pl bytes")
      val at = b.position()
      starts(i) = at
      ends(i) = at + pl
      val section = b.getInt(at + pl + 32)
      val position = b.getInt(at + pl + 36)
      def path = new String(bytes, at, pl, UTF_8)
      if (section < 0 || section >= ns || position < 0 || position >= sections(section).files) {
        bad(s"$path: section $section position $position")
      }
      if (algorithm == FilterAlgorithm.Classic) {
        val k = bytes(at + pl + 40) & 0xff
        if (k <= 0) bad(s"$path: $k hash functions")
      }
      b.position(at + pl + fixed)
      i += 1
    }
    if (b.hasRemaining) bad(s"${b.remaining()} bytes after the file entries")
    new Entries(n, bytes, starts, ends)
  }

  /**
   * Every filter of the probe file `path` (of `length` bytes) of the column `column`, put back together in its
   * design's serialized form (`algorithm.fromBytes` reads it), with its entry, as an iterator: a
   * section is read whole (at most [[SectionBytes]]) when the iterator reaches it, so a reader
   * holds one section at a time. The file is closed when the iterator is exhausted (or by
   * `close`). REFRESH carries unchanged files' filters this way, and tools read an index's rows
   * with it.
   */
  def readFilters(conf: Configuration, path: Path, length: Long, column: String, checksums: Boolean = false): Filters =
    new Filters(readFooter(conf, path, Some(length), column, checksums), open(conf, path, Some(length)), path)

  /**
   * See [[readFilters]]. A section one of whose block rows fails its checksum gives no filters:
   * its files are left out (one warning naming the file, and the damage recorded,
   * [[Checksums.recordDamage]]), the other sections are read.
   */
  final class Filters private[ProbeFile] (val footer: Footer, in: FSDataInputStream, path: Path)
      extends Iterator[(FileEntry, Array[Byte])] with java.io.Closeable {
    private val bySection = footer.files.groupBy(_.section)
    private var section = -1
    private var current: Iterator[(FileEntry, Array[Byte])] = Iterator.empty
    private var closed = false

    def hasNext: Boolean = {
      while (!current.hasNext && section + 1 < footer.sections.length) {
        section += 1
        current = read(section)
      }
      if (!current.hasNext) close()
      current.hasNext
    }

    def next(): (FileEntry, Array[Byte]) = {
      if (!hasNext) throw new NoSuchElementException("no more filters")
      current.next()
    }

    def close(): Unit = if (!closed) { closed = true; in.close() }

    private def read(s: Int): Iterator[(FileEntry, Array[Byte])] = {
      val sec = footer.sections(s)
      val all = new Array[Byte](Math.toIntExact(sec.length))
      try in.readFully(sec.offset, all) catch { case t: Throwable => close(); throw t }
      if (sec.checked) {
        val bad = (0 until sec.blocks).find { b =>
          val at = b * sec.rowStride
          ByteBuffer.wrap(all, at + sec.rowBytes, CrcBytes).getInt != Checksums.crc32c(all, at, sec.rowBytes)
        }
        if (bad.isDefined) {
          sectionDamaged(path, s, bad.get)
          return Iterator.empty
        }
      }
      bySection.getOrElse(s, Array.empty[FileEntry]).iterator.map { e =>
        val bits = new Array[Byte](sec.blocks * sec.blockBytes)
        var b = 0
        while (b < sec.blocks) {
          System.arraycopy(all, b * sec.rowStride + e.position * sec.blockBytes, bits, b * sec.blockBytes, sec.blockBytes)
          b += 1
        }
        e -> serialize(footer.algorithm, bits, e.numHashes)
      }
    }
  }

  /** A filter's serialized form from its bit set in Parquet's layout (and, classic, its hash count). */
  private def serialize(algorithm: FilterAlgorithm, bits: Array[Byte], numHashes: Int): Array[Byte] =
    if (algorithm == FilterAlgorithm.Classic) {
      val words = new Array[Long](bits.length / 8)
      ByteBuffer.wrap(bits).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(words)
      algorithm.wrapShared((words, Int.box(numHashes))).toBytes
    } else algorithm.fromBitset(bits, 0.01).toBytes

  /** Records and warns (once) that section `s` of the probe file `path` failed the checksum of its block row `block`. */
  def sectionDamaged(path: Path, s: Int, block: Int): Unit = {
    val why = s"section $s block row $block fails its checksum (CRC32C)"
    Checksums.recordDamage(path.toString, why, Set(s))
    bloomindex.log.IndexLog.warnOnce(s"bloomindex: probe file $path: $why; the files whose filters it holds are read, " +
      "not pruned, and the next REFRESH BLOOM INDEX builds them again")
  }

  /**
   * Reads block row `block` of `section` (every file's block, side by side) from `in`, with its
   * checksum where the section has one: [[Checksums.Mismatch]] when it does not match.
   */
  def readRow(in: FSDataInputStream, section: Section, block: Int): Array[Byte] = {
    val buf = new Array[Byte](section.rowStride)
    in.readFully(section.rowOffset(block), buf)
    rowOf(buf, 0, section, block)
  }

  /**
   * Block row `block` of `section` from `buf(off until off + section.rowStride)`, the bytes read at
   * its [[Section.rowOffset]] (a coalesced read holds several): checked against its checksum
   * (format 3, [[Checksums.Mismatch]] when it fails) and copied out.
   */
  def rowOf(buf: Array[Byte], off: Int, section: Section, block: Int): Array[Byte] = {
    if (section.checked &&
        ByteBuffer.wrap(buf, off + section.rowBytes, CrcBytes).getInt != Checksums.crc32c(buf, off, section.rowBytes)) {
      throw new Checksums.Mismatch(s"block row $block fails its checksum (CRC32C)")
    }
    java.util.Arrays.copyOfRange(buf, off, off + section.rowBytes)
  }
}
