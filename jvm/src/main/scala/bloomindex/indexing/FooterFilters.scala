package bloomindex.indexing

import java.io.ByteArrayOutputStream
import java.util.Locale

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import bloomindex.filter.{FilterAlgorithm, SbbfSerde}
import bloomindex.log.ColumnSpec
import bloomindex.sbbf.{SbbfBits, SbbfSizing}
import bloomindex.source.SourceFile
import bloomindex.compat.ConfWritable

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.filter2.compat.FilterCompat
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.metadata.{BlockMetaData, ColumnChunkMetaData, FileMetaData}
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.io.SeekableInputStream
import org.apache.parquet.schema.{LogicalTypeAnnotation, PrimitiveType, Type}
import org.apache.parquet.schema.LogicalTypeAnnotation._
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName._
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.datasources.DataSourceUtils
import org.apache.spark.sql.execution.datasources.parquet.{ParquetOptions, ParquetUtils}
import org.apache.spark.sql.types._

/**
 * The footer path of the build: for a Parquet file that already carries a split block Bloom
 * filter for a column in every row group, that column's index filter is the OR of those
 * filters, read from the file without reading its data. Spark jobs over the file list; each
 * task opens its files' footers with parquet-hadoop.
 *
 * A (file, column) is taken from the footer only when all of this holds, else it is built
 * from the data (the outcome says why):
 *  - the file stores the column exactly as [[bloomindex.hash.ParquetHash]] hashes the Spark
 *    type (physical type, logical annotation, decimal precision/scale and width; dates and
 *    timestamps only where Spark reads them without calendar rebasing), see [[typeMismatch]];
 *  - every row group has a filter for it (BLOCK / XXHASH / UNCOMPRESSED), all of one size;
 *  - every row group's statistics carry the null count;
 *  - the merged filter's measured false positive rate ([[SbbfBits.measuredFpp]]) is within
 *    the column's fpp.
 * The filters are merged and measured, and halved ([[SbbfBits.fold]]) while they still meet
 * the fpp, so a filter its writer made larger than needed does not make the index larger.
 * Its distinct count is the estimate from the merged filter's bits, at most the non-null count.
 */
object FooterFilters {

  /** The filter taken from the footer, or why not. */
  final case class Outcome(path: String, column: Int, filter: Option[FileFilter], reason: String)

  /** Reader settings that decide how Spark maps the file's columns and values. */
  private final case class Settings(caseSensitive: Boolean, fieldIds: Boolean, rebaseMode: String)

  /**
   * Whether any of a few of `files` (first, middle, last) has a Bloom filter for one of the
   * columns in its footer, read on the driver: a table written without filters then skips the
   * footer job. An unreadable footer counts as "maybe" (the job finds out).
   */
  def sampleHasFilters(spark: SparkSession, files: Seq[SourceFile], cols: Seq[ColumnSpec], byFieldId: Boolean = false): Boolean = {
    val conf = spark.sessionState.newHadoopConf()
    val names = cols.map(_.name.toLowerCase(Locale.ROOT)).toSet
    val sample = Seq(0, files.size / 2, files.size - 1).distinct.map(files)
    sample.exists { f =>
      val path = new Path(f.path)
      try {
        val input = HadoopInputFile.fromStatus(new FileStatus(f.size, false, 1, 0L, f.modificationTime, path), conf)
        val reader = ParquetFileReader.open(input, readOptions(conf, path))
        try reader.getFooter.getBlocks.asScala.exists(_.getColumns.asScala.exists { c =>
          c.getBloomFilterOffset >= 0 && c.getPath.size == 1 &&
            (byFieldId || names(c.getPath.toArray()(0).toLowerCase(Locale.ROOT)))
        }) finally reader.close()
      } catch {
        case NonFatal(_) => true
      }
    }
  }

