package bloomindex.actions

import scala.util.control.NonFatal

import bloomindex.advisor.{Advisor, ColumnWorkload, FppChoice, FppModel}
import bloomindex.history.{ScanRecord, WorkloadHistory}
import bloomindex.indexing.NdvSample
import bloomindex.layout.{IndexStore, IndexSummary}
import bloomindex.log.{ColumnSpec, IndexData, IndexSpec, LogEntry}
import bloomindex.source.{SourceFile, SourceIdentity, SourceProviders}

import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.execution.datasources.HadoopFsRelation

/**
 * `fpp = 'auto'` at build time (CREATE, REFRESH, OPTIMIZE): each `auto` column's rate chosen
 * by [[FppModel]] for the version about to be built, before anything is sized.
 *
 *  - files and their mean size: every file the version holds (the source's, as of the build);
 *  - distinct values per file: the column's `ndv` option when it has one; on an incremental
 *    refresh, what the base version's filters were sized for ([[baseNdv]]); else a sample of the
 *    files the build reads ([[NdvSample]]: distinct values per byte, times the mean file size);
 *  - the workload: the workload history's scans of the source (matched by the source's
 *    identity, as pruning matches), when it holds any: values per lookup and lookups recorded
 *    ([[ColumnWorkload]]); else one value a lookup and [[FppModel.DefaultLookupsPerBuild]]
 *    (a refresh in a writing thread reads the history as it stands, without waiting for the
 *    listener bus: [[WorkloadHistory.readNow]]);
 *  - the budget: `spark.bloomindex.fpp.autoBudget` of the files' bytes.
 *
 * The spec keeps `fppAuto`, so every later build chooses again by the same rule; `fpp` is the
 * rate chosen, recorded in the version's entry (DESCRIBE: `auto (chosen ...)`). A build that
 * reads no file keeps the rate the spec had. The filters of files an incremental refresh keeps
 * stay as they were: a filter answers by its own size and hash count, whatever the rate now.
 */
