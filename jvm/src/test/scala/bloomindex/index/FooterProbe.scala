package bloomindex.index

import bloomindex.sbbf.SbbfSizing.Sizing
import org.apache.spark.sql.SparkSession

object FooterProbe {
  def main(args: Array[String]): Unit = {
    val spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    val path = args(0)
    val spec = SourceSpec(None, "parquet", Seq(path), Map.empty, Nil)
    val (rel, files) = SourceResolver.snapshot(spark, spec)
    val cols = Seq(ColumnSpec("k_bigint", "BIGINT", 0.01, None, Sizing.Exact), ColumnSpec("k_string", "STRING", 0.01, None, Sizing.Exact))
    val pairs = files.flatMap(f => Seq((f.path, 0), (f.path, 1))).toSet
    def t(name: String)(f: => Any): Unit = {
      val times = (1 to 6).map { _ => val t0 = System.nanoTime(); f; (System.nanoTime() - t0) / 1e9 }
      println(f"$name%-40s ${times.map(x => f"$x%.2f").mkString(" ")}")
    }
    val sc = spark.sparkContext
    import org.apache.spark.sql.Row
    def rows = spark.createDataFrame(FooterFilters.read(spark, files, cols, sc.broadcast(pairs)).map { o =>
      val f = o.filter.get
      Row(f.path, 1L, 1L, "c", f.rows, f.nulls, f.ndv, f.filter, "footer")
    }, IndexBuilder.IndexSchema)
    t("rows noop") { rows.write.format("noop").mode("overwrite").save() }
    t("rows parquet") { rows.write.mode("overwrite").option("parquet.enable.dictionary#filter", "false").parquet("/tmp/fp_out") }
    t("rows parquet nocomp nocrc") { rows.write.mode("overwrite").option("compression", "none").option("parquet.page.write-checksum.enabled", "false").option("parquet.enable.dictionary#filter", "false").parquet("/tmp/fp_out") }
    t("rows parquet nocomp nocrc nostats") { rows.write.mode("overwrite").option("compression", "none").option("parquet.page.write-checksum.enabled", "false").option("parquet.column.statistics.enabled#filter", "false").option("parquet.column.index.enabled#filter", "false").option("parquet.enable.dictionary#filter", "false").parquet("/tmp/fp_out") }
    t("rows parquet nocomp") { rows.write.mode("overwrite").option("compression", "none").option("parquet.enable.dictionary#filter", "false").parquet("/tmp/fp_out") }
    spark.stop()
  }
}
