package bloomindex.layout

import java.util.concurrent.{Callable, ConcurrentHashMap, Executors, ThreadFactory, TimeUnit}
import java.util.concurrent.atomic.{AtomicInteger, LongAdder}

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import bloomindex.crypto.IndexEncryption
import bloomindex.log.{IndexData, IndexSpec}
import bloomindex.compat.ConfWritable
import bloomindex.errors.Causes

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.io.ColumnIOFactory
import org.apache.parquet.schema.MessageType
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.slf4j.LoggerFactory

/**
 * Reading an ACTIVE version's index data: its Parquet rows and its global filters. A data
 * file that is missing or not Parquet (deleted, truncated, overwritten) is skipped, so its
 * source files have no index row and are always read; DESCRIBE reports it as damage.
 */
object IndexStore {

  def dataDir(indexDir: Path, data: IndexData): Path = new Path(indexDir, data.dir)

  /**
   * One row per (source file, column) of `data` ([[IndexSchemas.IndexSchema]]), as its layout
   * holds them ([[IndexLayout.rows]]): a data file that is missing or damaged is skipped.
   */
  def rows(spark: SparkSession, indexDir: Path, data: IndexData): DataFrame = IndexLayout.of(data).rows(spark, indexDir, data)

  /**
   * The Parquet index rows under `dir` (layouts `rows`, `columns`, `blocks`). Pages written with
   * a checksum (log format 6 on) are checked as they are read: a page that fails it ends its
   * file's rows there, so REFRESH, which carries the rows of unchanged files into its new
   * version (whose pages get new checksums), builds the files the page held again instead of
   * sealing its damaged filters.
   */
  private[layout] def parquetRows(spark: SparkSession, dir: Path): DataFrame =
    spark.read.schema(IndexSchemas.IndexSchema)
      .option("ignoreCorruptFiles", "true").option("ignoreMissingFiles", "true")
      .option(PageChecksums, "true")
      .parquet(dir.toString)

  /** parquet-java's option to check the checksums of the pages it reads (off by default). */
  private val PageChecksums = "parquet.page.verify-checksum.enabled"

  /** The rows of the active version of the index in `indexDir` (tests and tools; empty when none). */
  def activeRows(spark: SparkSession, indexDir: String): DataFrame = {
    val dir = new Path(indexDir)
    new bloomindex.log.IndexLog(dir, spark.sessionState.newHadoopConf()).lastActive().flatMap(_.data)
      .map(rows(spark, dir, _)).getOrElse(spark.createDataFrame(spark.sparkContext.emptyRDD[Row], IndexSchemas.IndexSchema))
  }

  /**
   * The `probes` layout has no Parquet rows: its probe files are read in a Spark job, one task
   * per file, each filter put back together in its design's serialized form
   * ([[ProbeFile.readFilters]]); a probe file that is missing or damaged is skipped like a
   * Parquet file.
   */
  private[layout] def probeRows(spark: SparkSession, indexDir: Path, dir: Path, checksums: Boolean = false): DataFrame =
    probeRowsOf(spark, probeFiles(spark.sessionState.newHadoopConf(), indexDir, dir, checksums), checksums = checksums)

  /**
   * The probe files of the version whose data folder is `dir`, as (path, length, column): as its
   * summary lists them (its own and those kept from earlier versions); without a readable
   * summary, the probe files its column folders hold.
   */
  def probeFiles(conf: Configuration, indexDir: Path, dir: Path, checksums: Boolean = false): Seq[(String, Long, String)] =
    try IndexSummary.read(conf, dir, checksums).columns.toSeq.flatMap { case (column, s) =>
      s.allProbeFiles(indexDir, IndexEncryption.columnFolder(dir, column)).map { case (p, n) => (p.toString, n, column) }
    } catch {
      // Data with checksums: a summary that fails its checksum names no file (they are built again).
      case NonFatal(_) if checksums => Nil
      case NonFatal(_) =>
        val fs = dir.getFileSystem(conf)
        (if (!fs.exists(dir)) Array.empty[org.apache.hadoop.fs.FileStatus] else fs.listStatus(dir))
          .filter(s => s.isDirectory && s.getPath.getName.startsWith("column=")).flatMap { folder =>
            val column = org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils
              .unescapePathName(folder.getPath.getName.stripPrefix("column="))
            fs.listStatus(folder.getPath).filter(s => s.isFile && s.getPath.getName.endsWith(ProbeFile.Suffix))
              .map(s => (s.getPath.toString, s.getLen, column))
          }.toSeq
    }

