package bloomindex.compat

import java.nio.file.Files

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation, PartitioningAwareFileIndex}
import org.scalatest.funsuite.AnyFunSuite

import bloomindex.testing.{TempDirs, TestSpark}

/**
 * [[SparkShim.allFilesOf]]: Spark's `allFiles` taken from the listing, exactly what Spark's
 * returns where it answers, and no answer where a path filter, a recursive lookup or a root
 * that is no listed folder makes Spark's differ.
 */
class AllFilesSuite extends AnyFunSuite {

  private lazy val spark: SparkSession = TestSpark.session

  private def index(df: DataFrame): PartitioningAwareFileIndex =
    df.queryExecution.analyzed.collectLeaves().collectFirst {
      case l: LogicalRelation => l.relation.asInstanceOf[HadoopFsRelation].location.asInstanceOf[PartitioningAwareFileIndex]
    }.get

  private def fast(df: DataFrame): Option[Seq[String]] = {
    val p = index(df)
    SparkShim.allFilesOf(p, SparkShim.listingOf(p).get).map(_.map(_.getPath.toString))
  }

  private def spark_(df: DataFrame): Seq[String] = index(df).allFiles().map(_.getPath.toString)

  /** A folder of `n` Parquet files of one row each (and Spark's `_SUCCESS`). */
  private def folder(n: Int): String = {
    val path = TempDirs.create("bloomindex-allfiles").resolve("t").toString
    spark.range(0, n, 1, n).write.parquet(path)
    path
  }

  test("a folder, and several: the files Spark's allFiles returns, in its order") {
    val a = folder(3)
    val b = folder(2)
    // A hidden file and a metadata file beside the data: whatever Spark's listing keeps, both keep.
    Files.write(java.nio.file.Paths.get(a, "_hidden"), Array[Byte](1))
    Files.write(java.nio.file.Paths.get(a, ".dot"), Array[Byte](1))
    for (df <- Seq(spark.read.parquet(a), spark.read.parquet(a, b), spark.read.parquet(b, a), spark.read.parquet(a, a))) {
      val expected = spark_(df)
      assert(expected.nonEmpty)
      assert(fast(df).contains(expected))
    }
    assert(fast(spark.read.parquet(a, b)).get.size == spark_(spark.read.parquet(a)).size + spark_(spark.read.parquet(b)).size)
  }

  test("no answer where Spark's allFiles filters or looks elsewhere: path filters, recursive lookup, a file root, an allFiles of its own, partitions") {
    val a = folder(3)
    val one = new java.io.File(a).listFiles().filter(_.getName.endsWith(".parquet")).minBy(_.getName).toString
    val filtered = Seq(
      spark.read.option("pathGlobFilter", "*-00001-*").parquet(a),
      spark.read.option("modifiedAfter", "2000-01-01T00:00:00").parquet(a),
      spark.read.option("modifiedBefore", "2000-01-01T00:00:00").schema("id LONG").parquet(a),
      spark.read.option("recursiveFileLookup", "true").parquet(a),
      spark.read.parquet(one))
    filtered.foreach(df => assert(fast(df).isEmpty, df.queryExecution.analyzed))
    // The filters do change Spark's answer (so an answer taken from the listing would be wrong).
    assert(spark_(filtered(0)).size == 1 && spark_(filtered(2)).isEmpty)
    // A file index whose allFiles is its own (here: the first file only).
    val own = new org.apache.spark.sql.execution.datasources.InMemoryFileIndex(spark,
        index(spark.read.parquet(a)).rootPaths, Map.empty, None) {
      override def allFiles(): Seq[org.apache.hadoop.fs.FileStatus] = super.allFiles().take(1)
    }
    assert(SparkShim.allFilesOf(own, SparkShim.listingOf(own).get).isEmpty && own.allFiles().size == 1)
    val parted = TempDirs.create("bloomindex-allfiles").resolve("p").toString
    spark.range(4).selectExpr("id", "id % 2 AS k").write.partitionBy("k").parquet(parted)
    assert(fast(spark.read.parquet(parted)).isEmpty)
  }
}
