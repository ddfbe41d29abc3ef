package bloomindex.compat

import bloomindex.api.BloomIndex
import bloomindex.catalog.IndexCache
import bloomindex.layout.IndexStore
import bloomindex.testing.{TempDirs, TestSpark}

import org.apache.spark.ContextConf
import org.apache.spark.sql.{AnalysisException, SparkSession}
import org.scalatest.funsuite.AnyFunSuite

/**
 * A session whose Kryo requires registration but lists no `bloomindex.BloomIndexKryoRegistrator`
 * (stood in for by the test session's own settings: its serializer stays Java's): CREATE and
 * REFRESH fail before they read or write anything, naming the setting, and the index already
 * there is untouched; a column that Spark jobs would load is read by the driver instead.
 */
class KryoSetupSessionSuite extends AnyFunSuite {

  private lazy val spark: SparkSession = TestSpark.session

  private val Bad = Seq("spark.serializer" -> "org.apache.spark.serializer.KryoSerializer",
    "spark.kryo.registrationRequired" -> "true", "spark.kryo.registrator" -> "com.example.TheirRegistrator")

  private def withoutRegistrator[T](body: => T): T = {
    val conf = ContextConf.of(spark.sparkContext)
    val before = Bad.map { case (k, _) => k -> conf.getOption(k) }
    Bad.foreach { case (k, v) => conf.set(k, v) }
    try body finally before.foreach { case (k, v) => v.fold(conf.remove(k))(conf.set(k, _)) }
  }

  test("CREATE and REFRESH fail first with BLOOM_INDEX_INVALID_CONF; the index there keeps answering; a job-loaded column is read by the driver") {
    val root = TempDirs.create("bloomindex-kryo-root").toAbsolutePath.toString
    val path = TempDirs.create("bloomindex-kryo-src").resolve("t").toString
    val keys = Seq("spark.bloomindex.root", "spark.bloomindex.build.blockMajor", "spark.bloomindex.load.driverMaxFiles")
    try {
      spark.conf.set("spark.bloomindex.root", root)
      spark.conf.set("spark.bloomindex.build.blockMajor", "false") // the `columns` layout, which jobs load
      spark.range(0, 400, 1, 8).selectExpr("id").write.parquet(path)
      BloomIndex(spark).create("kryo_ok").onPath("parquet", path).columns("id").execute()
      def lookup(): (Int, Seq[Long]) = {
        val q = spark.read.parquet(path).where("id = 150")
        (q.inputFiles.length, q.collect().map(_.getLong(0)).toSeq)
      }
      assert(lookup() == (1, Seq(150L)))
      val version = BloomIndex(spark).describe("kryo_ok")("log_version")

      withoutRegistrator {
        def refused(sql: String): AnalysisException = {
          val e = intercept[AnalysisException](spark.sql(sql))
          assert(e.getCondition == "BLOOM_INDEX_INVALID_CONF", e.getMessage)
          assert(e.getMessage.contains("spark.kryo.registrator") && e.getMessage.contains("com.example.TheirRegistrator") &&
            e.getMessage.contains(KryoSetup.Registrator), e.getMessage)
          e
        }
        refused(s"CREATE BLOOM INDEX kryo_new ON parquet.`$path` FOR COLUMNS (id)")
        assert(!java.nio.file.Files.exists(java.nio.file.Paths.get(root, "kryo_new")), "CREATE wrote something")
        refused("REFRESH BLOOM INDEX kryo_ok FULL")
        assert(BloomIndex(spark).describe("kryo_ok")("log_version") == version)

        // Every file of the column over driverMaxFiles: Spark jobs would read them, and cannot here.
        spark.conf.set("spark.bloomindex.load.driverMaxFiles", "0")
        IndexCache.clear()
        val jobs = IndexStore.loadJobsRun()
        assert(lookup() == (1, Seq(150L)))
        assert(IndexStore.loadJobsRun() == jobs, "a Spark job loaded the column")
      }
      IndexCache.clear()
      val jobs = IndexStore.loadJobsRun()
      assert(lookup() == (1, Seq(150L)))
      assert(IndexStore.loadJobsRun() > jobs, "the job route is the one taken with the settings back")
    } finally {
      keys.foreach(spark.conf.unset)
      IndexCache.clear()
    }
  }
}
