package bloomindex.testing

import bloomindex.compat.SparkShim

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan}

/**
 * The Scala job of `make test-spark-versions` (tests/spark_versions/test_spark_submit.py):
 * `spark-submit --jars <bloomindex.jar>,<zero-allocation-hashing> --class
 * bloomindex.testing.VersionSmokeJob <tests jar> <work dir>` on each supported Spark, with the
 * jar built once against the build's Spark. It indexes 8 Parquet files with SQL, runs a point
 * query through the V1 and the V2 file source with and without pruning, rebuilds a planned scan
 * node through the shim, and prints one `RESULT key=value;...` line (the keys of
 * ApiSubmitJob's, which issue 18's Scala API job prints, plus the V2 and shim results).
 */
object VersionSmokeJob {
  def main(args: Array[String]): Unit = {
    val work = args.headOption.getOrElse(sys.error("usage: VersionSmokeJob <work dir>"))
    val spark = SparkSession.builder().appName("bloomindex-version-smoke").getOrCreate()
    spark.conf.set("spark.bloomindex.root", s"$work/indexes")
    val path = s"$work/events"
    spark.range(0, 8000, 1, 8).selectExpr("id", "concat('s', id) AS s").write.parquet(path)

    spark.sql(s"CREATE BLOOM INDEX events_id ON parquet.`$path` FOR COLUMNS (id, s) OPTIONS (fpp = 0.01)")
    // A new DataFrame per run: a DataFrame keeps the plan it optimized first.
    def query = spark.read.parquet(path).where(col("s") === "s4242")
    def run(): (Seq[Long], Int) = (query.collect().map(_.getLong(0)).toSeq, query.inputFiles.length)
    val (rowsOn, filesRead) = run()
    // The V2 file source (its scan node is rebuilt through SparkShim.withScan when pruned).
    spark.conf.set("spark.sql.sources.useV1SourceList", "")
    val (rowsV2, filesReadV2) = run()
    spark.conf.set("spark.bloomindex.pruning.enabled", "false")
    val (rowsOffV2, _) = run()
    spark.conf.unset("spark.sql.sources.useV1SourceList")
    val (rowsOff, filesTotal) = run()
    spark.conf.unset("spark.bloomindex.pruning.enabled")

    // A planned file scan rebuilt by the shim (as DeltaScanPruning does) runs as the original.
    val scan = query.queryExecution.executedPlan.collectFirst { case s: FileSourceScanExec => s }
      .getOrElse(sys.error("no FileSourceScanExec"))
    val rebuilt = SparkShim.withRelation(scan, scan.relation)
    def rows(p: SparkPlan): Long =
      if (p.supportsColumnar) p.executeColumnar().map(_.numRows().toLong).fold(0L)(_ + _) else p.executeCollect().length.toLong
    val shimRows = !(rebuilt eq scan) && rebuilt == scan && rows(rebuilt) == rows(scan) && rows(scan) > 0

    val indexes = spark.sql("SHOW BLOOM INDEXES").collect().map(_.getString(0)).mkString(",")
    val filesIndexed = spark.sql("DESCRIBE BLOOM INDEX events_id").collect()
      .collectFirst { case r if r.getString(0) == "files_indexed" => r.getString(1) }.getOrElse("?")
    val jar = SparkShim.getClass.getProtectionDomain.getCodeSource.getLocation
    val fields = Seq(
      "rows_on" -> rowsOn.mkString(","), "rows_off" -> rowsOff.mkString(","),
      "files_read" -> filesRead, "files_total" -> filesTotal,
      "rows_v2" -> rowsV2.mkString(","), "rows_off_v2" -> rowsOffV2.mkString(","), "files_read_v2" -> filesReadV2,
      "shim_rebuilt_scan_ok" -> shimRows,
      "indexes" -> indexes, "files_indexed" -> filesIndexed,
      "bloomindex_jar" -> jar, "spark" -> spark.version)
    println("RESULT " + fields.map { case (k, v) => s"$k=$v" }.mkString(";"))
    spark.stop()
  }
}
