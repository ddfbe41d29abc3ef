package bloomindex.actions

import java.io.File
import java.nio.file.Files

import bloomindex.api.BloomIndex
import bloomindex.config.InjectedFault
import bloomindex.errors.ConcurrentBloomIndexUpdateException
import bloomindex.log.{IndexRoot, IndexState}
import bloomindex.testing.{FailingLogStore, SmallSource, TestSpark}

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

/**
 * Each action's begin / build / commit / rollback against a log store that fails on demand
 * ([[FailingLogStore]]): whatever fails, the last good version stays the one queries use, the
 * answers are those without the index, and the next command catches up.
 */
class IndexActionsSuite extends AnyFunSuite with BeforeAndAfterEach {

  private lazy val spark: SparkSession = TestSpark.session
  private val StoreKey = "spark.bloomindex.logStore.file.impl"
  private var path: String = _

  override def beforeEach(): Unit = {
    FailingLogStore.reset()
    spark.conf.set(StoreKey, classOf[FailingLogStore].getName)
    path = SmallSource.create(spark, "id")
  }

  override def afterEach(): Unit = {
    FailingLogStore.reset()
    spark.conf.unset(StoreKey)
    spark.conf.unset("spark.internal.bloomindex.test.failAfterDataWrite")
  }

  private def log = new IndexRoot(spark).log("ev")
  private def states: Seq[String] = log.versions().map(v => log.read(v).state)
  private def query: DataFrame = spark.read.parquet(path).where("id = 150L OR id = 450L")
  private def rows(df: DataFrame): Seq[Long] = df.collect().map(_.getLong(0)).toSeq.sorted

  /** The query's rows with pruning on and off (they must be equal), and the files read with it on. */
  private def answer(): (Seq[Long], Int) = {
    spark.conf.set("spark.bloomindex.pruning.enabled", "false")
    val off = rows(query)
    spark.conf.unset("spark.bloomindex.pruning.enabled")
    val on = rows(query)
    assert(on == off)
    (on, query.inputFiles.length)
  }

  private def append(): Unit =
    spark.range(450, 460, 1, 1).selectExpr("id", "concat('s', id) AS s", "id % 3 AS amount").write.mode("append").parquet(path)

  private def dataFolders: Set[String] = new File(log.indexDir.toUri.getPath, "data").list().toSet

  private def refresh(): Unit = BloomIndex(spark).refresh("ev")

  test("CREATE whose ACTIVE commit fails: no index answers, the next CREATE takes over and leaves one data folder") {
    BloomIndex(spark).drop("ev")
    FailingLogStore.failOn(FailingLogStore.entry("ACTIVE", "CREATE"))
    val e = intercept[Exception](BloomIndex(spark).create("ev").onPath("parquet", path).columns("id").execute())
    assert(e.getMessage.contains("injected failure"), e)
    assert(log.lastActive().isEmpty && states.last == IndexState.Creating)
    assert(answer() == (Seq(150L), 4)) // no index: every file read
    BloomIndex(spark).create("ev").onPath("parquet", path).columns("id").execute()
    assert(states.last == IndexState.Active)
    assert(answer() == (Seq(150L), 1))
    assert(dataFolders == Set(log.lastActive().get.data.get.dir.stripPrefix("data/")))
  }

  test("REFRESH whose ACTIVE commit fails: the previous version answers, the next REFRESH commits past it") {
    val before = log.lastActive().get
    append()
    FailingLogStore.failOn(FailingLogStore.entry("ACTIVE", "REFRESH"))
    intercept[Exception](refresh())
    assert(log.lastActive().get.version == before.version && states.last == IndexState.Refreshing)
    // The appended file is not held by the index: read whole; the others still pruned.
    assert(answer() == (Seq(150L, 450L), 2))
    refresh()
    val after = log.lastActive().get
    assert(after.version > before.version && after.data.get.indexedFiles == 5)
    assert(answer() == (Seq(150L, 450L), 2))
  }

