package bloomindex.layout

import java.nio.charset.StandardCharsets.UTF_8

import bloomindex.filter.{ClassicBloomFilter, FilterAlgorithm}
import bloomindex.sbbf.SbbfKernel

/**
 * One indexed column of one index version, as pruning probes it, in a compact form: a few
 * arrays for all its files, no object per file. Paths are UTF-8 bytes after the prefix all
 * share, found through an open-addressing table; the filters' bit sets lie end to end in one
 * array (32-bit words for the split block designs, 64-bit words for the classic one) and are
 * checked where they lie. Or, for an index with probe files (layout `blocks`), the filters stay
 * where they are: each file's place in them (section, position) is held, and [[probes]] fetches
 * the one block row per section a hash needs ([[BlockFilters]]).
 *
 * Immutable once built ([[ColumnData.Builder]]), but for the block rows fetched: safe to probe
 * from many threads.
 */
final class ColumnData private (
    val column: String,
    val algorithm: FilterAlgorithm,
    prefix: String,
    names: Array[Byte],
    nameEnds: Array[Int],
    slots: Array[Int],
    sizes: Array[Long],
    mtimes: Array[Long],
    rowCounts: Array[Long],
    nullCounts: Array[Long],
    intWords: Array[Int],
    longWords: Array[Long],
    wordEnds: Array[Int],
    numHashes: Array[Byte],
    sectionOf: Array[Int],
    positionOf: Array[Int],
    blocks: BlockFilters,
    /** Files whose row was dropped as unreadable, and one example of why. */
    val unreadable: Int,
    val unreadableExample: String) {

  def numFiles: Int = sizes.length

  private val fixedBytes: Long = 16L * 15 + 2L * prefix.length + names.length + 4L * nameEnds.length +
    4L * slots.length + 8L * (sizes.length + mtimes.length + rowCounts.length + nullCounts.length) +
    4L * intWords.length + 8L * longWords.length + 4L * wordEnds.length + numHashes.length +
    4L * (sectionOf.length + positionOf.length) + (if (blocks == null) 0L else blocks.fixedBytes)

  /** Bytes of the driver's heap this holds (arrays and their headers, and the block rows fetched so far). */
  def heapBytes: Long = fixedBytes + (if (blocks == null) 0L else blocks.fetchedBytes)

  /** Whether the filters are fetched block by block (probe files) rather than held. */
  def fetchesBlocks: Boolean = blocks != null

  /**
   * Tests for `hashes`, one [[ColumnData.Probe]] each: for probe files, the block rows they need
   * are fetched first, all at once.
   */
  def probes(hashes: Array[Long]): Array[ColumnData.Probe] =
    if (blocks == null) hashes.map(h => new ColumnData.Probe { def mightContain(i: Int): Boolean = heldCheck(i, h) })
    else {
      val rows = blocks.rows(hashes)
      hashes.indices.map(k => blockProbe(rows(k), hashes(k))).toArray
    }

  private def blockProbe(rows: Array[AnyRef], hash: Long): ColumnData.Probe = {
    val x = hash.toInt
    new ColumnData.Probe {
      def mightContain(i: Int): Boolean = rows(sectionOf(i)) match {
        case w: Array[Int] => ColumnData.sbbfCheck(w, positionOf(i) << 3, x)
        case l: Array[Long] =>
          val len = blocks.wordsPerFilter(sectionOf(i))
          ColumnData.classicCheck(l, positionOf(i) * len, len, numHashes(i), hash)
        case _ => true // the block could not be read: maybe
      }
    }
  }

  /** The file's position, when this column holds `path` with this size and modification time; else -1. */
  def indexOf(path: String, size: Long, modificationTime: Long): Int = {
    val i = indexOf(path)
    if (i >= 0 && sizes(i) == size && mtimes(i) == modificationTime) i else -1
  }

  /** The file's position by path alone, or -1. */
  def indexOf(path: String): Int = {
    if (sizes.isEmpty || !path.startsWith(prefix)) return -1
    val key = path.substring(prefix.length).getBytes(UTF_8)
    val mask = slots.length - 1
    var s = ColumnData.hash(key, 0, key.length) & mask
    while (true) {
      val v = slots(s)
      if (v == 0) return -1
      val i = v - 1
      val from = if (i == 0) 0 else nameEnds(i - 1)
      if (java.util.Arrays.equals(names, from, nameEnds(i), key, 0, key.length)) return i
      s = (s + 1) & mask
    }
    -1
  }

  def path(i: Int): String = {
    val from = if (i == 0) 0 else nameEnds(i - 1)
    prefix + new String(names, from, nameEnds(i) - from, UTF_8)
  }

  def size(i: Int): Long = sizes(i)
  def modificationTime(i: Int): Long = mtimes(i)
  def rowCount(i: Int): Long = rowCounts(i)
  def nullCount(i: Int): Long = nullCounts(i)

  /** False when `hash` was certainly never inserted into file `i`'s filter. */
  def mightContain(i: Int, hash: Long): Boolean =
    if (blocks == null) heldCheck(i, hash) else probes(Array(hash))(0).mightContain(i)

  private def heldCheck(i: Int, hash: Long): Boolean = {
    val from = if (i == 0) 0 else wordEnds(i - 1)
    val len = wordEnds(i) - from
    algorithm match {
      case FilterAlgorithm.SplitBlock =>
        ColumnData.sbbfCheck(intWords, from + SbbfKernel.wordOffset(hash, len >>> 3), hash.toInt)
      case FilterAlgorithm.SplitBlockMurmur3 =>
        ColumnData.sbbfCheck(intWords, from + SbbfKernel.wordOffset(ColumnData.remap(hash, len >>> 3), len >>> 3), hash.toInt)
      case FilterAlgorithm.Classic => ColumnData.classicCheck(longWords, from, len, numHashes(i), hash)
    }
  }
}

