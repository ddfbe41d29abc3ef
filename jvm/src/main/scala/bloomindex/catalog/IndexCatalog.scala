package bloomindex.catalog

import scala.util.control.NonFatal

import bloomindex.errors.BloomIndexErrors
import bloomindex.log.{IndexLog, IndexRoot, LogEntry, SourceSpec}
import bloomindex.source.{DecodingContext, ScanSource, SourceProviders, SourceResolver}
import bloomindex.layout.{ColumnData, IndexStore}
import bloomindex.text.CaseFolding

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.catalyst.expressions.{Expression, ILike, Lower}
import org.apache.spark.sql.internal.SQLConf

/** What pruning did to one scan, for EXPLAIN and `BloomIndex.explain`. */
final case class PruningInfo(index: String, version: Long, filesKept: Int, filesTotal: Int,
    bytesSkipped: Long, notApplied: Seq[String], notes: Seq[String] = Nil)

/**
 * Which files of a scan to skip, and what to say about it; `bytesRead`: the bytes of the files
 * the scan reads before pruning (`info.filesTotal` of them); `kept`, for
 * an unfiltered listing ([[IndexCatalog.decide]]): the positions in it of the files the scan
 * reads and the decision keeps; `check`: the check against storage the skipped files passed,
 * for a run of the plan in a later execution to make again ([[StorageCheck]]).
 */
final case class Decision(skipped: SkippedFiles, info: PruningInfo, bytesRead: Long, kept: Option[Array[Int]] = None,
    check: Option[StorageCheck] = None)

/**
 * An ACTIVE index version whose source is a scan's, as that scan may use it: `unusable` maps
 * each column that may not answer for the scan to why (its decoding context differs, or none
 * was recorded). A column's data is loaded only when it is used, and only that column's
 * ([[IndexCache]]); the view keeps what it loaded for the query it serves.
 */
final class IndexView(val indexDir: Path, val entry: LogEntry, val unusable: Map[String, String], load: Int => ColumnData,
    scanColumn: String => String = identity, renamed: Map[String, String] = Map.empty) {
  private val loadedColumns = new Array[ColumnData](entry.spec.columns.size)
  def spec: bloomindex.log.IndexSpec = entry.spec
  def name: String = spec.name

  /** The data of index column `i` (its position in the spec), loaded on first use. */
  def columnData(i: Int): ColumnData = synchronized {
    if (loadedColumns(i) == null) loadedColumns(i) = load(i)
    loadedColumns(i)
  }

  /**
   * The index column that answers for a scan attribute called `name`, or why none does. The
   * attribute's name is the query's spelling; `scanColumn` turns it into the scan's column
   * (exactly when the session is case-sensitive, else the one column equal but for case), and
   * the index column must be spelled exactly as that, or have been renamed to it (`renamed`:
   * index column -> the scan's column, where a provider reading by field id found it renamed).
   */
  def column(name: String): Either[String, Int] = {
    val i = indexColumn(name)
    if (i < 0) Left(s"column not indexed: $name")
    else unusable.get(spec.columns(i).name).toLeft(i)
  }

  /**
   * The text filters (tokens, n-grams) over the scan's column an attribute called `name` reads
   * that may answer for the scan (positions in the spec), or why none may.
   */
  def textColumns(name: String): Either[String, Seq[Int]] = {
    val scanned = scanColumn(name)
    val all = spec.columns.indices.filter { i =>
      val c = spec.columns(i)
      c.isText && renamed.getOrElse(c.name, c.sourceName) == scanned
    }
    val usable = all.filterNot(i => unusable.contains(spec.columns(i).name))
    if (all.isEmpty) Left(s"no text filter on $name")
    else if (usable.isEmpty) Left(unusable(spec.columns(all.head).name))
    else Right(usable)
  }

  /** The position of the (non-text) index column a scan attribute called `name` reads (renamed or not), usable or not; -1 when none. */
  def indexColumn(name: String): Int = {
    val scanned = scanColumn(name)
    spec.columns.indexWhere(c => !c.isText && renamed.getOrElse(c.name, c.name) == scanned)
  }

  /** The scan's name of index column `i`: its source column's, or the one it was renamed to ([[column]]). */
  def scanName(i: Int): String = renamed.getOrElse(spec.columns(i).name, spec.columns(i).sourceName)

  /** Whether column `i` holds `f` as it is now (same path, size and modification time): its position, or -1. */
  def holds(i: Int, f: FileStatus): Int = columnData(i).indexOf(f.getPath, f.getLen, f.getModificationTime)
}