  test("REFRESH stopped after its data write (before its commit): the previous version answers") {
    append()
    spark.conf.set("spark.internal.bloomindex.test.failAfterDataWrite", "true")
    intercept[InjectedFault](refresh())
    spark.conf.unset("spark.internal.bloomindex.test.failAfterDataWrite")
    assert(log.lastActive().get.data.get.indexedFiles == 4 && states.last == IndexState.Refreshing)
    assert(answer()._1 == Seq(150L, 450L))
    refresh()
    assert(log.lastActive().get.data.get.indexedFiles == 5 && states.last == IndexState.Active)
  }

  test("REFRESH whose build fails and whose rollback cannot be recorded: the build's error, the previous version answers") {
    append()
    // A file no reader can read: the build fails.
    Files.write(new File(path, "part-99999-broken.parquet").toPath, "not parquet".getBytes("UTF-8"))
    FailingLogStore.failOn(FailingLogStore.entry("ACTIVE", "rolled back"))
    val e = intercept[Exception](refresh())
    assert(!e.getMessage.contains("injected failure"), e) // the build's failure, not the log's
    assert(log.lastActive().get.data.get.indexedFiles == 4 && states.last == IndexState.Refreshing)
    new File(path, "part-99999-broken.parquet").delete()
    assert(answer()._1 == Seq(150L, 450L))
    refresh()
    assert(log.lastActive().get.data.get.indexedFiles == 5)
  }

  test("DROP whose commit fails: the index stays and answers") {
    FailingLogStore.failOn(FailingLogStore.entry("DELETED", "DROP"))
    intercept[Exception](BloomIndex(spark).drop("ev"))
    assert(states.last == IndexState.Active && answer() == (Seq(150L), 1))
    BloomIndex(spark).drop("ev")
    assert(states.last == IndexState.Deleted && log.lastActive().isEmpty)
  }

  test("a REFRESH that loses the race for its log version: a conflict error, nothing of it visible") {
    append()
    val before = log.versions()
    FailingLogStore.failOn(FailingLogStore.entry("REFRESHING"), lostRace = true)
    intercept[ConcurrentBloomIndexUpdateException](refresh())
    // The other writer's entry (a copy of this one) is the only new version; the index still answers.
    assert(log.versions() == before :+ (before.last + 1))
    assert(answer()._1 == Seq(150L, 450L))
  }

  test("VACUUM that cannot read the newest entries: fails, and deletes nothing") {
    append()
    refresh()
    val live = log.lastActive().get
    val before = dataFolders
    assert(before.contains(live.data.get.dir.stripPrefix("data/")))
    // The statement's own check reads the newest entry; then the store fails on it and on the
    // refresh's begin entry (taken for damage, the refresh's data would go).
    FailingLogStore.failReadsOf(Seq(log.entryPath(live.version), log.entryPath(live.version - 1)), after = 1)
    val e = intercept[Exception](spark.sql("VACUUM BLOOM INDEX ev RETAIN 0 HOURS").collect())
    assert(e.getMessage.contains("injected failure reading"), e)
    FailingLogStore.reset()
    assert(dataFolders == before)
    assert(answer() == (Seq(150L, 450L), 2))
    spark.sql("VACUUM BLOOM INDEX ev RETAIN 0 HOURS").collect()
    assert(live.data.get.folders.forall(f => dataFolders.contains(f.stripPrefix("data/"))))
    assert(answer() == (Seq(150L, 450L), 2))
  }

  test("a command gives the thread back its job group, description and interrupt setting as they were") {
    val sc = spark.sparkContext
    val keys = Seq("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")
    def props: Seq[String] = keys.map(sc.getLocalProperty)
    try {
      // As a Spark Connect operation's thread: a description and interrupt on cancel, no group.
      sc.setJobDescription("the client's operation")
      sc.setInterruptOnCancel(true)
      val before = props
      assert(before == Seq(null, "the client's operation", "true"))
      BloomIndex(spark).create("jobs_ev").onPath("parquet", path).columns("id").execute()
      assert(props == before)
      // A group of the caller's own: kept with its description and setting.
      sc.setJobGroup("mine", "my jobs", interruptOnCancel = false)
      val mine = props
      BloomIndex(spark).refresh("jobs_ev")
      assert(props == mine && mine == Seq("mine", "my jobs", "false"))
    } finally {
      sc.clearJobGroup()
      BloomIndex(spark).drop("jobs_ev", ifExists = true)
    }
  }
}
