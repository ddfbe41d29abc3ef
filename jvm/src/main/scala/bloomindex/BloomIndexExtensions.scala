package bloomindex

import org.apache.spark.sql.SparkSessionExtensions

/**
 * The `spark.sql.extensions` entry point:
 * {{{
 *   spark-submit --conf spark.sql.extensions=bloomindex.BloomIndexExtensions ...
 * }}}
 * The parser, optimizer and planner parts are injected here as they land; for now the
 * entry point only exists so that sessions configured for bloomindex start cleanly.
 */
class BloomIndexExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = ()
}