object ColumnData {

  /** One hash's test on the files of a column. */
  trait Probe {
    /** False when the hash was certainly never inserted into file `i`'s filter. */
    def mightContain(i: Int): Boolean
  }

  /** The split block design with Murmur3 ([[bloomindex.filter.SbbfMurmur3]]): the hash whose block the plain design's rule picks. */
  private[layout] def remap(hash: Long, blocks: Int): Long =
    (Integer.rotateRight((hash >>> 32).toInt, Integer.numberOfTrailingZeros(blocks)).toLong << 32) | (hash & 0xFFFFFFFFL)

  private def hash(b: Array[Byte], from: Int, until: Int): Int = {
    var h = 0x9747b28c
    var i = from
    while (i < until) { h = (h ^ b(i)) * 0x01000193; i += 1 }
    h ^= h >>> 16
    h *= 0x85ebca6b
    h ^ (h >>> 13)
  }

  /** Parquet's split block check of the block at word `base` of `words`, for a hash whose low half is `x`. */
  private def sbbfCheck(words: Array[Int], base: Int, x: Int): Boolean = {
    var missing = 0
    var i = 0
    while (i < 8) {
      missing |= ~words(base + i) & (1 << ((x * SbbfKernel.SALT(i)) >>> 27))
      i += 1
    }
    missing == 0
  }

  /** [[ClassicBloomFilter]]'s check on the `len` words at `from`. */
  private def classicCheck(words: Array[Long], from: Int, len: Int, k: Int, hash: Long): Boolean = {
    val numBits = len << 6
    val h1 = hash.toInt
    val h2 = (hash >>> 32).toInt
    var i = 1
    while (i <= k) {
      val c = h1 + i * h2
      val p = (c ^ (c >> 31)) % numBits
      if ((words(from + (p >>> 6)) & (1L << p)) == 0) return false
      i += 1
    }
    true
  }

  /**
   * Collects one column's rows (from any number of threads, in any order) and builds the
   * compact form. A row whose filter does not deserialize as the column's design is dropped and
   * counted: its file is then not held by the column, and is read.
   */
  final class Builder(val column: String, algorithm: FilterAlgorithm) {
    // (path, size, mtime, rows, nulls, words or null, numHashes, section, position)
    private val rows = new java.util.ArrayList[(String, Long, Long, Long, Long, AnyRef, Int, Int, Int)]()
    private var blocks: BlockFilters = _

    /** Adds the row of a file whose filter is in a probe file: at `position` of `blocks`' section `section`. */
    def addProbed(path: String, size: Long, mtime: Long, rowCount: Long, nullCount: Long, section: Int, position: Int,
        numHashes: Int): Unit = synchronized {
      rows.add((path, size, mtime, rowCount, nullCount, null, numHashes, section, position))
    }

    /** Where the filters of the rows added by [[addProbed]] are (rows are added with one or the other). */
    def fetchingFrom(b: BlockFilters): Unit = synchronized { blocks = b }
    private var unreadable = 0
    private var example = ""