  /** The footer filter, or why not, of every (file, column). */
  def read(spark: SparkSession, conf: Broadcast[ConfWritable], files: Seq[SourceFile],
      cols: Seq[ColumnSpec], schema: StructType, options: Map[String, String]): RDD[Outcome] = {
    val sqlConf = spark.sessionState.conf
    // Spark matches Parquet columns by field id only where the table's schema carries ids (Delta's
    // extension turns the setting on in every session, for its column mapping tables). The
    // rebase mode as the scan's reader takes it: its `datetimeRebaseMode` option over the session's.
    val settings = Settings(sqlConf.caseSensitiveAnalysis,
      sqlConf.parquetFieldIdReadEnabled && ParquetUtils.hasFieldIds(schema),
      new ParquetOptions(options, sqlConf).datetimeRebaseModeInRead.toString)
    val sc = spark.sparkContext
    val colArray = cols.toArray
    val types = cols.map(c => DataType.fromDDL(c.dataType)).toArray
    // Where columns are matched by field id (Iceberg tables), each column's chunk is found by its id.
    val fieldIds: Map[String, Int] = if (!settings.fieldIds) Map.empty else cols.flatMap { c =>
      schema.fields.find(_.name == c.name).filter(_.metadata.contains(ParquetUtils.FIELD_ID_METADATA_KEY))
        .map(f => c.name -> f.metadata.getLong(ParquetUtils.FIELD_ID_METADATA_KEY).toInt)
    }.toMap
    // As many tasks as cores: each task of the write that consumes this has a fixed cost.
    sc.parallelize(files, math.max(1, math.min(files.size, sc.defaultParallelism))).mapPartitions { it =>
      it.flatMap(f => readFile(f, colArray, types, settings, fieldIds, conf.value.conf))
    }
  }

  private def readFile(file: SourceFile, cols: Array[ColumnSpec], types: Array[DataType], settings: Settings,
      fieldIds: Map[String, Int], conf: Configuration): Seq[Outcome] = {
    def all(reason: String) = cols.indices.map(i => Outcome(file.path, i, None, reason))
    if (settings.fieldIds && fieldIds.isEmpty) return all("the table matches Parquet columns by field id")
    // Parquet footers hold split block filters under XXH64: only `sbbf` columns can use them.
    def otherDesign(i: Int) = cols(i).algorithm != FilterAlgorithm.SplitBlock
    def designReason(i: Int) = s"the index holds ${cols(i).algorithm.name} filters, Parquet footers sbbf ones"
    val path = new Path(file.path)
    val input = HadoopInputFile.fromStatus(new FileStatus(file.size, false, 1, 0L, file.modificationTime, path), conf)
    val (reader, stream) = try {
      val stream = input.newStream()
      try (ParquetFileReader.open(input, readOptions(conf, path), stream), stream) catch {
        case NonFatal(e) => stream.close(); throw e
      }
    } catch {
      // The data path reads it again and reports (or, with ignoreCorruptFiles, skips) it as Spark does.
      case NonFatal(e) => return all(s"footer unreadable: ${e.getMessage}")
    }
    try {
      val meta = reader.getFooter.getFileMetaData
      val kv = meta.getKeyValueMetaData
      // Every row group of the footer: the reader's own list leaves out those a record filter of the
      // Hadoop settings (`parquet.read.filter`) rejects, whose values the filter must hold too.
      val blocks = reader.getFooter.getBlocks.asScala.toSeq
      val rows = blocks.map(_.getRowCount).sum
      val raw = if (meta.getEncryptionType == FileMetaData.EncryptionType.UNENCRYPTED) Some(stream) else None
      lazy val rebased = !DataSourceUtils.datetimeRebaseSpec((k: String) => kv.get(k), settings.rebaseMode)
        .mode.toString.equalsIgnoreCase("CORRECTED")
      val fields = meta.getSchema.getFields.asScala.toSeq
      cols.indices.map { i =>
        if (cols(i).isText) Outcome(file.path, i, None, "a text filter holds tokens or n-grams, Parquet footers whole values")
        else if (otherDesign(i)) Outcome(file.path, i, None, designReason(i)) else {
          val byName = if (settings.fieldIds) fieldIds.get(cols(i).name).toSeq.flatMap(id =>
            fields.filter(f => f.getId != null && f.getId.intValue() == id))
            // Case aside, as Spark's reader matches (which fails on a file with two such columns).
            else if (!settings.caseSensitive) fields.filter(_.getName.toLowerCase(Locale.ROOT) == cols(i).name.toLowerCase(Locale.ROOT))
            else fields.filter(_.getName == cols(i).name)
          val chunks: Either[String, Seq[ColumnChunkMetaData]] = byName match {
            case Seq(_) if blocks.isEmpty => Left("no row groups")
            case Seq(field) => typeMismatch(types(i), field, rebased).toLeft(())
              .flatMap(_ => usableChunks(blocks, field.getName)).flatMap(inRange(types(i), _))
            case Seq() => Left("column not in the file")
            case _ => Left("column name matches several of the file's columns")
          }
          val outcome: Either[String, FileFilter] = try chunks.flatMap { cs =>
            merge(reader, raw, cs).flatMap(filter => fit(filter, cols(i).fpp)).map { case (bytes, _, _, ndv) =>
              val nulls = cs.map(_.getStatistics.getNumNulls).sum
              FileFilter(file.path, i, rows, nulls, math.min(ndv, rows - nulls), bytes, fromFooter = true)
            }
          } catch {
            // A filter that cannot be read (out of the file, undecryptable): the data path reads it.
            case NonFatal(e) => Left(s"footer filter unreadable: ${e.getMessage}")
          }
          Outcome(file.path, i, outcome.toOption, outcome.fold(identity, _ => ""))
        }
      }
    } finally reader.close()
  }

