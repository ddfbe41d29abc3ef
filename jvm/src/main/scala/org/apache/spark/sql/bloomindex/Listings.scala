package org.apache.spark.sql.bloomindex

import org.apache.spark.util.HadoopFSUtils

/** Spark's own listing rules that are `private[spark]` (hence this package, as for [[BloomIndexSQLConf]]). */
object Listings {

  /**
   * Whether Spark's listing of a folder leaves out an entry of this name (and all below it):
   * `_temporary`, `_spark_metadata`, `.staging`, a `._COPYING_` file; not a partition's `_x=1`.
   */
  def hidden(name: String): Boolean = HadoopFSUtils.shouldFilterOutPathName(name)
}
