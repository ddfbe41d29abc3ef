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

  /**
   * One row per column: its global filter over every indexed file, and (log format 6 on) the
   * CRC32C of the column's name and the filter ([[globalChecksum]]; null in older files).
   */
  val GlobalSchema: StructType = StructType(Seq(
    StructField("column", StringType, nullable = false),
    StructField("ndv", LongType, nullable = false),
    StructField("filter", BinaryType, nullable = false),
    StructField("checksum", IntegerType, nullable = true)))

  /** The checksum of a global filter's row: CRC32C of the column's name (UTF-8), a 0 byte, and the filter. */
  def globalChecksum(column: String, filter: Array[Byte]): Int = {
    val c = new java.util.zip.CRC32C()
    c.update(column.getBytes(java.nio.charset.StandardCharsets.UTF_8))
    c.update(0)
    c.update(filter)
    c.getValue.toInt
  }

  /** The folder of the global filters in the data folder `dir`. */
  def globalDir(dir: String): String = new Path(dir, "_global").toString
}
