package bloomindex.index

import java.io.{ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream}
import java.util.Locale

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import bloomindex.sbbf.{Sbbf, SbbfStats}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.schema.{LogicalTypeAnnotation, PrimitiveType, Type}
import org.apache.parquet.schema.LogicalTypeAnnotation._
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName._
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.datasources.DataSourceUtils
import org.apache.spark.sql.types._

/**
 * The footer path of the build: for a Parquet file that already carries a split block Bloom
 * filter for a column in every row group, that column's index filter is the OR of those
 * filters, read from the file without reading its data. A Spark job over the file list; each
 * task opens its files' footers with parquet-hadoop.
 *
 * A (file, column) is taken from the footer only when all of this holds, else it is built
 * from the data (the [[Outcome]] says why):
 *  - the file stores the column exactly as [[bloomindex.sbbf.ParquetHash]] hashes the Spark
 *    type (physical type, logical annotation, decimal precision/scale and width; dates and
 *    timestamps only where Spark reads them without calendar rebasing), see [[typeMismatch]];
 *  - every row group has a filter for it (BLOCK / XXHASH / UNCOMPRESSED), all of one size;
 *  - every row group's statistics carry the null count;
 *  - the merged filter's measured false positive rate ([[SbbfStats.measuredFpp]]) is within
 *    the column's fpp.
 * Its distinct count is the estimate from the merged filter's bits, at most the non-null count.
 */
object FooterFilters {

  /** The filter taken from the footer, or why not. */
  final case class Outcome(path: String, column: Int, filter: Option[FileFilter], reason: String)

  /** Reader settings that decide how Spark maps the file's columns and values. */
  private final case class Settings(caseSensitive: Boolean, fieldIds: Boolean, rebaseMode: String)

  def read(spark: SparkSession, files: Seq[SourceFile], cols: Seq[ColumnSpec]): RDD[Outcome] = {
    val sqlConf = spark.sessionState.conf
    val settings = Settings(sqlConf.caseSensitiveAnalysis,
      sqlConf.getConfString("spark.sql.parquet.fieldId.read.enabled", "false").toBoolean,
      sqlConf.getConfString("spark.sql.parquet.datetimeRebaseModeInRead", "EXCEPTION"))
    val sc = spark.sparkContext
    val conf = sc.broadcast(new ConfWritable(spark.sessionState.newHadoopConf()))
    val colArray = cols.toArray
    val types = cols.map(c => DataType.fromDDL(c.dataType)).toArray
    sc.parallelize(files, math.max(1, math.min(files.size, sc.defaultParallelism * 4)))
      .mapPartitions(it => it.flatMap(f => readFile(f, colArray, types, settings, conf.value.conf)))
  }

  private def readFile(file: SourceFile, cols: Array[ColumnSpec], types: Array[DataType], settings: Settings,
      conf: Configuration): Seq[Outcome] = {
    def all(reason: String) = cols.indices.map(i => Outcome(file.path, i, None, reason))
    if (settings.fieldIds) return all("spark.sql.parquet.fieldId.read.enabled is on")
    val path = new Path(file.path)
    val status = new FileStatus(file.size, false, 1, 0L, file.modificationTime, path)
    val reader = try {
      ParquetFileReader.open(HadoopInputFile.fromStatus(status, conf), HadoopReadOptions.builder(conf, path).build())
    } catch {
      // The data path reads it again and reports (or, with ignoreCorruptFiles, skips) it as Spark does.
      case NonFatal(e) => return all(s"footer unreadable: ${e.getMessage}")
    }
    try {
      val meta = reader.getFooter.getFileMetaData
      val kv = meta.getKeyValueMetaData
      val blocks = reader.getRowGroups.asScala.toSeq
      val rows = blocks.map(_.getRowCount).sum
      lazy val rebased = !DataSourceUtils.datetimeRebaseSpec((k: String) => kv.get(k), settings.rebaseMode)
        .mode.toString.equalsIgnoreCase("CORRECTED")
      cols.indices.map { i =>
        val fields = meta.getSchema.getFields.asScala.toSeq
        val byName = fields.filter(_.getName == cols(i).name) match {
          case Seq() if !settings.caseSensitive =>
            fields.filter(_.getName.toLowerCase(Locale.ROOT) == cols(i).name.toLowerCase(Locale.ROOT))
          case exact => exact
        }
        val outcome: Either[String, FileFilter] = byName match {
          case Seq(field) if blocks.isEmpty => Left("no row groups")
          case Seq(field) =>
            typeMismatch(types(i), field, rebased).toLeft(()).flatMap(_ => merge(reader, blocks, field.getName))
              .flatMap { case (filter, nulls) =>
                val fpp = SbbfStats.measuredFpp(filter)
                if (fpp > cols(i).fpp) Left(f"footer filter's false positive rate $fpp%.4g is over the fpp ${cols(i).fpp}")
                else Right(FileFilter(file.path, i, rows, nulls, math.min(SbbfStats.estimateNdv(filter), rows - nulls),
                  filter.toParquetBytes, fromFooter = true))
              }
          case Seq() => Left("column not in the file")
          case _ => Left("column name matches several of the file's columns")
        }
        Outcome(file.path, i, outcome.toOption, outcome.fold(identity, _ => ""))
      }
    } finally reader.close()
  }

