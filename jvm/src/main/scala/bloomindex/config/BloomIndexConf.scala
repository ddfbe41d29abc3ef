package bloomindex.config

import bloomindex.errors.BloomIndexErrors

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf

/**
 * What the `spark.bloomindex.*` configuration needs beyond a lookup. The entries (key, type,
 * default, documentation, validation) are defined once, in
 * [[org.apache.spark.sql.bloomindex.BloomIndexSQLConf]], and read where they are used with
 * `spark.sessionState.conf.getConf(BloomIndexSQLConf.X)`; this object holds the index root
 * (its default and its check) and the test-only fault injection.
 */
object BloomIndexConf {

  /** The index root; a blank value is refused here, by the commands that use it (not when set). */
  def root(spark: SparkSession): String = spark.sessionState.conf.getConf(BloomIndexSQLConf.ROOT) match {
    case Some(r) if r.trim.isEmpty => throw BloomIndexErrors.invalidConf(BloomIndexSQLConf.ROOT.key, "is empty: set it to a folder")
    case Some(r) => r
    case None =>
      val warehouse = spark.conf.get("spark.sql.warehouse.dir")
      new org.apache.hadoop.fs.Path(warehouse, "_bloomindex").toString
  }

  /**
   * Test only: fault injection (internal). When `spark.internal.bloomindex.test.failAfterDataWrite`
   * is `true`, a CREATE or REFRESH stops with [[InjectedFault]] at `where`, right after its index
   * data is written and before its stable log entry is committed, skipping the rollback: what a
   * driver that dies there leaves behind (a transient entry and an orphan data folder).
   */
  def testFault(spark: SparkSession, where: String): Unit =
    if (spark.sessionState.conf.getConf(BloomIndexSQLConf.TEST_FAIL_AFTER_DATA_WRITE)) {
      throw new InjectedFault(s"${BloomIndexSQLConf.TEST_FAIL_AFTER_DATA_WRITE.key}: $where stopped after writing its data, before its log commit")
    }
}

/** Thrown by the test-only fault injection points of [[BloomIndexConf]]. */
class InjectedFault(message: String) extends RuntimeException(message)
