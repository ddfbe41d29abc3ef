package bloomindex.bench

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.SQLExecution

/**
 * What recording the workload history costs a query's planning (bench/bench_history.py):
 * `query` is planned (parsed, analysed, optimized, planned: `executedPlan`) `perRound` times per
 * round, rounds alternating history on and off, each planning inside an SQL execution id of its
 * own (as a query's planning runs: the records go to that execution's pending entry). Returns
 * JSON: the median ms per planning of each setting and the ratio.
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
    f"""{"rounds": $rounds, "per_round": $perRound, "history_on_ms": $mOn%.4f, "history_off_ms": $mOff%.4f, "ratio": ${mOn / mOff}%.4f}"""
  }
}
