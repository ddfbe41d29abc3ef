package bloomindex.layout

import scala.util.control.NonFatal

import bloomindex.crypto.IndexEncryption
import bloomindex.log.{Checksums, ColumnSpec, IndexData, IndexLog, IndexSpec}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.{DataFrame, SparkSession}

/**
 * How a version's data folder holds its filters: the log records the layout's name
 * ([[IndexData.layout]]), and this is what each layout does with the folder. One
 * implementation per layout; nothing outside this file branches on a layout's name.
 *
 *  - [[IndexLayout.Rows]] (log formats 1 and 2): one Parquet table of rows, every column together.
 *  - [[IndexLayout.Columns]] (format 3, and encrypted indexes): one folder of Parquet rows per
 *    column and a summary.
 *  - [[IndexLayout.Blocks]] (format 4): `columns`, plus each column's filters block-major in
 *    probe files beside the Parquet files, which queries read first.
 *  - [[IndexLayout.Probes]] (format 5): one folder per column holding probe files only.
 *
 * Writing: the build's tasks write through [[IndexFiles]] (Parquet rows, probe files, or both,
 * as [[IndexLayout.forBuild]] chose); the summary through [[IndexSummary]].
 */
sealed abstract class IndexLayout(val name: String) {

  /** One folder per column and a summary ([[IndexSummary]]). */
  def perColumn: Boolean = true

  /** Queries read the filters from probe files ([[ProbeFile]]). */
  def probed: Boolean = false

  /** The columns loaded together when a query probes column `i`. */
  def loadedWith(spec: IndexSpec, i: Int): Seq[Int] = Seq(i)

  /**
   * Loads for a query the columns [[loadedWith]] `i` into `builders` (one per such column).
   * Returns what was read of the Parquet index files, where the layout read any (a session
   * without the keys of an encrypted index reads none of them).
   */
  def load(read: IndexLayout.Read, i: Int, builders: Map[Int, ColumnData.Builder]): IndexStore.ColumnRead

  /** The version's index rows (one per source file and column, [[IndexSchemas.IndexSchema]]), for REFRESH and tools. */
  def rows(spark: SparkSession, indexDir: Path, data: IndexData): DataFrame =
    IndexStore.parquetRows(spark, IndexStore.dataDir(indexDir, data))

  /**
   * DESCRIBE: adds the identities (path, size, modification time) of the source files column
   * `c` holds to `known`, reading only their identities (no filter): from its probe files when
   * the column's data files are all there as the summary says, else (or where the layout has
   * none) from `present`, its data files that are; `damage` gets a line for each file that is
   * missing, changed or unreadable.
   */
  def describeColumn(d: IndexLayout.Describe, c: ColumnSpec, present: Seq[Path]): Unit =
    readIdentities(d, c, present)

  protected final def readIdentities(d: IndexLayout.Describe, c: ColumnSpec, present: Seq[Path]): Unit = {
    val read = IndexStore.readColumn(d.spark, d.conf, d.dir, c.name, present, 8, Int.MaxValue,
      (p, size, mtime, _, _, _) => d.known.add((p, size, mtime)), filters = false)
    if (read.failed > 0) d.damage(s"column ${c.name}: ${read.failed} index data files unreadable " +
      s"(${read.failure.map(_.getMessage).getOrElse("")}); the files whose rows they held have no index row")
    // Filters that failed when this JVM's queries read them (DESCRIBE reads none).
    val recorded = Checksums.damageUnder("").map { case (f, why) => new Path(f).toUri.getPath -> why }.toMap
    val failed = present.flatMap(p => recorded.get(p.toUri.getPath).map(p -> _))
    if (failed.nonEmpty) d.damage(s"column ${c.name}: ${failed.size} of ${present.size} index data files with damaged " +
      s"filters found by reads (e.g. ${failed.head._1.getName}: ${failed.head._2}); the files they held are read, " +
      "not pruned, and the next REFRESH builds them again")
  }

  override def toString: String = name
}

object IndexLayout extends org.apache.spark.internal.Logging {

  /** What loading a column for a query needs: the session, its Hadoop conf, the index and the version's data. */
  final case class Read(spark: SparkSession, conf: Configuration, indexDir: Path, data: IndexData, spec: IndexSpec) {
    def dir: Path = IndexStore.dataDir(indexDir, data)
  }

  /**
   * What DESCRIBE's check of one column needs: the index's folder, the data folder, the column
   * folder's listing (file name -> length), the summary's probe files of the column (its own and
   * those kept from earlier versions, relative to the index's folder), whether its data files are
   * all there as the summary says (`intact`), and where the identities and the damage found go.
   */
  final case class Describe(spark: SparkSession, conf: Configuration, indexDir: Path, dir: Path, listed: Map[String, Long],
      probeFiles: Map[String, Long], reused: Map[String, Long], intact: Boolean, known: java.util.Set[(String, Long, Long)],
      damage: String => Unit, checksums: Boolean = false)

