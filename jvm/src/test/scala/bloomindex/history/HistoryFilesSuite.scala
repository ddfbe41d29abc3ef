package bloomindex.history

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.expressions.{And, AttributeReference, EqualNullSafe, EqualTo, In, IsNull, Literal, Not, Or}
import org.apache.spark.sql.types.{IntegerType, StringType}
import org.scalatest.funsuite.AnyFunSuite
import bloomindex.testing.TempDirs

/** The history's storage (limits, compaction, JSON) and what it keeps of a filter, without Spark. */
class HistoryFilesSuite extends AnyFunSuite {

  private val conf = new Configuration()

  private def rec(t: Long, source: String = "t"): ScanRecord = ScanRecord(t, Some(1L), source, "files", "parquet", Some(source),
    Seq("/data/t"), Seq(ColumnPredicate("id", "=", 1)), Some(4L), Some(1L), Some(400L), Some(100L), Some("ix"), Some(2L), Some(12L))

  private def root(): String = TempDirs.create("history").toString

  test("a record round-trips through its JSON line") {
    val r = rec(1700000000123L)
    assert(ScanRecord.fromJson(r.toJson) == r)
    assert(r.pruned)
    val bare = r.copy(executionId = None, table = None, filesListed = None, filesRead = None, index = None, wallTimeMs = None)
    assert(ScanRecord.fromJson(bare.toJson) == bare)
    assert(!bare.pruned)
  }

  test("a record's roots with their store: an older record's bare path is on the default file system") {
    val older = rec(1L)
    assert(older.rootsOn(new java.net.URI("file:///")) == Seq("file:/data/t"))
    assert(older.rootsOn(new java.net.URI("hdfs://nn:8020")) == Seq("hdfs://nn:8020/data/t"))
    val now = older.copy(roots = Seq("s3a://prod/data/t", "file:/data/u"))
    assert(now.rootsOn(new java.net.URI("hdfs://nn:8020")) == now.roots)
  }

  test("scans of the index root's folders are not recorded, on its store only") {
    val spark = bloomindex.testing.TestSpark.session
    val key = "spark.bloomindex.root"
    val before = spark.conf.getOption(key)
    try {
      spark.conf.set(key, "s3a://indexes/bloom")
      assert(WorkloadHistory.destination(spark, Seq("s3a://indexes/bloom/ix/data")).isEmpty)
      assert(WorkloadHistory.destination(spark, Seq("s3://INDEXES:443/bloom/ix")).isEmpty)
      assert(WorkloadHistory.destination(spark, Seq("/bloom/ix")).isEmpty) // no store named: by path
      assert(WorkloadHistory.destination(spark, Seq("s3a://data/bloom/orders")).isDefined)
      assert(WorkloadHistory.destination(spark, Seq("file:/bloom/orders")).isDefined)
      assert(WorkloadHistory.destination(spark, Seq("s3a://data/orders/_delta_log")).isEmpty)
      // An index root at a bucket's top holds that bucket's folders only, not every store's.
      spark.conf.set(key, "s3a://indexes/")
      assert(WorkloadHistory.destination(spark, Seq("s3a://indexes/ix")).isEmpty)
      assert(WorkloadHistory.destination(spark, Seq("s3a://data/orders")).isDefined)
    } finally before match {
      case Some(v) => spark.conf.set(key, v)
      case None => spark.conf.unset(key)
    }
  }

  test("writes keep at most maxEntries records, whole files, newest first") {
    val dir = root()
    (1 to 5).foreach(i => HistoryFiles.append(conf, dir, Seq(rec(1000L * i)), maxEntries = 3, maxAgeMs = Long.MaxValue / 2, now = 6000L))
    val fs = new Path(dir).getFileSystem(conf)
    assert(HistoryFiles.list(fs, dir).map(_.newestMs) == Seq(5000L, 4000L, 3000L))
    assert(HistoryFiles.read(conf, dir, 10, Long.MaxValue / 2, now = 6000L).map(_.timeMs) == Seq(3000L, 4000L, 5000L))
    // A reader with a lower limit sees the newest only.
    assert(HistoryFiles.read(conf, dir, 2, Long.MaxValue / 2, now = 6000L).map(_.timeMs) == Seq(4000L, 5000L))
    // One batch larger than the limit keeps its newest records.
    HistoryFiles.append(conf, dir, (10 to 15).map(i => rec(1000L * i)), maxEntries = 3, maxAgeMs = Long.MaxValue / 2, now = 16000L)
    assert(HistoryFiles.read(conf, dir, 10, Long.MaxValue / 2, now = 16000L).map(_.timeMs) == Seq(13000L, 14000L, 15000L))
  }

