package bloomindex.source.delta

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.PartitionedFile
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.{MetadataBuilder, StructType}

/**
 * Spark's Parquet reader as a Delta build uses it: a column that carries Delta column mapping's
 * metadata (its table schema's `delta.columnMapping.physicalName`, and `delta.columnMapping.id`)
 * is read from the files under its physical name, the name Delta writes it under, and in id
 * mode (`idMode`) by its field id as Parquet field id, as Delta's own reader does (in name mode
 * Delta reads by physical name only, field ids removed). Columns without that metadata (tables
 * without column mapping) are read by their names. Rows are positional: the columns come out
 * under the names the scan asked for.
 *
 * Filters are not pushed down (they name the table's columns, and a build filters nothing).
 */
final class DeltaPhysicalParquetFormat(val idMode: Boolean) extends ParquetFileFormat {

  override def buildReaderWithPartitionValues(
      sparkSession: SparkSession,
      dataSchema: StructType,
      partitionSchema: StructType,
      requiredSchema: StructType,
      filters: Seq[Filter],
      options: Map[String, String],
      hadoopConf: Configuration): PartitionedFile => Iterator[InternalRow] =
    super.buildReaderWithPartitionValues(sparkSession, DeltaPhysicalParquetFormat.physical(dataSchema, idMode),
      partitionSchema, DeltaPhysicalParquetFormat.physical(requiredSchema, idMode), Nil, options, hadoopConf)

  override def equals(other: Any): Boolean = other match {
    case f: DeltaPhysicalParquetFormat => f.idMode == idMode
    case _ => false
  }

  override def hashCode(): Int = getClass.hashCode() * 31 + idMode.hashCode()
}

object DeltaPhysicalParquetFormat {

  private val ParquetFieldIdKey = "parquet.field.id"

  /** `schema` as the files store it: each mapped top-level column under its physical name (and field id in id mode). */
  def physical(schema: StructType, idMode: Boolean): StructType = StructType(schema.fields.map { f =>
    val m = f.metadata
    if (!m.contains(DeltaProvider.PhysicalNameKey)) f
    else {
      val md = new MetadataBuilder().withMetadata(m).remove(ParquetFieldIdKey)
      if (idMode && m.contains(DeltaProvider.FieldIdKey)) md.putLong(ParquetFieldIdKey, m.getLong(DeltaProvider.FieldIdKey))
      f.copy(name = m.getString(DeltaProvider.PhysicalNameKey), metadata = md.build())
    }
  })
}