  /** Log formats 1 and 2: every column's rows in one Parquet table, read together through Spark. */
  case object Rows extends IndexLayout(IndexData.Rows) {
    override def perColumn: Boolean = false
    override def loadedWith(spec: IndexSpec, i: Int): Seq[Int] = spec.columns.indices

    /** Every column's rows, streamed in partitions of about 64 MB of filters. */
    def load(read: Read, i: Int, builders: Map[Int, ColumnData.Builder]): IndexStore.ColumnRead = {
      val rows = IndexStore.parquetRows(read.spark, read.dir)
        .select("file_path", "file_size", "modification_time", "column", "row_count", "null_count", "filter")
        .coalesce(math.max(1L, read.data.filterBytes / (64L << 20) + 1).toInt)
        .toLocalIterator()
      val columnOf = builders.values.map(b => b.column -> b).toMap
      while (rows.hasNext) {
        val r = rows.next()
        columnOf.get(r.getString(3)).foreach(_.add(r.getString(0), r.getLong(1), r.getLong(2), r.getLong(4),
          r.getLong(5), r.getAs[Array[Byte]](6)))
      }
      IndexStore.ColumnRead(0, 0, 0, None)
    }
  }

  /** Log format 3: one folder of Parquet rows per column, read on the driver or by a Spark job ([[IndexStore.readColumn]]). */
  case object Columns extends IndexLayout(IndexData.Columns) {
    def load(read: Read, i: Int, builders: Map[Int, ColumnData.Builder]): IndexStore.ColumnRead =
      parquetColumn(read, i, builders(i))
  }

  private def parquetColumn(read: Read, i: Int, out: ColumnData.Builder): IndexStore.ColumnRead = {
    val c = read.spec.columns(i).name
    val files = IndexStore.columnFileLengths(read.conf, read.dir, c)
    val r = IndexStore.readColumn(read.spark, read.conf, read.dir, c, files.map(_._1),
      read.spark.sessionState.conf.getConf(BloomIndexSQLConf.LOAD_THREADS),
      read.spark.sessionState.conf.getConf(BloomIndexSQLConf.LOAD_DRIVER_MAX_FILES), out.add, lengths = files.map(_._2))
    if (r.forNow > 0) out.failForNow(s"${r.forNow} of ${r.files} index data files unreadable for now" +
      r.failure.fold("")(e => s" (${e.getMessage})"))
    r
  }

  /**
   * Log format 4: `columns` with probe files beside the Parquet files. A query reads the probe
   * files' footers; when the summary or a footer is unreadable (one warning), or the column has
   * more probe files than the driver reads itself, the Parquet files are read instead.
   */
  case object Blocks extends IndexLayout(IndexData.Blocks) {
    override def probed: Boolean = true
    def load(read: Read, i: Int, builders: Map[Int, ColumnData.Builder]): IndexStore.ColumnRead =
      if (probedColumn(read, read.spec.columns(i), builders(i), only = false)) IndexStore.ColumnRead(0, 0, 0, None)
      else parquetColumn(read, i, builders(i))

    /** From the probe files when they are all there and readable; else from the Parquet files. */
    override def describeColumn(d: Describe, c: ColumnSpec, present: Seq[Path]): Unit =
      if (!(d.intact && probeIdentities(d, c, "queries read the column's Parquet files instead"))) readIdentities(d, c, present)
  }

  /**
   * Log format 5: probe files only. A probe file that is missing or damaged is left out (one
   * warning), so the files it held are read, not pruned; an unreadable summary leaves the
   * column holding no file (every file is read).
   */
  case object Probes extends IndexLayout(IndexData.Probes) {
    override def probed: Boolean = true
    def load(read: Read, i: Int, builders: Map[Int, ColumnData.Builder]): IndexStore.ColumnRead = {
      probedColumn(read, read.spec.columns(i), builders(i), only = true)
      IndexStore.ColumnRead(0, 0, 0, None)
    }

    /** Rows put back together from the probe files, in a Spark job ([[IndexStore.probeRows]]). */
    override def rows(spark: SparkSession, indexDir: Path, data: IndexData): DataFrame =
      IndexStore.probeRows(spark, indexDir, IndexStore.dataDir(indexDir, data), data.checksums)

    override def describeColumn(d: Describe, c: ColumnSpec, present: Seq[Path]): Unit =
      if (d.intact) probeIdentities(d, c, "the files they held are read, not pruned") else readIdentities(d, c, present)
  }

  val all: Seq[IndexLayout] = Seq(Rows, Columns, Blocks, Probes)

