package bloomindex.testing

import org.apache.spark.sql.SparkSession

/**
 * The one SparkSession of the Scala suites that need Spark (local[2], bloomindex's extension,
 * a warehouse in a temporary folder). Suites share it (sbt runs them in one forked JVM) and
 * give each test its own `spark.bloomindex.root`.
 */
object TestSpark {
  lazy val session: SparkSession = {
    val warehouse = TempDirs.create("bloomindex-warehouse")
    val s = SparkSession.builder()
      .master("local[2]")
      .appName("bloomindex-scala-tests")
      .config("spark.ui.enabled", "false")
      .config("spark.sql.shuffle.partitions", "2")
      .config("spark.default.parallelism", "2")
      .config("spark.sql.session.timeZone", "UTC")
      .config("spark.sql.warehouse.dir", warehouse.toString)
      .config("spark.sql.extensions", "bloomindex.BloomIndexExtensions")
      // Indexes follow writes only where a test asks: the suites append and then check REFRESH.
      .config("spark.bloomindex.refresh.default", "manual")
      .getOrCreate()
    s.sparkContext.setLogLevel("ERROR")
    // Stopped at the JVM's exit by the SparkContext's own shutdown hook (before TempDirs deletes
    // the folders it wrote to).
    s
  }
}
