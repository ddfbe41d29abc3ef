package bloomindex.actions

import bloomindex.indexing.{IndexBuilder, WrittenFilters}
import bloomindex.layout.{IndexFiles, IndexLayout, IndexStore, IndexSummary, ProbeFile, ReusedProbes}
import bloomindex.crypto.IndexEncryption
import bloomindex.log.{Checksums, Decoding, IndexData, IndexSpec, LogEntry}
import bloomindex.source.{DecodingContext, LegacyRebase, Snapshot, SourceFile, SourceProviders, SourceResolver}

import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf

/**
 * The build step CREATE, REFRESH and OPTIMIZE share: the source's files as of now, how this
 * session decodes the indexed columns, then the build job over the files `base` does not hold
 * as they are now (all of them without a base), keeping the rows of the unchanged ones.
 *
 * Unchanged files' rows are kept in one of two ways. In the `probes` layout, a probe file of
 * the base whose every file is unchanged is kept as it is: the new version lists it in its
 * summary (and its folder in [[IndexData.reused]]) and writes only the new files' filters, so
 * an append costs what its new files cost, not what the index holds. The other rows (in probe
 * files that also hold changed or deleted files, and in every other layout) are carried: read
 * and written again into the new folder. When a column would hold more than
 * `spark.bloomindex.refresh.maxProbeFiles` probe files, or for OPTIMIZE, the small ones are
 * carried too, into few files (compaction).
 */
