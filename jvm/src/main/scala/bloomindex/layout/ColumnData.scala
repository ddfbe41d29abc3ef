package bloomindex.layout

import java.nio.charset.StandardCharsets.UTF_8

import bloomindex.filter.{ClassicBloomFilter, FilterAlgorithm}
import bloomindex.sbbf.SbbfKernel

import org.apache.hadoop.fs.Path

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
    /** Each file's size and modification time side by side (one cache line for both). */
    sizeTimes: Array[Long],
    rowCounts: Array[Long],
    nullCounts: Array[Long],
    intWords: Array[Int],
    longWords: Array[Long],
    wordEnds: Array[Int],
    numHashes: Array[Byte],
    /** Probe files: each file's section and position side by side. */
    places: Array[Int],
    blocks: BlockFilters,
    /** Files whose row was dropped as unreadable, and one example of why. */
    val unreadable: Int,
    val unreadableExample: String) {

  def numFiles: Int = nameEnds.length

  private val fixedBytes: Long = 16L * 15 + 2L * prefix.length + names.length + 4L * nameEnds.length +
    4L * slots.length + 8L * (sizeTimes.length + rowCounts.length + nullCounts.length) +
    4L * intWords.length + 8L * longWords.length + 4L * wordEnds.length + numHashes.length +
    4L * places.length + (if (blocks == null) 0L else blocks.fixedBytes)

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
      def mightContain(i: Int): Boolean = rows(places(2 * i)) match {
        case w: Array[Int] => ColumnData.sbbfCheck(w, places(2 * i + 1) << 3, x)
        case l: Array[Long] =>
          val len = blocks.wordsPerFilter(places(2 * i))
          ColumnData.classicCheck(l, places(2 * i + 1) * len, len, numHashes(i), hash)
        case _ => true // the block could not be read: maybe
      }
    }
  }

  /** The file's position, when this column holds `path` with this size and modification time; else -1. */
  def indexOf(path: String, size: Long, modificationTime: Long): Int = {
    val i = indexOf(path)
    if (i >= 0 && sizeTimes(2 * i) == size && sizeTimes(2 * i + 1) == modificationTime) i else -1
  }

  /**
   * The file's position by path alone, or -1. A path of ASCII characters after the prefix (the
   * common case) is hashed and compared as it is, without a substring or its UTF-8 copy: once per
   * listed file of every pruned scan.
   */
  def indexOf(path: String): Int =
    if (nameEnds.isEmpty || !path.startsWith(prefix)) -1 else lookup(path, prefix.length)

  /** [[indexOf]] of `path` as its string ([[bloomindex.source.SourceResolver.normalize]]) would find it, without building the string. */
  def indexOf(path: Path, size: Long, modificationTime: Long): Int = {
    val i = indexOf(path)
    if (i >= 0 && sizeTimes(2 * i) == size && sizeTimes(2 * i + 1) == modificationTime) i else -1
  }

  /**
   * [[indexOf]] of `path.toString` (Hadoop's `Path.toString`: `scheme:`, `//authority` when
   * there is one, then the URI's path), matched part by part against the prefix and the names:
   * no string per file. Anything else (no scheme, a fragment, a prefix shorter than the scheme
   * and authority) takes the string.
   */
  def indexOf(path: Path): Int = {
    if (nameEnds.isEmpty) return -1
    val uri = path.toUri
    nameStart(uri) match {
      case ColumnData.ByString => indexOf(path.toString)
      case ColumnData.NotHeld => -1
      case start => lookup(uri.getPath, start)
    }
  }

  /**
   * Where the name after the prefix starts in `uri.getPath` when the rest of `uri` is the prefix's
   * (a name to look up); [[ColumnData.NotHeld]] when it cannot be a held path;
   * [[ColumnData.ByString]] when only `Path.toString` can tell (see [[indexOf(path:Path)*]]).
   */
  private def nameStart(uri: java.net.URI): Int = {
    val scheme = uri.getScheme
    val authority = uri.getAuthority
    val p = uri.getPath
    if (scheme == null || p == null || uri.getFragment != null) return ColumnData.ByString
    val head = scheme.length + 1 + (if (authority == null) 0 else 2 + authority.length)
    if (prefix.length < head) return ColumnData.ByString
    if (!prefix.regionMatches(0, scheme, 0, scheme.length) || prefix.charAt(scheme.length) != ':') return ColumnData.NotHeld
    if (authority != null && !(prefix.regionMatches(scheme.length + 1, "//", 0, 2) &&
        prefix.regionMatches(scheme.length + 3, authority, 0, authority.length))) return ColumnData.NotHeld
    val rest = prefix.length - head // the prefix's part in the URI's path
    if (!p.regionMatches(0, prefix, head, rest)) ColumnData.NotHeld else rest
  }

  /**
   * [[indexOf(path:org\.apache\.hadoop\.fs\.Path,size:Long,modificationTime:Long)*]] of `n`
   * files at once, into `out(0 until n)`: the same answers. A million listed files are each a
   * chain of objects (status, `Path`, `URI`, path string, its bytes) and then a few places in
   * this column's arrays (path table, name, size and time), each a cache miss when visited one
   * file after the other; here each step is taken for every file of the batch before the next
   * step, so the misses of different files overlap instead of adding up (issue 26).
   * `scratch` is the calling thread's own.
   */
  def indexOfAll(paths: Array[Path], sizes: Array[Long], times: Array[Long], n: Int, out: Array[Int],
      scratch: ColumnData.Scratch): Unit = {
    if (n > scratch.capacity) throw new IllegalArgumentException(s"$n files, scratch for ${scratch.capacity}")
    if (nameEnds.isEmpty) { java.util.Arrays.fill(out, 0, n, -1); return }
    val uris = scratch.uris
    val starts = scratch.starts
    val hashes = scratch.hashes
    val found = scratch.found
    var b = 0
    while (b < n) { uris(b) = paths(b).toUri; b += 1 }
    b = 0
    while (b < n) { starts(b) = nameStart(uris(b)); b += 1 }
    // The names hashed (ASCII as it is: see lookup), then the path table's first slot of each.
    b = 0
    while (b < n) {
      if (starts(b) >= 0) {
        val h = asciiHash(uris(b).getPath, starts(b))
        if (h == ColumnData.NonAscii) starts(b) = ColumnData.ByString else hashes(b) = h
      }
      b += 1
    }
    val mask = slots.length - 1
    b = 0
    while (b < n) { found(b) = if (starts(b) >= 0) slots(hashes(b) & mask) else 0; b += 1 }
    // The candidates' name ends, sizes and places (which a probe reads next), touched for all
    // before any is compared.
    var touched = 0L
    val placed = places.length > 0
    b = 0
    while (b < n) {
      val v = found(b)
      if (v != 0) touched += nameEnds(v - 1) + sizeTimes(2 * (v - 1)) + (if (placed) places(2 * (v - 1)) else 0)
      b += 1
    }
    scratch.sink = touched
    b = 0
    while (b < n) {
      val i = starts(b) match {
        case ColumnData.ByString => indexOf(paths(b).toString)
        case ColumnData.NotHeld => -1
        case start => probeFrom(uris(b).getPath, start, hashes(b))
      }
      out(b) = if (i >= 0 && sizeTimes(2 * i) == sizes(b) && sizeTimes(2 * i + 1) == times(b)) i else -1
      uris(b) = null
      b += 1
    }
  }

  /** The path table's hash of `s.substring(start)` if it is ASCII, else [[ColumnData.NonAscii]]. */
  private def asciiHash(s: String, start: Int): Int = {
    val end = s.length
    var h = ColumnData.HashSeed
    var c = start
    while (c < end) {
      val ch = s.charAt(c)
      if (ch >= 0x80) return ColumnData.NonAscii
      h = (h ^ ch.toByte) * ColumnData.HashPrime
      c += 1
    }
    ColumnData.finish(h) & Int.MaxValue
  }

  /** The position of the name `s.substring(start)`; ASCII hashed and compared as it is, else through its UTF-8 bytes. */
  private def lookup(s: String, start: Int): Int = {
    val h = asciiHash(s, start)
    if (h == ColumnData.NonAscii) indexOfBytes(s.substring(start).getBytes(UTF_8)) else probeFrom(s, start, h)
  }

  /** The position of the ASCII name `s.substring(start)` whose [[asciiHash]] is `h`, or -1. */
  private def probeFrom(s: String, start: Int, h: Int): Int = {
    val len = s.length - start
    val mask = slots.length - 1
    var slot = h & mask
    while (true) {
      val v = slots(slot)
      if (v == 0) return -1
      val i = v - 1
      val from = if (i == 0) 0 else nameEnds(i - 1)
      if (nameEnds(i) - from == len) {
        var k = 0
        while (k < len && names(from + k) == s.charAt(start + k).toByte) k += 1
        if (k == len) return i
      }
      slot = (slot + 1) & mask
    }
    -1
  }

  /** [[indexOf]] of a path whose part after the prefix is `key` (UTF-8). */
  private def indexOfBytes(key: Array[Byte]): Int = {
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

  def size(i: Int): Long = sizeTimes(2 * i)
  def modificationTime(i: Int): Long = sizeTimes(2 * i + 1)
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

  private val HashSeed = 0x9747b28c
  private val HashPrime = 0x01000193

  /** The path table's hash of a name's UTF-8 bytes ([[ColumnData.indexOf]] computes the same from ASCII characters). */
  private def hash(b: Array[Byte], from: Int, until: Int): Int = {
    var h = HashSeed
    var i = from
    while (i < until) { h = (h ^ b(i)) * HashPrime; i += 1 }
    finish(h) & Int.MaxValue
  }

  // nameStart's answers other than a position, and asciiHash's for a name that is not ASCII.
  private val ByString = -2
  private val NotHeld = -1
  private val NonAscii = -1

  /** A thread's own working arrays for [[ColumnData.indexOfAll]], for batches of at most `capacity` files. */
  final class Scratch(val capacity: Int) {
    private[ColumnData] val uris = new Array[java.net.URI](capacity)
    private[ColumnData] val starts = new Array[Int](capacity)
    private[ColumnData] val hashes = new Array[Int](capacity)
    private[ColumnData] val found = new Array[Int](capacity)
    // What the touches read, kept so that they are made.
    @volatile private[ColumnData] var sink = 0L
  }

  private def finish(h0: Int): Int = {
    var h = h0
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
    @volatile private var passing: Option[String] = None

    /**
     * Records that the load left files out for a failure that may pass (a store's error or
     * timeout, not damage): the cache loads the column again later ([[bloomindex.catalog.IndexCache]]).
     */
    def failForNow(why: String): Unit = passing = Some(why)

    /** What [[failForNow]] recorded, if anything. */
    def failedForNow: Option[String] = passing

    // One object of primitive fields per row (no boxing): a million rows load into the arrays below.
    private final class Row(val path: String, val size: Long, val mtime: Long, val rowCount: Long, val nullCount: Long,
        val words: AnyRef, val numHashes: Int, val section: Int, val position: Int)
    private val rows = new java.util.ArrayList[Row]()
    private var blocks: BlockFilters = _

    /** Adds the row of a file whose filter is in a probe file: at `position` of `blocks`' section `section`. */
    def addProbed(path: String, size: Long, mtime: Long, rowCount: Long, nullCount: Long, section: Int, position: Int,
        numHashes: Int): Unit = synchronized {
      rows.add(new Row(path, size, mtime, rowCount, nullCount, null, numHashes, section, position))
    }

    // Probe files' entries as their footers were read (a query's load): in the order added, each
    // with the number of its first section in `blocks`.
    private val probed = new java.util.ArrayList[(ProbeFile.Entries, Int)]()
    private var threads = 1

    /**
     * Adds the files of one probe file's footer (`entries`), whose sections are numbered from
     * `sectionBase` on in `blocks` ([[fetchingFrom]]): no string nor object per file. [[result]]
     * builds the compact form from them on `threads` threads.
     */
    def addProbedFiles(entries: ProbeFile.Entries, sectionBase: Int, threads: Int): Unit = synchronized {
      probed.add((entries, sectionBase))
      this.threads = math.max(this.threads, threads)
    }

    /** Where the filters of the rows added by [[addProbed]] or [[addProbedFiles]] are (rows are added with one or the other). */
    def fetchingFrom(b: BlockFilters): Unit = synchronized { blocks = b }
    private var unreadable = 0
    private var example = ""

    /** Adds one row; `filter` is the design's serialized form. */
    def add(path: String, size: Long, mtime: Long, rowCount: Long, nullCount: Long, filter: Array[Byte]): Unit = {
      val parsed: Either[String, (AnyRef, Int)] = try {
        val f = algorithm.fromBytes(filter)
        algorithm.shared(f) match {
          case (words: Array[Long], k: Integer) => Right((words, k.intValue))
          case w => Right((w, 0))
        }
      } catch { case e: IllegalArgumentException => Left(e.getMessage) }
      synchronized {
        parsed match {
          case Right((words, k)) => rows.add(new Row(path, size, mtime, rowCount, nullCount, words, k, -1, -1))
          case Left(why) =>
            unreadable += 1
            if (example.isEmpty) example = s"$path column $column: $why"
        }
      }
    }

    private def probedResult(): ColumnData = probedBuild(column, algorithm, probed.toArray(Array.empty[(ProbeFile.Entries, Int)]), blocks, threads)

    def result(): ColumnData = synchronized {
      if (!probed.isEmpty && rows.isEmpty) return probedResult()
      // Both kinds (not made by the loads): the probe files' entries as rows.
      probed.forEach { case (e, base) =>
        (0 until e.count).foreach(i => rows.add(new Row(e.path(i), e.size(i), e.modificationTime(i), e.rowCount(i),
          e.nullCount(i), null, e.numHashes(i), base + e.section(i), e.position(i))))
      }
      probed.clear()
      val m = rows.size
      val prefix = commonDirectory(Array.tabulate(m)(rows.get(_).path))
      // The names after the prefix, end to end, entered in the path table as they are written:
      // one row per path, the first (a well-formed index has no duplicates).
      var names = new Array[Byte](math.max(16L, (0 until m).iterator.map(k => rows.get(k).path.length - prefix.length).sum).toInt)
      var cap = 16
      while (cap < 2 * m) cap <<= 1
      val slots = new Array[Int](cap)
      val ends = new Array[Int](m)
      val kept = new Array[Int](m)
      var n = 0
      var total = 0
      var r = 0
      while (r < m) {
        val p = rows.get(r).path
        val len0 = p.length - prefix.length
        var ascii = true
        var c = prefix.length
        while (ascii && c < p.length) { if (p.charAt(c) >= 0x80) ascii = false; c += 1 }
        val encoded = if (ascii) null else p.substring(prefix.length).getBytes(UTF_8)
        val len = if (ascii) len0 else encoded.length
        if (total.toLong + len > Int.MaxValue - 16) throw new IllegalStateException(s"column $column: paths of more than 2 GB")
        if (total + len > names.length) names = java.util.Arrays.copyOf(names, math.max(total + len, names.length * 2))
        if (ascii) { c = 0; while (c < len) { names(total + c) = p.charAt(prefix.length + c).toByte; c += 1 } }
        else System.arraycopy(encoded, 0, names, total, len)
        var s = hash(names, total, total + len) & (cap - 1)
        var duplicate = false
        while (!duplicate && slots(s) != 0) {
          val i = slots(s) - 1
          val from = if (i == 0) 0 else ends(i - 1)
          duplicate = java.util.Arrays.equals(names, from, ends(i), names, total, total + len)
          if (!duplicate) s = (s + 1) & (cap - 1)
        }
        if (!duplicate) {
          slots(s) = n + 1
          total += len
          ends(n) = total
          kept(n) = r
          n += 1
        }
        r += 1
      }
      val row = (i: Int) => rows.get(kept(i))
      val classic = algorithm == FilterAlgorithm.Classic
      val wordEnds = new Array[Int](n)
      var words = 0L
      var i = 0
      while (i < n) {
        words += (row(i).words match { case a: Array[Int] => a.length; case a: Array[Long] => a.length; case null => 0 })
        if (words > Int.MaxValue - 16) throw new IllegalStateException(s"column $column: filters too large to hold at once")
        wordEnds(i) = words.toInt
        i += 1
      }
      val intWords = new Array[Int](if (classic) 0 else words.toInt)
      val longWords = new Array[Long](if (classic) words.toInt else 0)
      i = 0
      while (i < n) {
        val from = if (i == 0) 0 else wordEnds(i - 1)
        row(i).words match {
          case a: Array[Int] => System.arraycopy(a, 0, intWords, from, a.length)
          case a: Array[Long] => System.arraycopy(a, 0, longWords, from, a.length)
          case null =>
        }
        i += 1
      }
      new ColumnData(column, algorithm, prefix, java.util.Arrays.copyOf(names, total), java.util.Arrays.copyOf(ends, n), slots,
        Array.tabulate(2 * n)(k => if (k % 2 == 0) row(k / 2).size else row(k / 2).mtime),
        Array.tabulate(n)(row(_).rowCount), Array.tabulate(n)(row(_).nullCount),
        intWords, longWords, if (blocks == null) wordEnds else Array.emptyIntArray,
        if (classic) Array.tabulate(n)(row(_).numHashes.toByte) else Array.emptyByteArray,
        if (blocks == null) Array.emptyIntArray else Array.tabulate(2 * n)(k => if (k % 2 == 0) row(k / 2).section else row(k / 2).position),
        blocks, unreadable, example)
    }
  }

  /**
   * The compact form of the files of probe files' footers ([[Builder.addProbedFiles]]), the same
   * as [[Builder.result]] makes of the same files added one by one (paths, order, the first of
   * duplicates kept), built from their arrays: per probe file in parallel (the prefix each
   * shares, the names after the common prefix copied end to end and hashed, the numbers copied),
   * then the path table ([[pathTable]], in ranges in parallel).
   */
  private def probedBuild(column: String, algorithm: FilterAlgorithm, chunks: Array[(ProbeFile.Entries, Int)],
      blocks: BlockFilters, threads: Int): ColumnData = {
    val ks = chunks.indices.filter(k => chunks(k)._1.count > 0).toArray
    val m0 = ks.iterator.map(k => chunks(k)._1.count.toLong).sum
    // At most 2^29 files: the path table's slots (twice as many, a power of two) fit an array.
    if (m0 > Int.MaxValue / 4) throw new IllegalStateException(s"column $column: $m0 files, too many to hold at once")
    val m = m0.toInt
    // Each probe file's shared prefix (up to a '/', bytes), then the one all share: a prefix of
    // the first file's path of the first probe file (`ref`). A path is its footer's folder
    // (format 4; else empty), then the entry's bytes.
    val own = new Array[Int](chunks.length)
    IndexStore.inParallel(threads, ks.toSeq.map(k => () => own(k) = directoryPrefix(chunks(k)._1)))
    var prefixLen = 0
    var ref: ProbeFile.Entries = null
    ks.foreach { k =>
      val e = chunks(k)._1
      if (ref == null) { ref = e; prefixLen = own(k) }
      else {
        val common = commonLength(firstPath(ref), 0, firstPath(e), 0, math.min(prefixLen, own(k)))
        prefixLen = cutToSlash(firstPath(ref), 0, common)
      }
    }
    val prefix = if (ref == null) "" else new String(firstPath(ref), 0, prefixLen, UTF_8)
    // Where each probe file's files and names start.
    val fileStart = new Array[Int](chunks.length)
    val nameStart = new Array[Long](chunks.length)
    var files = 0
    var total = 0L
    ks.foreach { k =>
      val e = chunks(k)._1
      fileStart(k) = files
      nameStart(k) = total
      files += e.count
      var i = 0
      while (i < e.count) { total += e.folder.length + e.nameEnd(i) - e.nameStart(i) - prefixLen; i += 1 }
    }
    if (total > Int.MaxValue - 16) throw new IllegalStateException(s"column $column: paths of more than 2 GB")
    val names = new Array[Byte](total.toInt)
    val ends = new Array[Int](m)
    val hashes = new Array[Int](m)
    val sizeTimes = new Array[Long](2 * m)
    val rowCounts = new Array[Long](m)
    val nullCounts = new Array[Long](m)
    val places = new Array[Int](2 * m)
    val classic = algorithm == FilterAlgorithm.Classic
    val numHashes = new Array[Byte](if (classic) m else 0)
    IndexStore.inParallel(threads, ks.toSeq.map { k => () =>
      val (e, base) = chunks(k)
      val f0 = fileStart(k)
      // The part of the footer's folder after the common prefix (every name starts with it), and
      // where the entries' own bytes start to count.
      val head = if (prefixLen < e.folder.length) java.util.Arrays.copyOfRange(e.folder, prefixLen, e.folder.length)
        else Array.emptyByteArray
      val skip = math.max(0, prefixLen - e.folder.length)
      var at = nameStart(k).toInt
      var i = 0
      while (i < e.count) {
        val start = at
        if (head.length > 0) { System.arraycopy(head, 0, names, at, head.length); at += head.length }
        val from = e.nameStart(i) + skip
        val len = e.nameEnd(i) - from
        System.arraycopy(e.bytes, from, names, at, len)
        at += len
        val f = f0 + i
        hashes(f) = hash(names, start, at)
        ends(f) = at
        sizeTimes(2 * f) = e.size(i)
        sizeTimes(2 * f + 1) = e.modificationTime(i)
        rowCounts(f) = e.rowCount(i)
        nullCounts(f) = e.nullCount(i)
        places(2 * f) = base + e.section(i)
        places(2 * f + 1) = e.position(i)
        if (classic) numHashes(f) = e.numHashes(i).toByte
        i += 1
      }
    })
    // The path table: the first of equal names kept (a well-formed index has none).
    var cap = 16
    while (cap < 2 * m) cap <<= 1
    val (slots, dropped) = pathTable(names, ends, hashes, m, cap, threads)
    val kept = if (dropped == null) null else (0 until m).filter(r => !dropped(r)).toArray
    val n = if (kept == null) m else kept.length
    if (kept != null) {
      // The slots numbered by the files kept.
      val renumbered = new Array[Int](m)
      var j = 0
      while (j < n) { renumbered(kept(j)) = j; j += 1 }
      var s = 0
      while (s < cap) { if (slots(s) != 0) slots(s) = renumbered(slots(s) - 1) + 1; s += 1 }
    }
    if (n == m) {
      new ColumnData(column, algorithm, prefix, names, ends, slots, sizeTimes, rowCounts, nullCounts,
        Array.emptyIntArray, Array.emptyLongArray, Array.emptyIntArray, numHashes, places, blocks, 0, "")
    } else {
      // Duplicates dropped: the kept files' names and numbers moved together.
      val keptNames = new Array[Byte](total.toInt)
      val keptEnds = new Array[Int](n)
      var t = 0
      var j = 0
      while (j < n) {
        val i = kept(j)
        val f = if (i == 0) 0 else ends(i - 1)
        System.arraycopy(names, f, keptNames, t, ends(i) - f)
        t += ends(i) - f
        keptEnds(j) = t
        j += 1
      }
      new ColumnData(column, algorithm, prefix, java.util.Arrays.copyOf(keptNames, t), keptEnds, slots,
        Array.tabulate(2 * n)(x => sizeTimes(2 * kept(x / 2) + x % 2)), Array.tabulate(n)(x => rowCounts(kept(x))),
        Array.tabulate(n)(x => nullCounts(kept(x))), Array.emptyIntArray, Array.emptyLongArray, Array.emptyIntArray,
        if (classic) Array.tabulate(n)(x => numHashes(kept(x))) else Array.emptyByteArray,
        Array.tabulate(2 * n)(x => places(2 * kept(x / 2) + x % 2)), blocks, 0, "")
    }
  }

  /**
   * Slots of the path table a task of [[pathTable]] fills (4 bytes each: a range of 256 KB, held
   * in a core's cache while it fills them; the warm-up's 65,536 files make two ranges, so that
   * what a range does at its end is compiled before a query needs it).
   */
  private[layout] val RangeSlots = 1 << 16

  /**
   * The path table of `m` names (end to end in `names`, ending at `ends`, their [[hash]]es in
   * `hashes`): `cap` slots (a power of two), open
   * addressing with linear probing, each name in a slot from its home (`hash & (cap - 1)`) on as
   * its position + 1, a name equal to one entered before it left out. Returned with the names
   * left out marked (null when none is).
   *
   * Built in ranges of `rangeSlots` slots, on `threads` threads: each range's task enters, in
   * order, the names whose home is in it, and keeps for the end those whose probe reaches the
   * range's end; these are then entered in order, crossing ranges (and the table's end) as a
   * name entered alone would. The table is one that entering the names in some order could make
   * (a name's slots from its home to its own are all taken, which is all a lookup needs), and the
   * one kept of equal names is the first: equal names share a home, and once one of them is kept
   * for the end, every later one is too. `cap` must exceed `m`; both sizes are powers of two.
   */
  private[layout] def pathTable(names: Array[Byte], ends: Array[Int], hashes: Array[Int], m: Int, cap: Int,
      threads: Int, rangeSlots: Int = RangeSlots): (Array[Int], Array[Boolean]) = {
    require(Integer.bitCount(cap) == 1 && cap > m && Integer.bitCount(rangeSlots) == 1,
      s"path table: $cap slots for $m names, ranges of $rangeSlots")
    val slots = new Array[Int](cap)
    val mask = cap - 1
    val span = math.min(cap, rangeSlots)
    val dropped = new Array[Boolean](m)
    def same(i: Int, r: Int): Boolean = hashes(i) == hashes(r) &&
      java.util.Arrays.equals(names, if (i == 0) 0 else ends(i - 1), ends(i), names, if (r == 0) 0 else ends(r - 1), ends(r))
    // Enters name `r` from its home, or marks it dropped where an equal name is met; false when the
    // probe reaches slot `stop` first (a range's end; -1: none, round the table's end).
    def enter(r: Int, stop: Int): Boolean = {
      var s = hashes(r) & mask
      while (s != stop) {
        if (slots(s) == 0) { slots(s) = r + 1; return true }
        if (same(slots(s) - 1, r)) { dropped(r) = true; return true }
        s += 1
        if (s == cap && stop != cap) s = 0
      }
      false
    }
    // The names by range of their home, each range's in order (a counting sort).
    val shift = Integer.numberOfTrailingZeros(span)
    val first = new Array[Int](cap / span + 1)
    var r = 0
    while (r < m) { first(((hashes(r) & mask) >>> shift) + 1) += 1; r += 1 }
    var t = 0
    while (t < cap / span) { first(t + 1) += first(t); t += 1 }
    val byRange = new Array[Int](m)
    val next = first.clone()
    r = 0
    while (r < m) { val t = (hashes(r) & mask) >>> shift; byRange(next(t)) = r; next(t) += 1; r += 1 }
    val later = new Array[Array[Int]](cap / span)
    IndexStore.inParallel(threads, later.indices.map { t => () =>
      val hi = t * span + span
      val left = Array.newBuilder[Int]
      var k = first(t)
      while (k < first(t + 1)) {
        if (!enter(byRange(k), hi)) left += byRange(k)
        k += 1
      }
      later(t) = left.result()
    })
    val rest = later.flatten
    java.util.Arrays.sort(rest)
    rest.foreach(r => enter(r, -1))
    (slots, if (dropped.contains(true)) dropped else null)
  }

  /** How many of `a(af..)` and `b(bf..)` are equal, up to `max`. */
  private def commonLength(a: Array[Byte], af: Int, b: Array[Byte], bf: Int, max: Int): Int = {
    val m = java.util.Arrays.mismatch(a, af, af + max, b, bf, bf + max)
    if (m < 0) max else m
  }

  /** The longest prefix of `a(from until from + len)` that ends with '/' (or is empty): its length. */
  private def cutToSlash(a: Array[Byte], from: Int, len: Int): Int = {
    var j = len
    while (j > 0 && a(from + j - 1) != '/') j -= 1
    j
  }

  /** The UTF-8 bytes of the first path of `e` (its footer's folder, then the entry's bytes). */
  private def firstPath(e: ProbeFile.Entries): Array[Byte] = {
    val p = java.util.Arrays.copyOf(e.folder, e.folder.length + e.nameEnd(0) - e.nameStart(0))
    System.arraycopy(e.bytes, e.nameStart(0), p, e.folder.length, e.nameEnd(0) - e.nameStart(0))
    p
  }

  /**
   * The length of the longest prefix up to a '/' that every path of `e` shares (UTF-8 bytes, as
   * [[commonDirectory]]): its footer's folder, and what the entries' own bytes share after it.
   */
  private def directoryPrefix(e: ProbeFile.Entries): Int = {
    val first = e.nameStart(0)
    var len = cutToSlash(e.bytes, first, e.nameEnd(0) - first)
    var i = 1
    while (i < e.count && len > 0) {
      val from = e.nameStart(i)
      len = cutToSlash(e.bytes, first, commonLength(e.bytes, first, e.bytes, from, math.min(len, e.nameEnd(i) - from)))
      i += 1
    }
    e.folder.length + len
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