/**
 * The one place that finds the Bloom indexes for a scan and decides whether one may answer for
 * it: file pruning (every provider's hooks), the join filter, `bloom_might_contain`,
 * `BloomIndex.explain` and `SHOW BLOOM INDEXES ON` all ask it.
 *
 * An index may answer for a scan when
 *  - its source is the scan's, as the source's provider matches them ([[SourceProviders.sameSource]]);
 *  - for each column used, the scan decodes the files as the build did ([[Decoding]]: format,
 *    reader options, the session settings that matter for the format and type, the exact
 *    column, its physical identity and type); a column that differs is not used, and the
 *    reason is reported;
 *  - per file: the index holds the file with the same path, size and modification time. Other
 *    files are read (pruning), or make the index unusable (join filters, `bloom_might_contain`).
 * Anything unreadable means no pruning and one warning, never a failed query.
 */
class IndexCatalog(spark: SparkSession) extends Logging {

  private val indexes = new IndexRoot(spark)
  private def conf = spark.sessionState.conf

  /** The newest ACTIVE entry of every index whose source is `scan`'s. */
  private def activeFor(scan: ScanSource): Seq[(IndexLog, LogEntry)] = {
    val target = scan.identity
    indexes.names().flatMap { name =>
      try {
        val log = indexes.log(name)
        // Warm path: when the newest version is the one already loaded, no entry is re-read. One
        // listing of the log either way, and an entry read with its listed status (one request).
        val listed = log.versionStatuses()
        val current = listed.lastOption.flatMap(v => IndexCache.get(log.indexDir, v._1))
        current.orElse(log.lastActiveOf(listed)).flatMap(TableFollow.forScan(spark, log, _, target)).map(log -> _)
      } catch {
        case NonFatal(e) =>
          IndexCatalog.warnOnce(s"bloomindex: index '$name' is unreadable and is not used for pruning: ${e.getMessage}")
          None
      }
    }
  }

  /** The last scan this catalog found the indexes of, with them ([[viewsFor]]). */
  @volatile private var found: (ScanSource, Seq[IndexView]) = null

  /**
   * The indexes over `scan`'s source, each with the columns that may not answer for it and why.
   * Asked again for the same scan (Iceberg asks whether any index is over a table before it
   * plans the table's files, then for the decision), this catalog answers with what it found the
   * first time: the root and the logs are listed once a scan. An index version found is never
   * wrong later: a version's data never changes, and a file is skipped only where the version
   * holds it as it is now (path, size and modification time).
   */
  def viewsFor(scan: ScanSource): Seq[IndexView] = {
    val last = found
    if (last != null && (last._1 eq scan)) last._2
    else {
      val views = activeFor(scan).map { case (log, entry) => view(log, entry, scan) }
      found = (scan, views)
      views
    }
  }

  /** `entry` of the index in `log` as `scan` may use it. */
  private def view(log: IndexLog, entry: LogEntry, scan: ScanSource): IndexView = {
    val names = renamed(entry, scan)
    new IndexView(log.indexDir, entry, unusableColumns(entry, scan, names), IndexCache.column(spark, log, entry, _),
      scanColumn(scan, _), names)
  }

  /**
   * The scan's column an attribute called `name` reads: the same spelling, or (case-insensitive
   * sessions) the one column whose name equals it but for case. Spark names an attribute as the
   * query spelled it.
   */
  def scanColumn(scan: ScanSource, name: String): String = {
    val fields = scan.dataSchema.fieldNames
    if (fields.contains(name) || conf.caseSensitiveAnalysis) name
    else fields.filter(_.equalsIgnoreCase(name)) match {
      case Array(one) => one
      case _ => name
    }
  }

  /**
   * Index columns the scan reads under another name: where the scan's provider follows renames
   * ([[bloomindex.source.SourceProvider.followsRenames]]), the scan's column with the physical
   * identity the build recorded (field id, Delta's physical name) is the index column's,
   * whatever its name now (a rename keeps the identity and the values; a column dropped and
   * added again gets a new one). Index column -> the scan's column, for those whose name differs.
   */
  private def renamed(entry: LogEntry, scan: ScanSource): Map[String, String] = IndexCatalog.renamed(entry, scan, conf)

  /** Columns of `entry` that may not answer for `scan`, with the reason (`names`: its renamed columns, [[renamed]]). */
  def unusableColumns(entry: LogEntry, scan: ScanSource, names: Map[String, String]): Map[String, String] =
    IndexCatalog.unusableColumns(entry, scan, names, conf)

  // ---------------------------------------------------------------- file pruning