  /** The OR of the column's filters over all row groups, and its null count; or why not. */
  private def merge(reader: ParquetFileReader, blocks: Seq[org.apache.parquet.hadoop.metadata.BlockMetaData],
      name: String): Either[String, (Sbbf, Long)] = {
    var merged: Sbbf = null
    var nulls = 0L
    blocks.zipWithIndex.foreach { case (block, g) =>
      val chunk = block.getColumns.asScala.find(c => c.getPath.size == 1 && c.getPath.toArray()(0) == name)
        .getOrElse(return Left(s"row group $g has no chunk for the column"))
      if (chunk.getBloomFilterOffset < 0) return Left(s"row group $g has no Bloom filter")
      val stats: org.apache.parquet.column.statistics.Statistics[_] = chunk.getStatistics
      if (stats == null || !stats.isNumNullsSet) return Left(s"row group $g has no null count")
      nulls += stats.getNumNulls
      val bf = reader.readBloomFilter(chunk)
      if (bf == null) return Left(s"row group $g's Bloom filter is unreadable or not BLOCK/XXHASH/UNCOMPRESSED")
      val bytes = new ByteArrayOutputStream(bf.getBitsetSize)
      bf.writeTo(bytes)
      val f = try Sbbf.fromBitset(bytes.toByteArray) catch {
        case e: IllegalArgumentException => return Left(s"row group $g's Bloom filter: ${e.getMessage}")
      }
      if (merged == null) merged = f
      else if (merged.numBytes != f.numBytes) return Left("row groups' Bloom filters differ in size")
      else merged.merge(f)
    }
    Right((merged, nulls))
  }

  /**
   * Why Spark's values of type `dt` read from `field` might hash differently from what a
   * Parquet writer inserted into the footer's filter; None when they certainly agree.
   * `rebased`: whether Spark would rebase this file's dates and timestamps (legacy calendar).
   */
  def typeMismatch(dt: DataType, field: Type, rebased: => Boolean): Option[String] = {
    if (!field.isPrimitive || field.isRepetition(Type.Repetition.REPEATED)) return Some("not a flat column")
    val t: PrimitiveType = field.asPrimitiveType()
    val ann: LogicalTypeAnnotation = t.getLogicalTypeAnnotation
    val phys = t.getPrimitiveTypeName
    def int(bits: Int, orNone: Boolean) = ann match {
      case a: IntLogicalTypeAnnotation => a.getBitWidth == bits && a.isSigned
      case null => orNone
      case _ => false
    }
    def micros(utc: Boolean) = ann match {
      case a: TimestampLogicalTypeAnnotation => a.isAdjustedToUTC == utc && a.getUnit == TimeUnit.MICROS
      case _ => false
    }
    val ok = dt match {
      case ByteType => phys == INT32 && int(8, orNone = false)
      case ShortType => phys == INT32 && int(16, orNone = false)
      case IntegerType => phys == INT32 && int(32, orNone = true)
      case LongType => phys == INT64 && int(64, orNone = true)
      case DateType => phys == INT32 && ann.isInstanceOf[DateLogicalTypeAnnotation] && !rebased
      case TimestampType => phys == INT64 && micros(utc = true) && !rebased
      case TimestampNTZType => phys == INT64 && micros(utc = false) && !rebased
      case FloatType => phys == FLOAT && ann == null
      case DoubleType => phys == DOUBLE && ann == null
      case _: StringType => phys == BINARY && (ann == null || ann.isInstanceOf[StringLogicalTypeAnnotation] ||
        ann.isInstanceOf[EnumLogicalTypeAnnotation] || ann.isInstanceOf[JsonLogicalTypeAnnotation])
      case BinaryType => phys == BINARY && (ann == null || ann.isInstanceOf[StringLogicalTypeAnnotation])
      case d: DecimalType => ann match {
        case a: DecimalLogicalTypeAnnotation if a.getPrecision == d.precision && a.getScale == d.scale =>
          if (d.precision <= Decimal.MAX_INT_DIGITS) phys == INT32
          else if (d.precision <= Decimal.MAX_LONG_DIGITS) phys == INT64
          else phys == FIXED_LEN_BYTE_ARRAY && t.getTypeLength == bloomindex.sbbf.ParquetHash.decimalBytes(d.precision)
        case _ => false
      }
      case _ => false
    }
    if (ok) None
    else Some(s"the file stores it as ${t.toString.trim}, not as Spark writes ${dt.sql}" +
      (if (dt == DateType || dt == TimestampType || dt == TimestampNTZType) " (or Spark would rebase it)" else ""))
  }

  /** A Hadoop configuration shipped to the tasks (Configuration is Writable, not Serializable). */
  private final class ConfWritable(@transient var conf: Configuration) extends Serializable {
    private def writeObject(out: ObjectOutputStream): Unit = {
      out.defaultWriteObject()
      conf.write(out)
    }

    private def readObject(in: ObjectInputStream): Unit = {
      in.defaultReadObject()
      conf = new Configuration(false)
      conf.readFields(in)
    }
  }
}
