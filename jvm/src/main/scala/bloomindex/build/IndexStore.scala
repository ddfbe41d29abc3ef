package bloomindex.build

import bloomindex.log.{IndexData, IndexSpec}

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{DataFrame, SparkSession}

/**
 * Reading an ACTIVE version's index data: its Parquet rows and its global filters. A data
 * file that is missing or not Parquet (deleted, truncated, overwritten) is skipped, so its
 * source files have no index row and are always read; DESCRIBE reports it as damage.
 */
object IndexStore {

  def dataDir(indexDir: Path, data: IndexData): Path = new Path(indexDir, data.dir)

  /** One row per (source file, column); see [[IndexBuilder.IndexSchema]]. */
  def rows(spark: SparkSession, indexDir: Path, data: IndexData): DataFrame =
    spark.read.schema(IndexBuilder.IndexSchema)
      .option("ignoreCorruptFiles", "true").option("ignoreMissingFiles", "true")
      .parquet(dataDir(indexDir, data).toString)

  /** (path, size, modification time) of every file the rows cover. */
  def fileIdentities(rows: DataFrame): Set[(String, Long, Long)] =
    rows.select("file_path", "file_size", "modification_time").distinct().collect()
      .map(r => (r.getString(0), r.getLong(1), r.getLong(2))).toSet

  /**
   * How many of `rows`' filters do not deserialize as their column's design (bad header, a
   * size over 128 MiB or beyond the bytes stored, a column the spec does not have), with one
   * example; None when all do. Checked on the executors.
   */
  def unreadableFilters(rows: DataFrame, spec: IndexSpec): Option[(Long, String)] = {
    val designs = spec.columns.map(c => c.name -> c.algorithm).toMap
    val bad = rows.select("file_path", "column", "filter").rdd.flatMap { r =>
      val why = designs.get(r.getString(1)) match {
        case None => Some("not an indexed column")
        case Some(a) => try { a.fromBytes(r.getAs[Array[Byte]](2)); None } catch { case NonFatal(e) => Some(e.getMessage) }
      }
      why.map(w => s"${r.getString(0)} column ${r.getString(1)}: $w")
    }
    bad.map(w => (1L, w)).fold((0L, null)) { case ((n1, w1), (n2, w2)) => (n1 + n2, Option(w1).getOrElse(w2)) } match {
      case (0L, _) => None
      case (n, w) => Some((n, w))
    }
  }

  /** Column name -> the global filter in Parquet's serialized form. */
  def globalFilters(spark: SparkSession, indexDir: Path, data: IndexData): Map[String, Array[Byte]] =
    spark.read.schema(IndexBuilder.GlobalSchema)
      .parquet(IndexBuilder.globalDir(dataDir(indexDir, data).toString)).select("column", "filter").collect()
      .map(r => r.getString(0) -> r.getAs[Array[Byte]](1)).toMap
}