  /**
   * Which of `files` (the scan's, as it will read them) the indexes prove cannot match `condition`.
   * The work is per listed file and allocates nothing per file but its path's string: positions
   * in `files` throughout, and the files skipped held by path only when they are few
   * ([[SkippedFiles]]). `unfiltered`: `files` is a file index's listing before Spark's own last
   * filter (hidden names, empty files: [[IndexCatalog.read]]), which the probe applies on its
   * threads instead of the planning thread making one more pass over every path; the files it
   * leaves out are neither skipped nor counted.
   */
  def decide(condition: Expression, scan: ScanSource, files: Seq[FileStatus], unfiltered: Boolean = false): Option[Decision] = {
    // Read on the planning thread: the execution a check is made in (StorageCheck).
    val execution = StorageCheck.executionId(spark)
    MaxWait.within(spark, rootKey, s"the index data of ${scan.display}") {
      decideNow(condition, scan, files, unfiltered, execution)
    } match {
      case Right(d) => d
      case Left(why) =>
        val (n, readBytes) = IndexCatalog.readTally(indexed(files), unfiltered)
        Some(unpruned(n, readBytes, Seq(why)))
    }
  }

  /** `files` as a sequence read by position (copied only where it is not one). */
  private def indexed(files: Seq[FileStatus]): IndexedSeq[FileStatus] = files match {
    case s: IndexedSeq[FileStatus] => s
    case other => other.toIndexedSeq
  }

  /** The decision that skips nothing of `n` files of `readBytes` bytes, saying `reasons`. */
  private def unpruned(n: Int, readBytes: Long, reasons: Seq[String]): Decision =
    Decision(SkippedFiles.empty, PruningInfo("none", -1, n, n, 0L, reasons), readBytes)

  /**
   * Whether an index over `scan`'s source may answer for it, found within the wait ([[MaxWait]];
   * false past it, so the scan is planned unpruned): for a provider that asks before listing.
   */
  def anyIndexFor(scan: ScanSource): Boolean =
    MaxWait.within(spark, rootKey, s"the indexes of ${scan.display}")(viewsFor(scan).nonEmpty).getOrElse(false)

  /** The index root, as [[MaxWait]] groups the reads of one store. */
  private def rootKey: String = MaxWait.rootKey(spark)

