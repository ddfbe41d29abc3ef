package bloomindex.catalog

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._

import bloomindex.api.BloomIndex
import bloomindex.testing.{StallingFileSystem, TempDirs, TestSpark}

import org.apache.spark.sql.SparkSession
import org.scalatest.funsuite.AnyFunSuite

/**
 * `spark.bloomindex.pruning.maxWait`: an index store that stops answering (a file system whose
 * reads hang until released) costs a query at most the wait, never a wrong answer, and the index
 * is used again once the store answers.
 */
class MaxWaitSuite extends AnyFunSuite {

  private lazy val spark: SparkSession = TestSpark.session
  private implicit val ec: ExecutionContext = ExecutionContext.global

  /** `body`'s answer, failing the test where it does not come (a planning that waits on the stalled store). */
  private def returns[T](body: => T): T = Await.result(Future(body), 90.seconds)

  test("a stalled index store: queries are planned unpruned without waiting on it, right; pruned again once it answers") {
    useStallingStore()
    val root = "stall://" + TempDirs.create("bloomindex-stalled-root").toAbsolutePath.toString
    val path = TempDirs.create("bloomindex-src").resolve("events").toString
    val bi = BloomIndex(spark)
    try {
      spark.conf.set("spark.bloomindex.root", root)
      spark.range(0, 400, 1, 4).selectExpr("id", "id % 7 AS k").write.parquet(path)
      bi.create("stalled").onPath("parquet", path).columns("id", "k").option("global", "true").execute()
      def query = spark.read.parquet(path).where("id = 150")
      assert(bi.explain(query).contains("kept 1/4 files"), bi.explain(query))
      val otherPath = TempDirs.create("bloomindex-src").resolve("other").toString
      spark.range(0, 80, 1, 2).selectExpr("id * 10 AS id").write.parquet(otherPath)
      def join = spark.read.parquet(otherPath).join(spark.read.parquet(path), "id")
      val joined = join.collect().map(_.getLong(0)).sorted.toSeq
      assert(joined == (0L until 400L by 10L), joined)
      assert(bi.explain(join).contains("join filter: index stalled"), bi.explain(join))

      // The store stops answering, the index's data is not in memory, and the wait is short.
      IndexCache.clear()
      spark.conf.set("spark.bloomindex.pruning.maxWait", "300ms")
      StallingFileSystem.stall()
      val before = StallingFileSystem.stalledReads
      // Each returns while the store is still stalled: the planning did not wait for it.
      val rows = returns(query.collect().map(_.getLong(0)).toSeq)
      assert(rows == Seq(150L))
      assert(StallingFileSystem.stalledReads > before, "the index store was never read")
      val report = returns(bi.explain(query))
      assert(!report.contains("kept 1/4"), report)
      assert(report.contains("spark.bloomindex.pruning.maxWait"), report)
      // A query on the same index root while the first read is still hanging does not wait again.
      assert(report.contains("not waiting again"), report)
      // The join filter: the global filter is not read in time either, and the join is right.
      assert(returns(join.collect().map(_.getLong(0)).sorted.toSeq) == joined)
      val joinReport = returns(bi.explain(join))
      assert(joinReport.contains("join filter not applied") && joinReport.contains("spark.bloomindex.pruning.maxWait"), joinReport)
      assert(!joinReport.contains("join filter: index stalled"), joinReport)

      // The store answers again: the read the first query gave up on goes on and fills the
      // cache, with no query asking (none has since the release).
      assert(IndexCache.heldColumns() == 0)
      StallingFileSystem.release()
      val deadline = System.currentTimeMillis() + 60000L
      while (IndexCache.heldColumns() == 0 && System.currentTimeMillis() < deadline) Thread.sleep(100)
      assert(IndexCache.heldColumns() > 0, "the read given up on did not go on")
      // It ends (after the column, the probe reads the block rows it needs): stalling the store
      // again before then would hold it again, and queries would not wait for it.
      while (MaxWait.overdueOn(MaxWait.rootKey(spark)) && System.currentTimeMillis() < deadline) Thread.sleep(100)
      assert(!MaxWait.overdueOn(MaxWait.rootKey(spark)), "the read given up on did not end")
      // What it loaded serves the next lookup with the store stalled again (nothing left to read;
      // a generous wait, as a read would hang past it).
      spark.conf.set("spark.bloomindex.pruning.maxWait", "20s")
      StallingFileSystem.stall()
      assert(returns(bi.explain(query)).contains("kept 1/4 files"), bi.explain(query))
      assert(returns(query.collect().map(_.getLong(0)).toSeq) == Seq(150L))
    } finally {
      StallingFileSystem.release()
      spark.conf.unset("spark.bloomindex.pruning.maxWait")
      spark.conf.unset("spark.bloomindex.root")
      IndexCache.clear()
    }
  }

