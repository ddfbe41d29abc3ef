package bloomindex.source

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import bloomindex.log.Decoding

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.format.converter.ParquetMetadataConverter
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession

/**
 * Files whose own metadata makes Spark rebase their timestamps from the hybrid Julian calendar,
 * whatever the session's rebase mode: Parquet and Avro files written by Spark before 3.0 (INT96
 * values: before 3.1), or by a later Spark writing LEGACY (Spark's `legacyDateTime` and
 * `legacyINT96` keys). Spark rebases them in the zone the file records
 * (`org.apache.spark.timeZone`, written since Spark 3.2), and where it records none, in the
 * reading JVM's default zone (`DataSourceUtils.getRebaseSpec`): such a file's pre-1900
 * timestamps read otherwise in a JVM of another zone.
 *
 * So a build that read such a file records, for its timestamp columns, the zone it rebased them
 * in ([[DecodingContext.LegacyFilesZone]]), and a query in a JVM of another zone does not use
 * them; a build that read none records [[NoMarkedFiles]], and answers in any zone. A scan always
 * states its JVM's zone: the comparison ([[DecodingContext.difference]]) asks it only of builds
 * that recorded one.
 */
object LegacyRebase extends Logging {

  // Spark's keys (`org.apache.spark.sql.SPARK_*_METADATA_KEY`: private to Spark's sql package).
  private val VersionKey = "org.apache.spark.version"
  private val LegacyDateTimeKey = "org.apache.spark.legacyDateTime"
  private val LegacyInt96Key = "org.apache.spark.legacyINT96"
  private val TimeZoneKey = "org.apache.spark.timeZone"

  /**
   * Whether Spark's reader takes a legacy (rebasing) mode from a file's key-value metadata for
   * its dates, timestamps or INT96 values: written by Spark (its version key) before 3.1, or
   * marked legacy. The version compares as Spark compares it (as a string). Which of Spark's two
   * checks applies (dates and INT64 timestamps: before 3.0 or `legacyDateTime`; INT96: before 3.1
   * or `legacyINT96`) depends on the column's physical type: either counts, which costs at most
   * pruning.
   */
  def legacyMarked(kv: String => Option[String]): Boolean =
    kv(VersionKey).exists { version =>
      version < "3.1.0" || kv(LegacyDateTimeKey).isDefined || kv(LegacyInt96Key).isDefined
    }

  /** Whether Spark rebases a file's timestamps with `kv` as metadata in the reading JVM's default zone. */
  def rebasedInJvmZone(kv: String => Option[String]): Boolean = legacyMarked(kv) && kv(TimeZoneKey).isEmpty

  /**
   * [[DecodingContext.LegacyFilesZone]]'s value in a build that read no file [[rebasedInJvmZone]]:
   * it answers in a JVM of any zone. (A version without the key was built before builds asked.)
   */
  val NoMarkedFiles = "none"

  /**
   * The context a build records: `decoding` (the source's now, whose timestamp columns of
   * Parquet and Avro state the JVM's zone under [[DecodingContext.LegacyFilesZone]]) keeps that
   * zone for columns whose values the build or `base` (the context of the version whose rows it
   * carries) rebased in it, and records [[NoMarkedFiles]] for the others. Asked: `read` (the
   * files the build read, of `format`), and where `base` was built before builds asked (a
   * column of it without the key), `all` (every file the version holds): its carried rows
   * may hold marked files nobody asked about. A file whose metadata cannot be read counts as
   * marked.
   */
  def recorded(spark: SparkSession, decoding: Decoding, format: String, read: Seq[SourceFile], all: => Seq[SourceFile],
      base: Option[Decoding]): Decoding = {
    val key = DecodingContext.LegacyFilesZone
    val zoned = decoding.columns.filter(_.settings.contains(key)).map(_.name).toSet
    if (zoned.isEmpty) return decoding
    val baseValue = (c: String) => base.flatMap(_.column(c)).flatMap(_.settings.get(key))
    val unasked = base.exists(b => zoned.exists(c => b.column(c).isDefined && baseValue(c).isEmpty))
    lazy val files = if (unasked) all else read
    lazy val anyMarked = files.nonEmpty && anyRebasedInJvmZone(spark, format, files)
    decoding.copy(columns = decoding.columns.map { c =>
      if (!zoned.contains(c.name) || baseValue(c.name).exists(_ != NoMarkedFiles) || anyMarked) c
      else c.copy(settings = c.settings + (key -> NoMarkedFiles))
    })
  }

  /**
   * Whether any of `files` is [[rebasedInJvmZone]] (`format` "parquet" or "avro": its footer or
   * header read, [[FileSurvey]]; another format: true). A file whose metadata is unreadable counts
   * as rebased in the JVM's zone.
   */
  def anyRebasedInJvmZone(spark: SparkSession, format: String, files: Seq[SourceFile]): Boolean = {
    if (format != "parquet" && format != "avro") return true
    FileSurvey(spark, spark.sessionState.newHadoopConf(), files, "legacy calendar marks in the metadata") { (f, conf) =>
      metadataOf(format, f, conf).forall(kv => rebasedInJvmZone(kv.get))
    }.contains(true)
  }

  /** A file's key-value metadata (Parquet's footer, Avro's header); None where unreadable. */
  private def metadataOf(format: String, f: SourceFile, conf: Configuration): Option[Map[String, String]] = {
    val path = new Path(f.path)
    try {
      val kv: Map[String, String] = format match {
        case "parquet" =>
          val input = HadoopInputFile.fromStatus(new FileStatus(f.size, false, 1, 0L, f.modificationTime, path), conf)
          val options = HadoopReadOptions.builder(conf, path).withMetadataFilter(ParquetMetadataConverter.SKIP_ROW_GROUPS).build()
          val reader = ParquetFileReader.open(input, options)
          try reader.getFooter.getFileMetaData.getKeyValueMetaData.asScala.toMap finally reader.close()
        case _ =>
          val in = path.getFileSystem(conf).open(path)
          try {
            val stream = new org.apache.avro.file.DataFileStream[AnyRef](in, new org.apache.avro.generic.GenericDatumReader[AnyRef]())
            stream.getMetaKeys.asScala.map(k => k -> stream.getMetaString(k)).filter(_._2 != null).toMap
          } finally in.close()
      }
      Some(kv)
    } catch {
      case NonFatal(e) =>
        logWarning(s"bloomindex: metadata of ${f.path} unreadable (${e.getMessage}); counting its timestamps as " +
          "rebased in this JVM's default zone")
        None
    }
  }
}