  /** [[decide]], on the thread [[MaxWait]] gives it; `execution`: the planning thread's SQL execution. */
  private def decideNow(condition: Expression, scan: ScanSource, files: Seq[FileStatus], unfiltered: Boolean,
      execution: String): Option[Decision] = {
    val views = try viewsFor(scan) catch {
      case NonFatal(e) =>
        IndexCatalog.warnOnce(s"bloomindex: could not look for indexes (${e.getMessage}); not pruning")
        return None
    }
    if (views.isEmpty) return None
    val listed = indexed(files)
    val translated = views.map(v => v -> FilePredicate.translate(condition, v))
    // Where an index may prune, the scan's files are checked against storage (FreshFiles) on
    // other threads while the index data loads, so the check adds little to planning.
    val checker = if (!checksFiles(scan) || listed.isEmpty || !translated.exists(_._2.isRight)) None else Some(freshChecker)
    val fresh = checker.map(check => java.util.concurrent.CompletableFuture.supplyAsync(() => check(listed)))
    val threads = spark.sessionState.conf.getConf(BloomIndexSQLConf.LOAD_THREADS)
    val notApplied = Seq.newBuilder[String]
    // The files the scan reads, how many and their bytes: from the first probe, else counted.
    var reads: Option[(Int, Long)] = None
    // The best so far: its view, the columns its predicate reads, what its probe found, its notes.
    var best: Option[(IndexView, Array[Int], IndexCatalog.Probed, Seq[String])] = None
    translated.foreach { case (view, predicate) =>
      predicate match {
        case Left(r) => notApplied += s"${view.name}: ${r.reason}"
        case Right(pred) if !loads(view, pred.columns) => notApplied += s"${view.name}: index data unreadable (see the warning)"
        case Right(pred) =>
          val cols = pred.columns.toArray
          val data = Array.tabulate(view.spec.columns.size)(i => if (cols.contains(i)) view.columnData(i) else null)
          val p = IndexCatalog.probe(listed, data, cols, pred, threads, unfiltered = unfiltered)
          reads = Some((p.read, p.readBytes))
          if (p.covered == 0 && p.read > 0) notApplied += s"${view.name}: stale beyond use (no current file is indexed)"
          IndexCatalog.behind(spark, view.spec, p.read - p.covered, p.read)
          if (best.forall(_._3.count < p.count)) best = Some((view, cols, p, pred.notes))
      }
    }
    val (n, readBytes) = reads.getOrElse(IndexCatalog.readTally(listed, unfiltered))
    val chosen = best.map { case (view, cols, p, notes) =>
      val first = cols(0)
      // A file is skipped only if storage still has it as the scan's listing says (see FreshFiles).
      val (skip, bytes) = fresh match {
        case None => (p.skipped, p.skippedBytes)
        case Some(check) =>
          // A check that failed as a whole leaves every file read.
          val unchanged = try check.join() catch { case NonFatal(_) => new java.util.BitSet() }
          val changed = p.skipped.clone().asInstanceOf[java.util.BitSet]
          changed.andNot(unchanged)
          var changedBytes = 0L
          var j = changed.nextSetBit(0)
          while (j >= 0) { changedBytes += listed(j).getLen; j = changed.nextSetBit(j + 1) }
          if (!changed.isEmpty) {
            val why = s"${view.name}: ${changed.cardinality()} file(s) changed on storage since ${scan.display} was " +
              "listed are read whole (REFRESH TABLE takes a new listing)"
            IndexCatalog.warnOnce(s"bloomindex: $why")
            notApplied += why
          }
          val kept = p.skipped.clone().asInstanceOf[java.util.BitSet]
          kept.and(unchanged)
          (kept, p.skippedBytes - changedBytes)
      }
      val skipCount = skip.cardinality()
      val info = PruningInfo(view.name, view.entry.version, n - skipCount, n, bytes, Nil, notes)
      val maxPaths = spark.sessionState.conf.getConf(BloomIndexSQLConf.TEST_SKIPPED_PATHS_MAX)
      val files: SkippedFiles = if (skipCount <= maxPaths) {
        val paths = Map.newBuilder[String, (Long, Long)]
        var j = skip.nextSetBit(0)
        while (j >= 0) {
          val f = listed(j)
          paths += SourceResolver.normalize(f.getPath) -> ((f.getLen, f.getModificationTime))
          j = skip.nextSetBit(j + 1)
        }
        SkippedFiles.Paths(paths.result())
      } else {
        // Positions in the first column the predicate reads: every skipped file is held by it.
        val column = view.columnData(first)
        // The set's words filled here, then handed to BitSet once (as in [[IndexCatalog.probe]]).
        val bits = new Array[Long]((column.numFiles + 63) >>> 6)
        val words = skip.toLongArray
        var w = 0
        while (w < words.length) {
          var word = words(w)
          while (word != 0) {
            val at = p.at((w << 6) + java.lang.Long.numberOfTrailingZeros(word))
            bits(at >>> 6) |= 1L << at
            word &= word - 1
          }
          w += 1
        }
        new SkippedFiles.Positions(column, java.util.BitSet.valueOf(bits))
      }
      // The files the scan reads and the decision keeps, by position, for an unfiltered listing.
      val keptAt = Option(p.reads).map { reads =>
        val kept = reads.clone().asInstanceOf[java.util.BitSet]
        kept.andNot(skip)
        kept.stream().toArray
      }
      // A decision on lower(c) holds only while the session's lower() folds as it did now.
      val folding = if (IndexCatalog.readsLower(condition) && view.spec.columns.exists(_.text.exists(_.spec.folding != CaseFolding.Off))) {
        Some(TextSession.folding(SQLConf.get))
      } else None
      val used = cols.map(view.spec.columns(_).name).toSet
      val decoding = decodingCheck(view, scan, used)
      Decision(files, info, readBytes, keptAt, StorageCheck.of(checker, execution, folding, decoding, zoneOf(view, used)))
    }
    val reasons = notApplied.result()
    chosen.map(b => b.copy(info = b.info.copy(notApplied = reasons)))
      .orElse(if (reasons.nonEmpty) Some(unpruned(n, readBytes, reasons)) else None)
  }

  /**
   * Where the decoding of the index columns `used` in `scan` depends on session settings (time
   * zones, case sensitivity, rebase modes...): why they no longer answer under the settings given
   * when asked (None: they still do). A scan reads its files with the settings of its
   * first run, which may come after its plan was made under others (`explain()`, then a setting
   * changed, then `collect()`): [[StorageCheck.decodingChanged]].
   */
  private def decodingCheck(view: IndexView, scan: ScanSource, used: Set[String]): Option[SQLConf => Option[String]] = {
    val entry = view.entry
    // Settings, or a position in a CSV line (which the corrupt-record column's setting moves).
    val dependsOnSettings = entry.data.flatMap(_.decoding).exists(_.columns.exists(c =>
      used(c.name) && (c.settings.nonEmpty || c.physical.contains(DecodingContext.Position))))
    if (!dependsOnSettings) None
    // The companion's functions: the closure holds the entry and the scan, not this catalog
    // (whose views hold loaded index data).
    else Some((now: SQLConf) => {
      val why = IndexCatalog.unusableColumns(entry, scan, IndexCatalog.renamed(entry, scan, now), now)
      used.toSeq.sorted.flatMap(why.get).headOption
    })
  }

  /**
   * The JVM's default zone now, where the index columns `used` were read in it (their recorded
   * settings say so: [[DecodingContext.readInJvmZone]]); a decision made now matched it.
   */
  private def zoneOf(view: IndexView, used: Set[String]): Option[String] =
    if (view.entry.data.flatMap(_.decoding).exists(_.columns.exists(c => used(c.name) && DecodingContext.readInJvmZone(c)))) {
      Some(DecodingContext.jvmZone)
    } else None