  /**
   * Reader options with no record filter: the footer's row groups all kept, whatever the Hadoop
   * settings' `parquet.read.filter` / `parquet.private.read.filter.predicate` say.
   */
  private def readOptions(conf: Configuration, path: Path) =
    HadoopReadOptions.builder(conf, path).withRecordFilter(FilterCompat.NOOP).build()

  /**
   * `chunks`, where Spark reads a tinyint or smallint column's values as the file holds them:
   * its reader narrows an INT32 out of the type's range (a malformed file) to another value than
   * the footer's filter holds, so the chunks' statistics must show every value in range; or why not.
   */
  private def inRange(dt: DataType, chunks: Seq[ColumnChunkMetaData]): Either[String, Seq[ColumnChunkMetaData]] = {
    val (lo, hi) = dt match {
      case ByteType => (Byte.MinValue.toInt, Byte.MaxValue.toInt)
      case ShortType => (Short.MinValue.toInt, Short.MaxValue.toInt)
      case _ => return Right(chunks)
    }
    val fits = chunks.forall { c =>
      val s = c.getStatistics
      if (!s.hasNonNullValue) s.getNumNulls == c.getValueCount
      else (s.genericGetMin, s.genericGetMax) match {
        case (a: Integer, b: Integer) => a >= lo && b <= hi
        case _ => false
      }
    }
    if (fits) Right(chunks) else Left(s"${dt.sql}: the file's statistics do not show every value in the type's range")
  }

  /** The column's chunk in every row group, each with a Bloom filter and a null count; or why not. */
  private def usableChunks(blocks: Seq[BlockMetaData], name: String): Either[String, Seq[ColumnChunkMetaData]] = {
    val chunks = blocks.zipWithIndex.map { case (block, g) =>
      val chunk = block.getColumns.asScala.find(c => c.getPath.size == 1 && c.getPath.toArray()(0) == name)
        .getOrElse(return Left(s"row group $g has no chunk for the column"))
      if (chunk.getBloomFilterOffset < 0) return Left(s"row group $g has no Bloom filter")
      val stats: org.apache.parquet.column.statistics.Statistics[_] = chunk.getStatistics
      if (stats == null || !stats.isNumNullsSet) return Left(s"row group $g has no null count")
      chunk
    }
    // Header and bitset lengths, where the writer recorded them: different ones mean different sizes.
    val lengths = chunks.map(_.getBloomFilterLength).filter(_ > 0).distinct
    if (lengths.size > 1) Left("row groups' Bloom filters differ in size") else Right(chunks)
  }

