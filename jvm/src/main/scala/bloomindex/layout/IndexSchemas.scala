package bloomindex.layout

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.types._

/**
 * The Spark schemas of index data kept as Parquet rows (the `rows` and `columns` layouts, and
 * the global filters of every layout), and where the global filters live in a data folder.
 */
object IndexSchemas {

  /** One row per (source file, column). */
  val IndexSchema: StructType = StructType(Seq(
    StructField("file_path", StringType, nullable = false),
    StructField("file_size", LongType, nullable = false),
    StructField("modification_time", LongType, nullable = false),
    StructField("column", StringType, nullable = false),
    StructField("row_count", LongType, nullable = false),
    StructField("null_count", LongType, nullable = false),
    StructField("ndv", LongType, nullable = false),
    StructField("filter", BinaryType, nullable = false),
    StructField("built_from", StringType, nullable = false)))

  /** One row per column: its global filter over every indexed file. */
  val GlobalSchema: StructType = StructType(Seq(
    StructField("column", StringType, nullable = false),
    StructField("ndv", LongType, nullable = false),
    StructField("filter", BinaryType, nullable = false)))

  /** The folder of the global filters in the data folder `dir`. */
  def globalDir(dir: String): String = new Path(dir, "_global").toString
}