  /** Whether files `scan` would skip are first checked against storage ([[FreshFiles]]). */
  private def checksFiles(scan: ScanSource): Boolean = scan.listingMayBeStale && spark.sessionState.conf.getConf(BloomIndexSQLConf.PRUNING_CHECK_FILES)

  /**
   * The check of files against storage ([[FreshFiles.unchanged]]) with this session's settings,
   * read now (on the planning thread); the check runs when called.
   */
  private def freshChecker: IndexedSeq[FileStatus] => java.util.BitSet = {
    val conf = spark.sessionState.newHadoopConf()
    val sql = spark.sessionState.conf
    val (threads, requests, perRun) = (sql.getConf(BloomIndexSQLConf.LOAD_THREADS),
      sql.getConf(BloomIndexSQLConf.LOAD_REQUESTS), sql.getConf(BloomIndexSQLConf.TEST_CHECK_RUN_FILES))
    val readPages = sql.getConf(BloomIndexSQLConf.TEST_S3_READ_PAGES)
    files => FreshFiles.unchanged(conf, files, threads, requests, perRun, readPages)
  }

  /** Loads the view's `columns`; false (and one warning) when they cannot be read (damaged, or encrypted and no keys). */
  private def loads(view: IndexView, columns: Set[Int]): Boolean =
    try { columns.foreach(view.columnData); true } catch {
      case NonFatal(e) =>
        IndexCatalog.warnOnce(s"bloomindex: index '${view.name}' is unreadable and is not used for pruning: ${e.getMessage}")
        false
    }

  // ---------------------------------------------------------------- global filters

  /** Files of `files` column `i` of the view does not hold as they are now. */
  private def uncovered(view: IndexView, i: Int, files: Seq[FileStatus]): Int = files.count(f => view.holds(i, f) < 0)

  /**
   * The global filter of `column` (the scan's exact name) that holds every value the scan can
   * produce for it: an index over the scan's source with global filters, the column decoded
   * as the scan decodes it, and every current file of the source held as it is now; with the
   * files it was found to hold ([[Coverage]]: the plan checks, when it runs, that its scan
   * still lists those). `readerConf`: the settings the indexed side's scan reads with where not
   * the running session's (a V1 file relation's session: [[Coverage]]).
   */
  def globalFilterFor(scan: ScanSource, attribute: String,
      readerConf: Option[SQLConf] = None): Either[String, (GlobalFilter, Coverage)] = {
    val execution = StorageCheck.executionId(spark)
    MaxWait.within(spark, rootKey, s"the global filter of ${scan.display}.$attribute") {
      globalFilterNow(scan, attribute, execution, readerConf)
    }.flatten
  }

  /** [[globalFilterFor]], on the thread [[MaxWait]] gives it; `execution`: the planning thread's SQL execution. */
  private def globalFilterNow(scan: ScanSource, attribute: String, execution: String,
      readerConf: Option[SQLConf]): Either[String, (GlobalFilter, Coverage)] = {
    val column = scanColumn(scan, attribute)
    val views = try viewsFor(scan) catch {
      case NonFatal(e) => return Left(s"indexes unreadable (${e.getMessage})")
    }
    // The index column the scan's column is (a renamed one too, where the provider follows renames).
    val withColumn = views.filter(v => v.spec.global && v.indexColumn(column) >= 0)
    if (withColumn.isEmpty) return Left(s"no index with a global filter on ${scan.display}.$column")
    val usable = withColumn.filter(_.column(column).isRight)
    if (usable.isEmpty) return Left(withColumn.map(v => s"${v.name}: ${v.column(column).left.getOrElse("")}").mkString("; "))
    val files = try scan.allFiles() catch {
      case NonFatal(e) => return Left(s"cannot list ${scan.display} (${e.getMessage})")
    }
    // The filter answers for the values the scan reads: from the files as they are on storage.
    val checker = if (checksFiles(scan)) Some(freshChecker) else None
    val changed = checker.fold(0)(check => files.size - check(files.toIndexedSeq).cardinality())
    if (changed > 0) {
      return Left(s"$changed file(s) of ${scan.display} changed on storage since it was listed (REFRESH TABLE takes a new listing)")
    }
    usable.find { v =>
      val i = v.indexColumn(column)
      loads(v, Set(i)) && uncovered(v, i, files) == 0
    } match {
      case None => Left(s"stale: files of ${scan.display} changed since ${usable.map(v => s"${v.name} v${v.entry.version}").mkString(", ")}")
      case Some(view) =>
        val indexColumn = view.spec.columns(view.indexColumn(column)).name
        val used = Set(indexColumn)
        try Right((GlobalFilter.load(spark, view.indexDir.toString, view.entry, indexColumn),
          Coverage.of(scan, files, StorageCheck.of(checker, execution, decoding = decodingCheck(view, scan, used),
            zone = zoneOf(view, used)), readerConf)))
        catch {
          case NonFatal(e) =>
            IndexCatalog.warnOnce(s"bloomindex: global filter of '${view.name}' unreadable, join not filtered: ${e.getMessage}")
            Left(s"global filter of ${view.name} unreadable")
        }
    }
  }

