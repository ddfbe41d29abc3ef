package bloomindex.layout

import java.nio.{ByteBuffer, ByteOrder}
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong

import scala.util.control.NonFatal


import bloomindex.filter.FilterAlgorithm
import bloomindex.log.IndexLog
import bloomindex.sbbf.SbbfKernel

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * One column's filters in its probe files ([[ProbeFile]]), fetched a block row at a time: for
 * a hash, each section's row of the block the hash selects (every file's block of that
 * section, side by side). Rows fetched are kept for later queries, up to `maxFetchedBytes`;
 * past that they are dropped and fetched again when needed. A row that cannot be read answers
 * "maybe" for its files (they are read, not pruned), with one warning.
 *
 * `sections(s)` lies in `files(sectionFile(s))`, of `fileLengths` bytes, where it is section
 * `sectionLocal(s)`. A block row that fails its checksum (probe file format 3) answers "maybe"
 * for its files the same way, and the damage is recorded ([[ProbeFile.sectionDamaged]]).
 *
 * Reads: the rows one call needs are sorted by file and offset, and rows of one file at most
 * `gapBytes` apart are read as one range (of at most [[BlockFilters.MaxRangeBytes]]); the ranges,
 * of all files, are read `threads` at a time (`spark.bloomindex.load.requests`). On an object
 * store each range is one request, so a point lookup's rows cost about one request per probe
 * file, all in flight together. Each row
 * of a range is checked against its own checksum.
 * `gapBytes` < 0: each file's rows read one after the other, a request each (as before issue 26).
 * Rows its footer's read brought (a small probe file is read whole) are held from the start ([[hold]]).
 */