  /**
   * The filter meeting `fpp`, as (serialized bytes, bitset offset, bitset bytes, distinct
   * count estimate): `filter` (serialized) halved while the halves still meet it; or why not.
   */
  private def fit(filter: Array[Byte], fpp: Double): Either[String, (Array[Byte], Int, Int, Long)] = {
    val (at, numBytes) = SbbfSerde.locateBitset(filter)
    val (measured, setBits) = SbbfBits.stats(filter, at, numBytes)
    if (measured > fpp) return Left(f"footer filter's false positive rate $measured%.4g is over the fpp $fpp")
    val ndv = SbbfBits.ndvFromSetBits(setBits, numBytes)
    var bits = filter
    var offset = at
    var size = numBytes
    // Worth trying only when a filter of half the size should meet the fpp for the estimated
    // count: folding is exact, and the half is kept only if its own measured rate meets it.
    def promising = size % 64 == 0 && ndv < Long.MaxValue && SbbfSizing.expectedFpp(size / 2, ndv) <= fpp
    var done = false
    while (!done && promising) {
      val half = SbbfBits.fold(bits, offset, size)
      if (SbbfBits.measuredFpp(half, 0, half.length) > fpp) done = true
      else { bits = half; offset = 0; size = half.length }
    }
    if (bits eq filter) Right((filter, at, numBytes, ndv))
    else {
      val out = SbbfSerde.write(bits, 0, size)
      Right((out, out.length - size, size, ndv))
    }
  }

  /** The OR of the chunks' filters in Parquet's serialized form; or why not. */
  private def merge(reader: ParquetFileReader, raw: Option[SeekableInputStream],
      chunks: Seq[ColumnChunkMetaData]): Either[String, Array[Byte]] = {
    var merged: Array[Byte] = null
    var at = 0
    var size = 0
    chunks.zipWithIndex.foreach { case (chunk, g) =>
      val (bytes, offset, numBytes) = try readFilter(reader, raw, chunk) catch {
        case e: IllegalArgumentException => return Left(s"row group $g's Bloom filter: ${e.getMessage}")
      }
      if (bytes == null) return Left(s"row group $g's Bloom filter is unreadable or not BLOCK/XXHASH/UNCOMPRESSED")
      if (merged == null) { merged = bytes; at = offset; size = numBytes }
      else if (numBytes != size) return Left("row groups' Bloom filters differ in size")
      else {
        var k = 0
        while (k < size) { merged(at + k) = (merged(at + k) | bytes(offset + k)).toByte; k += 1 }
      }
    }
    val header = SbbfSerde.header(size)
    val canonical = at == header.length && merged.length == at + size &&
      java.util.Arrays.equals(merged, 0, at, header, 0, header.length)
    Right(if (canonical) merged else SbbfSerde.write(merged, at, size))
  }

  /** One row group's filter: bytes holding its bitset at (offset, numBytes); null bytes when unusable. */
  private def readFilter(reader: ParquetFileReader, raw: Option[SeekableInputStream],
      chunk: ColumnChunkMetaData): (Array[Byte], Int, Int) = raw match {
    case Some(stream) if chunk.getBloomFilterLength > 0 =>
      // The largest filter and a header: a corrupt length is not allocated.
      require(chunk.getBloomFilterLength <= SbbfSizing.MaxBytes + 1024, s"length ${chunk.getBloomFilterLength} is over the largest filter's")
      val bytes = new Array[Byte](chunk.getBloomFilterLength)
      stream.seek(chunk.getBloomFilterOffset)
      stream.readFully(bytes)
      val (offset, numBytes) = SbbfSerde.locateBitset(bytes)
      (bytes, offset, numBytes)
    case _ =>
      // Encrypted, or a writer that did not record the length: parquet-java reads it.
      val bf = reader.readBloomFilter(chunk)
      if (bf == null) (null, 0, 0)
      else {
        val out = new ByteArrayOutputStream(bf.getBitsetSize)
        bf.writeTo(out)
        val bytes = out.toByteArray
        SbbfSizing.checkNumBytes(bytes.length)
        (bytes, 0, bytes.length)
      }
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
    if (dt.isInstanceOf[StringType] && bloomindex.hash.CollationKeys.keyed(dt.asInstanceOf[StringType])) {
      return Some(s"${dt.sql}: the index holds collation keys, the footer's filter the bytes")
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
          else phys == FIXED_LEN_BYTE_ARRAY && t.getTypeLength == bloomindex.hash.ParquetHash.decimalBytes(d.precision)
        case _ => false
      }
      case _ => false
    }
    if (ok) None
    else Some(s"the file stores it as ${t.toString.trim}, not as Spark writes ${dt.sql}" +
      (if (dt == DateType || dt == TimestampType || dt == TimestampNTZType) " (or Spark would rebase it)" else ""))
  }
}