private[actions] object AutoFpp extends Logging {

  val Name = "auto"
  /** An `auto` column's rate in the transient entry of a CREATE, before its build chose one. */
  val Placeholder = 0.01

  /**
   * `spec` with each `auto` column's rate chosen: `all` the files the version holds, `read`
   * those the build reads (with `relation`), from which the distinct values are sampled.
   *
   * On an `incremental` build (a REFRESH extending a version) a column keeps the rate its
   * version recorded while the new choice is within [[KeepWithin]] of it: the rate then moves
   * when the table has grown (or shrunk) by about that factor, not on every small write, so the
   * filters a write's own tasks built at the recorded rate are used as they are (they are
   * matched by the whole column spec, rate included) and the files of one version share a size.
   */
  def resolve(spark: SparkSession, indexName: String, spec: IndexSpec, all: Seq[SourceFile],
      relation: HadoopFsRelation, read: Seq[SourceFile], known: Map[String, Double] = Map.empty,
      incremental: Boolean = false, inWrite: Boolean = false): IndexSpec = {
    val auto = spec.columns.filter(_.fppAuto)
    if (auto.isEmpty || all.isEmpty || read.isEmpty) return spec
    val files = all.size.toLong
    val bytes = all.iterator.map(_.size).sum
    val avg = bytes.toDouble / files
    val budget = Some(math.min(Long.MaxValue.toDouble,
      spark.sessionState.conf.getConf(BloomIndexSQLConf.FPP_AUTO_BUDGET) * bytes).toLong)
    val sampled = auto.filter(c => c.ndv.isEmpty && !known.contains(c.name))
    val perByte: Map[String, Double] = if (sampled.isEmpty) Map.empty else
      sampled.map(_.name).zip(NdvSample.perByte(spark, relation, read, sampled)).collect { case (n, Some(d)) => n -> d }.toMap
    StepClock.mark("ndv")
    val records = history(spark, spec, inWrite)
    StepClock.mark("history")
    spec.copy(columns = spec.columns.map { c =>
      val ndv = c.ndv.map(_.toDouble).orElse(known.get(c.name)).orElse(perByte.get(c.name).map(_ * avg))
      if (!c.fppAuto || ndv.isEmpty) c
      else {
        val w = if (c.isText) None else ColumnWorkload.of(records, c.sourceName)
        val choice = choose(c, files, ndv.get, avg, budget, w)
        logInfo(f"Bloom index '$indexName' column ${c.display}: fpp auto chose ${choice.fpp}%.3g (${choice.limitedBy}; " +
          f"$files files of ${avg / 1e6}%.2f MB, ${ndv.get}%.0f distinct values each, " +
          w.fold("no recorded workload")(x => f"${x.lookups} lookups of ${x.valuesPerLookup}%.1f values recorded") +
          f", ${choice.expectedFalsePositiveFiles}%.3g false positive files a lookup, ${choice.totalBytes(files)} filter bytes)")
        if (incremental && kept(c.fpp, choice.fpp)) c else c.copy(fpp = choice.fpp)
      }
    })
  }

  /**
   * Distinct values per file of `base`'s columns, from its summary: each column's filter bytes per
   * file, at the rate and sizing the base sized them for (bytes a value at that rate), for the
   * columns whose filters mostly came from the data (a Parquet footer's filter has its writer's
   * size). An incremental refresh takes these instead of sampling its new files: a refresh after
   * a small write would otherwise read its files twice. Empty when the summary is unreadable.
   */
  def baseNdv(spark: SparkSession, indexDir: Path, base: LogEntry, data: IndexData): Map[String, Double] = try {
    val summary = IndexSummary.read(spark.sessionState.newHadoopConf(), IndexStore.dataDir(indexDir, data), data.checksums)
    base.spec.columns.flatMap { c =>
      summary.columns.get(c.name).filter(s => s.files > 0 && s.filesFromFooter * 2 < s.files).map { s =>
        val perValue = c.algorithm.numBytes(1000000L, c.fpp, c.sizing) / 1e6
        c.name -> (s.filterBytes.toDouble / s.files / perValue)
      }
    }.toMap
  } catch { case NonFatal(e) =>
    logInfo(s"Bloom index '${base.spec.name}': fpp auto samples the files (the base's summary: $e)")
    Map.empty
  }

  /** How far a new choice may be from the recorded rate before an incremental build takes it. */
  val KeepWithin = 2.0

  /** Whether an incremental build keeps the `recorded` rate rather than the one `chosen` now. */
  def kept(recorded: Double, chosen: Double): Boolean =
    recorded > 0 && chosen > 0 && chosen <= recorded * KeepWithin && chosen >= recorded / KeepWithin

  /** [[FppModel.choose]] for one column. */
  def choose(c: ColumnSpec, files: Long, ndvPerFile: Double, avgFileBytes: Double, budget: Option[Long],
      workload: Option[ColumnWorkload]): FppChoice =
    FppModel.choose(files, ndvPerFile, avgFileBytes, workload.map(_.valuesPerLookup).getOrElse(1.0), budget,
      c.sizing, c.algorithm, workload.map(_.lookupsPerBuild).getOrElse(FppModel.DefaultLookupsPerBuild))

  /**
   * The recorded scans of `spec`'s source (none when the history cannot be read); `inWrite`: for a
   * refresh in a writing thread, without waiting for Spark's listener bus ([[WorkloadHistory.readNow]]).
   */
  private def history(spark: SparkSession, spec: IndexSpec, inWrite: Boolean): Seq[ScanRecord] =
    try {
      val defaultFs = Advisor.defaultFs(spark)
      (if (inWrite) WorkloadHistory.readNow(spark) else WorkloadHistory.read(spark)).filter(r =>
        SourceProviders.sameSource(spec.source, SourceIdentity.of(r.provider, r.table, r.rootsOn(defaultFs))))
    }
    catch { case NonFatal(e) =>
      logWarning(s"Bloom index '${spec.name}': fpp auto without the workload history, unreadable: $e")
      Nil
    }

  /** How DESCRIBE shows a column's rate: the number, or `auto (chosen <rate>)`. */
  def display(c: ColumnSpec): String =
    if (!c.fppAuto) c.fpp.toString
    else s"$Name (chosen ${new java.math.BigDecimal(c.fpp).round(new java.math.MathContext(3)).stripTrailingZeros.toPlainString})"
}
