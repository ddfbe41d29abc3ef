package org.apache.spark.sql.bloomindex

import org.apache.spark.internal.config.{ConfigEntry, OptionalConfigEntry}
import org.apache.spark.sql.internal.SQLConf

/**
 * Every configuration entry of bloomindex, registered with Spark's SQLConf (as Delta's
 * `DeltaSQLConf` does): each key has its type, default, documentation, validation and
 * version; `SET -v` lists the public ones, and `SET key=value` / `spark.conf.set` refuse a
 * value of the wrong type or out of range at once, naming the key.
 *
 * Read them as Delta's are: `spark.sessionState.conf.getConf(BloomIndexSQLConf.PRUNING_ENABLED)`;
 * a key's name, for a message, is `ENTRY.key`. Two reads are more than one entry's value and
 * live in `bloomindex.config.BloomIndexConf`: the index root (a blank one refused, unset: from
 * the warehouse folder) and the test fault point.
 *
 * Two families of keys are not session values read with `getConf`, and are declared here so that
 * their names are written once: the per-scheme log store keys (a documented pattern entry,
 * [[LOG_STORE_IMPL]]; the store reads `spark.bloomindex.logStore.<scheme>.impl` from the Hadoop
 * configuration) and the keys bloomindex sets on the Hadoop configuration of an encrypted index
 * write for its Parquet crypto factory.
 *
 * This object lives under `org.apache.spark` only because Spark's `ConfigBuilder` is
 * `private[spark]` (code outside reads an entry without naming its type). Entries register once
 * per JVM, when this object is first initialised (the extension touches it when a session
 * starts, see [[ensureRegistered]]).
 */
object BloomIndexSQLConf {

  /** The version of bloomindex that introduced the keys below. */
  private val Since = "0.1.0"

  private def buildConf(key: String) = SQLConf.buildConf(key)

  val ROOT: ConfigEntry[Option[String]] = buildConf("spark.bloomindex.root")
    .doc("Folder holding one sub-folder per Bloom index. When unset: `_bloomindex` in " +
      "spark.sql.warehouse.dir. A blank value is refused by the Bloom index commands.")
    .version(Since)
    .stringConf
    .createOptional

  val FPP_DEFAULT: ConfigEntry[String] = buildConf("spark.bloomindex.fpp.default")
    .doc("Default false positive rate of a column's filters, when CREATE BLOOM INDEX names none: " +
      "'auto' (each build chooses it per column from the files, their distinct values and the " +
      "workload history: see spark.bloomindex.fpp.autoBudget) or a number in (0, 1). Indexes " +
      "created before keep theirs.")
    .version(Since)
    .stringConf
    .checkValue(v => v.trim.equalsIgnoreCase("auto") ||
      scala.util.Try(v.trim.toDouble).toOption.exists(p => p > 0 && p < 1), "Must be 'auto' or a number in (0, 1).")
    .createWithDefault("auto")

  val FPP_AUTO_BUDGET: ConfigEntry[Double] = buildConf("spark.bloomindex.fpp.autoBudget")
    .doc("The size budget of a column whose fpp is 'auto': its filters take at most this " +
      "fraction of the bytes of the files it indexes (the chosen rate rises to fit; never above 0.1).")
    .version(Since)
    .doubleConf
    .checkValue(f => f > 0, "Must be a number > 0.")
    .createWithDefault(0.1)

  val PRUNING_ENABLED: ConfigEntry[Boolean] = buildConf("spark.bloomindex.pruning.enabled")
    .doc("When true, scans skip the files that the Bloom indexes of their source show hold " +
      "no row matching the query's filters.")
    .version(Since)
    .booleanConf
    .createWithDefault(true)

  val JOIN_FILTER_ENABLED: ConfigEntry[Boolean] = buildConf("spark.bloomindex.joinFilter.enabled")
    .doc("When true, joins on a column with a global Bloom filter drop, before the join, the " +
      "rows of the other side whose key is certainly absent from it.")
    .version(Since)
    .booleanConf
    .createWithDefault(true)