  /**
   * The index rows (one per source file and column) the probe files `probes` (path, length,
   * column) hold, in a Spark job of one partition per probe file or `partitions` partitions.
   */
  def probeRowsOf(spark: SparkSession, probes: Seq[(String, Long, String)], partitions: Int = 0,
      checksums: Boolean = false): DataFrame = {
    bloomindex.compat.KryoSetup.check(spark.sparkContext.getConf) // names the setting rather than Kryo's refusal
    val shipped = ConfWritable.broadcast(spark)
    // One probe file per partition, or `partitions` of them (OPTIMIZE: as many files as it writes).
    val slices = if (partitions > 0) math.min(partitions, math.max(1, probes.size)) else math.max(1, probes.size)
    val rdd = spark.sparkContext.parallelize(probes, slices).flatMap { case (path, length, column) =>
      // A damaged file (or one failing part way) gives the rows read so far: each is whole, and
      // the files without a row are rebuilt by REFRESH, read by queries.
      def skipped(e: Throwable) = {
        LoggerFactory.getLogger(getClass).warn(s"bloomindex: probe file $path unreadable, its rows skipped: ${e.getMessage}")
        Iterator.empty
      }
      val filters = try ProbeFile.readFilters(shipped.value.conf, new Path(path), length, column, checksums) catch {
        case NonFatal(e) => skipped(e)
      }
      new Iterator[Row] {
        private var failed = false
        def hasNext: Boolean = !failed && (try filters.hasNext catch { case NonFatal(e) => failed = true; skipped(e); false })
        def next(): Row = {
          val (e, filter) = filters.next()
          Row(e.path, e.size, e.modificationTime, column, e.rowCount, e.nullCount, e.ndv, filter,
            if (e.fromFooter) "footer" else "data")
        }
      }
    }
    spark.createDataFrame(rdd, IndexSchemas.IndexSchema)
  }

  /**
   * (path, size, modification time) of every file the rows cover (by at least `columns`
   * columns). The filters are read too, though not returned: a Parquet page of them that fails
   * its checksum ends its file's rows ([[parquetRows]]), so the files it held are not covered.
   */
  def fileIdentities(rows: DataFrame, columns: Int = 1): Set[(String, Long, Long)] = {
    import org.apache.spark.sql.functions.{col, countDistinct, length, sum}
    rows.groupBy("file_path", "file_size", "modification_time")
      .agg(countDistinct("column").as("columns"), sum(length(col("filter"))).as("filter_bytes"))
      .where(col("columns") >= columns && col("filter_bytes") >= 0).collect()
      .map(r => (r.getString(0), r.getLong(1), r.getLong(2))).toSet
  }

  /**
   * How many of `rows`' filters do not deserialize as their column's design (bad header, a
   * size over 128 MiB or beyond the bytes stored, a column the spec does not have), with one
   * example; None when all do. Checked on the executors.
   */
  def unreadableFilters(rows: DataFrame, spec: IndexSpec): Option[(Long, String)] = {
    val designs = spec.columns.map(c => c.name -> c.algorithm).toMap
    val bad = rows.select("file_path", "column", "filter").rdd.flatMap { r =>
      val why = designs.get(r.getString(1)) match {
        case None => Some("not an indexed column")
        case Some(a) => try { a.fromBytes(r.getAs[Array[Byte]](2)); None } catch { case NonFatal(e) => Some(e.getMessage) }
      }
      why.map(w => s"${r.getString(0)} column ${r.getString(1)}: $w")
    }
    bad.map(w => (1L, w)).fold((0L, null)) { case ((n1, w1), (n2, w2)) => (n1 + n2, Option(w1).getOrElse(w2)) } match {
      case (0L, _) => None
      case (n, w) => Some((n, w))
    }
  }