  test("reads parse each file once per JVM, and see files added, deleted or rewritten since") {
    val dir = root()
    val never = Long.MaxValue / 2
    HistoryFiles.append(conf, dir, Seq(rec(1000L, "a")), 100, never, now = 1000L)
    assert(HistoryFiles.read(conf, dir, 100, never, now = 1000L).map(_.source) == Seq("a"))
    HistoryFiles.append(conf, dir, Seq(rec(2000L, "b")), 100, never, now = 2000L)
    assert(HistoryFiles.read(conf, dir, 100, never, now = 2000L).map(_.source) == Seq("a", "b"))
    val fs = new Path(dir).getFileSystem(conf)
    val Seq(newest, oldest) = HistoryFiles.list(fs, dir)
    // Deleted: gone from the next read.
    fs.delete(oldest.path, false)
    assert(HistoryFiles.read(conf, dir, 100, never, now = 2000L).map(_.source) == Seq("b"))
    // Written again under its name with other content (another length): read anew, not from the cache.
    val out = fs.create(newest.path, true)
    try out.write((rec(2000L, "bb").toJson + "\n").getBytes("UTF-8")) finally out.close()
    assert(HistoryFiles.read(conf, dir, 100, never, now = 2000L).map(_.source) == Seq("bb"))
  }

  test("writes drop files older than maxAge; reads show no older record") {
    val dir = root()
    HistoryFiles.append(conf, dir, Seq(rec(1000L), rec(2000L)), 100, maxAgeMs = 10000L, now = 2000L)
    HistoryFiles.append(conf, dir, Seq(rec(9000L)), 100, maxAgeMs = 10000L, now = 9000L)
    assert(HistoryFiles.read(conf, dir, 100, 10000L, now = 11500L).map(_.timeMs) == Seq(2000L, 9000L))
    HistoryFiles.append(conf, dir, Seq(rec(13000L)), 100, maxAgeMs = 10000L, now = 13000L)
    val fs = new Path(dir).getFileSystem(conf)
    assert(HistoryFiles.list(fs, dir).map(_.newestMs) == Seq(13000L, 9000L))
  }

  test("past CompactAbove files a write merges them into one") {
    val dir = root()
    val n = HistoryFiles.CompactAbove + 1
    (1 to n).foreach(i => HistoryFiles.append(conf, dir, Seq(rec(i.toLong)), 1000, Long.MaxValue / 2, now = n.toLong))
    val fs = new Path(dir).getFileSystem(conf)
    val files = HistoryFiles.list(fs, dir)
    assert(files.size == 1 && files.head.count == n)
    assert(HistoryFiles.read(conf, dir, 1000, Long.MaxValue / 2, now = n.toLong).map(_.timeMs) == (1 to n).map(_.toLong))
    // Files of other names (a reader's hidden temporary, anything else) are left alone.
    assert(fs.listStatus(HistoryFiles.dir(dir)).length == 1)
  }

  test("predicates: columns under =, IN, <=> and IS NULL with value counts, never under NOT") {
    val a = AttributeReference("A", IntegerType)()
    val s = AttributeReference("s", StringType)()
    val cond = And(Or(EqualTo(a, Literal(1)), EqualTo(Literal(2), a)),
      And(In(s, Seq(Literal("x"), Literal("y"), Literal("z"))),
        And(EqualNullSafe(s, Literal("w")), And(IsNull(a), Not(EqualTo(s, Literal("n")))))))
    assert(Predicates.of(cond, _.toLowerCase) ==
      Seq(ColumnPredicate("a", "=", 2), ColumnPredicate("s", "IN", 3), ColumnPredicate("s", "<=>", 1), ColumnPredicate("a", "IS NULL", 0)))
  }
}