  val BUILD_FOOTER_FILTERS: ConfigEntry[Boolean] = buildConf("spark.bloomindex.build.footerFilters")
    .doc("When true, a build takes a Parquet file's filter for a column from its footer when " +
      "every row group carries one that fits; when false, always from the data.")
    .version(Since)
    .booleanConf
    .createWithDefault(true)

  val BUILD_MAX_DISTINCT_PER_FILE: ConfigEntry[Int] = buildConf("spark.bloomindex.build.maxDistinctPerFile")
    .doc("Distinct values a build task counts exactly per file and column (up to 16 bytes each " +
      "buffered per indexed column, plus a sort buffer per running task); a file with more is " +
      "sized from an HLL estimate and read a second time.")
    .version(Since)
    .intConf
    .checkValue(_ > 0, "Must be a whole number > 0.")
    .createWithDefault(2000000)

  val CACHE_MAX_BYTES: ConfigEntry[Long] = buildConf("spark.bloomindex.cache.maxBytes")
    .doc("Driver memory the loaded index data of pruning may hold in this JVM (per column of " +
      "an index version, least recently used dropped first). A column larger than this on its " +
      "own is still loaded for the query that needs it, then dropped.")
    .version(Since)
    .bytesConf(org.apache.spark.network.util.ByteUnit.BYTE)
    .checkValue(_ >= 0, "Must be >= 0.")
    .createWithDefaultString("512m")

  val BUILD_BLOCK_MAJOR: ConfigEntry[Boolean] = buildConf("spark.bloomindex.build.blockMajor")
    .doc("Write each column's filters block-major (probe files, log format 5), so that a query " +
      "reads only the filter blocks its values hash to. Off: the log format 3 layout (Parquet " +
      "files of index rows), where a query loads the whole column's filters. Encrypted indexes " +
      "never write probe files.")
    .version(Since)
    .booleanConf
    .createWithDefault(true)

  val LOAD_DRIVER_MAX_FILES: ConfigEntry[Int] = buildConf("spark.bloomindex.load.driverMaxFiles")
    .doc("An indexed column stored in at most this many Parquet index files (the `columns` " +
      "layout: encrypted indexes, or built with blockMajor off) is loaded by the driver itself, " +
      "reading the files in parallel; more, and a Spark job reads them. Probe files' footers " +
      "are always read by the driver.")
    .version(Since)
    .intConf
    .checkValue(_ >= 0, "Must be >= 0.")
    .createWithDefault(10000)

  val LOAD_THREADS: ConfigEntry[Int] = buildConf("spark.bloomindex.load.threads")
    .doc("Threads the driver reads an indexed column's Parquet index data files with, builds a " +
      "loaded column on, checks the files to skip against storage with, and probes a scan of " +
      "more than 32,768 files over (probe files are read with spark.bloomindex.load.requests).")
    .version(Since)
    .intConf
    .checkValue(n => n > 0 && n <= 64, "Must be a whole number in [1, 64].")
    .createWithDefault(8)

  val LOAD_REQUESTS: ConfigEntry[Int] = buildConf("spark.bloomindex.load.requests")
    .doc("Reads of probe files (their footers, then the block rows a query needs) the driver " +
      "keeps in flight at once when it loads an indexed column: on an object store each is a " +
      "request that mostly waits, so more at once means fewer rounds of its latency. Also the " +
      "listing requests on S3 the check of files to skip against storage keeps in flight " +
      "(spark.bloomindex.pruning.checkFiles). The CPU " +
      "work of the load and the other reads use spark.bloomindex.load.threads.")
    .version(Since)
    .intConf
    .checkValue(n => n > 0 && n <= 256, "Must be a whole number in [1, 256].")
    .createWithDefault(64)