  /**
   * What one column's load read: the data files opened, their bytes, and the files that failed
   * (with one example); of those, `forNow` failed for a reason that may pass ([[IndexLayout.passing]]).
   */
  final case class ColumnRead(files: Int, bytes: Long, failed: Int, failure: Option[Throwable], forNow: Int = 0)

  /** The fields a query needs of a column's rows, in this order. */
  private val ProbeFields = Seq("file_path", "file_size", "modification_time", "row_count", "null_count", "filter")

  // Test hook and metric: index data files and bytes loaded for queries, by column folder name.
  private val opened = new ConcurrentHashMap[String, (LongAdder, LongAdder)]()

  /** Counts index data loaded for queries: `files` opened and `bytes` read, under `folder` (null: not counted, the JVM's warm-up). */
  def countLoaded(folder: String, files: Int, bytes: Long): Unit = if (folder != null) {
    val c = opened.computeIfAbsent(folder, _ => (new LongAdder, new LongAdder))
    c._1.add(files)
    c._2.add(bytes)
  }

  /** Index data files and bytes loaded for queries so far in this JVM, by folder (`column=<name>`, or `rows`). */
  def loadedFiles(): java.util.Map[String, java.lang.Long] =
    opened.asScala.map { case (k, v) => k -> java.lang.Long.valueOf(v._1.sum()) }.asJava
  def loadedBytes(): java.util.Map[String, java.lang.Long] =
    opened.asScala.map { case (k, v) => k -> java.lang.Long.valueOf(v._2.sum()) }.asJava
  def resetLoaded(): Unit = opened.clear()

  /**
   * The data files of `column` in a [[IndexData.Columns]] layout: from the summary, or by
   * listing its folder when the summary is unreadable.
   */
  def columnFiles(conf: Configuration, dir: Path, column: String): Seq[Path] = columnFileLengths(conf, dir, column).map(_._1)

  /** [[columnFiles]] with their lengths (the summary's, or the listing's). */
  def columnFileLengths(conf: Configuration, dir: Path, column: String): Seq[(Path, Long)] = {
    val folder = IndexEncryption.columnFolder(dir, column)
    try IndexSummary.read(conf, dir).columns.get(column)
      .map(_.dataFiles.toSeq.sortBy(_._1).map { case (name, length) => new Path(folder, name) -> length })
      .getOrElse(Nil)
    catch {
      case NonFatal(_) =>
        val fs = folder.getFileSystem(conf)
        if (!fs.exists(folder)) Nil
        else fs.listStatus(folder).filter(_.getPath.getName.endsWith(".parquet")).sortBy(_.getPath.getName)
          .map(s => s.getPath -> s.getLen).toSeq
    }
  }

  /**
   * Reads `column`'s rows into `out`: on the driver, `threads` files at a time, when there are
   * at most `driverMaxFiles` files; else in Spark jobs ([[readColumnInJobs]]; `lengths`, the
   * files' lengths where known, plan them). A file that is missing or not readable is skipped
   * (its source files are then not held by the column) and counted: as damage, or, for a store's
   * error or timeout ([[IndexLayout.passing]]), as failed for now, the same on either route.
   */
  def readColumn(spark: SparkSession, conf: Configuration, dir: Path, column: String, files: Seq[Path],
      threads: Int, driverMaxFiles: Int, out: (String, Long, Long, Long, Long, Array[Byte]) => Unit,
      filters: Boolean = true, lengths: Seq[Long] = Nil): ColumnRead = {
    val folder = IndexEncryption.columnFolder(dir, column).getName
    val failures = new Failures(filters)
    val bytes = new LongAdder()
    if (files.size > driverMaxFiles && jobsCanRun(spark)) {
      val known = if (lengths.size == files.size) lengths else {
        val fs = dir.getFileSystem(conf)
        files.map(f => try fs.getFileStatus(f).getLen catch { case NonFatal(_) => 0L })
      }
      readColumnInJobs(spark, conf, files.zip(known), out, filters, failures, bytes)
    } else {
      def one(f: Path): Unit = try bytes.add(readFile(conf, f, out, filters)) catch {
        case NonFatal(e) => failures.add(f.toString, e, Failures.kindOf(e))
      }
      inParallel(threads, files.map(f => () => one(f)))
    }
    failures.settle(files.size - failures.failed.get)
    if (filters) countLoaded(folder, files.size, bytes.sum())
    ColumnRead(files.size, bytes.sum(), failures.failed.get, failures.first, failures.forNow.get)
  }

