package bloomindex.advisor

import scala.jdk.CollectionConverters._
import scala.util.Try
import scala.util.control.NonFatal

import bloomindex.source.{SourceFile, SourceResolver}

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile

import org.apache.spark.sql.{Column, DataFrame, SparkSession}
import org.apache.spark.sql.functions._
import org.apache.spark.sql.types.StructField

/**
 * A source as the advisor reads it: its current files, a DataFrame over it, and the sample of
 * files the estimates are measured on (every file up to `sampleFiles`, else `sampleFiles` of
 * them picked by a hash of their paths, so that two runs measure the same files).
 */
final class SourceSample(val spark: SparkSession, val source: ScannedSource, val display: String,
    val frame: DataFrame, val files: Seq[SourceFile], val partitionColumns: Seq[String], val format: String,
    sampleFiles: Int, focus: Option[Set[String]]) {

  /** The files the sample is drawn from: those the workload's scans list, when known. */
  val population: Seq[SourceFile] = focus match {
    case Some(paths) => files.filter(f => paths.contains(f.path))
    case None => files
  }

  val sampled: Seq[SourceFile] =
    if (population.size <= sampleFiles) population
    else population.sortBy(f => (scala.util.hashing.MurmurHash3.stringHash(f.path, 0x5eed), f.path)).take(sampleFiles)

  def isSampled: Boolean = sampled.size < files.size

  val avgFileBytes: Double = if (files.isEmpty) 0.0 else files.map(_.size).sum.toDouble / files.size

  def field(column: String): Option[StructField] = {
    val resolver = spark.sessionState.conf.resolver
    frame.schema.fields.find(f => resolver(f.name, column))
  }

  /** The column naming the file a row was read from (`_metadata.file_path` where the source has it). */
  private lazy val fileColumn: Column =
    if (Try(frame.select("_metadata.file_path").schema).isSuccess) col("_metadata.file_path") else input_file_name()

  /** The rows of the sampled files, with column `__file` (the file's normalized path is made on the driver). */
  lazy val rows: DataFrame = {
    val withFile = frame.withColumn("__file", fileColumn)
    if (!isSampled) withFile
    else {
      // Files are matched by their normalized path (the file column is the URL form).
      val paths = sampled.map(_.path).toSet
      val matches = udf((p: String) => paths.contains(SourceResolver.normalize(p)))
      withFile.where(matches(col("__file")))
    }
  }

  /** The sampled files' footers, for Parquet sources (at most `max` files). */
  def footerColumnBytes(column: String, max: Int = 16): Option[FooterBytes] =
    if (format != "parquet") None else try {
      val conf = spark.sessionState.newHadoopConf()
      val read = sampled.take(max).map { f =>
        val path = new Path(f.path)
        val input = HadoopInputFile.fromStatus(new FileStatus(f.size, false, 1, 0L, f.modificationTime, path), conf)
        val reader = ParquetFileReader.open(input, HadoopReadOptions.builder(conf, path).build())
        try {
          val chunks = reader.getFooter.getBlocks.asScala.toSeq.flatMap(_.getColumns.asScala.find(
            _.getPath.toDotString.equalsIgnoreCase(column)))
          val data = chunks.map(_.getTotalSize).sum
          val filters = chunks.nonEmpty && chunks.forall(_.getBloomFilterOffset >= 0)
          val filterBytes = chunks.map(c => math.max(0, c.getBloomFilterLength).toLong).sum
          (data, filters, filterBytes)
        } finally reader.close()
      }
      if (read.isEmpty) None
      else {
        val perFile = read.size.toDouble
        Some(FooterBytes(read.map(_._1).sum / perFile, read.forall(_._2), read.map(_._3).sum / perFile))
      }
    } catch { case NonFatal(_) => None }
}

/** A column's bytes per file in Parquet footers: its chunks, and whether every row group has a Bloom filter. */
final case class FooterBytes(chunkBytesPerFile: Double, footerFilters: Boolean, filterBytesPerFile: Double)

object SourceSample {

  /** The source as it is now, or the error resolving it raises (a missing table: BLOOM_INDEX_SOURCE_NOT_FOUND). */
  def of(spark: SparkSession, source: ScannedSource, sampleFiles: Int, focus: Option[Set[String]] = None): SourceSample = {
    val ref = source.ref.getOrElse(throw bloomindex.errors.BloomIndexErrors.sourceNotFound(source.display))
    val (spec, df) = SourceResolver.resolveFrame(spark, ref)
    val snap = SourceResolver.snapshot(spark, spec, Some(df))
    new SourceSample(spark, source, spec.display, df, snap.files, spec.partitionColumns,
      SourceResolver.formatOf(snap.relation), sampleFiles, focus)
  }
}
