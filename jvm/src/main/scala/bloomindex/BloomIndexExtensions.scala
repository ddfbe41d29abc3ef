package bloomindex

import bloomindex.optimizer.BloomIndexPruning
import bloomindex.sql.BloomIndexSqlParser

import org.apache.spark.sql.SparkSessionExtensions

/**
 * The `spark.sql.extensions` entry point:
 * {{{
 *   spark-submit --conf spark.sql.extensions=bloomindex.BloomIndexExtensions ...
 * }}}
 */
class BloomIndexExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    // parser: CREATE/REFRESH/DROP/SHOW/DESCRIBE BLOOM INDEX; everything else goes to Spark's
    // parser. Injected parsers wrap the previous one, so other extensions' statements still parse.
    extensions.injectParser((_, delegate) => new BloomIndexSqlParser(delegate))

    // optimizer: file pruning. Pre-CBO: once, after the operator optimizations pushed filters
    // down onto the file relations, and before statistics are computed from the file index.
    extensions.injectPreCBORule(spark => new BloomIndexPruning(spark))
  }
}
