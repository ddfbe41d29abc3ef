package org.apache.spark.sql.bloomindex

import org.apache.spark.SparkContext

/**
 * Waiting for a SparkContext's listeners, whose bus is `private[spark]` (hence this package, as
 * for [[BloomIndexSQLConf]]): the workload history's readers let the events already posted
 * (SQL executions' ends) reach its listener before they read.
 */
object ListenerBus {

  /** Whether every event posted to `sc`'s listeners so far was delivered within `timeoutMs`. */
  def drain(sc: SparkContext, timeoutMs: Long): Boolean =
    try { sc.listenerBus.waitUntilEmpty(timeoutMs); true } catch {
      case _: java.util.concurrent.TimeoutException => false
    }
}