  /**
   * Whether this session's Kryo takes the jobs' classes ([[bloomindex.compat.KryoSetup]]); where
   * not, the driver reads the files itself (slower, the same rows) and says why, once.
   */
  private def jobsCanRun(spark: SparkSession): Boolean = bloomindex.compat.KryoSetup.problem(spark.sparkContext.getConf) match {
    case None => true
    case Some(p) =>
      if (kryoWarned.compareAndSet(false, true))
        LoggerFactory.getLogger(getClass).warn(s"bloomindex: index data files are read on the driver, not by Spark jobs: spark.kryo.registrator $p")
      false
  }
  private val kryoWarned = new java.util.concurrent.atomic.AtomicBoolean()

  /** The files of a column's read that failed: how many, the first failure, how many for now. */
  private final class Failures(filters: Boolean) {
    val failed = new AtomicInteger()
    val forNow = new AtomicInteger()
    @volatile var first: Option[Throwable] = None

    private val refusedByKeys = new java.util.concurrent.ConcurrentLinkedQueue[(String, Throwable)]()

    def add(file: String, e: Throwable, kind: Int): Unit = {
      failed.incrementAndGet()
      if (first.isEmpty) first = Some(e)
      // For DESCRIBE, which reads no filter ([[IndexLayout.readIdentities]]): a query's read
      // that failed (a page failing its checksum among them) is damage; a store's error or
      // timeout is not: the column is read again later ([[ColumnData.Builder.failForNow]]).
      if (kind == Failures.Passing) forNow.incrementAndGet()
      else if (kind == Failures.Keys) refusedByKeys.add((file, e))
      else damage(file, e)
    }

    /**
     * Once every file was tried (`read` of them read whole): a file whose decryption failed is
     * damage where others were decrypted (its bytes, not the keys: AES-GCM refuses changed bytes
     * as it refuses a wrong key), not where none was (a session without the keys; IndexCache
     * says so, and DESCRIBE run later with the keys must not show damage for it).
     */
    def settle(read: Int): Unit = if (read > 0) refusedByKeys.forEach(f => damage(f._1, f._2))

    private def damage(file: String, e: Throwable): Unit =
      if (filters) bloomindex.log.Checksums.recordDamage(file, s"unreadable when a query read it: ${e.getMessage}")
  }

  private object Failures {
    val Damage = 0
    val Passing = 1 // a store's error or timeout ([[IndexLayout.passing]])
    val Keys = 2 // Parquet's decryption refused: this session's keys, or the bytes ([[Failures.settle]])

    def kindOf(e: Throwable): Int =
      if (Causes.of(e).exists(_.isInstanceOf[org.apache.parquet.crypto.ParquetCryptoRuntimeException])) Keys
      else if (IndexLayout.passing(e)) Passing
      else Damage
  }

  /**
   * At most this many bytes of index data files are read by one job (and at most half of
   * `spark.driver.maxResultSize`, 1 GB by default, which the job's results must stay under).
   */
  private[layout] var JobBytes: Long = 256L << 20

  /** Bytes a task reads at most (with [[FileOpenBytes]] counted per file, as Spark's `openCostInBytes`). */
  private[layout] var TaskBytes: Long = 64L << 20
  private val FileOpenBytes = 4L << 20

  private val loadJobs = new java.util.concurrent.atomic.AtomicLong()
  private val loadTasks = new java.util.concurrent.atomic.AtomicLong()

