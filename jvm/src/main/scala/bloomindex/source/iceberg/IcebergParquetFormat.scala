package bloomindex.source.iceberg

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import bloomindex.source.{FileSurvey, LegacyRebase, SourceFile, SourceResolver}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.schema.Type
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.PartitionedFile
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.{StructField, StructType}

/**
 * Spark's Parquet reader as an Iceberg build uses it. The relation's schema carries each
 * column's Iceberg field id, and a file that carries field ids is read by them (Spark's
 * `spark.sql.parquet.fieldId.read.enabled`, set for the build). A file without any field id
 * (imported by `add_files`, `migrate` or `snapshot`) Iceberg reads through the table's name
 * mapping: `renames` gives, for each such file (normalized path), the column of the file each
 * indexed column is read from, resolved on the driver ([[IcebergTables.readable]]); such a file
 * is read by those names, without field ids. Rows are positional: the renamed columns come out
 * where the others would.
 *
 * Names no Iceberg type: the mapping is resolved by [[IcebergTables]].
 *
 * @param nameMapping the table's name mapping (JSON, `schema.name-mapping.default`), if any
 */
final class IcebergParquetFormat(val nameMapping: Option[String], val renames: Map[String, Map[String, String]])
    extends ParquetFileFormat {

  def withRenames(r: Map[String, Map[String, String]]): IcebergParquetFormat = new IcebergParquetFormat(nameMapping, r)

  override def buildReaderWithPartitionValues(
      sparkSession: SparkSession,
      dataSchema: StructType,
      partitionSchema: StructType,
      requiredSchema: StructType,
      filters: Seq[Filter],
      options: Map[String, String],
      hadoopConf: Configuration): PartitionedFile => Iterator[InternalRow] = {
    if (renames.isEmpty) {
      return super.buildReaderWithPartitionValues(sparkSession, dataSchema, partitionSchema, requiredSchema, filters,
        options, hadoopConf)
    }
    // Spark's reader puts its requested schema in the configuration and broadcasts it (in local
    // mode the tasks see that very object): each reader gets a copy of its own.
    def reader(data: StructType, required: StructType, fs: Seq[Filter]): PartitionedFile => Iterator[InternalRow] =
      super.buildReaderWithPartitionValues(sparkSession, data, partitionSchema, required, fs, options,
        new Configuration(hadoopConf))
    val byId = reader(dataSchema, requiredSchema, filters)
    val groups = renames.values.toSeq.distinct
    val byName = groups.map { r =>
      val s = IcebergParquetFormat.renamed(requiredSchema, r)
      reader(s, s, Nil)
    }.toArray
    val index = groups.zipWithIndex.toMap
    val groupOf = sparkSession.sparkContext.broadcast(renames.map { case (p, r) => p -> index(r) })
    (file: PartitionedFile) => groupOf.value.get(SourceResolver.normalize(file.filePath.toPath)) match {
      case Some(g) => byName(g)(file)
      case None => byId(file)
    }
  }

  override def equals(other: Any): Boolean = other match {
    case f: IcebergParquetFormat => f.nameMapping == nameMapping && f.renames == renames
    case _ => false
  }

  override def hashCode(): Int = (nameMapping, renames).hashCode()
}

object IcebergParquetFormat {

  /**
   * The top-level column names of a Parquet file, and whether any of its columns (at any depth)
   * has a field id. `rebased`: Spark's reader would rebase the file's dates and timestamps from the hybrid
   * calendar, whatever the session says, as its footer says a Spark before 3.1 or one in legacy
   * mode wrote it (`DataSourceUtils.datetimeRebaseSpec` / `int96RebaseSpec` take the mode from
   * the file then); Iceberg's reader never rebases.
   */
  final case class FileColumns(hasIds: Boolean, names: Seq[String], rebased: Boolean = false)

  /**
   * `required` with each column named as `names` says, without field ids (read by name). Every
   * column must have a name: one read by field id from a file without ids would fail.
   */
  def renamed(required: StructType, names: Map[String, String]): StructType = StructType(required.fields.map { f =>
    StructField(names.getOrElse(f.name, throw new IllegalStateException(
      s"index build: no column of a file without field ids resolved for ${f.name}")), f.dataType, f.nullable)
  })

  /** Each file's [[FileColumns]], from its footer ([[FileSurvey]]); an unreadable footer counts as carrying ids. */
  def survey(spark: SparkSession, files: Seq[SourceFile]): Map[String, FileColumns] =
    files.map(_.path).zip(FileSurvey(spark, spark.sessionState.newHadoopConf(), files, "Iceberg field ids in the footers")(columnsOf)).toMap

  private def columnsOf(f: SourceFile, conf: Configuration): FileColumns = {
    val path = new Path(f.path)
    try {
      val input = HadoopInputFile.fromStatus(new FileStatus(f.size, false, 1, 0L, f.modificationTime, path), conf)
      val reader = ParquetFileReader.open(input, HadoopReadOptions.builder(conf, path).build())
      try {
        val meta = reader.getFooter.getFileMetaData
        val schema = meta.getSchema
        FileColumns(schema.getFields.asScala.exists(hasIds), schema.getFields.asScala.map(_.getName).toSeq,
          rebasedBySpark(meta.getKeyValueMetaData.asScala.toMap))
      } finally reader.close()
    } catch {
      // Read as the other files: the data pass reports it as Spark does.
      case NonFatal(_) => FileColumns(hasIds = true, Nil)
    }
  }

  /** Whether Spark's reader takes a legacy (rebasing) mode from a file's key-value metadata ([[LegacyRebase.legacyMarked]]). */
  private[iceberg] def rebasedBySpark(kv: Map[String, String]): Boolean = LegacyRebase.legacyMarked(kv.get)

  /** Whether `t` or a field nested in it has a field id (Iceberg's `ParquetSchemaUtil.hasIds`). */
  private def hasIds(t: Type): Boolean =
    t.getId != null || (!t.isPrimitive && t.asGroupType().getFields.asScala.exists(hasIds))
}
