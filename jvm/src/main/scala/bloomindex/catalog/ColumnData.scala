package bloomindex.catalog

import java.nio.charset.StandardCharsets.UTF_8

import bloomindex.filter.{ClassicBloomFilter, FilterAlgorithm}
import bloomindex.sbbf.SbbfKernel

/**
 * One indexed column of one index version, as pruning probes it, in a compact form: a few
 * arrays for all its files, no object per file. Paths are UTF-8 bytes after the prefix all
 * share, found through an open-addressing table; the filters' bit sets lie end to end in one
 * array (32-bit words for the split block designs, 64-bit words for the classic one) and are
 * checked where they lie.
 *
 * Immutable once built ([[ColumnData.Builder]]): safe to probe from many threads.
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
    /** Files whose row was dropped as unreadable, and one example of why. */
    val unreadable: Int,
    val unreadableExample: String) {

  def numFiles: Int = sizes.length

  /** Bytes of the driver's heap this holds (arrays and their headers). */
  val heapBytes: Long = 16L * 12 + 2L * prefix.length + names.length + 4L * nameEnds.length + 4L * slots.length +
    8L * (sizes.length + mtimes.length + rowCounts.length + nullCounts.length) + 4L * intWords.length +
    8L * longWords.length + 4L * wordEnds.length + numHashes.length

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
  def mightContain(i: Int, hash: Long): Boolean = {
    val from = if (i == 0) 0 else wordEnds(i - 1)
    val len = wordEnds(i) - from
    algorithm match {
      case FilterAlgorithm.SplitBlock => ColumnData.sbbfCheck(intWords, from, len >>> 3, hash)
      case FilterAlgorithm.SplitBlockMurmur3 =>
        val blocks = len >>> 3
        val h = (Integer.rotateRight((hash >>> 32).toInt, Integer.numberOfTrailingZeros(blocks)).toLong << 32) |
          (hash & 0xFFFFFFFFL)
        ColumnData.sbbfCheck(intWords, from, blocks, h)
      case FilterAlgorithm.Classic => ColumnData.classicCheck(longWords, from, len, numHashes(i), hash)
    }
  }
}

object ColumnData {

  private def hash(b: Array[Byte], from: Int, until: Int): Int = {
    var h = 0x9747b28c
    var i = from
    while (i < until) { h = (h ^ b(i)) * 0x01000193; i += 1 }
    h ^= h >>> 16
    h *= 0x85ebca6b
    h ^ (h >>> 13)
  }

  /** Parquet's split block check on the `blocks` blocks at word `from` of `words`. */
  private def sbbfCheck(words: Array[Int], from: Int, blocks: Int, hash: Long): Boolean = {
    val base = from + SbbfKernel.wordOffset(hash, blocks)
    val x = hash.toInt
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
    private val rows = new java.util.ArrayList[(String, Long, Long, Long, Long, AnyRef, Int)]()
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
          case Right((words, k)) => rows.add((path, size, mtime, rowCount, nullCount, words, k))
          case Left(why) =>
            unreadable += 1
            if (example.isEmpty) example = s"$path column $column: $why"
        }
      }
    }

    def result(): ColumnData = synchronized {
      // One row per path: the first (a well-formed index has no duplicates).
      val seen = new java.util.HashSet[String]()
      val kept = new java.util.ArrayList[(String, Long, Long, Long, Long, AnyRef, Int)]()
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
        words += (kept.get(i)._6 match { case a: Array[Int] => a.length; case a: Array[Long] => a.length })
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
        }
        i += 1
      }
      new ColumnData(column, algorithm, prefix, names, nameEnds, slots,
        Array.tabulate(n)(kept.get(_)._2), Array.tabulate(n)(kept.get(_)._3),
        Array.tabulate(n)(kept.get(_)._4), Array.tabulate(n)(kept.get(_)._5),
        intWords, longWords, wordEnds,
        if (classic) Array.tabulate(n)(kept.get(_)._7.toByte) else Array.emptyByteArray,
        unreadable, example)
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
