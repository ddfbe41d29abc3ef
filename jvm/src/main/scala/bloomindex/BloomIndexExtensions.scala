package bloomindex

import bloomindex.actions.{TableEvents, WriteEvents}
import bloomindex.compat.SparkVersions
import bloomindex.config.UnknownKeys
import bloomindex.execution.BloomIndexColumnarRule
import bloomindex.history.{HistoryFunction, WorkloadHistory}
import bloomindex.join.{BloomMightContain, InjectBloomJoinFilters}
import bloomindex.pruning.{BloomIndexPlanning, BloomIndexPruning}
import bloomindex.sql.BloomIndexSqlParser

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf

/**
 * The `spark.sql.extensions` entry point:
 * {{{
 *   spark-submit --conf spark.sql.extensions=bloomindex.BloomIndexExtensions ...
 * }}}
 */
class BloomIndexExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    // Spark version: the jar runs on Spark 4.1.x to 4.3.x (differences go through
    // bloomindex.compat.SparkShim). On any other Spark the session fails to start, with
    // BLOOM_INDEX_UNSUPPORTED_SPARK_VERSION naming the range, rather than a NoSuchMethodError
    // deep in a query later.
    SparkVersions.check()

    // configuration: the typed spark.bloomindex.* entries, registered with SQLConf (once per
    // JVM) before the session's first SET, so that SET validates them and SET -v lists them.
    BloomIndexSQLConf.ensureRegistered()

    // The code a first pruned query runs, run once on made-up data while the session starts
    // (a daemon thread; see catalog.Warmup).
    bloomindex.catalog.Warmup.start()

    // parser: CREATE/REFRESH/DROP/SHOW/DESCRIBE BLOOM INDEX; everything else goes to Spark's
    // parser. Injected parsers wrap the previous one, so other extensions' statements still parse.
    extensions.injectParser((_, delegate) => BloomIndexSqlParser(delegate))

    // Pruning, at three points, each asking the provider of a scan's source (pruning.ScanPruner).
    // optimizer: file pruning. Pre-CBO: once, after the operator optimizations pushed filters
    // down onto the file relations, and before statistics are computed from the file index.
    extensions.injectPreCBORule(spark => new BloomIndexPruning(spark))

    // When a session's state is built: DROP TABLE drops the table's indexes (actions.TableEvents,
    // a listener of the session catalog), the write listener of actions.WriteEvents, the workload
    // history's listener of SQL executions (history.WorkloadHistory, once per SparkContext), and each unknown spark.bloomindex.* key of the session's
    // configuration gets a warning naming the closest known key (config.UnknownKeys).
    // On each analyzed plan: a CALL whose procedure Spark ran during analysis queues the
    // refresh of the indexes over the table it wrote (WriteEvents.afterAnalysis; a match on the
    // plan's root, nothing more for any other plan).
    extensions.injectCheckRule { spark =>
      TableEvents.register(spark)
      WriteEvents.register(spark)
      WorkloadHistory.register(spark)
      UnknownKeys.warn(spark)
      plan => WriteEvents.afterAnalysis(spark, plan)
    }

    // writes: an index with refresh = on_write / background follows its source's writes
    // (actions.WriteEvents): file source writes planned with the refresh after their commit,
    // other writes seen by the session's query execution listener (registered above).
    extensions.injectPlannerStrategy(spark => new WriteEvents.Planning(spark))

    // the table's life: ALTER TABLE ... RENAME TO of a table no session catalog event reports
    // (an Iceberg catalog's) is planned as Spark plans it, then its indexes follow the new name
    // (actions.TableEvents.Planning).
    extensions.injectPlannerStrategy(spark => new TableEvents.Planning(spark))

    // optimizer: join pre-filtering from global filters, after pruning (it may read the
    // pruned file index of the indexed side). Pre-CBO too: once, after Spark's push-down.
    extensions.injectPreCBORule(spark => new InjectBloomJoinFilters(spark))

    // SQL function: bloom_might_contain('<index>', '<column>', expr).
    extensions.injectFunction(BloomMightContain.function)

    // Table function: bloom_index_history(), the workload history the pruning rules record
    // (history.WorkloadHistory, its listener registered with the check rule above).
    extensions.injectTableFunction(HistoryFunction.function)

    // planner: the same pruning for scans whose node appears after pre-CBO (V2 file scans,
    // formats that plan their own files). Extra strategies are tried before Spark's, and the
    // provider hands the pruned plan to Spark's DataSourceV2Strategy.
    extensions.injectPlannerStrategy(spark => new BloomIndexPlanning(spark))

    // physical: mark pruned scans for EXPLAIN and the UI's metrics, and plan Bloom filter
    // checks as BloomFilterExec. A columnar rule because those run on every physical plan,
    // adaptive or not, before transitions are inserted. Scans a format plans with its own rules
    // and strategies are pruned there too, once planned (pruning.PlannedScanPruning).
    extensions.injectColumnar(spark => new BloomIndexColumnarRule(spark))
  }
}