  val LOAD_COALESCE_GAP_BYTES: ConfigEntry[Long] = buildConf("spark.bloomindex.load.coalesceGapBytes")
    .doc("Block rows of one probe file that a query needs and that lie at most this many bytes " +
      "apart are read as one range (one request on an object store; up to 16 MiB a range), and " +
      "the ranges of all the column's probe files are read in parallel (spark.bloomindex.load.threads). " +
      "A probe file whose bytes before its footer's read are at most this many is read whole in " +
      "that read, and its rows held (while such files come to at most a quarter of " +
      "spark.bloomindex.cache.maxBytes): later lookups read nothing of it. " +
      "-1: each probe file's rows are read one after the other, a request each.")
    .version(Since)
    .bytesConf(org.apache.spark.network.util.ByteUnit.BYTE)
    .checkValue(_ >= -1, "Must be >= -1.")
    .createWithDefaultString("1m")

  val LOAD_FOOTER_READ_BYTES: ConfigEntry[Long] = buildConf("spark.bloomindex.load.footerReadBytes")
    .doc("A query reads each probe file's footer with one read of the file's end: at least this " +
      "many bytes, more where the summary's sizes say the footer is longer (one request per " +
      "footer on an object store; a footer longer than the read takes a second). 0: two reads, " +
      "the trailer and then the footer.")
    .version(Since)
    .bytesConf(org.apache.spark.network.util.ByteUnit.BYTE)
    .checkValue(n => n >= 0 && n <= (256L << 20), "Must be in [0, 256m].")
    .createWithDefaultString("64k")

  val REFRESH_DEFAULT: ConfigEntry[String] = buildConf("spark.bloomindex.refresh.default")
    .doc("How a new index follows its source's writes when its CREATE names no `refresh` option: " +
      "'on_write' (a write through the session refreshes it right after the write commits), " +
      "'background' (the refresh is queued to a background thread of the driver, several writes " +
      "coalesced into one), or 'manual' (REFRESH BLOOM INDEX only).")
    .version(Since)
    .stringConf
    .transform(_.trim.toLowerCase(java.util.Locale.ROOT))
    .checkValues(Set("on_write", "background", "manual"))
    .createWithDefault("on_write")

  val REFRESH_STALE_SHARE: ConfigEntry[Double] = buildConf("spark.bloomindex.refresh.staleShare")
    .doc("When a query finds that an index with refresh = on_write or background does not cover " +
      "more than this share of the files its scan reads (files written by another cluster or " +
      "engine), it queues a background refresh of the index (at most once a minute per index).")
    .version(Since)
    .doubleConf
    .checkValue(d => d >= 0 && d <= 1, "Must be a share in [0, 1].")
    .createWithDefault(0.1)

  val REFRESH_STREAMING_BATCHES: ConfigEntry[Long] = buildConf("spark.bloomindex.refresh.streamingBatches")
    .doc("A Structured Streaming query writing to the source of an index with refresh = on_write " +
      "or background queues a refresh of the index after every this many micro-batches that " +
      "wrote rows (1: after each one).")
    .version(Since)
    .longConf
    .checkValue(n => n >= 1, "Must be a whole number >= 1.")
    .createWithDefault(1L)

  val REFRESH_MAX_PROBE_FILES: ConfigEntry[Int] = buildConf("spark.bloomindex.refresh.maxProbeFiles")
    .doc("An incremental refresh keeps the probe files whose every file is unchanged as they are " +
      "and writes only the new files' filters. When a column would then hold more than this many " +
      "probe files, the refresh rewrites its small ones (under spark.bloomindex.optimize.targetFileBytes) " +
      "together: what OPTIMIZE BLOOM INDEX does on demand.")
    .version(Since)
    .intConf
    .checkValue(n => n >= 1, "Must be a whole number >= 1.")
    .createWithDefault(8)

