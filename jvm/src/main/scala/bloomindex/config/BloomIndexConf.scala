package bloomindex.config

import bloomindex.errors.BloomIndexErrors

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf

/**
 * The `spark.bloomindex.*` configuration: key names and typed accessors. The entries (type,
 * default, documentation, validation) are defined once, in
 * [[org.apache.spark.sql.bloomindex.BloomIndexSQLConf]], and registered with Spark's SQLConf:
 * `SET -v` lists them, and a value of the wrong type is refused when it is set, naming the key.
 * Values are read with `spark.sessionState.conf.getConf(entry)`.
 */
object BloomIndexConf {

  /** Folder holding one sub-folder per index. Default: `_bloomindex` in the warehouse directory. */
  val Root: String = BloomIndexSQLConf.ROOT.key

  /** Default false positive rate of a column's filters. */
  val DefaultFpp: String = BloomIndexSQLConf.FPP_DEFAULT.key

  /** Turns file pruning with Bloom indexes on or off (default on). */
  val PruningEnabled: String = BloomIndexSQLConf.PRUNING_ENABLED.key

  /** Turns join pre-filtering with global Bloom filters on or off (default on). */
  val JoinFilterEnabled: String = BloomIndexSQLConf.JOIN_FILTER_ENABLED.key

  /**
   * Builds take a Parquet file's filter for a column from its footer when every row group
   * carries one that fits (default on); off: always from the data.
   */
  val FooterFilters: String = BloomIndexSQLConf.BUILD_FOOTER_FILTERS.key

  /**
   * Distinct values a build task counts exactly per file and column (default 2,000,000: up to
   * 32 MB of buffered hashes per indexed column plus a 32 MB sort buffer per running task); a
   * file with more is sized from an HLL estimate and read a second time.
   */
  val MaxDistinct: String = BloomIndexSQLConf.BUILD_MAX_DISTINCT_PER_FILE.key

  /**
   * Test hook, not for users (internal: not in `SET -v`): each task of a build's data pass
   * sleeps this many milliseconds before reading (default 0), so that a fault test can kill an
   * executor while a build runs.
   */
  val TestBuildTaskDelayMs: String = BloomIndexSQLConf.TEST_BUILD_TASK_DELAY_MS.key

  /**
   * Test only: fault injection (internal). When `spark.internal.bloomindex.test.failAfterDataWrite`
   * is `true`, a CREATE or REFRESH stops with [[InjectedFault]] right after its index data is
   * written and before its stable log entry is committed, skipping the rollback: what a driver
   * that dies there leaves behind (a transient entry and an orphan data folder).
   */
  val TestFailAfterDataWrite: String = BloomIndexSQLConf.TEST_FAIL_AFTER_DATA_WRITE.key

  /** Driver memory the loaded index data of pruning may hold (default 512m). */
  val CacheMaxBytes: String = BloomIndexSQLConf.CACHE_MAX_BYTES.key

  /** An indexed column in at most this many index data files is loaded without a Spark job. */
  val LoadDriverMaxFiles: String = BloomIndexSQLConf.LOAD_DRIVER_MAX_FILES.key

  /** Threads the driver loads index data files with. */
  val LoadThreads: String = BloomIndexSQLConf.LOAD_THREADS.key
  /** Write probe files (log format 4, layout `blocks`); off writes format 3's `columns` layout. */
  val BuildBlockMajor: String = BloomIndexSQLConf.BUILD_BLOCK_MAJOR.key

  // Values of `spark`'s session (the default when unset), read by `conf.getConf(entry)`.

  def pruningEnabled(spark: SparkSession): Boolean = BloomIndexSQLConf.pruningEnabled(spark.sessionState.conf)

  def joinFilterEnabled(spark: SparkSession): Boolean = BloomIndexSQLConf.joinFilterEnabled(spark.sessionState.conf)

  def footerFilters(spark: SparkSession): Boolean = BloomIndexSQLConf.buildFooterFilters(spark.sessionState.conf)

  def testBuildTaskDelayMs(spark: SparkSession): Long = BloomIndexSQLConf.testBuildTaskDelayMs(spark.sessionState.conf)

  def cacheMaxBytes(spark: SparkSession): Long = BloomIndexSQLConf.cacheMaxBytes(spark.sessionState.conf)

  def loadDriverMaxFiles(spark: SparkSession): Int = BloomIndexSQLConf.loadDriverMaxFiles(spark.sessionState.conf)

  def loadThreads(spark: SparkSession): Int = BloomIndexSQLConf.loadThreads(spark.sessionState.conf)

  def pruningCheckFiles(spark: SparkSession): Boolean = BloomIndexSQLConf.pruningCheckFiles(spark.sessionState.conf)

  def buildBlockMajor(spark: SparkSession): Boolean = BloomIndexSQLConf.buildBlockMajor(spark.sessionState.conf)

  /** Test only: the log format 4 layout `blocks` instead of `probes` (see BloomIndexSQLConf). */
  def testBlocksLayout(spark: SparkSession): Boolean = BloomIndexSQLConf.testBlocksLayout(spark.sessionState.conf)

  def maxDistinct(spark: SparkSession): Int = BloomIndexSQLConf.buildMaxDistinctPerFile(spark.sessionState.conf)

  def defaultFpp(spark: SparkSession): Double = BloomIndexSQLConf.fppDefault(spark.sessionState.conf)

  /** The index root; a blank value is refused here, by the commands that use it (not when set). */
  def root(spark: SparkSession): String = BloomIndexSQLConf.root(spark.sessionState.conf) match {
    case Some(r) if r.trim.isEmpty => throw BloomIndexErrors.invalidConf(Root, "is empty: set it to a folder")
    case Some(r) => r
    case None =>
      val warehouse = spark.conf.get("spark.sql.warehouse.dir")
      new org.apache.hadoop.fs.Path(warehouse, "_bloomindex").toString
  }

  /** Throws [[InjectedFault]] at `where` when the boolean test switch `key` is on. */
  def testFault(spark: SparkSession, key: String, where: String): Unit =
    if (BloomIndexSQLConf.testSwitch(spark.sessionState.conf, key)) {
      throw new InjectedFault(s"$key: $where stopped after writing its data, before its log commit")
    }
}

/** Thrown by the test-only fault injection points of [[BloomIndexConf]]. */
class InjectedFault(message: String) extends RuntimeException(message)
