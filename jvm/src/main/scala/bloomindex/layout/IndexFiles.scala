package bloomindex.layout

import bloomindex.crypto.{IndexCryptoFactory, IndexEncryption}
import bloomindex.filter.FilterAlgorithm
import bloomindex.compat.ConfWritable

import java.util.UUID

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.hadoop.{ParquetFileWriter, ParquetWriter}
import org.apache.parquet.hadoop.api.WriteSupport
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.parquet.hadoop.util.HadoopOutputFile
import org.apache.parquet.io.api.{Binary, RecordConsumer}
import org.apache.parquet.schema.{LogicalTypeAnnotation, MessageType, Types}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.{BINARY, INT64}
import org.apache.spark.SPARK_VERSION
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.rdd.RDD

/** One index row, as [[IndexSchemas.IndexSchema]] has it. */
final case class IndexRow(path: String, size: Long, modificationTime: Long, column: String, rows: Long,
    nulls: Long, ndv: Long, filter: Array[Byte], builtFrom: String)

/**
 * Writes index rows as Parquet straight from the build's tasks with parquet-java: the filter
 * bytes go into the file as they are, without Spark's row conversion and its copies (the
 * files are the same as Spark writes for [[IndexSchemas.IndexSchema]], and are read with it).
 *
 * A task writes its rows to `_pending/` under the operation's folder (hidden from readers)
 * and returns the file's name; the driver then moves in the files of the task attempts whose
 * results it got, one per partition, and deletes `_pending/` with whatever failed or
 * speculative attempts left there. The folder is visible to queries only once the log commits.
 *
 * Each task writes one file per indexed column, under `_pending/column=<name>/` and without
 * the `column` field (the layout of Spark's writes partitioned by `column`; Spark readers find
 * it by partition discovery, and a query loads only the folders of the columns it probes:
 * [[IndexStore.readColumn]]); the driver moves them to `column=<name>/`. An encrypted index
 * ([[IndexEncryption]]: a plan recorded in the folder) writes them with a Hadoop conf under
 * which [[IndexCryptoFactory]] encrypts each file as the plan says for its column. In the
 * `probes` layout (log format 5, unencrypted indexes) a column's file is a [[ProbeFile]] instead
 * of Parquet: the filters are stored once, block-major.
 */