  val REFRESH_WRITE_TASK_FILTERS: ConfigEntry[Int] = buildConf("spark.bloomindex.refresh.writeTaskFilters")
    .doc("A file source write (Parquet) to the source of an index with refresh = on_write builds " +
      "the new files' filters inside its own tasks, as it writes them, so that the refresh after " +
      "the write reads no data: up to this many distinct values per file and indexed column " +
      "(8 bytes each buffered per open file and column). A file with more, and every file of a " +
      "write or column this does not apply to (docs/freshness.md), is read again by the refresh. " +
      "0 turns it off.")
    .version(Since)
    .intConf
    .checkValue(n => n >= 0, "Must be a whole number >= 0.")
    .createWithDefault(1000000)

  val OPTIMIZE_TARGET_FILE_BYTES: ConfigEntry[Long] = buildConf("spark.bloomindex.optimize.targetFileBytes")
    .doc("The size of the probe files OPTIMIZE BLOOM INDEX (and a refresh past " +
      "spark.bloomindex.refresh.maxProbeFiles) writes; probe files at least this large are kept as they are. " +
      "A build (CREATE, REFRESH) whose rows come from more than spark.bloomindex.refresh.maxProbeFiles " +
      "tasks writes one probe file per this many bytes of a column's rows, not one per task.")
    .version(Since)
    .bytesConf(org.apache.spark.network.util.ByteUnit.BYTE)
    .checkValue(n => n >= (1L << 20), "Must be at least 1 MB.")
    .createWithDefaultString("128m")

  val VACUUM_RETENTION: ConfigEntry[Long] = buildConf("spark.bloomindex.vacuum.retention")
    .doc("How long the index data of a version stays after a newer version replaced it, for " +
      "queries still reading it: VACUUM BLOOM INDEX without RETAIN, and the clean-up every " +
      "CREATE, REFRESH and OPTIMIZE of the index does, delete only data no version needs that " +
      "was replaced longer ago than this.")
    .version(Since)
    .timeConf(java.util.concurrent.TimeUnit.MILLISECONDS)
    .checkValue(n => n >= 0, "Must not be negative.")
    .createWithDefaultString("1h")

  val DROP_WITH_TABLE: ConfigEntry[Boolean] = buildConf("spark.bloomindex.dropWithTable")
    .doc("When true, DROP TABLE of a table of the session catalog also drops the Bloom indexes " +
      "over it (their log says DELETED, their files are removed). When false they stay, shown as " +
      "ORPHANED while no table of that name exists, and unused by a table created again under the " +
      "name (another table) until REFRESH BLOOM INDEX ... FULL.")
    .version(Since)
    .booleanConf
    .createWithDefault(true)

  val PRUNING_CHECK_FILES: ConfigEntry[Boolean] = buildConf("spark.bloomindex.pruning.checkFiles")
    .doc("When true, a file of a plain file source is skipped only after its size and " +
      "modification time on storage are found to be those of the scan's listing (a catalog " +
      "table keeps its listing until REFRESH TABLE, a DataFrame for its life; a file rewritten " +
      "in place since holds other values). Costs one listing per folder of skipped files, or " +
      "one request per skipped file in folders of at most two. Turn off only for sources whose " +
      "files are never rewritten in place. Delta and Iceberg scans are never checked.")
    .version(Since)
    .booleanConf
    .createWithDefault(true)

  val PRUNING_MAX_WAIT: ConfigEntry[Long] = buildConf("spark.bloomindex.pruning.maxWait")
    .doc("The longest a query's planning waits for its indexes: reading their log and data and " +
      "checking the files to skip against storage, for file pruning, and a global filter, for " +
      "the join filter. A scan whose decision is not made in time is planned unpruned (every " +
      "file read; EXPLAIN BLOOM INDEX says why), one warning is logged, and the reads go on in " +
      "the background so that a later query finds the index data loaded; while they do, nothing " +
      "under the same index root waits again (another scan, a join, a later query). A stalled " +
      "store costs one wait of this much, not one per scan or query. A file source write waits " +
      "as long for the list of the indexes that follow its source; past it, it is written as if " +
      "none did, and their refresh is queued to the background.")
    .version(Since)
    .timeConf(java.util.concurrent.TimeUnit.MILLISECONDS)
    .checkValue(_ > 0, "Must be > 0.")
    .createWithDefaultString("30s")

