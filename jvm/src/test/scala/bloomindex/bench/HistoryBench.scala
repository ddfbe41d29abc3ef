package bloomindex.bench

import bloomindex.pruning.ScanHistory
import bloomindex.source.SourceProviders

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.Filter
import org.apache.spark.sql.execution.SQLExecution

/**
 * What recording the workload history costs a query's planning (bench/bench_history.py):
 * `query` is planned (parsed, analysed, optimized, planned: `executedPlan`) `perRound` times per
 * round, rounds alternating history on and off, each planning inside an SQL execution id of its
 * own (as a query's planning runs: the records go to that execution's pending entry). Returns
 * JSON: the median ms per planning of each setting and the ratio, and the recording alone
 * (µs per scan, and as a share of the planning with the history off).
 */
object HistoryBench {

  private val Key = "spark.bloomindex.history.enabled"

  def run(spark: SparkSession, query: String, rounds: Int, perRound: Int): String = {
    val sc = spark.sparkContext
    var nextId = Long.MaxValue / 2
    def planOnce(): Long = {
      nextId += 1
      sc.setLocalProperty(SQLExecution.EXECUTION_ID_KEY, nextId.toString)
      try {
        val t0 = System.nanoTime()
        spark.sql(query).queryExecution.executedPlan
        System.nanoTime() - t0
      } finally sc.setLocalProperty(SQLExecution.EXECUTION_ID_KEY, null)
    }
    def round(on: Boolean): Double = {
      spark.conf.set(Key, on.toString)
      try (1 to perRound).map(_ => planOnce()).sum / 1e6 / perRound
      finally spark.conf.unset(Key)
    }
    // Warm-up: both settings, until the JIT settled.
    (1 to 3).foreach { _ => round(on = true); round(on = false) }
    val on = Seq.newBuilder[Double]
    val off = Seq.newBuilder[Double]
    (1 to rounds).foreach { i =>
      // ABBA order, so that a drift in the machine's load weighs on both alike.
      if (i % 2 == 0) { on += round(true); off += round(false) } else { off += round(false); on += round(true) }
    }
    val (mOn, mOff) = (Timing.median(on.result()), Timing.median(off.result()))
    val recordUs = recordCost(spark, query)
    f"""{"rounds": $rounds, "per_round": $perRound, "history_on_ms": $mOn%.4f, "history_off_ms": $mOff%.4f, """ +
      f""""ratio": ${mOn / mOff}%.4f, "record_us": $recordUs%.2f, "record_share_of_planning": ${recordUs / 1000 / mOff}%.5f}"""
  }

  /**
   * The recording alone, as the pruning hook runs it for `query`'s scan (the filter walk, the
   * settings, the record appended to an execution's entry): median microseconds per call over
   * rounds of 1,000 calls, each in an execution id of its own.
   */
  private def recordCost(spark: SparkSession, query: String): Double = {
    val plan = spark.sql(query).queryExecution.optimizedPlan
    val filter = plan.collectFirst { case f: Filter if f.child.children.isEmpty => f }.get
    val scan = SourceProviders.describe(filter.child).get
    val files = scan.allFiles()
    val listed = Some((files.size.toLong, files.map(_.getLen).sum))
    val sc = spark.sparkContext
    var id = Long.MaxValue / 4
    Timing.nsPerItem(1000, 2000000000L, 15, 5) {
      var i = 0
      while (i < 1000) {
        id += 1
        sc.setLocalProperty(SQLExecution.EXECUTION_ID_KEY, id.toString)
        ScanHistory.record(spark, filter, filter.condition, scan, listed, None)
        i += 1
      }
      sc.setLocalProperty(SQLExecution.EXECUTION_ID_KEY, null)
    } / 1000
  }
}
