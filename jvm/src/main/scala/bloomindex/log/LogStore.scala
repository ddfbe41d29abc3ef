package bloomindex.log

import java.io.IOException
import java.nio.charset.StandardCharsets.UTF_8
import java.util.{Locale, UUID}

import bloomindex.errors.BloomIndexErrors

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileAlreadyExistsException => HadoopFileAlreadyExists, CreateFlag, FileContext, FileStatus,
  FileSystem, FSDataInputStream, Options, Path}
import org.apache.hadoop.util.functional.FutureIO
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf

/**
 * Writes and reads the index log's files. Its guarantees, which the log relies on:
 *
 *  - Atomic visibility: a file is seen whole or not at all.
 *  - One creator per file: [[createIfAbsent]] fails with `java.nio.file.FileAlreadyExistsException`
 *    when the file exists, and of two concurrent writers of the same path exactly one succeeds.
 *  - Listing a folder after a create shows the file (local files, HDFS, ABFS, S3 since
 *    December 2020 and GCS are strongly consistent for list-after-write).
 *
 * One implementation per URI scheme, chosen by `spark.bloomindex.logStore.<scheme>.impl`
 * (`BloomIndexSQLConf.LOG_STORE_IMPL`, read from the Hadoop configuration: a class name; the
 * class has a constructor taking a Hadoop `Configuration`), else by [[LogStore.defaultFor]].
 * Each implementation says what its guarantee relies on.
 */
abstract class LogStore(val hadoopConf: Configuration) {

  /** Creates `path` holding `content`, or throws `FileAlreadyExistsException` if it exists. */
  def createIfAbsent(path: Path, content: String): Unit

  /** Reads a whole file, refusing one larger than `maxBytes` (log entries are small). */
  def read(path: Path, maxBytes: Int): String = read(path, maxBytes, None)

  /**
   * [[read]] of a file whose `status` a listing gave: opened with it, so an object store makes
   * one request (the GET) instead of three (S3A: a HEAD for the length, another in `open`, then
   * the GET).
   */
  def read(path: Path, maxBytes: Int, status: Option[FileStatus]): String = {
    val fs = path.getFileSystem(hadoopConf)
    val st = status.getOrElse(fs.getFileStatus(path))
    val len = st.getLen
    if (len > maxBytes) throw new LogStore.OversizedEntryException(s"$path: $len bytes, more than a log entry may hold ($maxBytes)")
    val in = LogStore.openWhole(fs, st)
    try new String(in.readNBytes(len.toInt), UTF_8) finally in.close()
  }

  /** Writes `content` to a new hidden file beside `path`, and returns it (renamed or linked next). */
  protected def writeAside(fc: FileContext, path: Path, content: String): Path = {
    val tmp = new Path(path.getParent, s".${path.getName}.${UUID.randomUUID()}.tmp")
    val out = fc.create(tmp, java.util.EnumSet.of(CreateFlag.CREATE), Options.CreateOpts.createParent())
    try out.write(content.getBytes(UTF_8)) finally out.close()
    tmp
  }

  protected def deleteQuietly(fc: FileContext, p: Path): Unit =
    try fc.delete(p, false) catch { case _: IOException => () }
}

object LogStore {

  /** A log entry's file larger than an entry may be: damage, as an entry that does not parse. */
  class OversizedEntryException(msg: String) extends IOException(msg)

  /**
   * Opens the file of `status` (from a listing or a `getFileStatus`) to be read whole, passing
   * the status on: an object store then sends no request for its length (S3A sends a HEAD
   * before the GET of a file opened by path alone). Hadoop's `openFile(...).withFileStatus`.
   */
  def openWhole(fs: FileSystem, status: FileStatus): FSDataInputStream =
    FutureIO.awaitFuture(fs.openFile(status.getPath).withFileStatus(status)
      .opt("fs.option.openfile.read.policy", "whole-file").build())

  /** Hadoop's create option for a put-if-absent (`Options.CreateFileOptionKeys`, Hadoop 3.4.2+). */
  val ConditionalOverwrite = "fs.option.create.conditional.overwrite"

  private[log] val ConflictRetries = 6

  /** The store of a scheme when no setting names one. */
  def defaultFor(scheme: String): Option[String] = scheme match {
    case null | "file" => Some(classOf[LocalLogStore].getName)
    case "hdfs" | "viewfs" | "abfs" | "abfss" => Some(classOf[RenameLogStore].getName)
    case "s3a" | "s3" => Some(classOf[S3ConditionalLogStore].getName)
    case "gs" => Some(classOf[GcsLogStore].getName)
    case _ => None
  }

  /**
   * The store for files under `dir`. A scheme with neither a setting nor a default gets the
   * rename store, safe for one writer at a time, and a warning (once per JVM and scheme)
   * naming the setting to change. A setting naming no store is `BLOOM_INDEX_INVALID_CONF`.
   */
  def forPath(dir: Path, hadoopConf: Configuration): LogStore = {
    val scheme = Option(dir.toUri.getScheme).map(_.toLowerCase(Locale.ROOT)).orNull
    val configured = Option(scheme).flatMap(s => Option(hadoopConf.get(BloomIndexSQLConf.logStoreImplKey(s)))).map(_.trim).filter(_.nonEmpty)
    val className = configured.orElse(defaultFor(scheme)).getOrElse {
      IndexLog.warnOnce(s"bloomindex: no log store is known to be safe for concurrent commands on $scheme:// " +
        s"(index logs there commit by rename, safe for one writer at a time); set ${BloomIndexSQLConf.logStoreImplKey(scheme)} to a " +
        s"store whose create is atomic on it (${classOf[RenameLogStore].getName} where rename is atomic)")
      classOf[RenameLogStore].getName
    }
    val cls = try Class.forName(className, true, Thread.currentThread().getContextClassLoader)
    catch {
      case _: ClassNotFoundException => throw BloomIndexErrors.invalidConf(BloomIndexSQLConf.logStoreImplKey(scheme), s"names class $className, which is not found")
    }
    if (!classOf[LogStore].isAssignableFrom(cls)) {
      throw BloomIndexErrors.invalidConf(BloomIndexSQLConf.logStoreImplKey(scheme), s"names $className, which is not a ${classOf[LogStore].getName}")
    }
    cls.getConstructor(classOf[Configuration]).newInstance(hadoopConf).asInstanceOf[LogStore]
  }

  private[log] def says(e: Throwable, words: String*): Boolean =
    Option(e.getMessage).exists(m => words.exists(m.contains))
}