final class BlockFilters(
    algorithm: FilterAlgorithm,
    conf: Configuration,
    folder: String,
    files: Array[Path],
    fileLengths: Array[Long],
    sectionFile: Array[Int],
    sectionLocal: Array[Int],
    sections: Array[ProbeFile.Section],
    threads: Int,
    maxFetchedBytes: Long,
    gapBytes: Long = BlockFilters.DefaultGapBytes) {

  private val rowsHeld = new ConcurrentHashMap[java.lang.Long, AnyRef]()
  private val fetched = new AtomicLong()

  /** Bytes of the section table. */
  def fixedBytes: Long = 48L * sections.length + 4L * sectionFile.length + 8L * fileLengths.length + 64L * files.length

  /** Bytes of the block rows held. */
  def fetchedBytes: Long = fetched.get()

  /** Words of one filter in section `s`, for the classic design (the whole filter is its one block). */
  def wordsPerFilter(s: Int): Int = sections(s).blockBytes / 8

  /** The block of section `s` that `hash` selects. */
  private def blockOf(s: Int, hash: Long): Int = {
    val z = sections(s).blocks
    algorithm match {
      case FilterAlgorithm.SplitBlock => SbbfKernel.wordOffset(hash, z) >>> 3
      case FilterAlgorithm.SplitBlockMurmur3 => SbbfKernel.wordOffset(ColumnData.remap(hash, z), z) >>> 3
      case FilterAlgorithm.Classic => 0
    }
  }

  private def key(s: Int, block: Int): java.lang.Long = java.lang.Long.valueOf((s.toLong << 32) | block)

  /**
   * For each hash, each section's block row it needs (`Array[Int]` words for the split block
   * designs, `Array[Long]` for the classic one; null where it could not be read), fetching the
   * rows not held, all at once, file by file in parallel.
   */
  def rows(hashes: Array[Long]): Array[Array[AnyRef]] = {
    val wanted = hashes.map(h => Array.tabulate(sections.length)(s => blockOf(s, h)))
    val missing = new java.util.LinkedHashSet[java.lang.Long]()
    // The rows this call uses: held ones taken now (another query may drop them meanwhile), and fetched ones.
    val got = new ConcurrentHashMap[java.lang.Long, AnyRef]()
    wanted.foreach(bs => bs.indices.foreach { s =>
      val k = key(s, bs(s))
      val held = rowsHeld.get(k)
      if (held != null) got.put(k, held) else missing.add(k)
    })
    if (!missing.isEmpty) {
      val need = missing.toArray(new Array[java.lang.Long](0))
      val bytes = need.iterator.map(k => sections((k >>> 32).toInt).rowBytes.toLong).sum
      if (fetched.get() + bytes > maxFetchedBytes) { rowsHeld.clear(); fetched.set(0) }
      fetch(need.groupBy(k => sectionFile((k >>> 32).toInt)), got)
      need.foreach(k => keep(k, got.get(k)))
    }
    wanted.map(bs => Array.tabulate[AnyRef](sections.length) { s =>
      val r = got.get(key(s, bs(s)))
      if (r eq Unreadable) null else r
    })
  }

  /**
   * Holds the block rows of sections `first until first + count` (one probe file's) that lie
   * whole in `tail`, the file's bytes from `tailOffset` on that its footer's read brought
   * ([[ProbeFile.readFooter]]: a small file read whole), as if fetched: counted, within
   * `maxFetchedBytes`. A row failing its checksum is not held but recorded as damage at once
   * ([[ProbeFile.sectionDamaged]]); a query that needs it reads it and treats it as any damaged row.
   */
  def hold(first: Int, count: Int, tail: Array[Byte], tailOffset: Long): Unit = {
    var s = first
    while (s < first + count) {
      val sec = sections(s)
      var b = math.max(0L, (tailOffset - sec.offset + sec.rowStride - 1) / sec.rowStride).toInt
      while (b < sec.blocks && sec.rowOffset(b) + sec.rowStride - tailOffset <= tail.length &&
          fetched.get() + sec.rowBytes <= maxFetchedBytes) {
        // Damage found now is recorded (DESCRIBE, the next REFRESH); a lookup that needs the row reads it and refuses it.
        keep(key(s, b), checked(s, b, ProbeFile.rowOf(tail, (sec.rowOffset(b) - tailOffset).toInt, sec, b)))
        b += 1
      }
      s += 1
    }
  }

  /** Holds block row `k` (not one that could not be read), counted, unless held already. */
  private def keep(k: java.lang.Long, row: AnyRef): Unit =
    if ((row ne Unreadable) && rowsHeld.putIfAbsent(k, row) == null) fetched.addAndGet(sections((k >>> 32).toInt).rowBytes.toLong)

  /**
   * Block row `block` of section `s` as `read` gives it (checked against its checksum) in words,
   * or [[Unreadable]] with the damage recorded ([[ProbeFile.sectionDamaged]]) where it fails.
   */
  private def checked(s: Int, block: Int, read: => Array[Byte]): AnyRef =
    try words(read) catch {
      case _: bloomindex.log.Checksums.Mismatch =>
        ProbeFile.sectionDamaged(files(sectionFile(s)), sectionLocal(s), block)
        Unreadable
    }

  private def fetch(byFile: Map[Int, Array[java.lang.Long]], out: ConcurrentHashMap[java.lang.Long, AnyRef]): Unit = {
    def unreadable(f: Int, keys: Iterable[java.lang.Long], e: Throwable): Unit = {
      keys.foreach(k => out.putIfAbsent(k, Unreadable))
      IndexLog.warnOnce(s"bloomindex: probe file ${files(f)} unreadable (${e.getMessage}); the files whose " +
        "filters it holds are read, not pruned")
    }
    // A row failing its checksum answers "maybe" for its files, and the damage is recorded.
    def row(k: java.lang.Long, read: => Array[Byte]): Int = {
      val s = (k >>> 32).toInt
      val w = checked(s, k.toInt, read)
      out.put(k, w)
      if (w eq Unreadable) 0 else sections(s).rowBytes
    }
    if (gapBytes < 0) {
      // Each file's rows one after the other, one read each.
      def one(f: Int, keys: Array[java.lang.Long]): Unit = {
        var read = 0L
        try {
          val in = ProbeFile.open(conf, files(f), Some(fileLengths(f)))
          try keys.foreach { k =>
            read += row(k, ProbeFile.readRow(in, sections((k >>> 32).toInt), k.toInt))
          } finally in.close()
        } catch { case NonFatal(e) => unreadable(f, keys, e) }
        IndexStore.countLoaded(folder, 0, read)
      }
      IndexStore.inParallel(threads, byFile.toSeq.map { case (f, ks) => () => one(f, ks) })
    } else {
      // Each row with its checksum (rowStride bytes from its offset).
      val ranges = byFile.toSeq.flatMap { case (f, ks) =>
        BlockFilters.coalesce(ks.toSeq.map { k =>
          val sec = sections((k >>> 32).toInt)
          (sec.rowOffset(k.toInt), sec.rowStride, k)
        }, gapBytes, BlockFilters.MaxRangeBytes).map(f -> _)
      }
      def one(f: Int, range: BlockFilters.Range): Unit =
        try {
          val bytes = new Array[Byte](Math.toIntExact(range.length))
          val in = ProbeFile.open(conf, files(f), Some(fileLengths(f)))
          try in.readFully(range.offset, bytes) finally in.close()
          range.rows.foreach { case (offset, _, k) =>
            row(k, ProbeFile.rowOf(bytes, (offset - range.offset).toInt, sections((k >>> 32).toInt), k.toInt))
          }
          IndexStore.countLoaded(folder, 0, bytes.length)
        } catch { case NonFatal(e) => unreadable(f, range.rows.map(_._3), e) }
      IndexStore.inParallel(threads, ranges.map { case (f, r) => () => one(f, r) })
    }
  }

  private def words(row: Array[Byte]): AnyRef = algorithm match {
    case FilterAlgorithm.Classic =>
      val w = new Array[Long](row.length / 8)
      ByteBuffer.wrap(row).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(w)
      w
    case _ =>
      val w = new Array[Int](row.length / 4)
      ByteBuffer.wrap(row).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(w)
      w
  }

  private object Unreadable
}