  /**
   * The global filter of `column` in the newest ACTIVE version of index `name`, for
   * `bloom_might_contain` and `prefilter`: refused when the session would decode the column
   * otherwise than the build did, and (unless `allowStale`) when the index does not hold every
   * current file of its source as it is now.
   */
  def globalFilterNamed(name: String, column: String, allowStale: Boolean): GlobalFilter = {
    val log = indexes.log(name)
    val entry = log.lastActive().getOrElse(throw BloomIndexErrors.notFound(name))
    val spec = entry.spec
    val col = spec.column(column).getOrElse(
      throw BloomIndexErrors.columnNotFound(name, column))
    if (!spec.global) throw BloomIndexErrors.notGlobal(name)
    val scan = SourceResolver.currentScan(spark, spec.source)
    val view = this.view(log, entry, scan)
    // The index column as the source calls it now (a renamed column: where the provider follows renames).
    view.column(view.scanName(spec.columns.indexWhere(_.name == col.name))).left.foreach { why =>
      throw BloomIndexErrors.decodingContextChanged(name, col.name, spec.source.display, why)
    }
    if (!allowStale) {
      val files = scan.allFiles()
      val missing = uncovered(view, spec.columns.indexOf(col), files)
      if (missing > 0) throw BloomIndexErrors.stale(name, col.name, missing, files.size, spec.source.display, entry.version)
    }
    GlobalFilter.load(spark, log.indexDir.toString, entry, col.name)
  }

  // ---------------------------------------------------------------- listing

  /**
   * Indexes (not dropped) over `source`, matched as a scan of it is ([[SourceProviders.sameSource]]);
   * `inside` false: not those over a folder `source` lies inside ([[SourceProviders.ownSource]]).
   */
  def indexesOn(source: SourceSpec, inside: Boolean = true): Seq[LogEntry] = {
    val target = SourceProviders.identity(source)
    indexes.list().flatMap(e => TableFollow.forScan(spark, indexes.log(e.spec.name), e, target))
      .filter(e => inside || SourceProviders.ownSource(e.spec.source, target))
  }
}

object IndexCatalog {

  private[catalog] def renamed(entry: LogEntry, scan: ScanSource, settings: SQLConf): Map[String, String] =
    if (!scan.provider.followsRenames) Map.empty
    else entry.data.flatMap(_.decoding).map { built =>
      DecodingContext.renames(built, scan.dataSchema.fieldNames.toSeq.flatMap(n => scan.decoding(settings, n).map(n -> _)))
    }.getOrElse(Map.empty)

  /**
   * Columns of `entry` that may not answer for `scan` under session settings `settings`, with the
   * reason (`names`: its renamed columns, [[renamed]]).
   */
  private[catalog] def unusableColumns(entry: LogEntry, scan: ScanSource, names: Map[String, String],
      settings: SQLConf): Map[String, String] = {
    val spec = entry.spec
    // Whatever the build: a column that is one of the scan's partition columns (its values are
    // the folders' names; an index built over the same files read otherwise holds the files'
    // column of that name), or one its provider supplies values of that no file holds.
    // Where the scan's partition columns cannot be told, every column may be one: none answers.
    val partitions = try Some(scan.index.partitionSchema.fieldNames.toSeq) catch { case NonFatal(_) => None }
    val always = spec.columns.flatMap { c =>
      val scanned = names.getOrElse(c.name, c.sourceName)
      if (partitions.isEmpty) {
        Some(c.name -> s"${c.name}: the partition columns of ${scan.display} could not be read")
      } else if (partitions.get.exists(p => settings.resolver(p, scanned))) {
        Some(c.name -> s"${c.name}: a partition column of ${scan.display} (its values are folder names, not the files' values)")
      } else scan.provider.unusable(scan, scanned).map(c.name -> _)
    }.toMap
    (entry.data.flatMap(_.decoding) match {
      case None =>
        val why = s"built before decoding contexts were recorded; REFRESH BLOOM INDEX ${spec.name} FULL records one"
        IndexCatalog.warnOnce(s"bloomindex: index '${spec.name}' $why (not used until then)")
        spec.columns.map(_.name -> why).toMap
      case Some(built) =>
        val unrecorded = spec.columns.filter(c => built.column(c.name).isEmpty)
          .map(c => c.name -> s"${c.name}: no decoding context recorded for the column")
        // A renamed column is compared as the scan reads it under its new name; a text filter as
        // the scan reads its source column, with the tokenizer this JVM runs.
        val byName = spec.columns.map(c => c.name -> c).toMap
        val current = (c: String) => byName.get(c) match {
          case Some(col) => scan.decoding(settings, names.getOrElse(c, col.sourceName)).map(DecodingContext.ofIndexColumn(_, col))
          case None => scan.decoding(settings, names.getOrElse(c, c)).map(_.copy(name = c))
        }
        (DecodingContext.changes(built, scan.format, current) ++ unrecorded).toMap
    }) ++ always
  }

