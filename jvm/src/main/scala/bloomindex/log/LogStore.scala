package bloomindex.log

import java.io.IOException
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{FileAlreadyExistsException, Files, Paths}
import java.util.{Locale, UUID}

import scala.annotation.tailrec

import bloomindex.errors.BloomIndexErrors

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileAlreadyExistsException => HadoopFileAlreadyExists, CreateFlag, FileContext, Options, Path}
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
  def read(path: Path, maxBytes: Int): String = {
    val fs = path.getFileSystem(hadoopConf)
    val len = fs.getFileStatus(path).getLen
    if (len > maxBytes) throw new IOException(s"$path: $len bytes, more than a log entry may hold ($maxBytes)")
    val in = fs.open(path)
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

/**
 * Local files: the entry is written to a hidden temporary file, then hard-linked to its name.
 * Relies on `link(2)`, which fails with EEXIST when the target exists, atomically, for every
 * process of the machine (and on NFS v3+ servers).
 */
class LocalLogStore(conf: Configuration) extends LogStore(conf) {
  override def createIfAbsent(path: Path, content: String): Unit = {
    val fc = FileContext.getFileContext(path.toUri, hadoopConf)
    val tmp = writeAside(fc, path, content)
    try {
      try Files.createLink(Paths.get(path.toUri.getPath), Paths.get(tmp.toUri.getPath))
      catch { case e: FileAlreadyExistsException => throw new FileAlreadyExistsException(e.getFile) }
    } finally deleteQuietly(fc, tmp)
  }
}

/**
 * HDFS, ABFS (hierarchical namespace) and other file systems with an atomic rename: the entry
 * is written to a hidden temporary file, then renamed without overwrite
 * (`FileContext.rename(..., Options.Rename.NONE)`). Relies on the name node (HDFS) or the
 * service (ABFS) checking the target and renaming in one step. NOT safe on S3 or GCS, where a
 * rename is a check, a copy and a delete: two writers can both pass the check.
 */
class RenameLogStore(conf: Configuration) extends LogStore(conf) {
  override def createIfAbsent(path: Path, content: String): Unit = {
    val fc = FileContext.getFileContext(path.toUri, hadoopConf)
    val tmp = writeAside(fc, path, content)
    try {
      try fc.rename(tmp, path, Options.Rename.NONE)
      catch { case e: HadoopFileAlreadyExists => throw new FileAlreadyExistsException(path.toString, null, e.getMessage) }
    } finally deleteQuietly(fc, tmp)
  }
}

/**
 * Stores whose create can carry a "must not exist" precondition checked by the service in the
 * same step as the write: the entry is written straight to its name, and the store refuses
 * the write when the name exists. A refused write is a lost race, unless the object there
 * holds exactly our bytes: then an earlier attempt of this same write (retried by the client
 * after a lost answer) succeeded.
 */
abstract class ConditionalCreateLogStore(conf: Configuration) extends LogStore(conf) {

  /** Writes `bytes` to `path` under the store's "must not exist" precondition. */
  protected def conditionalCreate(path: Path, bytes: Array[Byte]): Unit

  /** Whether `e` (or a cause) is the store's refusal of the precondition. */
  protected def preconditionFailed(e: Throwable): Boolean

  /** Whether `e` says another conditional write of the same name is in flight (retry). */
  protected def conflictInFlight(e: Throwable): Boolean = false

  override def createIfAbsent(path: Path, content: String): Unit = {
    val bytes = content.getBytes(UTF_8)
    @tailrec def attempt(n: Int): Unit = {
      val outcome = try { conditionalCreate(path, bytes); None } catch {
        case e: IOException if preconditionFailed(e) =>
          if (holds(path, bytes)) None
          else Some(new FileAlreadyExistsException(path.toString, null, s"exists (${e.getClass.getSimpleName})"))
        case e: IOException if conflictInFlight(e) && n < LogStore.ConflictRetries => Some(e)
      }
      outcome match {
        case None => ()
        case Some(lost: FileAlreadyExistsException) => throw lost
        case Some(_) =>
          Thread.sleep(50L << n)
          attempt(n + 1)
      }
    }
    attempt(0)
  }

  private def holds(path: Path, bytes: Array[Byte]): Boolean =
    try read(path, bytes.length + 1).getBytes(UTF_8).sameElements(bytes)
    catch { case _: IOException => false }
}

/**
 * S3 through Hadoop's S3A (`s3a://`, and `s3://` mapped to S3A): `PutObject` with
 * `If-None-Match: *`, which S3 has honoured since August 2024 (412 Precondition Failed when the
 * key exists; 409 ConditionalRequestConflict while another conditional write of the key is in
 * flight, retried here). Asked through the file system API of Hadoop 3.4.2 and later:
 * `createFile(path).must("fs.option.create.conditional.overwrite", true)` (HADOOP-19256; S3A
 * sends the header unless `fs.s3a.create.conditional.enabled=false`). S3A translates the 412
 * to `RemoteFileChangedException`. Relies on S3's strong read-after-write and list-after-write
 * consistency (since December 2020) for readers and for the listing of versions. An
 * S3-compatible store that ignores `If-None-Match` would not be safe (moto, which the tests
 * use, honours it).
 */
class S3ConditionalLogStore(conf: Configuration) extends ConditionalCreateLogStore(conf) {

  override protected def conditionalCreate(path: Path, bytes: Array[Byte]): Unit = {
    val fs = path.getFileSystem(hadoopConf)
    if (!fs.hasPathCapability(path, LogStore.ConditionalOverwrite)) {
      throw BloomIndexErrors.invalidConf(BloomIndexSQLConf.logStoreImplKey(path.toUri.getScheme),
        s"(store ${getClass.getName}) cannot commit safely under ${path.getParent}: ${fs.getClass.getName} offers " +
          s"no conditional create (${LogStore.ConditionalOverwrite}); it needs S3A of Hadoop 3.4.2 or later " +
          "(hadoop-aws of Spark's Hadoop version) with fs.s3a.create.conditional.enabled=true (the default), " +
          "or another store named by this key")
    }
    val out = fs.createFile(path).overwrite(false).must(LogStore.ConditionalOverwrite, true).build()
    // The PUT, with its precondition, happens in close().
    try out.write(bytes) finally out.close()
  }

  override protected def preconditionFailed(e: Throwable): Boolean =
    LogStore.causes(e).exists { c =>
      c.getClass.getSimpleName == "RemoteFileChangedException" || LogStore.says(c, "Status Code: 412", "PreconditionFailed", "Precondition Failed")
    }

  override protected def conflictInFlight(e: Throwable): Boolean =
    LogStore.causes(e).exists(c => LogStore.says(c, "ConditionalRequestConflict", "Status Code: 409"))
}

/**
 * Google Cloud Storage through the GCS connector (`gs://`): the connector writes an object
 * created without overwrite under the precondition `ifGenerationMatch=0` ("no live
 * generation"), checked by GCS when the upload is finalized; a refusal is HTTP 412. Relies on
 * GCS's strong consistency for reads and listings. Tested against fake-gcs-server with the
 * connector's multipart uploads (`make test-gcs`; docs/decisions.md says what it models).
 */
class GcsLogStore(conf: Configuration) extends ConditionalCreateLogStore(conf) {

  override protected def conditionalCreate(path: Path, bytes: Array[Byte]): Unit = {
    val fs = path.getFileSystem(hadoopConf)
    val out = fs.create(path, false)
    try out.write(bytes) finally out.close()
  }

  override protected def preconditionFailed(e: Throwable): Boolean =
    e.isInstanceOf[HadoopFileAlreadyExists] ||
      LogStore.causes(e).exists(c => LogStore.says(c, "412 Precondition Failed", "conditionNotMet"))
}

object LogStore {

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

  private[log] def causes(e: Throwable): Iterator[Throwable] =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(16)

  private[log] def says(e: Throwable, words: String*): Boolean =
    Option(e.getMessage).exists(m => words.exists(m.contains))
}
