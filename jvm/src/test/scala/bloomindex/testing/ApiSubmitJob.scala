package bloomindex.testing

import bloomindex.api.BloomIndex

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.functions.col

/**
 * A small Scala job for `spark-submit --packages io.github.bloomindex:bloomindex_2.13:<version>
 * --repositories file://.../dist/maven --class bloomindex.testing.ApiSubmitJob <tests jar> <work dir>`
 * (tests/test_dist.py): bloomindex's classes come from the Maven artifacts, this class from
 * the tests jar. Writes 8 Parquet files, indexes them with the Scala API, runs a point query
 * with and without pruning and prints one `RESULT key=value;...` line.
 */
object ApiSubmitJob {
  def main(args: Array[String]): Unit = {
    val work = args.headOption.getOrElse(sys.error("usage: ApiSubmitJob <work dir>"))
    val spark = SparkSession.builder().appName("bloomindex-api-submit").getOrCreate()
    spark.conf.set("spark.bloomindex.root", s"$work/indexes")
    val path = s"$work/events"
    spark.range(0, 8000, 1, 8).selectExpr("id", "concat('s', id) AS s").write.parquet(path)

    val bi = BloomIndex(spark)
    bi.create("events_id").onPath("parquet", path).columns("id", "s").fpp(0.01).execute()
    // A new DataFrame per run: a DataFrame keeps the plan it optimized first.
    def query = spark.read.parquet(path).where(col("s") === "s4242")
    val rowsOn = query.collect().map(_.getLong(0)).toSeq
    val filesRead = query.inputFiles.length
    spark.conf.set("spark.bloomindex.pruning.enabled", "false")
    val rowsOff = query.collect().map(_.getLong(0)).toSeq
    val filesTotal = query.inputFiles.length
    spark.conf.unset("spark.bloomindex.pruning.enabled")
    val jar = classOf[BloomIndex].getProtectionDomain.getCodeSource.getLocation
    val fields = Seq(
      "rows_on" -> rowsOn.mkString(","), "rows_off" -> rowsOff.mkString(","),
      "files_read" -> filesRead, "files_total" -> filesTotal,
      "indexes" -> bi.list().collect().map(_.getString(0)).mkString(","),
      "files_indexed" -> bi.describe("events_id")("files_indexed"),
      "bloomindex_jar" -> jar, "spark" -> spark.version)
    println("RESULT " + fields.map { case (k, v) => s"$k=$v" }.mkString(";"))
    spark.stop()
  }
}
