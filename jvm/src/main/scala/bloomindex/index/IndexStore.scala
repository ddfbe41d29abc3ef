package bloomindex.index

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{DataFrame, SparkSession}

/** Reading an ACTIVE version's index data: its Parquet rows and its global filters. */
object IndexStore {

  def dataDir(indexDir: Path, data: IndexData): Path = new Path(indexDir, data.dir)

  /** One row per (source file, column); see [[IndexBuilder.IndexSchema]]. */
  def rows(spark: SparkSession, indexDir: Path, data: IndexData): DataFrame =
    spark.read.schema(IndexBuilder.IndexSchema).parquet(dataDir(indexDir, data).toString)

  /** (path, size, modification time) of every file the rows cover. */
  def fileIdentities(rows: DataFrame): Set[(String, Long, Long)] =
    rows.select("file_path", "file_size", "modification_time").distinct().collect()
      .map(r => (r.getString(0), r.getLong(1), r.getLong(2))).toSet

  /** Column name -> the global filter in Parquet's serialized form. */
  def globalFilters(spark: SparkSession, indexDir: Path, data: IndexData): Map[String, Array[Byte]] =
    spark.read.schema(IndexBuilder.GlobalSchema)
      .parquet(IndexBuilder.globalDir(dataDir(indexDir, data).toString)).select("column", "filter").collect()
      .map(r => r.getString(0) -> r.getAs[Array[Byte]](1)).toMap
}