  /** Spark jobs run so far in this JVM to read index data files (tests and metrics). */
  def loadJobsRun(): Long = loadJobs.get

  /** The tasks of those jobs. */
  def loadTasksRun(): Long = loadTasks.get

  /**
   * `files` (with their lengths) read by Spark jobs, each task reading a share of them by
   * [[readFile]], as the driver does, and sending their rows back as bytes ([[JobRows]]): a
   * file that fails is reported with its failure and whether the failure may pass, so a store's
   * error is retried later and damage is recorded, as on the driver. Tasks of about 64 MB, jobs
   * of at most [[JobBytes]]; the rows of each task are given to `out` on this thread as they
   * arrive (a file whose row `out` refuses fails there, as on the driver). The jobs carry this
   * thread's job group; one still running when this thread stops waiting for it is cancelled.
   */
  private def readColumnInJobs(spark: SparkSession, conf: Configuration, files: Seq[(Path, Long)],
      out: (String, Long, Long, Long, Long, Array[Byte]) => Unit, filters: Boolean, failures: Failures,
      bytes: LongAdder): Unit = {
    val sc = spark.sparkContext
    val maxResult = sc.getConf.getSizeAsBytes("spark.driver.maxResultSize", "1g")
    val jobBytes = if (maxResult > 0) math.max(1L, math.min(JobBytes, maxResult / 2)) else JobBytes
    val shipped = sc.broadcast(new ConfWritable(conf))
    var action: org.apache.spark.SimpleFutureAction[Unit] = null
    try {
      // Consecutive files cut into groups of at most `limit` bytes (each at least one file).
      def cut(groups: Seq[(Path, Long)], limit: Long, perFile: Long): Seq[Seq[(Path, Long)]] = {
        val all = Seq.newBuilder[Seq[(Path, Long)]]
        var group = Seq.newBuilder[(Path, Long)]
        var sum = 0L
        var any = false
        groups.foreach { case f @ (_, length) =>
          if (any && sum + length + perFile > limit) { all += group.result(); group = Seq.newBuilder; sum = 0L; any = false }
          group += f
          sum += length + perFile
          any = true
        }
        if (any) all += group.result()
        all.result()
      }
      cut(files, jobBytes, 0L).foreach { job =>
        val tasks = cut(job, TaskBytes, FileOpenBytes).map(_.map(_._1.toString).toArray)
        val rdd = sc.parallelize(tasks, tasks.size)
        val arrived = new java.util.concurrent.LinkedBlockingQueue[Array[Byte]]()
        loadJobs.incrementAndGet()
        loadTasks.addAndGet(tasks.size)
        action = sc.submitJob[Array[String], Array[Byte], Unit](rdd,
          (it: Iterator[Array[String]]) => JobRows.read(shipped.value.conf, it.flatMap(_.iterator), filters),
          tasks.indices, (_: Int, r: Array[Byte]) => arrived.put(r), ())
        var left = tasks.size
        while (left > 0) {
          val r = arrived.poll(100, TimeUnit.MILLISECONDS)
          if (r != null) {
            JobRows.replay(r, out, failures.add, bytes.add)
            left -= 1
          } else if (action.isCompleted && arrived.isEmpty) {
            action.value.foreach(_.get) // a failed (or cancelled) job: its error
            throw new IllegalStateException(s"a job reading index data ended with $left task result(s) missing")
          }
        }
      }
    } finally {
      if (action != null && !action.isCompleted) action.cancel()
      shipped.destroy()
    }
  }