  /** The layout of `data`, as its log entry names it (the log checks the name when it reads the entry). */
  def of(data: IndexData): IndexLayout =
    all.find(_.name == data.layout).getOrElse(throw new IllegalStateException(s"unknown index data layout '${data.layout}'"))

  /**
   * The layout a build writes: probe files only, unless the index is encrypted (a probe file is
   * not encrypted: Parquet files alone hold the filters), block-major files are turned off
   * (`spark.bloomindex.build.blockMajor`), or a test asks for format 4's `blocks`.
   */
  def forBuild(encrypted: Boolean, blockMajor: Boolean, testBlocks: Boolean): IndexLayout =
    if (encrypted || !blockMajor) Columns else if (testBlocks) Blocks else Probes

  /**
   * The footers of the column's probe files (the files' identities, counts and places in the
   * block matrices), read in parallel; the filters stay in the files ([[BlockFilters]]).
   * Returns whether the column is loaded: with `only` (the `probes` layout) always; else false
   * when the Parquet files must be read instead.
   */
  private def probedColumn(read: Read, c: ColumnSpec, out: ColumnData.Builder, only: Boolean): Boolean = {
    val spark = read.spark
    val index = read.spec.name
    val folder = IndexEncryption.columnFolder(read.dir, c.name)
    def warn(why: String, consequence: String): Unit =
      IndexLog.warnOnce(s"bloomindex: index '$index' column ${c.name}: $why; $consequence")
    val unpruned = s"read, not pruned. REFRESH BLOOM INDEX $index FULL repairs it"
    def fallBack(why: String): Boolean = {
      warn(why, if (only) s"its files are $unpruned" else "its Parquet files are read instead")
      only
    }
    val t0 = System.nanoTime()
    // The column's own probe files, then those kept from earlier versions (`probes` only).
    val summary = try IndexSummary.read(read.conf, read.dir, read.data.checksums).columns.get(c.name)
      catch { case NonFatal(e) =>
        // `blocks` reads the Parquet files instead, which hold the column whole.
        if (only && passing(e)) out.failForNow(s"index summary unreadable for now (${e.getMessage})")
        return fallBack(s"index summary unreadable (${e.getMessage})")
      }
    val listed = summary.map(_.allProbeFiles(read.indexDir, folder)).getOrElse(Nil)
    if (listed.isEmpty) return only
    // `blocks`, more files than the driver reads itself: a Spark job reads the Parquet files instead.
    if (!only && listed.size > spark.sessionState.conf.getConf(BloomIndexSQLConf.LOAD_DRIVER_MAX_FILES)) return false
    val paths = listed.map(_._1).toArray
    val lengths = listed.map(_._2).toArray
    val threads = spark.sessionState.conf.getConf(BloomIndexSQLConf.LOAD_THREADS)
    // Reads in flight at once (footers, then block rows): on an object store, rounds of latency.
    val requests = spark.sessionState.conf.getConf(BloomIndexSQLConf.LOAD_REQUESTS)
    // Each footer in one read of the file's end, sized from the summary (the bytes that are not
    // filters); a small file whole, its block rows then held (up to a quarter of the cache's cap).
    val gap = spark.sessionState.conf.getConf(BloomIndexSQLConf.LOAD_COALESCE_GAP_BYTES)
    val cacheMax = spark.sessionState.conf.getConf(BloomIndexSQLConf.CACHE_MAX_BYTES)
    val tails = ProbeFile.tailEstimates(lengths, summary.map(_.filterBytes).getOrElse(0L),
      spark.sessionState.conf.getConf(BloomIndexSQLConf.LOAD_FOOTER_READ_BYTES), gap, cacheMax / 4)
    // The entries as arrays (no string nor object per file: a million files load in seconds, issue 26).
    val t1 = System.nanoTime()
    val footers = ProbeFile.readEachFooter(read.conf, paths.toSeq.zip(lengths), requests, c.name, c.algorithm, read.data.checksums,
      k => tails(k), compact = true)
    val footerBytes = footers.iterator.flatMap(_.toOption).map(_.bytesRead).sum
    IndexStore.countLoaded(folder.getName, paths.length, footerBytes)
    logInfo(f"bloomindex: index '$index' column ${c.name}: summary ${(t1 - t0) / 1e6}%.1f ms, " +
      f"${paths.length} probe files' footers ($footerBytes bytes, $requests at a time) ${(System.nanoTime() - t1) / 1e6}%.1f ms")
    val good = footers.indices.filter(k => footers(k).isRight)
    if (good.size < footers.length) {
      val e = footers.collectFirst { case Left(e) => e }.get
      if (!only) return fallBack(s"probe file unreadable (${e.getMessage})")
      val forNow = footers.collect { case Left(e) if passing(e) => e }
      forNow.headOption.foreach(e => out.failForNow(s"${forNow.length} probe files unreadable for now (${e.getMessage})"))
      warn(s"${footers.length - good.size} of ${footers.length} probe files unreadable (${e.getMessage})",
        s"the files they held are $unpruned")
    }
    BlockFilters.addTo(out, c.algorithm, read.conf, folder.getName, good.map(paths).toArray, good.map(lengths).toArray,
      good.map(k => footers(k).toOption.get).toArray, threads, requests, cacheMax, gap)
    true
  }