object BlockFilters {

  /** Rows of a file at most this far apart are read as one range, unless told otherwise (`spark.bloomindex.load.coalesceGapBytes`). */
  val DefaultGapBytes: Long = 1L << 20
  /** A coalesced range's length at most (a row longer than this is read alone). */
  val MaxRangeBytes: Long = 16L << 20

  /** One read: `length` bytes at `offset`, holding `rows` (offset, length, key), sorted. */
  final case class Range(offset: Long, length: Long, rows: Seq[(Long, Int, java.lang.Long)])

  /**
   * `rows` (offset, length, key) of one file as ranges to read: sorted by offset, a row joins the
   * range before it when the bytes between them are at most `gap` and the range stays within
   * `maxBytes`.
   */
  def coalesce(rows: Seq[(Long, Int, java.lang.Long)], gap: Long, maxBytes: Long): Seq[Range] = {
    val out = Seq.newBuilder[Range]
    var start = -1L
    var end = -1L
    val members = scala.collection.mutable.ArrayBuffer[(Long, Int, java.lang.Long)]()
    def close(): Unit = if (start >= 0) out += Range(start, end - start, members.toList)
    rows.sortBy(_._1).foreach { case r @ (offset, length, _) =>
      if (start >= 0 && offset - end <= gap && offset + length - start <= maxBytes) {
        end = math.max(end, offset + length)
      } else {
        close()
        members.clear()
        start = offset
        end = offset + length
      }
      members += r
    }
    close()
    out.result()
  }

  /**
   * Adds the files of the probe files `paths` (of `lengths` bytes, whose `footers` were read)
   * to `out` (its CPU work on `threads` threads), their sections numbered file after file, and
   * the [[BlockFilters]] that fetches their block rows, `requests` reads at a time.
   */
  def addTo(out: ColumnData.Builder, algorithm: FilterAlgorithm, conf: Configuration, folder: String,
      paths: Array[Path], lengths: Array[Long], footers: Array[ProbeFile.Footer], threads: Int, requests: Int,
      maxFetchedBytes: Long, gapBytes: Long = DefaultGapBytes): Unit = {
    val sections = Array.newBuilder[ProbeFile.Section]
    val sectionFile = Array.newBuilder[Int]
    val sectionLocal = Array.newBuilder[Int]
    var base = 0
    footers.indices.foreach { k =>
      val f = footers(k)
      f.entries match {
        case Some(entries) => out.addProbedFiles(entries, base, threads)
        case None => f.files.foreach(e => out.addProbed(e.path, e.size, e.modificationTime, e.rowCount, e.nullCount,
          base + e.section, e.position, e.numHashes))
      }
      f.sections.indices.foreach { s => sections += f.sections(s); sectionFile += k; sectionLocal += s }
      base += f.sections.length
    }
    val blocks = new BlockFilters(algorithm, conf, folder, paths, lengths, sectionFile.result(), sectionLocal.result(),
      sections.result(), requests, maxFetchedBytes, gapBytes)
    // The rows each footer's read brought with it (a small probe file read whole): held, not read again.
    base = 0
    footers.foreach { f =>
      if (f.tail != null) blocks.hold(base, f.sections.length, f.tail, f.tailOffset)
      base += f.sections.length
    }
    out.fetchingFrom(blocks)
  }
}