    /** Adds one row; `filter` is the design's serialized form. */
    def add(path: String, size: Long, mtime: Long, rowCount: Long, nullCount: Long, filter: Array[Byte]): Unit = {
      val parsed: Either[String, (AnyRef, Int)] = try {
        val f = algorithm.fromBytes(filter)
        algorithm.shared(f) match {
          case s: ClassicBloomFilter.Shared => Right((s.words, s.numHashes))
          case w => Right((w, 0))
        }
      } catch { case e: IllegalArgumentException => Left(e.getMessage) }
      synchronized {
        parsed match {
          case Right((words, k)) => rows.add((path, size, mtime, rowCount, nullCount, words, k, -1, -1))
          case Left(why) =>
            unreadable += 1
            if (example.isEmpty) example = s"$path column $column: $why"
        }
      }
    }

    def result(): ColumnData = synchronized {
      // One row per path: the first (a well-formed index has no duplicates).
      val seen = new java.util.HashSet[String]()
      val kept = new java.util.ArrayList[(String, Long, Long, Long, Long, AnyRef, Int, Int, Int)]()
      rows.forEach(r => if (seen.add(r._1)) kept.add(r))
      val n = kept.size
      val paths = Array.tabulate(n)(kept.get(_)._1)
      val prefix = commonDirectory(paths)
      val encoded = paths.map(_.substring(prefix.length).getBytes(UTF_8))
      val nameEnds = new Array[Int](n)
      var total = 0L
      var i = 0
      while (i < n) { total += encoded(i).length; nameEnds(i) = total.toInt; i += 1 }
      if (total > Int.MaxValue) throw new IllegalStateException(s"column $column: paths of ${total} bytes")
      val names = new Array[Byte](total.toInt)
      i = 0
      while (i < n) {
        System.arraycopy(encoded(i), 0, names, if (i == 0) 0 else nameEnds(i - 1), encoded(i).length)
        i += 1
      }
      var cap = 16
      while (cap < 2 * n) cap <<= 1
      val slots = new Array[Int](cap)
      i = 0
      while (i < n) {
        var s = hash(encoded(i), 0, encoded(i).length) & (cap - 1)
        while (slots(s) != 0) s = (s + 1) & (cap - 1)
        slots(s) = i + 1
        i += 1
      }
      val classic = algorithm == FilterAlgorithm.Classic
      val wordEnds = new Array[Int](n)
      var words = 0L
      i = 0
      while (i < n) {
        words += (kept.get(i)._6 match { case a: Array[Int] => a.length; case a: Array[Long] => a.length; case null => 0 })
        if (words > Int.MaxValue - 16) throw new IllegalStateException(s"column $column: filters too large to hold at once")
        wordEnds(i) = words.toInt
        i += 1
      }
      val intWords = new Array[Int](if (classic) 0 else words.toInt)
      val longWords = new Array[Long](if (classic) words.toInt else 0)
      i = 0
      while (i < n) {
        val from = if (i == 0) 0 else wordEnds(i - 1)
        kept.get(i)._6 match {
          case a: Array[Int] => System.arraycopy(a, 0, intWords, from, a.length)
          case a: Array[Long] => System.arraycopy(a, 0, longWords, from, a.length)
          case null =>
        }
        i += 1
      }
      new ColumnData(column, algorithm, prefix, names, nameEnds, slots,
        Array.tabulate(n)(kept.get(_)._2), Array.tabulate(n)(kept.get(_)._3),
        Array.tabulate(n)(kept.get(_)._4), Array.tabulate(n)(kept.get(_)._5),
        intWords, longWords, if (blocks == null) wordEnds else Array.emptyIntArray,
        if (classic) Array.tabulate(n)(kept.get(_)._7.toByte) else Array.emptyByteArray,
        if (blocks == null) Array.emptyIntArray else Array.tabulate(n)(kept.get(_)._8),
        if (blocks == null) Array.emptyIntArray else Array.tabulate(n)(kept.get(_)._9),
        blocks, unreadable, example)
    }
  }

  /** The longest prefix up to a '/' that every path shares. */
  private def commonDirectory(paths: Array[String]): String = {
    if (paths.isEmpty) return ""
    var p = paths(0).substring(0, paths(0).lastIndexOf('/') + 1)
    var i = 1
    while (i < paths.length && p.nonEmpty) {
      while (!paths(i).startsWith(p)) p = p.substring(0, p.lastIndexOf('/', p.length - 2) + 1)
      i += 1
    }
    p
  }
}