  val HISTORY_ENABLED: ConfigEntry[Boolean] = buildConf("spark.bloomindex.history.enabled")
    .doc("When true, the workload history records each scan of an indexable source that a " +
      "query plans with a filter: the source, the columns under =, IN, <=> and IS NULL (names " +
      "and the number of values, never the values), files listed and read, bytes read, the " +
      "index that answered and the query's wall time. Kept under the index root in `_history/` " +
      "(JSON lines, written by a driver thread, off the query's path); read with " +
      "`SELECT * FROM bloom_index_history()`.")
    .version(Since)
    .booleanConf
    .createWithDefault(true)

  val HISTORY_MAX_ENTRIES: ConfigEntry[Int] = buildConf("spark.bloomindex.history.maxEntries")
    .doc("The most scans the workload history keeps under an index root: each write deletes " +
      "the oldest files past it, and bloom_index_history() shows at most this many, newest first.")
    .version(Since)
    .intConf
    .checkValue(_ > 0, "Must be a whole number > 0.")
    .createWithDefault(10000)

  val HISTORY_MAX_AGE: ConfigEntry[Long] = buildConf("spark.bloomindex.history.maxAge")
    .doc("How long the workload history keeps a scan: each write deletes older files, and " +
      "bloom_index_history() shows none older.")
    .version(Since)
    .timeConf(java.util.concurrent.TimeUnit.MILLISECONDS)
    .checkValue(_ > 0, "Must be > 0.")
    .createWithDefaultString("30d")

  val ADVISOR_SAMPLE_FILES: ConfigEntry[Int] = buildConf("spark.bloomindex.advisor.sampleFiles")
    .doc("RECOMMEND BLOOM INDEXES and EXPLAIN BLOOM INDEX WHATIF measure a source's columns " +
      "(distinct values per file, how values spread over files, which files hold a query's " +
      "values) on at most this many of its files, picked by a hash of their paths; the " +
      "counts are scaled to every file, and the estimates' ranges widen.")
    .version(Since)
    .intConf
    .checkValue(_ > 0, "Must be a whole number > 0.")
    .createWithDefault(256)

  val ADVISOR_MIN_SKIPPED_SHARE: ConfigEntry[Double] = buildConf("spark.bloomindex.advisor.minSkippedShare")
    .doc("RECOMMEND BLOOM INDEXES recommends a column only when its index would skip, per " +
      "query looking it up, at least one file and this share of the files the query lists.")
    .version(Since)
    .doubleConf
    .checkValue(p => p >= 0 && p < 1, "Must be a number in [0, 1).")
    .createWithDefault(0.1)

  /** The pattern of the per-scheme keys; [[logStoreImplKey]] gives a scheme's key. */
  private val SchemePlaceholder = "<scheme>"

  val LOG_STORE_IMPL: ConfigEntry[Option[String]] = buildConf(s"spark.bloomindex.logStore.$SchemePlaceholder.impl")
    .doc("A family of keys, one per URI scheme (`spark.bloomindex.logStore.s3a.impl`, ...): the " +
      "class (a `bloomindex.log.LogStore` with a constructor taking a Hadoop `Configuration`) " +
      "that commits index log entries under `<scheme>://`. Read from the session's Hadoop " +
      "configuration. When unset: `file` hard links, `hdfs`/`viewfs`/`abfs`/`abfss` rename, " +
      "`s3a`/`s3` a conditional PUT, `gs` a conditional create, any other scheme rename (safe " +
      "for one writer at a time), with a warning.")
    .version(Since)
    .stringConf
    .createOptional

  /** The key naming the log store of `scheme`: [[LOG_STORE_IMPL]]'s pattern with the scheme in it. */
  def logStoreImplKey(scheme: String): String = LOG_STORE_IMPL.key.replace(SchemePlaceholder, String.valueOf(scheme))

