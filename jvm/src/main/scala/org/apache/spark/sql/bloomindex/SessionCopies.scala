package org.apache.spark.sql.bloomindex

import java.util.Properties

import org.apache.spark.SparkContext
import org.apache.spark.sql.SparkSession

/**
 * The background refresher's sessions, which need Spark's `private[sql]` and `private[spark]`
 * members (hence this package): a copy of a session that runs with the settings a write had,
 * whatever SET the session saw since, on a thread cleared of the job properties it inherited.
 *
 * One copy per session (the newest [[MaxCopies]] sessions), reused by every refresh of it: a
 * copy (Spark's `cloneSession`) adds a listener bus to the SparkContext until it is collected
 * and makes its own catalogs (an Iceberg REST catalog's client), so one per write would pile
 * them up. Only the refresher's single thread runs on a copy, one task at a time.
 */
object SessionCopies {

  private val MaxCopies = 16

  // The session's id -> its copy, least recently used first.
  private val copies = new java.util.LinkedHashMap[String, SparkSession](16, 0.75f, true) {
    override def removeEldestEntry(e: java.util.Map.Entry[String, SparkSession]): Boolean = size() > MaxCopies
  }
  private val made = java.util.Collections.newSetFromMap(new java.util.WeakHashMap[SparkSession, java.lang.Boolean]())

  private def classic(spark: SparkSession) = spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession]

  /** The settings of `spark` as they are now (what [[runAs]] gives its copy later). */
  def settings(spark: SparkSession): Map[String, String] = classic(spark).sessionState.conf.getAllConfs

  /**
   * The copy of `spark` (or `spark`, itself a copy), with `settings` as its settings, its
   * relation cache emptied (the session's writes refreshed the session's, not the copy's) and no
   * job tags; `fresh` is called with a copy made now (before its first use).
   */
  def runAs(spark: SparkSession, settings: Map[String, String])(fresh: SparkSession => Unit): SparkSession = {
    val copy = made.synchronized {
      if (made.contains(spark)) spark
      else copies.synchronized {
        val id = classic(spark).sessionUUID
        Option(copies.get(id)).getOrElse {
          val c = classic(spark).cloneSession()
          made.add(c)
          fresh(c)
          copies.put(id, c)
          c
        }
      }
    }
    val conf = classic(copy).sessionState.conf
    conf.clear()
    settings.foreach { case (k, v) => conf.setConfString(k, v) }
    classic(copy).sessionState.catalog.invalidateAllCachedTables()
    classic(copy).clearTags()
    copy
  }

  /** Runs `work` with `spark` as the thread's active session (the previous one restored after). */
  def withActive[T](spark: SparkSession)(work: => T): T = classic(spark).withActive(work)

  /**
   * Clears the calling thread's Spark local properties (job group and tags, scheduler pool, SQL
   * execution id): a pool's thread inherits those of the thread that made it.
   */
  def clearLocalProperties(sc: SparkContext): Unit = sc.setLocalProperties(new Properties())
}