  test("a stalled index store does not hold a write: it returns, and its on-write index is refreshed once the store answers") {
    useStallingStore()
    val root = "stall://" + TempDirs.create("bloomindex-stalled-root").toAbsolutePath.toString
    val path = TempDirs.create("bloomindex-src").resolve("written").toString
    val bi = BloomIndex(spark)
    def lookup = spark.read.parquet(path).where("id = 450")
    try {
      spark.conf.set("spark.bloomindex.root", root)
      spark.range(0, 400, 1, 4).selectExpr("id", "id % 7 AS k").write.parquet(path)
      bi.create("followed").onPath("parquet", path).columns("id").option("refresh", "on_write").execute()
      val created = bi.describe("followed")("active_version")

      IndexCache.clear()
      spark.conf.set("spark.bloomindex.pruning.maxWait", "300ms")
      StallingFileSystem.stall()
      val before = StallingFileSystem.stalledReads
      // The write returns while the store is still stalled; so does a write of a source no index follows.
      returns(spark.range(400, 500, 1, 1).selectExpr("id", "id % 7 AS k").write.mode("append").parquet(path))
      assert(StallingFileSystem.stalledReads > before, "the index store was never read")
      val other = TempDirs.create("bloomindex-src").resolve("unindexed").toString
      returns(spark.range(0, 10, 1, 1).write.parquet(other))
      assert(spark.read.parquet(other).count() == 10)
      // The new file is read (the index does not hold it yet): the right row.
      assert(returns(lookup.collect().map(_.getLong(0)).toSeq) == Seq(450L))

      // The store answers: the background refresher lists the index and refreshes it.
      StallingFileSystem.release()
      assert(bloomindex.actions.WriteEvents.awaitIdle(60000L), "the refresh queued by the write did not end")
      spark.conf.unset("spark.bloomindex.pruning.maxWait")
      assert(bi.describe("followed")("active_version").toLong > created.toLong)
      assert(bi.explain(lookup).contains("kept 1/5 files"), bi.explain(lookup))
      assert(lookup.collect().map(_.getLong(0)).toSeq == Seq(450L))
    } finally {
      StallingFileSystem.release()
      spark.conf.unset("spark.bloomindex.pruning.maxWait")
      spark.conf.unset("spark.bloomindex.root")
      IndexCache.clear()
    }
  }