  /**
   * The rows of index data files as a task reads them ([[read]]) and sends them to the driver,
   * as bytes (whatever `spark.serializer` is), and as the driver takes them ([[replay]]): per file
   * its name, its rows, then its length, or its failure (as text, with its kind: damage, a
   * store's error, the keys; a file that fails part way keeps the rows read before, as on the
   * driver).
   */
  private[layout] object JobRows {
    private val File = 0
    private val Row = 1
    private val Done = 2
    private val Failed = 3

    def read(conf: Configuration, files: Iterator[String], filters: Boolean): Array[Byte] = {
      // Without its configuration a task would fail every file, which the driver would take for damage.
      if (conf == null) throw new IllegalStateException("no Hadoop configuration reached the task")
      val buffer = new java.io.ByteArrayOutputStream()
      val data = new java.io.DataOutputStream(buffer)
      files.foreach { f =>
        data.writeByte(File)
        writeString(data, f)
        try {
          val length = readFile(conf, new Path(f), (p, size, mtime, rows, nulls, filter) => {
            data.writeByte(Row)
            writeString(data, p)
            data.writeLong(size); data.writeLong(mtime); data.writeLong(rows); data.writeLong(nulls)
            if (filter == null) data.writeInt(-1) else { data.writeInt(filter.length); data.write(filter) }
          }, filters)
          data.writeByte(Done)
          data.writeLong(length)
        } catch {
          case NonFatal(e) =>
            data.writeByte(Failed)
            data.writeByte(Failures.kindOf(e))
            writeString(data, describe(e))
        }
      }
      data.flush()
      buffer.toByteArray
    }

    /**
     * Gives the rows of `bytes` to `out`, each file's length to `length`, each failed file to
     * `failed`; a file one of whose rows `out` refuses (throws) fails there, as when the driver
     * reads it, and its later rows are skipped.
     */
    def replay(bytes: Array[Byte], out: (String, Long, Long, Long, Long, Array[Byte]) => Unit,
        failed: (String, Throwable, Int) => Unit, length: Long => Unit): Unit = {
      val in = new java.io.DataInputStream(new java.io.ByteArrayInputStream(bytes))
      var file: String = null
      var refused = false // `file` failed on the driver: the rest of it is skipped
      while (in.available() > 0) in.readByte() match {
        case File =>
          file = readString(in)
          refused = false
        case Row =>
          val p = readString(in)
          val size = in.readLong(); val mtime = in.readLong(); val rows = in.readLong(); val nulls = in.readLong()
          val n = in.readInt()
          val filter = if (n < 0) null else { val b = new Array[Byte](n); in.readFully(b); b }
          if (!refused) try out(p, size, mtime, rows, nulls, filter) catch {
            case NonFatal(e) => refused = true; failed(file, e, Failures.kindOf(e))
          }
        case Done =>
          val n = in.readLong()
          if (!refused) length(n)
        case Failed =>
          val kind = in.readByte().toInt
          val why = readString(in)
          if (!refused) failed(file, new java.io.IOException(s"$file could not be read by a task: $why"), kind)
        case other => throw new IllegalStateException(s"index data rows from a task: unknown record $other")
      }
    }

    // Strings as UTF-8 with an int length (DataOutput's writeUTF stops at 64 KB).
    private def writeString(out: java.io.DataOutputStream, s: String): Unit = {
      val b = s.getBytes(java.nio.charset.StandardCharsets.UTF_8)
      out.writeInt(b.length)
      out.write(b)
    }

    private def readString(in: java.io.DataInputStream): String = {
      val b = new Array[Byte](in.readInt())
      in.readFully(b)
      new String(b, java.nio.charset.StandardCharsets.UTF_8)
    }

    /**
     * What a task's failure was, as text: its class and message, and its root cause's (the
     * driver words its warnings with them; its kind, [[Failures.kindOf]], is sent beside it).
     * Text, not the exception: nothing is read back with Java serialization.
     */
    private def describe(e: Throwable): String = {
      val root = Causes.root(e)
      def one(t: Throwable) = s"${t.getClass.getName}: ${t.getMessage}"
      if (root eq e) one(e) else s"${one(e)} (caused by ${one(root)})"
    }
  }

