package bloomindex.index

import java.nio.ByteBuffer
import java.util.UUID

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.bytes.ByteBufferAllocator
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

/** One index row, as [[IndexBuilder.IndexSchema]] has it. */
final case class IndexRow(path: String, size: Long, modificationTime: Long, column: String, rows: Long,
    nulls: Long, ndv: Long, filter: Array[Byte], builtFrom: String)

/**
 * Writes index rows as Parquet straight from the build's tasks with parquet-java: the filter
 * bytes go into the file as they are, without Spark's row conversion and its copies (the
 * files are the same as Spark writes for [[IndexBuilder.IndexSchema]], and are read with it).
 *
 * A task writes its rows to `_pending/` under the operation's folder (hidden from readers)
 * and returns the file's name; the driver then moves in the files of the task attempts whose
 * results it got, one per partition, and deletes `_pending/` with whatever failed or
 * speculative attempts left there. The folder is visible to queries only once the log commits.
 */
private[index] object IndexFiles {

  /** One row written: its source file and size, column, filter bytes, and whether from the footer. */
  final case class RowWritten(path: String, fileSize: Long, column: String, filterBytes: Int, fromFooter: Boolean)

  /** What one task wrote: the pending file (None for no rows) and its rows. */
  final case class Written(file: Option[String], rows: Seq[RowWritten])

  val Schema: MessageType = Types.buildMessage()
    .required(BINARY).as(LogicalTypeAnnotation.stringType()).named("file_path")
    .required(INT64).named("file_size")
    .required(INT64).named("modification_time")
    .required(BINARY).as(LogicalTypeAnnotation.stringType()).named("column")
    .required(INT64).named("row_count")
    .required(INT64).named("null_count")
    .required(INT64).named("ndv")
    .required(BINARY).named("filter")
    .required(BINARY).as(LogicalTypeAnnotation.stringType()).named("built_from")
    .named("spark_schema")

  /** Writes `rows` (the rows of task `partition`) under `dir/_pending`. */
  def writeTask(partition: Int, rows: Iterator[IndexRow], dir: String, conf: Configuration): Written = {
    if (!rows.hasNext) return Written(None, Nil)
    val file = new Path(new Path(dir, "_pending"), f"part-$partition%05d-${UUID.randomUUID()}.parquet")
    val meta = Seq.newBuilder[RowWritten]
    val writer = new Builder(HadoopOutputFile.fromPath(file, conf)).withConf(conf)
      .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
      // Filters are near-random bits, all different: compression, a dictionary, statistics and
      // page checksums (Spark's reader does not verify them; the file system has its own)
      // would only cost time.
      .withCompressionCodec(CompressionCodecName.UNCOMPRESSED)
      .withDictionaryEncoding("filter", false)
      .withStatisticsEnabled("filter", false)
      .withPageWriteChecksumEnabled(false)
      .withAllocator(new PooledAllocator)
      .build()
    try rows.foreach { r =>
      writer.write(r)
      meta += RowWritten(r.path, r.size, r.column, r.filter.length, r.builtFrom == "footer")
    } finally writer.close()
    Written(Some(file.getName), meta.result())
  }

  /** Writes `rows` into `dir` in one job (see above); returns what was written. */
  def write(rows: RDD[IndexRow], dir: String, conf: Broadcast[ConfWritable]): Seq[Written] = {
    val written = rows.mapPartitionsWithIndex((i, it) => Iterator(writeTask(i, it, dir, conf.value.conf))).collect()
    val pending = new Path(dir, "_pending")
    val fs = pending.getFileSystem(conf.value.conf)
    written.flatMap(_.file).foreach { name =>
      if (!fs.rename(new Path(pending, name), new Path(dir, name))) {
        throw new java.io.IOException(s"could not move index file $name from $pending to $dir")
      }
    }
    fs.delete(pending, true)
    fs.mkdirs(new Path(dir)) // an index of no rows is an empty folder
    written.toSeq
  }

  /**
   * Hands out released buffers of the same size again. parquet-java's page buffers are
   * allocated and released per page (and copied into the column chunk before release), and
   * for filters of hundreds of KB allocating and zeroing them again dominated the write.
   */
  private final class PooledAllocator extends ByteBufferAllocator {
    private val free = mutable.HashMap[Int, List[ByteBuffer]]()

    override def allocate(size: Int): ByteBuffer = free.get(size) match {
      case Some(b :: rest) =>
        free(size) = rest
        b.clear()
        b
      case _ => ByteBuffer.allocate(size)
    }

    override def release(b: ByteBuffer): Unit = free(b.capacity) = b :: free.getOrElse(b.capacity, Nil)

    override def isDirect: Boolean = false
  }

  private final class Builder(file: HadoopOutputFile) extends ParquetWriter.Builder[IndexRow, Builder](file) {
    override protected def self(): Builder = this
    override protected def getWriteSupport(conf: Configuration): WriteSupport[IndexRow] = new RowWriteSupport
  }

  private final class RowWriteSupport extends WriteSupport[IndexRow] {
    private var out: RecordConsumer = _

    override def init(conf: Configuration): WriteSupport.WriteContext = new WriteSupport.WriteContext(Schema, Map(
      "org.apache.spark.version" -> SPARK_VERSION,
      "org.apache.spark.sql.parquet.row.metadata" -> IndexBuilder.IndexSchema.json).asJava)

    override def prepareForWrite(consumer: RecordConsumer): Unit = out = consumer

    override def write(r: IndexRow): Unit = {
      out.startMessage()
      string(0, "file_path", r.path)
      long(1, "file_size", r.size)
      long(2, "modification_time", r.modificationTime)
      string(3, "column", r.column)
      long(4, "row_count", r.rows)
      long(5, "null_count", r.nulls)
      long(6, "ndv", r.ndv)
      field(7, "filter")(out.addBinary(Binary.fromConstantByteArray(r.filter)))
      string(8, "built_from", r.builtFrom)
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