  val ENCRYPTION_COLUMN_KEYS: ConfigEntry[Option[String]] = buildConf("spark.bloomindex.encryption.column.keys")
    .doc("Set by bloomindex on each write of an encrypted index (a write option, not a session " +
      "setting): indexed column -> master key id, read by its Parquet crypto factory. The " +
      "session's Parquet encryption settings (`parquet.encryption.*`) decide the keys.")
    .version(Since)
    .stringConf
    .createOptional

  val ENCRYPTION_FOOTER_KEY: ConfigEntry[Option[String]] = buildConf("spark.bloomindex.encryption.footer.key")
    .doc("Set by bloomindex on each write of an encrypted index (a write option, not a session " +
      "setting): the master key id of the index files' footers, read by its Parquet crypto factory.")
    .version(Since)
    .stringConf
    .createOptional

  val ENCRYPTION_FACTORY_CLASS: ConfigEntry[Option[String]] = buildConf("spark.bloomindex.encryption.factory.class")
    .doc("Set by bloomindex on each write of an encrypted index (a write option, not a session " +
      "setting): the session's Parquet crypto factory (`parquet.crypto.factory.class`), which " +
      "bloomindex's own factory hands each index file's encryption to.")
    .version(Since)
    .stringConf
    .createOptional

  /** Test hook, not for users: files per run of the check's S3 listing ([[bloomindex.catalog.S3Listing]]). */
  val TEST_CHECK_RUN_FILES: ConfigEntry[Int] = buildConf("spark.internal.bloomindex.test.checkRunFiles")
    .internal()
    .doc("Test only: files per run of the parallel S3 listing that checks a scan's listing " +
      "against storage (S3 returns at most 1,000 names a request; tests set a few to run many runs).")
    .version(Since)
    .intConf
    .checkValue(n => n > 0 && n <= 1000, "Must be a whole number in [1, 1000].")
    .createWithDefault(1000)

  /** Bench hook, not for users: whether the check's S3 listing reads pages itself ([[bloomindex.catalog.S3ListPage]]). */
  val TEST_S3_READ_PAGES: ConfigEntry[Boolean] = buildConf("spark.internal.bloomindex.test.s3ReadPages")
    .internal()
    .doc("Bench only: false makes the check's S3 listing read each page with the AWS SDK's own " +
      "reader instead of bloomindex's (the figures before and after, in one run).")
    .version(Since)
    .booleanConf
    .createWithDefault(true)

  /**
   * Test hook, not for users: the version of the Unicode and collation data a collated string's
   * keys are recorded as computed with ([[bloomindex.hash.CollationKeys.dataVersion]]), standing in
   * for another Spark's ICU (an index built on Spark 4.1, ICU 77, queried on 4.2, ICU 78).
   */
  val TEST_COLLATION_DATA_VERSION: OptionalConfigEntry[String] = buildConf("spark.internal.bloomindex.test.collationDataVersion")
    .internal()
    .doc("Tests only: the collation data version recorded for collated string columns, instead of this JVM's ICU version.")
    .version(Since)
    .stringConf
    .createOptional

  /** Test hook, not for users: the most files a pruning decision holds by path ([[bloomindex.catalog.SkippedFiles]]). */
  val TEST_SKIPPED_PATHS_MAX: ConfigEntry[Int] = buildConf("spark.internal.bloomindex.test.skippedPathsMax")
    .internal()
    .doc("Test only: a pruning decision that skips at most this many files holds their paths; " +
      "more, and it holds their positions in the index column (a bit each), found again through " +
      "the column's path table. Tests set 0 or a large value to run either form.")
    .version(Since)
    .intConf
    .checkValue(_ >= 0, "Must be >= 0.")
    .createWithDefault(4096)

  /** Test hook, not for users: builds write the log format 4 layout. */
  val TEST_BUILD_BLOCKS_LAYOUT: ConfigEntry[Boolean] = buildConf("spark.internal.bloomindex.test.blocksLayout")
    .internal()
    .doc("Test only: write the log format 4 layout `blocks` (Parquet rows with filters and probe " +
      "files of format 1 beside them), so that tests can check that such indexes are read as before.")
    .version(Since)
    .booleanConf
    .createWithDefault(false)

