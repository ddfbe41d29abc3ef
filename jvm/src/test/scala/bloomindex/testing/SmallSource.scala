package bloomindex.testing

import bloomindex.api.BloomIndex

import org.apache.spark.sql.SparkSession

/**
 * The small indexed source of the catalog and pruning suites: four Parquet files (file k holds
 * ids k*100 to k*100+99, with `s` = 's' + id and `amount` = id % 3) and index `ev` over the
 * folder, under a fresh `spark.bloomindex.root`. Returns the folder.
 */
object SmallSource {
  def create(spark: SparkSession, columns: String*): String = {
    spark.conf.set("spark.bloomindex.root", TempDirs.create("bloomindex-root").toUri.toString)
    val path = TempDirs.create("bloomindex-src").resolve("events").toString
    spark.range(0, 400, 1, 4).selectExpr("id", "concat('s', id) AS s", "id % 3 AS amount").write.parquet(path)
    BloomIndex(spark).create("ev").onPath("parquet", path).columns(columns: _*).execute()
    path
  }
}
