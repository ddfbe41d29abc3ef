package bloomindex.config

import bloomindex.errors.BloomIndexErrors

import org.apache.spark.sql.SparkSession

/** The `spark.bloomindex.*` configuration keys. */
object BloomIndexConf {

  /** Folder holding one sub-folder per index. Default: `_bloomindex` in the warehouse directory. */
  val Root = "spark.bloomindex.root"

  /** Default false positive rate of a column's filters. */
  val DefaultFpp = "spark.bloomindex.fpp.default"

  /** Turns file pruning with Bloom indexes on or off (default on). */
  val PruningEnabled = "spark.bloomindex.pruning.enabled"

  /** Turns join pre-filtering with global Bloom filters on or off (default on). */
  val JoinFilterEnabled = "spark.bloomindex.joinFilter.enabled"

  def pruningEnabled(spark: SparkSession): Boolean = flag(spark, PruningEnabled)

  def joinFilterEnabled(spark: SparkSession): Boolean = flag(spark, JoinFilterEnabled)

  private def flag(spark: SparkSession, key: String): Boolean =
    spark.conf.getOption(key).forall(_.trim.equalsIgnoreCase("true"))

  /**
   * Builds take a Parquet file's filter for a column from its footer when every row group
   * carries one that fits (default on); off: always from the data.
   */
  val FooterFilters = "spark.bloomindex.build.footerFilters"

  /**
   * Distinct values a build task counts exactly per file and column (default 2,000,000: up to
   * 32 MB of buffered hashes per indexed column plus a 32 MB sort buffer per running task); a
   * file with more is sized from an HLL estimate and read a second time.
   */
  val MaxDistinct = "spark.bloomindex.build.maxDistinctPerFile"

  def footerFilters(spark: SparkSession): Boolean = flag(spark, FooterFilters)

  /**
   * Test hook, not for users: each task of a build's data pass sleeps this many milliseconds
   * before reading (default 0), so that a fault test can kill an executor while a build runs.
   */
  val TestBuildTaskDelayMs = "spark.bloomindex.test.buildTaskDelayMs"

  def testBuildTaskDelayMs(spark: SparkSession): Long =
    spark.conf.getOption(TestBuildTaskDelayMs).map(_.trim.toLong).getOrElse(0L)

  def maxDistinct(spark: SparkSession): Int =
    spark.conf.getOption(MaxDistinct).map(_.trim.toInt).getOrElse(2000000)

  def root(spark: SparkSession): String = spark.conf.getOption(Root) match {
    case Some(r) if r.trim.isEmpty => throw BloomIndexErrors.analysis(s"$Root is empty: set it to a folder")
    case Some(r) => r
    case None =>
      val warehouse = spark.conf.get("spark.sql.warehouse.dir")
      new org.apache.hadoop.fs.Path(warehouse, "_bloomindex").toString
  }

  /**
   * Test only: fault injection. When `spark.bloomindex.test.failAfterDataWrite` is `true`, a
   * CREATE or REFRESH stops with [[InjectedFault]] right after its index data is written and
   * before its stable log entry is committed, skipping the rollback: what a driver that dies
   * there leaves behind (a transient entry and an orphan data folder).
   */
  val TestFailAfterDataWrite = "spark.bloomindex.test.failAfterDataWrite"

  def testFault(spark: SparkSession, key: String, where: String): Unit =
    if (spark.conf.getOption(key).exists(_.trim.equalsIgnoreCase("true"))) {
      throw new InjectedFault(s"$key: $where stopped after writing its data, before its log commit")
    }

  def defaultFpp(spark: SparkSession): Double =
    spark.conf.getOption(DefaultFpp).map(_.toDouble).getOrElse(0.01)
}

/** Thrown by the test-only fault injection points of [[BloomIndexConf]]. */
class InjectedFault(message: String) extends RuntimeException(message)