private[actions] object IndexBuild extends Logging {

  /**
   * `recorded`: the decoding context of the index's last ACTIVE version (a refresh's), whose
   * columns' physical identities a renamed column is followed by ([[SourceResolver.following]]);
   * `preferNames` for a full rebuild; `listed`: the source's files as the caller listed them
   * already (through `frame`), else listed here.
   */
  def run(ctx: ActionContext, spec: IndexSpec, dataDir: Path, base: Option[LogEntry], frame: Option[DataFrame],
      optimize: Boolean = false, recorded: Option[Decoding] = None, preferNames: Boolean = false,
      written: Option[WrittenFilters] = None, listed: Option[Snapshot] = None): Built = {
    val spark = ctx.spark
    val snapshot = listed.getOrElse(SourceResolver.snapshot(spark, spec.source, frame))
    StepClock.mark("listing")
    val (relation, current, tableVersion) =
      (SourceResolver.following(spark, spec, recorded, preferNames, snapshot.relation), snapshot.files, snapshot.version)
    val decoding = SourceResolver.decoding(spark, spec, relation)
    // The base version's encrypted columns stay encrypted (its rows may be carried).
    val baseKeys: Map[String, Option[String]] = base.flatMap(_.data)
      .flatMap(d => IndexEncryption.plan(ctx.hadoopConf, IndexStore.dataDir(ctx.log.indexDir, d).toString))
      .map(_.columnKeys.map { case (c, k) => c -> Option(k) }).getOrElse(Map.empty)
    var plan = IndexEncryption.prepare(spark, spec, current, dataDir.toString, baseKeys)
    StepClock.mark("decoding")
    // The base's global filters, when the index has them: one that is damaged or fails its
    // checksum cannot be merged into (the new filter would miss the values it held), so the
    // build is then a full one.
    val baseGlobal0: Option[Map[String, IndexStore.GlobalRow]] = base.flatMap(_.data).filter(_ => spec.global).map { d =>
      try IndexStore.globalRows(spark, ctx.log.indexDir, d) catch {
        case scala.util.control.NonFatal(e) => logWarning(s"Bloom index '${ctx.name}': global filters unreadable " +
          s"(${e.getMessage}); rebuilding in full"); Map.empty[String, IndexStore.GlobalRow]
      }
    }
    val globalDamaged = baseGlobal0.exists(g => !spec.columns.forall(c => g.contains(c.name)))
    if (globalDamaged) logWarning(s"Bloom index '${ctx.name}': a global filter of the base version is missing or damaged; " +
      "rebuilding in full")
    val baseData = base.flatMap(_.data).filterNot(_ => globalDamaged)
    // What is built, carried and kept, under the layout the encryption plan in `dataDir` gives.
    def diff(): (Seq[SourceFile], Option[DataFrame], ReusedProbes) = {
      val kept = baseData.filter(d => IndexLayout.of(d) == IndexLayout.Probes &&
        IndexBuilder.layoutFor(spark, dataDir.toString) == IndexLayout.Probes)
        .flatMap(d => keptProbes(ctx, spec, d, current, optimize))
      StepClock.mark("probe footers")
      (baseData, kept) match {
        case (None, _) => (current, None, ReusedProbes.None)
        case (Some(_), Some(k)) =>
          val carried = if (k.carried.isEmpty) None else Some(unchangedRows(ctx, IndexStore.probeRowsOf(spark, k.carried,
            k.carriedPartitions, k.checksums), current.filter(f => k.unchanged.contains(f.path))))
          (current.filterNot(f => k.unchanged.contains(f.path)), carried, k.reused)
        case (Some(d), None) =>
          // The incremental file diff: files held as they are now, by every column, are carried;
          // the rest built (so a file whose row a damaged index file lost is built again).
          val rows = IndexStore.rows(spark, ctx.log.indexDir, d)
          val known = IndexStore.fileIdentities(rows, spec.columns.size)
          val unchanged = current.filter(f => known.contains((f.path, f.size, f.modificationTime)))
          val keep = unchanged.map(_.path).toSet
          (current.filterNot(f => keep.contains(f.path)), Some(unchangedRows(ctx, rows, unchanged)), ReusedProbes.None)
      }
    }
    var (toBuild, carried, reused) = diff()
    // The footer of every file to read, not a sample: a column encrypted there that the plan
    // leaves unencrypted is planned now, before anything is written (its filters would tell its
    // values to anyone who can read the index); the layout, so what is kept, may change with it.
    var encryptedKnown = baseKeys
    var unplanned = IndexEncryption.unplanned(spark, spec, toBuild, plan)
    while (unplanned.nonEmpty && !unplanned.keySet.subsetOf(encryptedKnown.keySet)) {
      logWarning(s"Bloom index '${ctx.name}': files to index encrypt ${unplanned.keys.toSeq.sorted.mkString(", ")}, " +
        "which the sampled footers did not show; planning the index's encryption again")
      encryptedKnown ++= unplanned
      IndexEncryption.dropPlan(ctx.hadoopConf, dataDir.toString)
      plan = IndexEncryption.prepare(spark, spec, current, dataDir.toString, encryptedKnown)
      val again = diff()
      toBuild = again._1; carried = again._2; reused = again._3
      unplanned = IndexEncryption.unplanned(spark, spec, toBuild, plan)
    }
    StepClock.mark("encryption")
    val baseRows = if (globalDamaged) Map.empty[String, IndexStore.GlobalRow] else baseGlobal0.getOrElse(Map.empty)
    val baseGlobal = baseRows.map { case (c, r) => c -> r.filter }
    // An encrypted column's count is not in the log: its global filter's row has it.
    val baseNdv = if (baseGlobal.isEmpty) Map.empty[String, Long]
      else baseRows.map { case (c, r) => c -> r.ndv } ++ baseData.map(_.globalNdv).getOrElse(Map.empty)
    // Files the build cannot read as the source does (its provider says which) are left out:
    // not indexed, read in full by queries.
    val (readRelation, readFiles) = SourceResolver.readable(spark, spec, relation, toBuild)
    val (result, built) = SourceResolver.buildScope(spark, spec.source) {
      // `fpp = 'auto'`: each such column's rate for this version, before anything is sized.
      val sized = if (!spec.columns.exists(_.fppAuto)) Map.empty[String, Double]
        else (for (b <- base; d <- baseData) yield AutoFpp.baseNdv(spark, ctx.log.indexDir, b, d)).getOrElse(Map.empty)
      StepClock.mark("readable, baseNdv")
      val resolved = AutoFpp.resolve(spark, ctx.name, spec, current, readRelation, readFiles, sized,
        incremental = baseData.isDefined, inWrite = written.isDefined)
      StepClock.mark("fpp auto")
      // The files whose filters their write's tasks built, for every column (at the rate this
      // version records): not read.
      val prebuilt = if (resolved.global) Nil
        else written.filter(w => sameFieldIds(w, decoding, resolved)).map(_.forFiles(readFiles, resolved.columns)).getOrElse(Nil)
      val fromWrite = prebuilt.iterator.map(_.path).toSet.size
      if (written.isDefined) logInfo(s"Bloom index '${ctx.name}': $fromWrite of ${readFiles.size} new files' filters " +
        "built by the write that wrote them")
      val r = IndexBuilder.build(spark, resolved, readRelation, readFiles, dataDir.toString, carried, baseGlobal, baseNdv, reused,
        prebuilt)
      StepClock.mark("filters written")
      (r, (resolved, fromWrite, prebuilt.iterator.map(_.path).toSet))
    }
    // Files whose filters the write's tasks built were written by this Spark, which records the
    // zone of any legacy rebase it writes: not asked.
    val recordedDecoding = LegacyRebase.recorded(spark,
      SourceProviders.of(spec.source).recordedDecoding(decoding, readRelation, baseData.flatMap(_.decoding)),
      readRelation.fileFormat match {
        case _: org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat => "parquet"
        case f if f.getClass.getName == "org.apache.spark.sql.avro.AvroFileFormat" => "avro"
        case f => f.toString
      }, readFiles.filterNot(f => built._3.contains(f.path)), current.filterNot(f => built._3.contains(f.path)),
      baseData.flatMap(_.decoding))
    StepClock.mark("legacy calendar marks")
    Built(result, tableVersion, recordedDecoding, reused.folders, Some(built._1), built._2)
  }

  /**
   * Whether the write's tasks hashed the columns the build reads: a task hashes the written
   * column of the index column's name, while a session reading Parquet by field id reads the
   * file's column of the field id the build's decoding has (none: by name). So each indexed
   * column must have been written with exactly that field id (or none where it has none).
   */
  private def sameFieldIds(w: WrittenFilters, decoding: Decoding, spec: IndexSpec): Boolean = w.schema.exists { written =>
    spec.columns.forall { c =>
      val id = decoding.column(c.name).flatMap(_.physical.get(DecodingContext.FieldId))
      written.fields.find(_.name == c.sourceName).exists(f => DecodingContext.physicalOf(f).get(DecodingContext.FieldId) == id)
    }
  }

  /** The rows of `rows` whose file is one of `unchanged`, as it is now. */
  private def unchangedRows(ctx: ActionContext, rows: DataFrame, unchanged: Seq[SourceFile]): DataFrame = {
    val keepDf = ctx.spark.createDataFrame(unchanged.map(f => (f.path, f.size, f.modificationTime)))
      .toDF("file_path", "file_size", "modification_time")
    rows.join(keepDf, Seq("file_path", "file_size", "modification_time"), "left_semi")
  }

  /**
   * What an incremental build over a `probes` base keeps: the paths of the files every column
   * holds as they are now (`unchanged`), the probe files kept as they are, and the probe files
   * whose unchanged rows are carried (path, length, column) in `carriedPartitions` partitions
   * (0: one per file). `unchanged` is a Java set: at a million files the Scala immutable sets and
   * maps this was built with took about half of a 1% REFRESH's command-thread CPU (JFR).
   */
  private final case class Kept(unchanged: java.util.Set[String], reused: ReusedProbes,
      carried: Seq[(String, Long, String)], carriedPartitions: Int, checksums: Boolean)

  /**
   * Reads the footers of the base's probe files (the files' identities only) and decides which
   * are kept; None when the base's summary is unreadable (then every row is carried as before).
   */
  private def keptProbes(ctx: ActionContext, spec: IndexSpec, d: IndexData, current: Seq[SourceFile],
      optimize: Boolean): Option[Kept] = {
    val spark = ctx.spark
    val conf = ctx.hadoopConf
    val indexDir = ctx.log.indexDir
    val baseDir = IndexStore.dataDir(indexDir, d)
    val summary = try IndexSummary.read(conf, baseDir, d.checksums) catch {
      case scala.util.control.NonFatal(e) =>
        logWarning(s"Bloom index '${ctx.name}': summary of ${d.dir} unreadable (${e.getMessage}); its rows are carried")
        return None
    }
    val maxFiles = spark.sessionState.conf.getConf(BloomIndexSQLConf.REFRESH_MAX_PROBE_FILES)
    val target = spark.sessionState.conf.getConf(BloomIndexSQLConf.OPTIMIZE_TARGET_FILE_BYTES)
    val threads = spark.sessionState.conf.getConf(BloomIndexSQLConf.LOAD_THREADS)
    val byPath = new java.util.HashMap[String, SourceFile](math.max(16, current.size * 4 / 3 + 1))
    current.foreach(f => byPath.put(f.path, f))
    def isCurrent(e: ProbeFile.FileEntry): Boolean = {
      val f = byPath.get(e.path)
      f != null && f.size == e.size && f.modificationTime == e.modificationTime
    }
    // Per column: each probe file (path, length, footer if readable).
    val probes = spec.columns.map { c =>
      val files = summary.columns.get(c.name).map(_.allProbeFiles(indexDir, IndexEncryption.columnFolder(baseDir, c.name)))
        .getOrElse(Nil)
      val footers = ProbeFile.readEachFooter(conf, files, threads, c.name, c.algorithm, d.checksums)
      c -> files.zip(footers.toSeq.map(_.toOption))
    }
    // Sections whose block rows failed their checksums when this JVM read them: hold nothing.
    def damagedSections(p: Path): Option[Set[Int]] = Checksums.damageOf(p.toString).map(_._2)
    // Unchanged: held as it is now by every column (an unreadable probe file, or a damaged
    // section of one, holds nothing, so its files are built again).
    def held(fs: Seq[((Path, Long), Option[ProbeFile.Footer])], within: String => Boolean): java.util.HashSet[String] = {
      val out = new java.util.HashSet[String]()
      fs.foreach { case ((p, _), footer) =>
        val bad = damagedSections(p).getOrElse(Set.empty)
        footer.foreach(_.files.foreach { e =>
          if (!bad.contains(e.section) && within(e.path) && isCurrent(e)) out.add(e.path)
        })
      }
      out
    }
    // The first column's set, then each next column's within it.
    val unchanged: java.util.Set[String] = probes match {
      case Seq() => java.util.Collections.emptySet[String]()
      case (_, first) +: rest => rest.foldLeft(held(first, _ => true)) { case (acc, (_, fs)) => held(fs, acc.contains) }
    }
    val reusedFiles = Map.newBuilder[String, Map[String, Long]]
    val reusedRows = Seq.newBuilder[IndexFiles.RowWritten]
    val carried = Seq.newBuilder[(String, Long, String)]
    var carriedBytes = 0L
    var compacted = optimize
    val root = indexDir.toUri.getPath.stripSuffix("/") + "/"
    probes.foreach { case (c, fs) =>
      // Kept as they are: files with checksums (data of an older format is written again, with
      // them), where this JVM found no damage, holding unchanged files only.
      val keepable = fs.collect { case ((p, n), Some(f)) if d.checksums && f.checked && damagedSections(p).isEmpty &&
          f.files.forall(e => unchanged.contains(e.path) && isCurrent(e)) =>
        (p, n, f)
      }
      // Compaction: more probe files than allowed after this refresh (its new ones counted as
      // one), or OPTIMIZE: the small ones are carried, together, into few files.
      val compact = optimize || keepable.size + 1 > maxFiles
      val (keep, small) = if (compact) keepable.partition(_._2 >= target) else (keepable, Nil)
      if (small.nonEmpty) compacted = true
      val keptPaths = keep.map(_._1).toSet
      fs.foreach { case ((p, n), footer) =>
        if (!keptPaths.contains(p) && footer.exists(_.files.exists(e => unchanged.contains(e.path)))) {
          carried += ((p.toString, n, c.name))
          carriedBytes += n
        }
      }
      reusedFiles += c.name -> keep.map { case (p, n, _) =>
        val abs = p.toUri.getPath
        require(abs.startsWith(root), s"probe file $p outside the index folder $root")
        abs.stripPrefix(root) -> n
      }.toMap
      keep.foreach { case (_, _, f) =>
        f.files.foreach(e => reusedRows += IndexFiles.RowWritten(e.path, e.size, c.name,
          f.sections(e.section).blockBytes * f.sections(e.section).blocks, e.fromFooter))
      }
      if (compact && small.nonEmpty) logInfo(s"Bloom index '${ctx.name}' column ${c.name}: rewriting ${small.size} " +
        s"small probe files together (${keepable.size} kept as they were, at most $maxFiles)")
    }
    val carriedAll = carried.result()
    // Rewritten rows go into about one file per `target` bytes (at least one per column's worth).
    val parts = if (compacted) IndexFiles.probeFilesFor(carriedBytes, target).toInt else 0
    Some(Kept(unchanged, ReusedProbes(reusedFiles.result(), reusedRows.result()),
      carriedAll, parts, d.checksums))
  }
}