  /** Whether `condition` runs Spark's `lower()` (ILIKE is `lower()` on both sides), whose folding a text filter may rely on. */
  private[catalog] def readsLower(condition: Expression): Boolean =
    condition.exists { case _: Lower | _: ILike => true; case _ => false }

  /** Listed files probed on one thread at least (`filesPerThread`); more are split over threads. */
  private[catalog] val FilesPerThread = 32768

  /**
   * One range of [[probe]]'s files, a batch at a time: [[batch]] takes the next files the scan
   * reads, up to [[LookupBatch]], looks them up in the columns at once (ColumnData.indexOfAll) and
   * tests the predicate on those held, marking in `state` (1 read, 2 excluded) and `at`. A method
   * called per batch, not one loop over the whole range: the JIT compiles it once from a full
   * profile, where a loop over a range was compiled on the fly and again at each range's end (a
   * JFR of compilations at a million files: six compilations of the range's loop, 0.6 s of C2).
   */
  private final class RangeProbe(files: IndexedSeq[FileStatus], data: Array[ColumnData], cols: Array[Int],
      pred: FilePredicate, unfiltered: Boolean, state: Array[Byte], at: Array[Int]) {
    private val datas = cols.map(data(_))
    private val row = new FileRows(data, new Array[Int](data.length))
    private val paths = new Array[Path](LookupBatch)
    private val sizes = new Array[Long](LookupBatch)
    private val times = new Array[Long](LookupBatch)
    private val positions = new Array[Int](LookupBatch)
    private val found = Array.fill(cols.length)(new Array[Int](LookupBatch))
    private val scratch = new ColumnData.Scratch(LookupBatch)
    var covered, reads = 0
    var bytes, skippedBytes = 0L

    /** The batch of files from `from` (before `until`); returns where the next one starts. */
    def batch(from: Int, until: Int): Int = {
      var j = from
      var m = 0
      while (m < LookupBatch && j < until) {
        val f = files(j)
        val path = f.getPath
        val size = f.getLen
        if (!unfiltered || read(path, size)) {
          paths(m) = path
          sizes(m) = size
          times(m) = f.getModificationTime
          positions(m) = j
          state(j) = 1
          bytes += size
          m += 1
        }
        j += 1
      }
      reads += m
      var k = 0
      while (k < cols.length) { datas(k).indexOfAll(paths, sizes, times, m, found(k), scratch); k += 1 }
      var b = 0
      while (b < m) {
        var held = true
        k = 0
        while (held && k < cols.length) {
          val r = found(k)(b)
          row.rows(cols(k)) = r
          held = r >= 0
          k += 1
        }
        if (held) {
          covered += 1
          if (!pred.mayMatch(row)) {
            state(positions(b)) = 2
            at(positions(b)) = row.rows(cols(0))
            skippedBytes += sizes(b)
          }
        }
        paths(b) = null
        b += 1
      }
      j
    }
  }

  /** Listed files looked up in a column at once ([[ColumnData.indexOfAll]]). */
  private val LookupBatch = 64

  /**
   * What [[probe]] found: the positions (in the files probed) of the files it excludes and their
   * positions in the first column read (`at`), how many (`count`) and their bytes; how many files
   * every column read holds as they are now (`covered`); and the files the scan reads, how many
   * and their bytes (all of them, or for an unfiltered listing those Spark's would keep), and
   * which (`reads`, positions; null when all are).
   */
  private[catalog] final case class Probed(skipped: java.util.BitSet, at: Array[Int], count: Int, skippedBytes: Long,
      covered: Int, read: Int, readBytes: Long, reads: java.util.BitSet)

  /**
   * Whether the scan of an unfiltered listing ([[IndexCatalog.decide]]) reads a file of that
   * listing: Spark's `PartitioningAwareFileIndex.listFiles` keeps a file that is not empty and
   * whose name is not hidden (starts with `.`, or with `_` and holds no `=`). The name is looked
   * at in the path's string, not built.
   */
  private[catalog] def read(path: Path, size: Long): Boolean = size > 0 && {
    val s = path.toUri.getPath
    val start = s.lastIndexOf('/') + 1
    start >= s.length || {
      val c = s.charAt(start)
      c != '.' && (c != '_' || s.indexOf('=', start) >= 0)
    }
  }

