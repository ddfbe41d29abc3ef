package org.apache.spark.sql.bloomindex

import java.util.Properties

import org.apache.spark.SparkContext
import org.apache.spark.sql.SparkSession

/**
 * What the automatic refreshes need of Spark's `private[sql]` and `private[spark]` members
 * (hence this package): a session whose settings stay as they were, and a thread cleared of the
 * job properties it inherited.
 */
object SessionCopies {

  /**
   * A copy of `spark` (Spark's `cloneSession`: its settings, temporary views, functions and
   * listeners as they are now, the same SparkContext and shared state). A SET on `spark` from
   * then on does not reach the copy, so a build run on it reads one set of settings throughout.
   */
  def frozen(spark: SparkSession): SparkSession =
    spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession].cloneSession()

  /** Runs `work` with `spark` as the thread's active session (the previous one restored after). */
  def withActive[T](spark: SparkSession)(work: => T): T =
    spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession].withActive(work)

  /**
   * Clears the calling thread's Spark local properties (job group and tags, scheduler pool, SQL
   * execution id): a pool's thread inherits those of the thread that made it.
   */
  def clearLocalProperties(sc: SparkContext): Unit = sc.setLocalProperties(new Properties())
}
