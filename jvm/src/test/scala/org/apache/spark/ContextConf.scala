package org.apache.spark

/** Tests only: the running SparkContext's own settings (`getConf` gives a copy), to stand in for a session started with others. */
object ContextConf {
  def of(sc: SparkContext): SparkConf = sc.conf
}