private[bloomindex] object IndexFiles {

  /**
   * How many probe files per column hold `bytes` of a column's rows at `target` bytes each
   * (`spark.bloomindex.optimize.targetFileBytes`), at least 1: what a build writes, a compaction
   * rewrites into, and OPTIMIZE finds enough.
   */
  def probeFilesFor(bytes: Long, target: Long): Long = math.max(1L, (bytes + target - 1) / math.max(1L, target))

  /** One row written: its source file and size, column, filter bytes, and whether from the footer. */
  final case class RowWritten(path: String, fileSize: Long, column: String, filterBytes: Int, fromFooter: Boolean)

  /**
   * What one task wrote: its pending files, as paths relative to `_pending/` (none for no rows,
   * else one per column), and its rows.
   */
  final case class Written(files: Seq[String], rows: Seq[RowWritten])

  /** The file of one column's rows: the column is their folder's name (`column=<name>`). */
  val ColumnFileSchema: MessageType = Types.buildMessage()
    .required(BINARY).as(LogicalTypeAnnotation.stringType()).named("file_path")
    .required(INT64).named("file_size")
    .required(INT64).named("modification_time")
    .required(INT64).named("row_count")
    .required(INT64).named("null_count")
    .required(INT64).named("ndv")
    .required(BINARY).named("filter")
    .required(BINARY).as(LogicalTypeAnnotation.stringType()).named("built_from")
    .named("spark_schema")

  private val ColumnFileSparkSchema: String =
    org.apache.spark.sql.types.StructType(IndexSchemas.IndexSchema.filter(_.name != "column")).json

  /**
   * Writes `rows` (the rows of task `partition`) under `dir/_pending`, under each column's
   * `column=<name>` folder: a Parquet file of its rows (encrypted as `plan` says, if any), or
   * for the columns of `probes` a probe file ([[ProbeFile]]) of them, and the Parquet file too
   * when `parquetToo` (layout `blocks`, log format 4).
   */
  def writeTask(partition: Int, rows: Iterator[IndexRow], dir: String, conf: Configuration,
      plan: Option[IndexEncryption.Plan] = None, probes: Map[String, FilterAlgorithm] = Map.empty,
      parquetToo: Boolean = false): Written = {
    if (!rows.hasNext) return Written(Nil, Nil)
    val pending = new Path(dir, "_pending")
    val meta = Seq.newBuilder[RowWritten]
    val writeConf = plan.map(IndexEncryption.writerConf(conf, _)).getOrElse(conf)
    val id = UUID.randomUUID()
    // Few columns per index: one open writer of each kind each, created at the column's first row.
    val writers = mutable.LinkedHashMap[String, (Option[(String, ParquetWriter[IndexRow])], Option[(String, ProbeFile.Writer)])]()
    var failure: Throwable = null
    try rows.foreach { r =>
      val (parquet, probe) = writers.getOrElseUpdate(r.column, {
        val folder = IndexEncryption.columnFolder(pending, r.column)
        val probe = probes.get(r.column).map { alg =>
          val p = new Path(folder, f"_part-$partition%05d-$id${ProbeFile.Suffix}")
          (s"${folder.getName}/${p.getName}", new ProbeFile.Writer(conf, p, alg, r.column, format = if (parquetToo) 1 else ProbeFile.Format))
        }
        val parquet = if (probe.isDefined && !parquetToo) None else {
          val file = new Path(folder, f"part-$partition%05d-$id.parquet")
          try Some((s"${folder.getName}/${file.getName}", open(file, writeConf))) catch {
            case t: Throwable => probe.foreach(_._2.abort()); throw t
          }
        }
        (parquet, probe)
      })
      parquet.foreach(_._2.write(r))
      probe.foreach(_._2.add(r.path, r.size, r.modificationTime, r.rows, r.nulls, r.ndv, r.builtFrom == "footer", r.filter))
      meta += RowWritten(r.path, r.size, r.column, r.filter.length, r.builtFrom == "footer")
    } catch {
      case t: Throwable => failure = t
    }
    writers.valuesIterator.foreach { case (parquet, probe) =>
      parquet.foreach { case (_, w) =>
        try w.close() catch {
          case t: Throwable => if (failure == null) failure = t else failure.addSuppressed(t)
        }
      }
      probe.foreach { case (_, p) =>
        if (failure != null) p.abort()
        else try p.close() catch { case t: Throwable => failure = t }
      }
    }
    if (failure != null) throw failure
    Written(writers.valuesIterator.flatMap { case (parquet, probe) => parquet.map(_._1).toSeq ++ probe.map(_._1) }.toSeq,
      meta.result())
  }

  private def open(file: Path, conf: Configuration): ParquetWriter[IndexRow] =
    new Builder(HadoopOutputFile.fromPath(file, conf)).withConf(conf)
      .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
      // Filters are near-random bits, all different: compression, a dictionary and statistics
      // would only cost time. Page checksums (CRC32 of each page, log format 6 on) are verified
      // when queries load the rows (IndexStore.readColumn).
      .withCompressionCodec(CompressionCodecName.UNCOMPRESSED)
      .withDictionaryEncoding("filter", false)
      .withStatisticsEnabled("filter", false)
      .withPageWriteChecksumEnabled(true)
      .build()

  /** Writes `rows` into `dir` in one job (see above); returns what was written. */
  def write(rows: RDD[IndexRow], dir: String, conf: Broadcast[ConfWritable],
      plan: Option[IndexEncryption.Plan] = None, probes: Map[String, FilterAlgorithm] = Map.empty,
      parquetToo: Boolean = false, failOnce: Option[String] = None): Seq[Written] = {
    val written = rows.mapPartitionsWithIndex { (i, it) =>
      val w = writeTask(i, it, dir, conf.value.conf, plan, probes, parquetToo)
      // Test hook (BloomIndexSQLConf.TEST_FAIL_INDEX_WRITE_ONCE): the first task to get here fails once.
      failOnce.foreach { marker =>
        val first = try { java.nio.file.Files.createFile(java.nio.file.Paths.get(marker)); true }
          catch { case _: java.nio.file.FileAlreadyExistsException => false }
        if (first) throw new java.io.IOException(s"test: the index file write of task $i fails once")
      }
      Iterator(w)
    }.collect()
    moveIntoPlace(written.toSeq, dir, conf.value.conf, plan)
  }

  /**
   * [[write]] of a few rows on the driver, without a Spark job: the rows of files whose filters
   * the write that wrote them built (a few bytes per value; the caller bounds their size).
   */
  def writeOnDriver(rows: Iterator[IndexRow], dir: String, conf: Configuration,
      plan: Option[IndexEncryption.Plan] = None, probes: Map[String, FilterAlgorithm] = Map.empty,
      parquetToo: Boolean = false): Seq[Written] =
    moveIntoPlace(Seq(writeTask(0, rows, dir, conf, plan, probes, parquetToo)), dir, conf, plan)

  /** Moves the files tasks wrote under `dir/_pending` into `dir`. */
  private def moveIntoPlace(written: Seq[Written], dir: String, conf: Configuration,
      plan: Option[IndexEncryption.Plan]): Seq[Written] = {
    val pending = new Path(dir, "_pending")
    val fs = pending.getFileSystem(conf)
    // The column folders first (a rename does not create the target's parent).
    written.iterator.flatMap(_.files).flatMap(f => Option(new Path(f).getParent)).toSet
      .foreach((folder: Path) => fs.mkdirs(new Path(dir, folder.toString)))
    written.flatMap(_.files).foreach { name =>
      if (!fs.rename(new Path(pending, name), new Path(dir, name))) {
        throw new java.io.IOException(s"could not move index file $name from $pending to $dir")
      }
      // Key material kept outside the file (parquet.encryption.key.material.store.internally
      // = false) sits next to it and moves with it.
      if (plan.isDefined) {
        val p = new Path(name)
        val km = s"_KEY_MATERIAL_FOR_${p.getName}.json"
        val from = new Path(new Path(pending, p.getParent.toString), km)
        if (fs.exists(from)) fs.rename(from, new Path(new Path(dir, p.getParent.toString), km))
      }
    }
    fs.delete(pending, true)
    fs.mkdirs(new Path(dir)) // an index of no rows is an empty folder
    written
  }

  private final class Builder(file: HadoopOutputFile)
      extends ParquetWriter.Builder[IndexRow, Builder](file) {
    override protected def self(): Builder = this
    override protected def getWriteSupport(conf: Configuration): WriteSupport[IndexRow] = new RowWriteSupport
  }

  /** The file of one column's rows, without the `column` field (its folder names the column). */
  private final class RowWriteSupport extends WriteSupport[IndexRow] {
    private var out: RecordConsumer = _

    override def init(conf: Configuration): WriteSupport.WriteContext =
      new WriteSupport.WriteContext(ColumnFileSchema, Map(
        "org.apache.spark.version" -> SPARK_VERSION,
        "org.apache.spark.sql.parquet.row.metadata" -> ColumnFileSparkSchema).asJava)

    override def prepareForWrite(consumer: RecordConsumer): Unit = out = consumer

    override def write(r: IndexRow): Unit = {
      out.startMessage()
      string(0, "file_path", r.path)
      long(1, "file_size", r.size)
      long(2, "modification_time", r.modificationTime)
      long(3, "row_count", r.rows)
      long(4, "null_count", r.nulls)
      long(5, "ndv", r.ndv)
      field(6, "filter")(out.addBinary(Binary.fromConstantByteArray(r.filter)))
      string(7, "built_from", r.builtFrom)
      out.endMessage()
    }

    private def field(i: Int, name: String)(add: => Unit): Unit = {
      out.startField(name, i)
      add
      out.endField(name, i)
    }

    private def string(i: Int, name: String, v: String): Unit = field(i, name)(out.addBinary(Binary.fromString(v)))

    private def long(i: Int, name: String, v: Long): Unit = field(i, name)(out.addLong(v))
  }
}
