package bloomindex.indexing

import bloomindex.crypto.IndexEncryption
import bloomindex.log.{IndexData, IndexSpec}
import bloomindex.source.SourceFile
import bloomindex.layout.{IndexLayout, IndexSchemas, IndexSummary, ReusedProbes}

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, DataFrameWriter, Row, SparkSession}
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.types._

/** What one build produced: index rows written under `dir`, plus global filters if asked. */
case class BuildResult(files: Long, bytes: Long, filterBytes: Long, filesFromFooters: Long,
    globalNdv: Map[String, Long], layout: String)

/**
 * The index build, Spark jobs over the files to index, one filter per (file, column):
 *
 *  1. Parquet sources (without a global filter): [[FooterFilters]] takes each (file, column)
 *     whose footer carries fitting Bloom filters in every row group, without reading data.
 *  2. Everything else: one read of the data ([[BuildScan]]: columnar batches hashed column by
 *     column), where each task counts each file's distinct hashes exactly and sizes and fills
 *     its filter when the file ends ([[DistinctPass]]). Files Spark splits over tasks merge
 *     their distinct hashes through a shuffle; files too large to count in memory, and the
 *     global filters of a CREATE or full refresh (sized from the table-wide HLL estimate), get
 *     a second read ([[InsertPass]]).
 *
 * Rows are written as Parquet under the operation's own folder: nothing is visible until the
 * log commits it.
 */
object IndexBuilder {

  /**
   * Builds index rows for `files` of `relation` into `dir` (and global filters into
   * `dir/_global` when the spec asks for them). `baseGlobal` (column -> serialized filter) is
   * OR-ed into the new global filters, for incremental refreshes; `carried` are index rows of
   * unchanged files to write alongside, `reused` the probe files of earlier versions the new
   * version keeps as they are (their rows count in the result and the summary); `prebuilt` the
   * rows of some of `files` their write built ([[WriteTaskFilters]]): those files are not read.
   */
  def build(
      spark: SparkSession,
      spec: IndexSpec,
      relation: HadoopFsRelation,
      files: Seq[SourceFile],
      dir: String,
      carried: Option[DataFrame],
      baseGlobal: Map[String, Array[Byte]],
      baseGlobalNdv: Map[String, Long] = Map.empty,
      reused: ReusedProbes = ReusedProbes.None,
      prebuilt: Seq[FileFilter] = Nil): BuildResult = {
    val run = new BuildRun(spark, spec, relation, files, dir, baseGlobal, reused.rows, prebuilt, baseGlobalNdv)
    run.write(carried)
    IndexSummary.write(spark.sessionState.newHadoopConf(), dir, spec, run.rowsWritten, reused)
    // After an incremental refresh the global count is an upper bound: old + new files' counts.
    // Not in the (plaintext) log for an encrypted column: its global filter's row holds it, encrypted.
    val encrypted = IndexEncryption.plan(spark.sessionState.newHadoopConf(), dir).map(_.columnKeys.keySet).getOrElse(Set.empty)
    val globalNdv = if (!spec.global) Map.empty[String, Long]
      else spec.columns.filterNot(c => encrypted(c.name))
        .map(c => c.name -> (run.globalNdv.getOrElse(c.name, 0L) + baseGlobalNdv.getOrElse(c.name, 0L))).toMap
    val indexed = run.indexed()
    BuildResult(indexed.count, indexed.bytes, indexed.filterBytes, indexed.fromFooters, globalNdv,
      run.layout.name)
  }

  /**
   * An encrypted index's global filters: one column's row per file, encrypted as
   * [[IndexEncryption]] planned (the per-file rows go through [[IndexFiles]]).
   */
  /** The layout a build into `dir` writes ([[IndexLayout.forBuild]]): after [[IndexEncryption.prepare]] recorded its plan, if any. */
  def layoutFor(spark: SparkSession, dir: String): IndexLayout =
    IndexLayout.forBuild(IndexEncryption.plan(spark.sessionState.newHadoopConf(), dir).isDefined,
      spark.sessionState.conf.getConf(org.apache.spark.sql.bloomindex.BloomIndexSQLConf.BUILD_BLOCK_MAJOR),
      spark.sessionState.conf.getConf(org.apache.spark.sql.bloomindex.BloomIndexSQLConf.TEST_BUILD_BLOCKS_LAYOUT))

  private def encrypted(w: DataFrameWriter[Row], spark: SparkSession, dir: String): DataFrameWriter[Row] =
    IndexEncryption.plan(spark.sessionState.newHadoopConf(), dir) match {
      case Some(plan) => w.options(IndexEncryption.writerOptions(plan)).partitionBy("column")
      case None => w
    }

  private[bloomindex] def writeGlobals(
      spark: SparkSession,
      spec: IndexSpec,
      dir: String,
      built: Map[Int, Array[Byte]],
      globalNdv: Map[Int, Long],
      baseGlobal: Map[String, Array[Byte]],
      sizes: Array[Int],
      baseNdv: Map[String, Long] = Map.empty): Unit = {
    val rows = spec.columns.indices.map { i =>
      val c = spec.columns(i)
      // A column with no non-null value in the new files still gets its global filter; an
      // incremental refresh with nothing new built (files only deleted) keeps the old one whole
      // (the values of deleted files stay in it: a global filter may only hold too many).
      val base = baseGlobal.get(c.name).map(c.algorithm.fromBytes)
      val f = built.get(i).map(b => c.algorithm.fromBitset(b, c.fpp))
        .getOrElse(IndexFilters.ofBytes(c, base.map(_.numBytes).getOrElse(sizes(i))))
      base.foreach(f.merge)
      val bytes = f.toBytes
      // The running count (an upper bound after incremental refreshes), as the log records it:
      // the log leaves an encrypted column's out, and the next refresh reads it from here.
      Row(c.name, globalNdv.getOrElse(i, 0L) + baseNdv.getOrElse(c.name, 0L), bytes, IndexSchemas.globalChecksum(c.name, bytes))
    }
    // A local relation (rows Spark converts to its own, which every serializer takes), one file.
    encrypted(spark.createDataFrame(rows.asJava, IndexSchemas.GlobalSchema).coalesce(1).write.mode("error"),
      spark, dir).parquet(IndexSchemas.globalDir(dir))
  }
}