  /**
   * One per-column data file's rows, the fields a query needs only (without the filters, as
   * null, unless `filters`); returns the file's length.
   */
  private def readFile(conf: Configuration, f: Path, out: (String, Long, Long, Long, Long, Array[Byte]) => Unit,
      filters: Boolean): Long = {
    val input = HadoopInputFile.fromPath(f, conf)
    // Pages written with a checksum (log format 6 on) are checked; a page that fails makes the file unreadable.
    val reader = ParquetFileReader.open(input, HadoopReadOptions.builder(conf, f).usePageChecksumVerification(true).build())
    try {
      val schema = reader.getFooter.getFileMetaData.getSchema
      val fields = if (filters) ProbeFields else ProbeFields.init
      val projection = new MessageType(schema.getName, fields.map(n => schema.getType(schema.getFieldIndex(n))): _*)
      reader.setRequestedSchema(projection)
      val io = new ColumnIOFactory().getColumnIO(projection, schema)
      var pages = reader.readNextRowGroup()
      while (pages != null) {
        val records = io.getRecordReader(pages, new GroupRecordConverter(projection))
        var k = 0L
        while (k < pages.getRowCount) {
          val g = records.read()
          out(g.getString(0, 0), g.getLong(1, 0), g.getLong(2, 0), g.getLong(3, 0), g.getLong(4, 0),
            if (filters) g.getBinary(5, 0).getBytes else null)
          k += 1
        }
        pages = reader.readNextRowGroup()
      }
      input.getLength
    } finally reader.close()
  }

  /** Runs `tasks` on at most `threads` daemon threads (on this one when there is one of either) and waits for them all. */
  def inParallel(threads: Int, tasks: Seq[() => Unit]): Unit =
    if (tasks.size <= 1 || threads <= 1) tasks.foreach(_())
    else {
      val pool = Executors.newFixedThreadPool(math.min(threads, tasks.size), new ThreadFactory {
        private val n = new AtomicInteger()
        def newThread(r: Runnable): Thread = {
          val t = new Thread(r, s"bloomindex-load-${n.incrementAndGet()}")
          t.setDaemon(true)
          t
        }
      })
      try tasks.map(t => pool.submit(new Callable[Unit] { def call(): Unit = t() })).foreach(_.get())
      finally {
        pool.shutdown()
        pool.awaitTermination(1, TimeUnit.MINUTES)
      }
    }

  /** One column's global filter (Parquet's serialized form) and the distinct count its row records. */
  final case class GlobalRow(filter: Array[Byte], ndv: Long)

  /** Column name -> the global filter in Parquet's serialized form ([[globalRows]]). */
  def globalFilters(spark: SparkSession, indexDir: Path, data: IndexData): Map[String, Array[Byte]] =
    globalRows(spark, indexDir, data).map { case (c, r) => c -> r.filter }

  /**
   * Column name -> its global filter's row (the count is encrypted with the filter where the
   * column is; the log leaves such a column's count out). Data with checksums (log format 6 on):
   * a row whose checksum is missing or does not match its column and filter is left out (one
   * warning naming the index file; the join is then not filtered on that column).
   */
  def globalRows(spark: SparkSession, indexDir: Path, data: IndexData): Map[String, GlobalRow] = {
    val dir = IndexSchemas.globalDir(dataDir(indexDir, data).toString)
    val rows = spark.read.schema(IndexSchemas.GlobalSchema).parquet(dir)
      .select(org.apache.spark.sql.functions.input_file_name(), org.apache.spark.sql.functions.col("column"),
        org.apache.spark.sql.functions.col("filter"), org.apache.spark.sql.functions.col("checksum"),
        org.apache.spark.sql.functions.col("ndv")).collect()
    rows.flatMap { r =>
      val (column, filter) = (r.getString(1), r.getAs[Array[Byte]](2))
      if (!data.checksums || (!r.isNullAt(3) && r.getInt(3) == IndexSchemas.globalChecksum(column, filter))) {
        Some(column -> GlobalRow(filter, r.getLong(4)))
      } else {
        val why = s"global filter of column $column fails its checksum (CRC32C)"
        bloomindex.log.Checksums.recordDamage(r.getString(0), why)
        bloomindex.log.IndexLog.warnOnce(s"bloomindex: ${r.getString(0)}: $why; joins are not filtered on it, " +
          "and the next REFRESH BLOOM INDEX builds it again")
        None
      }
    }.toMap
  }
}