  /**
   * Whether a read of index data failed for a reason that may pass (a store's error, a timeout,
   * an interrupted read), not because the data is damaged, missing or not readable by this
   * session (a checksum, a file too short or gone, refused access, bytes that do not parse).
   */
  private[bloomindex] def passing(e: Throwable): Boolean = e match {
    // Opened through `openFile(...).build()`: its future's wrapping.
    case w @ (_: java.util.concurrent.ExecutionException | _: java.util.concurrent.CompletionException |
        _: java.io.UncheckedIOException) if w.getCause != null && (w.getCause ne w) => passing(w.getCause)
    case _: bloomindex.log.Checksums.Mismatch | _: java.io.FileNotFoundException | _: java.io.EOFException |
        _: java.nio.file.AccessDeniedException | _: org.apache.hadoop.security.AccessControlException |
        _: java.io.UTFDataFormatException | _: java.io.CharConversionException |
        _: java.nio.charset.CharacterCodingException => false
    // Parquet's footer or page headers that do not parse (Thrift under an IOException): damage.
    case e: java.io.IOException if unparsable(e) => false
    case _: java.io.IOException | _: java.util.concurrent.TimeoutException => true
    case _ => false
  }

  /** Whether `e` or a cause of it is Thrift failing to parse bytes (a Parquet footer or page header). */
  private def unparsable(e: Throwable): Boolean =
    bloomindex.errors.Causes.of(e).exists { t =>
      t.getClass.getName.contains(".thrift.") ||
        Option(t.getMessage).exists(_.startsWith("can not read class org.apache.parquet.format"))
    }

  /**
   * DESCRIBE of a probed column: the identities from the probe files' footers. Returns whether
   * they were all there and readable (else `consequence` says what queries do instead).
   */
  private def probeIdentities(d: Describe, c: ColumnSpec, consequence: String): Boolean = {
    val folder = IndexEncryption.columnFolder(d.dir, c.name)
    val own = d.probeFiles.toSeq.sortBy(_._1).map { case (f, n) => (new Path(folder, f), n, d.listed.get(f)) }
    // Probe files kept from earlier versions: their folders listed once each.
    val kept = d.reused.toSeq.sortBy(_._1).map { case (f, n) => (new Path(d.indexDir, f), n) }
    val keptListed: Map[Path, Map[String, Long]] = kept.map(_._1.getParent).distinct.map { p =>
      p -> (try p.getFileSystem(d.conf).listStatus(p).filter(_.isFile).map(s => s.getPath.getName -> s.getLen).toMap
        catch { case _: java.io.FileNotFoundException => Map.empty[String, Long] })
    }.toMap
    val probes = own ++ kept.map { case (p, n) => (p, n, keptListed.get(p.getParent).flatMap(_.get(p.getName))) }
    val (there, gone) = probes.partition { case (_, n, now) => now.contains(n) }
    if (gone.nonEmpty) d.damage(s"column ${c.name}: ${gone.size} of ${probes.size} probe files missing or " +
      s"changed (e.g. ${gone.head._1.getParent.getName}/${gone.head._1.getName}); $consequence")
    val read = ProbeFile.readEachFooter(d.conf, there.map { case (p, n, _) => (p, n) }, 8, c.name, c.algorithm, d.checksums)
    read.foreach(_.foreach(_.files.foreach(e => d.known.add((e.path, e.size, e.modificationTime)))))
    val bad = read.collect { case Left(e) => e }
    if (bad.nonEmpty) d.damage(s"column ${c.name}: probe file unreadable (${bad.length} of ${probes.size}: " +
      s"${bad.head.getMessage}); $consequence")
    // Block rows that failed their checksums when this JVM read them (DESCRIBE does not read the filters).
    val failed = there.flatMap { case (p, _, _) => Checksums.damageOf(p.toString).map(p -> _._1) }
    if (failed.nonEmpty) d.damage(s"column ${c.name}: ${failed.size} of ${probes.size} probe files with damaged " +
      s"filters found by reads (e.g. ${failed.head._1.getParent.getName}/${failed.head._1.getName}: ${failed.head._2}); " +
      "the files they held are read, not pruned, and the next REFRESH builds them again")
    gone.isEmpty && bad.isEmpty
  }
}