  /** Test hook, not for users: each task of a build's data pass sleeps this long before reading. */
  val TEST_BUILD_TASK_DELAY_MS: ConfigEntry[Long] = buildConf("spark.internal.bloomindex.test.buildTaskDelayMs")
    .internal()
    .doc("Test only: each task of a build's data pass sleeps this many milliseconds before " +
      "reading, so that a fault test can kill an executor while a build runs.")
    .version(Since)
    .longConf
    .checkValue(_ >= 0, "Must be >= 0.")
    .createWithDefault(0L)

  /** Test hook, not for users: a CREATE or REFRESH stops between its data write and its log commit. */
  val TEST_FAIL_AFTER_DATA_WRITE: ConfigEntry[Boolean] = buildConf("spark.internal.bloomindex.test.failAfterDataWrite")
    .internal()
    .doc("Test only: a CREATE or REFRESH stops right after its index data is written, before " +
      "its log commit, without rolling back (what a driver that dies there leaves behind).")
    .version(Since)
    .booleanConf
    .createWithDefault(false)

  /** Test hook, not for users: the first index-file write task of a build to end fails once. */
  val TEST_FAIL_INDEX_WRITE_ONCE: ConfigEntry[String] = buildConf("spark.internal.bloomindex.test.failIndexWriteOnce")
    .internal()
    .doc("Test only: a local path; the first task of a build's index file write that creates " +
      "this file (after writing its files) then fails, so Spark runs it again (a store that " +
      "fails a write once). Empty: off.")
    .version(Since)
    .stringConf
    .createWithDefault("")

  /** Every entry, public and internal. */
  val all: Seq[ConfigEntry[_]] = Seq(ROOT, FPP_DEFAULT, FPP_AUTO_BUDGET, PRUNING_ENABLED, JOIN_FILTER_ENABLED,
    BUILD_FOOTER_FILTERS, BUILD_MAX_DISTINCT_PER_FILE, BUILD_BLOCK_MAJOR, CACHE_MAX_BYTES, LOAD_DRIVER_MAX_FILES, LOAD_THREADS,
    LOAD_REQUESTS, LOAD_COALESCE_GAP_BYTES, LOAD_FOOTER_READ_BYTES,
    PRUNING_CHECK_FILES, PRUNING_MAX_WAIT, REFRESH_DEFAULT, REFRESH_STALE_SHARE, REFRESH_STREAMING_BATCHES, REFRESH_MAX_PROBE_FILES, REFRESH_WRITE_TASK_FILTERS, OPTIMIZE_TARGET_FILE_BYTES,
    VACUUM_RETENTION, DROP_WITH_TABLE, HISTORY_ENABLED, HISTORY_MAX_ENTRIES, HISTORY_MAX_AGE,
    ADVISOR_SAMPLE_FILES, ADVISOR_MIN_SKIPPED_SHARE, LOG_STORE_IMPL, ENCRYPTION_COLUMN_KEYS, ENCRYPTION_FOOTER_KEY, ENCRYPTION_FACTORY_CLASS,
    TEST_BUILD_TASK_DELAY_MS, TEST_FAIL_AFTER_DATA_WRITE, TEST_BUILD_BLOCKS_LAYOUT, TEST_SKIPPED_PATHS_MAX,
    TEST_CHECK_RUN_FILES, TEST_FAIL_INDEX_WRITE_ONCE)

  /**
   * Registers the entries with SQLConf (once per JVM: a Scala object is initialised once, and
   * SQLConf refuses a second registration of a key), so that `SET` validates them and
   * `SET -v` lists them from the first statement of a session on. A bad value in a session
   * builder's config fails the session's start (INVALID_CONF_VALUE, naming the key), as one of
   * Spark's own keys does.
   */
  def ensureRegistered(): Unit = all.foreach(e => require(SQLConf.containsConfigKey(e.key), e.key))
}