  /** The files of `files` the scan reads, how many and their bytes ([[read]] when `unfiltered`). */
  private[bloomindex] def readTally(files: IndexedSeq[FileStatus], unfiltered: Boolean): (Int, Long) = {
    var count = 0
    var bytes = 0L
    var j = 0
    while (j < files.size) {
      val f = files(j)
      if (!unfiltered || read(f.getPath, f.getLen)) { count += 1; bytes += f.getLen }
      j += 1
    }
    (count, bytes)
  }

  /**
   * `pred` on each of `files` that every column it reads (`cols`, their data in `data`) holds
   * as it is now ([[Probed]]). Per file a lookup in the columns' path tables and the test; over
   * [[FilesPerThread]] files, in ranges on `threads` threads (the columns' data is safe to probe
   * from many threads, each range has its own [[FileRows]]). `unfiltered`: `files` may hold files
   * the scan does not read ([[read]]); those are neither probed nor counted, and the test is
   * made here, on the probe's threads, where the path is read anyway.
   */
  private[catalog] def probe(files: IndexedSeq[FileStatus], data: Array[ColumnData], cols: Array[Int],
      pred: FilePredicate, threads: Int, filesPerThread: Int = FilesPerThread, unfiltered: Boolean = false): Probed = {
    val n = files.size
    val at = new Array[Int](n)
    // Per file: 0 not read (unfiltered listing), 1 read, 2 read and excluded.
    val state = new Array[Byte](n)
    // Files from..until, a batch at a time: adds to `tally` (held, read, bytes read, bytes excluded).
    def range(from: Int, until: Int, tally: Array[Long]): Unit = {
      val r = new RangeProbe(files, data, cols, pred, unfiltered, state, at)
      var j = from
      while (j < until) j = r.batch(j, until)
      tally.synchronized {
        tally(0) += r.covered; tally(1) += r.reads; tally(2) += r.bytes; tally(3) += r.skippedBytes
      }
    }
    val tally = new Array[Long](4)
    // The first files on this thread, so that the predicate's tests are made (and their block
    // rows fetched) once, before the other threads use them.
    val head = math.min(n, filesPerThread)
    range(0, head, tally)
    if (head < n) {
      val step = math.max(filesPerThread, (n - head + threads - 1) / math.max(1, threads))
      IndexStore.inParallel(threads, (head until n by step).map { from => () =>
        range(from, math.min(n, from + step), tally)
      })
    }
    // The sets' words filled here and handed to BitSet once (a million BitSet.set calls, each
    // checking its invariants, were a tenth of a warm probe's time at a million files).
    val skipped = new Array[Long]((n + 63) >>> 6)
    val reads = if (unfiltered) new Array[Long](skipped.length) else null
    var count = 0
    var j = 0
    while (j < n) {
      val s = state(j)
      if (s == 2) { skipped(j >>> 6) |= 1L << j; count += 1 }
      if (s != 0 && reads != null) reads(j >>> 6) |= 1L << j
      j += 1
    }
    Probed(java.util.BitSet.valueOf(skipped), at, count, tally(3), tally(0).toInt, tally(1).toInt, tally(2),
      if (reads == null) null else java.util.BitSet.valueOf(reads))
  }

  def warnOnce(msg: String): Unit = IndexLog.warnOnce(msg)

  /**
   * Called with the name of an index that follows writes (`refresh` not manual) which a query
   * found to cover too few of a scan's files: writes this session did not see (another cluster,
   * another engine). Set by bloomindex.actions.WriteEvents (which queues a background refresh);
   * a hook, so that the catalog does not depend on the actions.
   */
  @volatile var onBehind: (SparkSession, String) => Unit = (_, _) => ()

  private val lastBehind = new java.util.concurrent.ConcurrentHashMap[String, java.lang.Long]()
  private val BehindRetryMs = 60000L

  /** Reports `spec` behind when more than the set share of a scan's `files` is not covered (at most once a minute per index and root). */
  private[catalog] def behind(spark: SparkSession, spec: bloomindex.log.IndexSpec, notCovered: Int, files: Int): Unit = {
    if (spec.refresh == bloomindex.log.RefreshMode.Manual || files == 0) return
    val share = spark.sessionState.conf.getConf(BloomIndexSQLConf.REFRESH_STALE_SHARE)
    if (notCovered.toDouble / files <= share) return
    val now = System.currentTimeMillis()
    // Per root and name: sessions of one JVM (a Connect server's clients) may use other roots.
    val key = s"${new IndexRoot(spark).root}\u0000${spec.name}"
    val last = lastBehind.get(key)
    if (last != null && now - last < BehindRetryMs) return
    lastBehind.put(key, now)
    onBehind(spark, spec.name)
  }
}