  test("a stalled index store does not hold Spark's listener bus: a streaming sink's batch queues its indexes' refresh") {
    useStallingStore()
    val root = "stall://" + TempDirs.create("bloomindex-stalled-root").toAbsolutePath.toString
    val dir = TempDirs.create("bloomindex-stream")
    val in = dir.resolve("in").toString
    val out = dir.resolve("out").toString
    val bi = BloomIndex(spark)
    spark.range(0, 20, 1, 1).write.parquet(in)
    def runBatch() = {
      val q = spark.readStream.schema(spark.read.parquet(in).schema).parquet(in).writeStream.format("parquet")
        .option("checkpointLocation", dir.resolve("checkpoint").toString).start(out)
      try q.processAllAvailable() finally q.stop()
    }
    try {
      spark.conf.set("spark.bloomindex.root", root)
      runBatch()
      bi.create("sunk").onPath("parquet", out).columns("id").option("refresh", "background").execute()
      spark.range(20, 40, 1, 1).write.mode("append").parquet(in)
      IndexCache.clear()
      spark.conf.set("spark.bloomindex.pruning.maxWait", "300ms")
      StallingFileSystem.stall()
      val before = StallingFileSystem.stalledReads
      returns(runBatch())
      // The batch's progress reached the listener, which left the list of the sink's indexes to
      // the refresher: the bus delivers every event posted so far while the store is stalled
      // (before: the listener listed the index root on the bus and held it until the release).
      assert(org.apache.spark.sql.bloomindex.ListenerBus.drain(spark.sparkContext, 20000L),
        "the listener bus is held by a read of the stalled store")
      val deadline = System.currentTimeMillis() + 20000L
      while (StallingFileSystem.stalledReads == before && System.currentTimeMillis() < deadline) Thread.sleep(100)
      assert(StallingFileSystem.stalledReads > before, "nothing read the index store")
      StallingFileSystem.release()
      assert(bloomindex.actions.WriteEvents.awaitIdle(60000L), "the queued refresh did not end")
      spark.conf.unset("spark.bloomindex.pruning.maxWait")
      assert(spark.read.parquet(out).where("id = 30").collect().map(_.getLong(0)).toSeq == Seq(30L))
      val report = bi.explain(spark.read.parquet(out).where("id = 30"))
      assert(report.contains("kept 1/2 files"), report)
    } finally {
      StallingFileSystem.release()
      spark.conf.unset("spark.bloomindex.pruning.maxWait")
      spark.conf.unset("spark.bloomindex.root")
      IndexCache.clear()
    }
  }

  test("probe files a store fails to read for now: their files are read, and the column is loaded again later, pruned") {
    failingForNow("flaky", ".probe", blockMajor = true)
  }

  test("index data files (layout `columns`) a store fails to read for now: not damage, loaded again later, pruned") {
    // Before: the failure was kept for the version's life and recorded as damage.
    failingForNow("flaky_cols", ".parquet", blockMajor = false)
  }

  test("index data files read by Spark jobs (past load.driverMaxFiles) a store fails to read for now: the same") {
    // Before: the job skipped a file it could not read (`ignoreCorruptFiles`) and the column was
    // kept without its rows for the version's life: the index pruned nothing after the store answered.
    failingForNow("flaky_job", ".parquet", blockMajor = false, Map("spark.bloomindex.load.driverMaxFiles" -> "0"))
  }

  test("an encrypted index a store fails to read for now: the warning names the store, not the keys; used again once it answers") {
    useStallingStore()
    val root = "stall://" + TempDirs.create("bloomindex-failing-root").toAbsolutePath.toString
    val path = TempDirs.create("bloomindex-src").resolve("enc_flaky").toString
    val crypto = Map(
      "parquet.crypto.factory.class" -> "org.apache.parquet.crypto.keytools.PropertiesDrivenCryptoFactory",
      "parquet.encryption.kms.client.class" -> "bloomindex.testing.InMemoryKms",
      "parquet.encryption.key.list" -> "footk: AAECAwQFBgcICQoLDA0ODw==, colk: EBESExQVFhcYGRobHB0eHw==")
    val bi = BloomIndex(spark)
    def query = spark.read.parquet(path).where("id = 150")
    try {
      crypto.foreach { case (k, v) => spark.conf.set(k, v) }
      spark.conf.set("spark.bloomindex.root", root)
      spark.range(0, 400, 1, 4).selectExpr("id", "id % 7 AS k").write
        .option("parquet.encryption.column.keys", "colk: id").option("parquet.encryption.footer.key", "footk")
        .parquet(path)
      bi.create("enc_flaky").onPath("parquet", path).columns("id").execute()
      assert(bi.explain(query).contains("kept 1/4 files"), bi.explain(query))
      IndexCache.clear()
      StallingFileSystem.failOpensOf(Some("/column=id/"))
      assert(query.collect().map(_.getLong(0)).toSeq == Seq(150L))
      val report = bi.explain(query)
      assert(report.contains("enc_flaky: index data unreadable") && !report.contains("kept 1/4"), report)
      val warned = bloomindex.log.IndexLog.warnings().toArray.map(_.toString).filter(_.contains("'enc_flaky'"))
      assert(warned.exists(_.contains("could not be read for now")), warned.toSeq)
      // Before: "this session cannot decrypt it ... configure the KMS", for a store's error.
      assert(!warned.exists(_.contains("cannot decrypt")), warned.toSeq)
      StallingFileSystem.failOpensOf(None)
      assert(bi.explain(query).contains("kept 1/4 files"), bi.explain(query))
      assert(query.collect().map(_.getLong(0)).toSeq == Seq(150L))
    } finally {
      StallingFileSystem.failOpensOf(None)
      crypto.keys.foreach(spark.conf.unset)
      spark.conf.unset("spark.bloomindex.root")
      IndexCache.clear()
    }
  }

