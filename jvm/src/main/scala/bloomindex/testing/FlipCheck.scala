package bloomindex.testing

import java.io.RandomAccessFile

import bloomindex.catalog.{GlobalFilter, IndexCache}
import bloomindex.join.BloomMightContain
import bloomindex.log.{Checksums, IndexLog}

import org.apache.spark.sql.SparkSession

/**
 * Test support, not an API: the "every bit, every file" test's inner loop (tests/test_flips.py), in the JVM: flips one bit
 * of an index file in place (same size), answers a fixed set of point lookups and a join by
 * planning only, as a fresh driver would (every cache of loaded index data cleared), and puts the
 * bit back. Per flip it returns a line: for each lookup the files its scan keeps (`|`-separated,
 * lookups separated by a tab), then the join's verdict on each of its other side's keys
 * (`1` kept, `0` dropped by the join filter, `-` no join filter in the plan), then how many
 * warnings the read logged. In the main jar because the Python tests load the extension from it
 * (the test jar is on another class loader, which cannot see the extension's classes).
 */
object FlipCheck {

  def fresh(): Unit = {
    IndexCache.clear()
    GlobalFilter.clearCache()
    IndexLog.resetWarnings()
    Checksums.resetDamage()
  }

  /** Each lookup's kept files: the files of every scan of its optimized plan. */
  def kept(spark: SparkSession, sql: String): String = {
    val files = spark.sql(sql).inputFiles
    files.map(f => new org.apache.hadoop.fs.Path(f).getName).sorted.mkString("|")
  }

  /** For each of `keys` (bigint): whether the join filters of `sql`'s plan keep it ("-": none in the plan). */
  def joinVerdicts(spark: SparkSession, sql: String, keys: Array[Long]): String = {
    val qe = spark.sql(sql).queryExecution
    val checks = qe.optimizedPlan.flatMap(_.expressions.flatMap(_.collect { case b: BloomMightContain => b }))
    if (checks.isEmpty) "-" * keys.length
    else keys.map(k => if (checks.forall(c => c.keyHash.hashValue(k).exists(c.global.filter.mightContain))) '1' else '0')
      .mkString
  }

  /**
   * The files each scan of `sql`'s optimized plan keeps, scan by scan in plan order: one query
   * of the lookups as a UNION ALL is planned once (each of its scans pruned on its own).
   */
  def keptEach(spark: SparkSession, sql: String): Array[String] =
    spark.sql(sql).queryExecution.optimizedPlan.collectLeaves().map {
      case r: org.apache.spark.sql.execution.datasources.LogicalRelation => r.relation match {
        case h: org.apache.spark.sql.execution.datasources.HadoopFsRelation =>
          h.location.inputFiles.map(f => new org.apache.hadoop.fs.Path(f).getName).sorted.mkString("|")
        case other => s"?${other.getClass.getSimpleName}"
      }
      case _ => "" // an empty relation: nothing read
    }.toArray

  /** One answer line (see above), as a fresh driver: `lookups` is one SQL text (a UNION ALL of them). */
  def answer(spark: SparkSession, lookups: Array[String], join: String, keys: Array[Long]): String = {
    fresh()
    val files = if (lookups.length == 1) keptEach(spark, lookups(0)) else lookups.map(kept(spark, _))
    val verdicts = joinVerdicts(spark, join, keys)
    (files :+ verdicts :+ IndexLog.warnings().size().toString).mkString("\t")
  }

  /**
   * For each (file, bit) of `files` / `bits` (bit offsets from the file's start): flips it,
   * answers, and restores the byte. Answers in order.
   */
  def run(spark: SparkSession, files: Array[String], bits: Array[Long], lookups: Array[String], join: String,
      keys: Array[Long]): Array[String] = {
    require(files.length == bits.length)
    files.indices.map { i =>
      val raf = new RandomAccessFile(files(i), "rw")
      try {
        val at = bits(i) / 8
        raf.seek(at)
        val b = raf.read()
        raf.seek(at)
        raf.write(b ^ (1 << (bits(i) % 8).toInt))
        raf.getFD.sync()
        try answer(spark, lookups, join, keys) finally {
          raf.seek(at)
          raf.write(b)
        }
      } finally raf.close()
    }.toArray
  }
}
