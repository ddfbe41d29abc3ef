package bloomindex.compat

import org.apache.spark.sql.connector.read.{Scan, SupportsRuntimeV2Filtering}

/**
 * Spark 4.1's [[SupportsRuntimeV2Filtering]] has none of the methods 4.2 added (see the
 * `scala-spark-4.2` version of this trait): nothing to forward. Compiled only by a compile check
 * against Spark 4.1 (`make test-spark-versions`); the jar that ships is built against 4.2.
 */
trait RuntimeFilteringForwarders extends SupportsRuntimeV2Filtering {
  def delegate: Scan
}