  /**
   * An index whose files named with `part` the store fails to open for a while: the lookup reads
   * every file meanwhile, DESCRIBE shows no damage for it, and once the store answers and the
   * retry time has passed, the column is loaded again and prunes.
   */
  private def failingForNow(name: String, part: String, blockMajor: Boolean, settings: Map[String, String] = Map.empty): Unit = {
    useStallingStore()
    val root = "stall://" + TempDirs.create("bloomindex-failing-root").toAbsolutePath.toString
    val path = TempDirs.create("bloomindex-src").resolve(name).toString
    val bi = BloomIndex(spark)
    def query = spark.read.parquet(path).where("id = 150")
    val retry = IndexCache.RetryFailedLoadMs
    try {
      spark.conf.set("spark.bloomindex.root", root)
      spark.conf.set("spark.bloomindex.build.blockMajor", blockMajor.toString)
      settings.foreach { case (k, v) => spark.conf.set(k, v) }
      spark.range(0, 400, 1, 4).selectExpr("id", "id % 7 AS k").write.parquet(path)
      bi.create(name).onPath("parquet", path).columns("id").execute()
      IndexCache.clear()
      IndexCache.RetryFailedLoadMs = 3000L
      StallingFileSystem.failOpensOf(Some(part))
      assert(query.collect().map(_.getLong(0)).toSeq == Seq(150L))
      assert(bi.explain(query).contains("kept 4/4 files"), bi.explain(query))
      val damage = bloomindex.log.Checksums.damageUnder("").filter(_._1.contains(s"/$name/"))
      assert(damage.isEmpty, damage)
      // The store answers again: until the retry time, the column loaded with the failure serves.
      StallingFileSystem.failOpensOf(None)
      val failedAt = System.currentTimeMillis()
      val early = bi.explain(query)
      if (System.currentTimeMillis() - failedAt < 2500L) assert(early.contains("kept 4/4 files"), early)
      // Then it is loaded again, and the index prunes (before: the failure was kept for as long as
      // the version was the newest).
      Thread.sleep(math.max(0L, failedAt + 3200L - System.currentTimeMillis()))
      assert(bi.explain(query).contains("kept 1/4 files"), bi.explain(query))
      assert(query.collect().map(_.getLong(0)).toSeq == Seq(150L))
    } finally {
      StallingFileSystem.failOpensOf(None)
      IndexCache.RetryFailedLoadMs = retry
      spark.conf.unset("spark.bloomindex.root")
      spark.conf.unset("spark.bloomindex.build.blockMajor")
      settings.keys.foreach(spark.conf.unset)
      IndexCache.clear()
    }
  }

  /** Roots under `stall://` are on [[StallingFileSystem]] (a local file system whose reads hang while stalled). */
  private def useStallingStore(): Unit = {
    spark.sparkContext.hadoopConfiguration.set("fs.stall.impl", classOf[StallingFileSystem].getName)
    spark.sparkContext.hadoopConfiguration.set("fs.AbstractFileSystem.stall.impl", classOf[bloomindex.testing.StallingFs].getName)
  }
}
