package bloomindex.catalog

import java.util.concurrent.atomic.AtomicBoolean

import scala.util.control.NonFatal

import bloomindex.filter.FilterAlgorithm
import bloomindex.hash.ParquetHash
import bloomindex.log.{ColumnSpec, Decoding, ColumnDecoding, IndexData, IndexSpec, IndexState, LogEntry, LogJson, SourceSpec}
import bloomindex.sbbf.SbbfSizing.Sizing
import bloomindex.layout.{BlockFilters, ColumnData, IndexLayout, ProbeFile}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{BlockLocation, FileStatus, LocatedFileStatus, Path}
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.catalyst.expressions.{And, AttributeReference, EqualTo, Expression, In, IsNotNull, Literal, Or}
import org.apache.spark.sql.types.{LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String

/**
 * A driver's first pruned query would otherwise also pay for loading and first running the
 * code it goes through (the log's JSON, hashing, the compact column form): a tenth of a second
 * of its planning on a fresh JVM. When the extension is installed, a low-priority daemon thread
 * runs that code once on made-up data, in memory (no Spark job, no session state), while the
 * session starts. Failures are ignored: it is only a warm-up.
 *
 * Then the loops a query runs once per indexed file, over [[BulkFiles]] made-up files (issue 26):
 * a probe file written to a temporary folder (about 7 MB, deleted after), its footer read and
 * decoded, the column built from it, and a point lookup probed over a listing of those files, so
 * that the JIT compiles those loops (C2) here rather than in the first query that meets a large
 * index. At a million files the first planning spent about 1 s of CPU compiling them (a
 * recording of its compilations; docs/decisions.md, "The warm-up runs the per-file loops").
 * Then the check of local files against storage ([[localCheck]]) over a listing of up to 65,536
 * files (64 real ones, listed many times). Where S3A is on the class path, also the check against
 * storage on S3 over up to 16,384 made-up files ([[s3Check]]): their listing's pages read and
 * matched with the files, no request made.
 * `-Dbloomindex.warmup.files=0` on the driver's command line leaves these parts out.
 */
object Warmup {

  private val started = new AtomicBoolean(false)

  /** Made-up files of the per-file part: enough calls of each per-batch method for C2 (600 and more), few seconds of CPU. */
  private val BulkFiles: Int =
    try Integer.getInteger("bloomindex.warmup.files", 1 << 16).intValue.max(0) catch { case NonFatal(_) => 1 << 16 }

  /** At most this many made-up files for the S3 check's part: 17 runs of its pages, enough calls for C2. */
  private val S3Files = 1 << 14

  /**
   * At most this many listed files for the local check's part: 256 of its batches a round, 768 in
   * all, past C2's 600 calls (at 32,768 files only the loop's on-stack replacement was compiled
   * here, and the batch itself by C2 again in the first query: 0.24 s in a recording of it).
   */
  private val LocalFiles = 1 << 16

  /** How many times the per-file part loads its made-up index and probes it. */
  private val Rounds = 3

  @volatile private var done = false

  /** Whether the warm-up has ended (tests and benchmarks wait for it). */
  def finished: Boolean = done

  def start(): Unit = if (started.compareAndSet(false, true)) {
    // Where the session's jars are (spark.jars, --packages): S3A is looked for there.
    val loader = Option(Thread.currentThread.getContextClassLoader).getOrElse(getClass.getClassLoader)
    val t = new Thread(() => {
      try run() catch { case NonFatal(_) => }
      try bulk(BulkFiles, java.nio.file.Paths.get(System.getProperty("java.io.tmpdir"))) catch { case NonFatal(_) => }
      try localCheck(math.min(BulkFiles, LocalFiles), java.nio.file.Paths.get(System.getProperty("java.io.tmpdir")))
      catch { case NonFatal(_) => }
      try if (hasS3A(loader)) s3Check(math.min(BulkFiles, S3Files)) catch { case NonFatal(_) => }
      done = true
    }, "bloomindex-warmup")
    t.setDaemon(true)
    t.setPriority(Thread.MIN_PRIORITY)
    t.start()
  }

  private def run(): Unit = {
    val spec = IndexSpec("warmup", SourceSpec(None, "parquet", Seq("file:/warmup"), Map.empty, Nil),
      Seq(ColumnSpec("k", "BIGINT", 0.01, None, Sizing.Exact), ColumnSpec("s", "STRING", 0.01, None, Sizing.Exact)),
      global = false)
    val decoding = Decoding("parquet", Seq(ColumnDecoding("k", "BIGINT", Map.empty, Map.empty, Map.empty)))
    val entry = LogEntry(1, IndexState.Active, "CREATE", "warmup", 0L, 0L, spec,
      Some(IndexData("data/warmup", 2, 2, 64, 0, Map.empty, None, Some(decoding), IndexLayout.Probes.name)))
    LogJson.read(LogJson.write(entry))
    val alg = FilterAlgorithm.SplitBlock
    val b = new ColumnData.Builder("k", alg)
    (0 until 2).foreach { i =>
      val f = alg.forNdv(4, 0.01, Sizing.Exact)
      f.insert(ParquetHash.hashValue(i.toLong, LongType))
      f.insert(ParquetHash.hashValue(UTF8String.fromString(s"v$i"), StringType))
      b.add(s"file:/warmup/part-$i.parquet", 1L, 1L, 4L, 0L, f.toBytes)
    }
    val d = b.result()
    val probes = d.probes(Array(ParquetHash.hashValue(1L, LongType)))
    (0 until d.numFiles).foreach(i => probes(0).mightContain(d.indexOf(d.path(i), 1L, 1L)))
  }

  /**
   * The per-file loops of a query's load and probe over `n` made-up files: a probe file of their
   * filters written (format and layout as a build writes them), read as a query reads it
   * ([[ProbeFile.readEachFooter]], [[BlockFilters.addTo]]), and `k = v` probed over a listing
   * of the files ([[IndexCatalog.probe]]), [[Rounds]] times, in a folder made under `parent` and
   * deleted after. Nothing is counted as loaded, cached or logged. Returns what the last round's
   * probes found (for tests).
   */
  private[catalog] def bulk(n: Int, parent: java.nio.file.Path): Seq[IndexCatalog.Probed] = if (n <= 0) Nil else {
    val tmp = java.nio.file.Files.createTempDirectory(parent, "bloomindex-warmup")
    // Deleted at the end, or where the JVM exits first (last registered, first deleted).
    Seq("", "column=k", "column=k/_part-00000.probe", "column=k/._part-00000.probe.crc")
      .foreach(f => tmp.resolve(f).toFile.deleteOnExit())
    try {
      val conf = new Configuration()
      val alg = FilterAlgorithm.SplitBlock
      val folder = new Path(tmp.toUri.toString, "t")
      val probe = new Path(new Path(tmp.toUri.toString, "column=k"), "_part-00000.probe")
      val names = Array.tabulate(n)(i => f"part-$i%05d-7c1f0e52-30a4-4b8e-9d5e-1a2b3c4d5e6f-c000.snappy.parquet")
      val w = new ProbeFile.Writer(conf, probe, alg, "k")
      val written = try {
        var i = 0
        while (i < n) {
          // Mostly one block of 32 bytes (20 values at 1%), some larger: sections of each size.
          val f = alg.forNdv(if (i % 16 == 0) 200 else 20, 0.01, Sizing.Exact)
          var v = 0
          while (v < 20) { f.insert(ParquetHash.hashValue((i * 20L + v), LongType)); v += 1 }
          w.add(s"$folder/${names(i)}", 1000L + i, 1700000000000L + i, 20L, 0L, 20L, fromFooter = false, f.toBytes)
          i += 1
        }
        w.close()
      } catch { case t: Throwable => w.abort(); throw t }
      val lengths = Array(written)
      val tails = ProbeFile.tailEstimates(lengths, 0L, BloomIndexSQLConf.LOAD_FOOTER_READ_BYTES.defaultValue.get, -1L)
      def load(): ColumnData = {
        val footers = ProbeFile.readEachFooter(conf, Seq(probe -> written), 1, "k", alg, checksums = true,
          k => tails(k), compact = true)
        val footer = footers(0).fold(e => throw e, identity)
        val b = new ColumnData.Builder("k", alg)
        BlockFilters.addTo(b, alg, conf, null, Array(probe), lengths, Array(footer), 2, 4,
          BloomIndexSQLConf.CACHE_MAX_BYTES.defaultValue.get)
        b.result()
      }
      val spec = IndexSpec("warmup", SourceSpec(None, "parquet", Seq(folder.toString), Map.empty, Nil),
        Seq(ColumnSpec("k", "BIGINT", 0.01, None, Sizing.Exact)), global = false)
      val entry = LogEntry(1, IndexState.Active, "CREATE", "warmup", 0L, 0L, spec,
        Some(IndexData("data/warmup", 1, n, n, 0, Map.empty, None, None, IndexLayout.Probes.name, checksums = true)))
      var data: ColumnData = null
      val view = new IndexView(new Path(tmp.toUri.toString), entry, Map.empty, _ => data)
      val k = AttributeReference("k", LongType)()
      // A listing of the files, and some the index does not hold (a rewritten one, a new one).
      // (Paths from URIs: `new Path(parent, child)` resolves one URI against another, 10 us each.)
      def listed(name: String) = new Path(new java.net.URI(s"$folder/$name"))
      val statuses = Array.tabulate(n + n / 64) { i =>
        if (i < n) status(i, 1000L + i + (if (i % 97 == 5) 1 else 0), 1700000000000L + i, listed(names(i)))
        else status(i, 10L, 1L, listed(s"new-$i.parquet"))
      }
      val files = statuses.toIndexedSeq
      // An unfiltered listing (a folder as Spark lists it) also holds what a scan does not read:
      // checksums, markers, empty files. Without them the compiled probe meets its first such
      // file in the query, and is thrown away and compiled again there.
      val unfiltered = (statuses ++ (0 until 64).map { i =>
        val name = i % 4 match {
          case 0 => s".part-$i.parquet.crc"
          case 1 => if (i == 1) "_SUCCESS" else s"_started_$i"
          case 2 => s"_x=$i.parquet"
          case _ => s"empty-$i.parquet"
        }
        status(i, if (i % 4 == 1 || i % 4 == 3) 0L else 8L, 1L, listed(name))
      }).toIndexedSeq
      // The load and the probes more than once: the JIT compiles a method with C2 after
      // thresholds it raises while its queue is long, as it is while a session starts (one round
      // left the per-footer loops and the per-batch methods at the first tier in some starts).
      // Then, on the filtered listing, predicates of other shapes (a column Spark knows has no
      // null gets no `isnotnull`; an OR): the probe's call of the predicate compiled for one
      // shape would be thrown away at the first query of another.
      def translate(e: Expression) = FilePredicate.translate(e, view).fold(why => throw new IllegalStateException(why.reason), identity)
      val (present, other) = (20L * (n / 2) + 3, 20L * (n / 4) + 7)
      Iterator.fill(Rounds) {
        data = load()
        Seq(present, -1L).flatMap { v =>
          val pred = translate(And(IsNotNull(k), EqualTo(k, Literal(v))))
          Seq(IndexCatalog.probe(unfiltered, Array(data), Array(0), pred, 2, unfiltered = true),
            IndexCatalog.probe(files, Array(data), Array(0), pred, 2))
        } ++ Seq(EqualTo(k, Literal(present)), Or(EqualTo(k, Literal(present)), In(k, Seq(Literal(other), Literal(-1L)))))
          .map(e => IndexCatalog.probe(files, Array(data), Array(0), translate(e), 2))
      }.reduce((_, last) => last)
    } finally deleteAll(tmp)
  }

  private def hasS3A(loader: ClassLoader): Boolean =
    try { Class.forName("org.apache.hadoop.fs.s3a.S3AFileSystem", false, loader); true }
    catch { case NonFatal(_) | _: LinkageError => false }

  /**
   * The check against storage on S3 ([[FreshFiles.byRuns]]) over `n` made-up files of one folder
   * and some objects beside them (a marker, new files, every 97th file rewritten): their keys
   * sorted and cut into runs, each run's pages written as S3 writes a ListObjectsV2 answer and
   * read by [[S3ListPage]], matched with the keys, each file compared, [[Rounds]] times. That is
   * the code a first checked query on S3 runs per listed file (at 100,000 files about 2 s of CPU
   * compiling it in that query: bench/README.md), here with no request made; the AWS SDK's part
   * (the request, its plugin and interceptor) is not reached. Run where S3A is on the class path.
   * Returns the files the last round found unchanged (for tests).
   */
  private[catalog] def s3Check(n: Int): java.util.BitSet = {
    val out = new java.util.BitSet(n)
    if (n <= 0) return out
    val folder = "warmup/t/"
    val names = Array.tabulate(n)(i => f"${folder}part-$i%05d-7c1f0e52-30a4-4b8e-9d5e-1a2b3c4d5e6f-c000.snappy.parquet")
    def size(i: Int) = 1000L + i
    def time(i: Int) = 1700000000000L + i * 1000L // S3's times are whole seconds
    // The folder's objects, in S3's key order: the files (every 97th rewritten since listed), a
    // marker and some new files.
    val extra = Seq(s"${folder}_SUCCESS") ++ (0 until n / 64).map(i => f"${folder}zz-new-$i%05d.parquet")
    val objects = (names.indices.map(i => (names(i), if (i % 97 == 5) size(i) + 1 else size(i), time(i))) ++
      extra.map(k => (k, 8L, time(0)))).sortBy(_._1)(S3Listing.KeyOrder).toArray
    val objectKeys = objects.map(_._1)
    val stamp = java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(java.time.ZoneOffset.UTC)
    // The first object after `key` (or at and after it: `inclusive`).
    def from(key: String, inclusive: Boolean): Int = {
      val at = java.util.Arrays.binarySearch(objectKeys, key, S3Listing.KeyOrder)
      if (at >= 0) (if (inclusive) at else at + 1) else -at - 1
    }
    def page(run: S3Listing.Run, token: String): S3ListPage.Page = {
      val first = if (token != null) from(token, inclusive = false)
        else if (run.after != null) from(run.after, inclusive = false) else from(run.prefix, inclusive = true)
      var end = first
      while (end < objects.length && end - first < S3Listing.PageKeys && objectKeys(end).startsWith(run.prefix)) end += 1
      val truncated = end < objects.length && objectKeys(end).startsWith(run.prefix)
      val xml = new java.lang.StringBuilder(300 * (end - first) + 512)
      xml.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">")
        .append("<Name>warmup</Name><Prefix>").append(run.prefix).append("</Prefix>")
      if (token != null) xml.append("<ContinuationToken>").append(token).append("</ContinuationToken>")
      else if (run.after != null) xml.append("<StartAfter>").append(run.after).append("</StartAfter>")
      xml.append("<KeyCount>").append(end - first).append("</KeyCount><MaxKeys>").append(S3Listing.PageKeys)
        .append("</MaxKeys>").append(if (run.delimited) "<Delimiter>/</Delimiter>" else "")
        .append("<IsTruncated>").append(truncated).append("</IsTruncated>")
      var o = first
      while (o < end) {
        val (key, bytes, modified) = objects(o)
        xml.append("<Contents><Key>").append(key).append("</Key><LastModified>")
          .append(stamp.format(java.time.Instant.ofEpochMilli(modified))).append("</LastModified>")
          .append("<ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag><Size>").append(bytes)
          .append("</Size><StorageClass>STANDARD</StorageClass></Contents>")
        o += 1
      }
      if (truncated) xml.append("<NextContinuationToken>").append(objectKeys(end - 1)).append("</NextContinuationToken>")
      xml.append("</ListBucketResult>")
      S3ListPage.parse(xml.toString.getBytes(java.nio.charset.StandardCharsets.UTF_8))
    }
    val files = Array.tabulate[FileStatus](n)(i => status(i, size(i), time(i), new Path(new java.net.URI(s"s3a://warmup/${names(i)}"))))
      .toIndexedSeq
    (1 to Rounds).foreach { _ =>
      out.clear()
      FreshFiles.byRuns(files, S3Listing.PageKeys, out)((wanted, runs) => S3Listing.statuses(wanted, runs, 2, page))
    }
    out
  }

  /**
   * The check of local files against storage ([[FreshFiles.unchanged]]) over a listing of `n`
   * files: 64 small files written to a folder made under `parent` (deleted after), each listed
   * many times, every 97th listing of them with a size other than the file's (a file changed
   * since listed), [[Rounds]] times on two threads. That is the code a first checked query over
   * local files runs per listed file, compiled here rather than in that query. Returns what the
   * last round found unchanged (for tests).
   */
  private[catalog] def localCheck(n: Int, parent: java.nio.file.Path): java.util.BitSet = if (n <= 0) new java.util.BitSet() else {
    val tmp = java.nio.file.Files.createTempDirectory(parent, "bloomindex-warmup")
    val real = (0 until 64).map(i => tmp.resolve(f"part-$i%05d-7c1f0e52-30a4-4b8e-9d5e-1a2b3c4d5e6f-c000.snappy.parquet"))
    // Deleted at the end, or where the JVM exits first (last registered, first deleted).
    (Seq(tmp) ++ real).foreach(_.toFile.deleteOnExit())
    try {
      val listed = real.zipWithIndex.map { case (f, i) =>
        java.nio.file.Files.write(f, new Array[Byte](i + 1))
        (new Path(f.toUri), (i + 1).toLong, f.toFile.lastModified)
      }
      val files = Array.tabulate[FileStatus](n) { i =>
        val (path, size, mtime) = listed(i % listed.size)
        status(i, if (i % 97 == 5) size + 1 else size, mtime, path)
      }.toIndexedSeq
      val conf = new Configuration()
      Iterator.fill(Rounds)(FreshFiles.unchanged(conf, files, 2)).reduce((_, last) => last)
    } finally deleteAll(tmp)
  }

  /**
   * A made-up listed file, of one of three classes by `i`: each file system lists its own
   * subclass of `FileStatus` (a local folder's, S3A's, Spark's `LocatedFileStatus`), and a probe
   * compiled having seen one class would be thrown away and compiled again at the query's first
   * status of another; having seen three, it calls their getters whatever the class.
   */
  private def status(i: Int, size: Long, mtime: Long, path: Path): FileStatus = i % 3 match {
    case 0 => new FileStatus(size, false, 1, 1L, mtime, path)
    case 1 => new LocatedFileStatus(new FileStatus(size, false, 1, 1L, mtime, path), Array.empty[BlockLocation])
    case _ => new MadeUpStatus(size, mtime, path)
  }

  private final class MadeUpStatus(size: Long, mtime: Long, path: Path) extends FileStatus(size, false, 1, 1L, mtime, path)

  private def deleteAll(dir: java.nio.file.Path): Unit = {
    val walk = java.nio.file.Files.walk(dir)
    try walk.sorted(java.util.Comparator.reverseOrder[java.nio.file.Path]()).forEach(p => java.nio.file.Files.deleteIfExists(p))
    finally walk.close()
  }
}
