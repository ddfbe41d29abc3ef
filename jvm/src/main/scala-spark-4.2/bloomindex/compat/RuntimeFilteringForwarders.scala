package bloomindex.compat

import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.read.{Scan, SupportsRuntimeV2Filtering}

/**
 * The methods Spark 4.2 added to [[SupportsRuntimeV2Filtering]] (with defaults; Spark 4.1 has
 * neither), forwarded to the wrapped scan by name. Compiled where the build's Spark is 4.2 or
 * newer (build.sbt picks this folder by the Spark version); the jar built so runs on 4.1 too,
 * whose Spark never calls them. Without these overrides scalac compiles forwarders to 4.2's
 * defaults into the wrapping class, references 4.1's jars do not resolve (the link check of
 * `make test-spark-versions`). A compile against Spark 4.1 takes the folder `scala-spark-4.1`,
 * where the trait adds nothing.
 */
trait RuntimeFilteringForwarders extends SupportsRuntimeV2Filtering {
  def delegate: Scan

  override def pushedPredicates(): Array[Predicate] =
    SparkShim.callIfPresent(delegate, "pushedPredicates", Array.empty[Predicate])
  override def supportsIterativePushdown(): Boolean =
    SparkShim.callIfPresent(delegate, "supportsIterativePushdown", false)
}
