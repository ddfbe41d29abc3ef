package bloomindex.actions

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import bloomindex.indexing.{WriteTaskFilters, WrittenFilter, WrittenFilters}
import bloomindex.log.{ColumnSpec, LogEntry, RefreshMode}

import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.connector.write.WriterCommitMessage
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.datasources.{InsertIntoHadoopFsRelationCommand, WriteFilesExec, WriteFilesSpec, WriteJobDescription}
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.types._
import org.apache.spark.util.CollectionAccumulator

/**
 * The filters of an `on_write` index's new files, built by the write's own tasks
 * ([[WriteTaskFilters]]) so that the refresh after the write ([[RefreshAfterWrite]]) reads no
 * data: it writes the filters the tasks sent and commits. Where this does not apply (see
 * [[WriteTasks.prepare]]), or a file is left out, the refresh reads the files as before.
 */
private[actions] object WriteTasks extends Logging {

  /**
   * Types whose value a Parquet read decodes exactly as Spark wrote it, whatever the session's
   * settings: integers, decimals, strings (any collation) and binary. Not floating point (the
   * Parquet writer stores a NaN's canonical bits, the row holds any NaN), nor dates and timestamps
   * (the write's rebase mode and timestamp type, e.g. TIMESTAMP_MILLIS, change what a read sees).
   */
  def writtenAsRead(dt: DataType): Boolean = dt match {
    case BooleanType | ByteType | ShortType | IntegerType | LongType | BinaryType => true
    case _: DecimalType | _: StringType => true
    case _ => false
  }

  /** A write planned to build filters in its tasks: the plan to run it with, and what its tasks built. */
  final class Prepared(exec: BuildingWriteFilesExec) {
    def plan: SparkPlan = exec
    def result(): Option[WrittenFilters] = exec.built()
  }

  /**
   * The plan to run `write` with (`child`, Spark's planned `WriteFilesExec`, wrapped) when an
   * `on_write` index of `indexes` (over the source written) may take filters from the write's
   * tasks: a Parquet write (as the indexes read it), no global filter, no Parquet Bloom filters
   * written into the files' footers (a REFRESH would take those), and columns written under
   * their exact names, at the index's types, of [[writtenAsRead]] types. Which columns, and
   * whether the write's description can carry our tracker, is decided when the write job starts
   * ([[BuildingWriteFilesExec]]). None: the refresh reads the new files.
   */
  def prepare(spark: SparkSession, write: InsertIntoHadoopFsRelationCommand, child: SparkPlan,
      indexes: Seq[LogEntry]): Option[Prepared] = try {
    val max = spark.sessionState.conf.getConf(BloomIndexSQLConf.REFRESH_WRITE_TASK_FILTERS)
    val eligible = indexes.filter(e => e.spec.refresh == RefreshMode.OnWrite && !e.spec.global &&
      e.spec.source.format.equalsIgnoreCase("parquet") && e.data.flatMap(_.decoding).forall(_.format == "parquet"))
    val columns = eligible.flatMap(_.spec.columns).distinct.filter(c =>
      scala.util.Try(DataType.fromDDL(c.dataType)).toOption.exists(writtenAsRead))
    if (max <= 0 || columns.isEmpty) return None
    child match {
      case w: WriteFilesExec if w.getClass == classOf[WriteFilesExec] &&
          write.fileFormat.getClass == classOf[ParquetFileFormat] && !footerFilters(spark, write.options) =>
        val acc = spark.sparkContext.collectionAccumulator[WrittenFilter]("bloomindex filters built by a write")
        Some(new Prepared(new BuildingWriteFilesExec(w, columns.toArray, max, acc)))
      case _ => None
    }
  } catch {
    case NonFatal(e) =>
      logWarning(s"bloomindex: the write's tasks will not build index filters ($e); the refresh reads the new files")
      None
  }

  /** Whether the write asks Parquet for Bloom filters in the files' footers (a build would take those instead). */
  private def footerFilters(spark: SparkSession, options: Map[String, String]): Boolean = {
    val conf = spark.sessionState.newHadoopConfWithOptions(options)
    conf.iterator().asScala.exists(e => e.getKey.startsWith("parquet.bloom.filter.enabled") && e.getValue.trim.equalsIgnoreCase("true"))
  }
}

/**
 * Spark's `WriteFilesExec`, whose write job's description also carries [[WriteTaskFilters]]'
 * tracker, wrapped around the write's own first one. Decided when the job starts, from the
 * columns the write writes: each wanted column written under its exact name at its index type.
 */
private[actions] final class BuildingWriteFilesExec(base: WriteFilesExec, wanted: Array[ColumnSpec], maxDistinct: Int,
    acc: CollectionAccumulator[WrittenFilter])
  extends WriteFilesExec(base.child, base.fileFormat, base.partitionColumns, base.bucketSpec, base.options,
    base.staticPartitions) with Logging {

  @volatile private var job: Option[WriteTaskFilters.Job] = None
  /** The columns the write wrote (data, then partition columns), as written. */
  @volatile private var writtenSchema: Option[StructType] = None

  /** The filters the write's tasks built, once it ran (None: it did not build any). */
  def built(): Option[WrittenFilters] = job.flatMap { j =>
    val fs = acc.value.asScala.toSeq
    if (fs.isEmpty) None else Some(new WrittenFilters(j, fs, writtenSchema))
  }

  override protected def doExecuteWrite(spec: WriteFilesSpec): RDD[WriterCommitMessage] =
    super.doExecuteWrite(withTracker(spec))

  private def withTracker(spec: WriteFilesSpec): WriteFilesSpec = try {
    val d = spec.description
    val data = d.dataColumns
    val cols = wanted.flatMap { c =>
      val i = data.indexWhere(_.name == c.sourceName)
      if (i >= 0 && data(i).dataType == DataType.fromDDL(c.dataType)) Some(c -> i) else None
    }
    if (cols.isEmpty || d.statsTrackers.isEmpty) return spec
    // A dynamic partition overwrite writes under `<table>/.spark-staging-<job id>` (Spark's
    // FileCommitProtocol.getStagingDir) and moves each partition folder into the table's.
    val out = new Path(d.path)
    val output = if (out.getName.startsWith(".spark-staging-") && out.getParent != null) out.getParent else out
    val j = WriteTaskFilters.Job(cols.map(_._1), cols.map(_._2), d.partitionColumns.size,
      WriteTaskFilters.folderKey(output), maxDistinct)
    val trackers = new WriteTaskFilters.Tracker(d.statsTrackers.head, j, acc) +: d.statsTrackers.tail
    val described = new WriteJobDescription(d.uuid, d.serializableHadoopConf, d.outputWriterFactory, d.allColumns,
      d.dataColumns, d.partitionColumns, d.bucketSpec, d.path, d.customPartitionLocations, d.maxRecordsPerFile,
      d.timeZoneId, trackers)
    job = Some(j)
    writtenSchema = Some(StructType((data ++ d.partitionColumns).map(a => StructField(a.name, a.dataType, a.nullable, a.metadata))))
    spec.copy(description = described)
  } catch {
    // Another Spark's description (a constructor of other parameters): the refresh reads the files.
    case e: LinkageError => notBuilding(spec, e)
    case NonFatal(e) => notBuilding(spec, e)
  }

  private def notBuilding(spec: WriteFilesSpec, e: Throwable): WriteFilesSpec = {
    logWarning(s"bloomindex: the write's tasks will not build index filters ($e); the refresh reads the new files")
    spec
  }
}
