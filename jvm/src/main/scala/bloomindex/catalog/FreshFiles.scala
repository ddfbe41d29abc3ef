package bloomindex.catalog

import scala.util.control.NonFatal

import bloomindex.layout.IndexStore
import bloomindex.source.SourceResolver

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

/**
 * Whether files are still what a listing said they were. A scan of plain files reads the files
 * its file index listed, and a file index keeps its listing (a catalog table's for the whole
 * session, a DataFrame's for its life): a file rewritten in place since is read with its new
 * bytes, while the index's word on it is about the bytes it held when listed. So before a file
 * is skipped on an index's word, its status is taken again from storage.
 *
 * On S3 (S3A), the listing of the files' folders (or, for more than [[FolderLimit]] folders, of
 * their common folder) is cut into runs of 1,000 of the files, listed many at once
 * ([[S3Listing]]: 100,000 files in one folder are 100 requests in a few rounds, not 100 in a
 * row). Elsewhere one request per folder: the files of a folder are checked with one listing
 * of it (GCS lists 1,000 names a request), or one status each where only [[StatLimit]] or fewer
 * are asked about; folders in parallel; on an object store, files in many folders are checked
 * with one recursive (flat) listing of their common folder. On local disk, each file's size and
 * time are read from the OS directly. See docs/decisions.md ("A listing older than the file").
 */
object FreshFiles extends org.apache.spark.internal.Logging {

  /** At most this many files of one folder are checked one status each; more by a listing of the folder. */
  val StatLimit = 2

  /** Whether storage still holds what `listed` says: a file of its size and modification time (ms). */
  private def same(listed: FileStatus, isFile: Boolean, size: Long, modified: Long): Boolean =
    isFile && size == listed.getLen && modified == listed.getModificationTime

  private def same(listed: FileStatus, now: FileStatus): Boolean =
    same(listed, now.isFile, now.getLen, now.getModificationTime)

  /**
   * On an object store (any scheme but the file systems below), files in more than this many
   * folders are checked with one recursive listing of their common folder instead: a flat
   * listing there costs one request per 1,000 names, where a folder each costs one request each.
   */
  val FolderLimit = 16

  /** Local files checked per task (a multiple of 64: a task sets whole words of the result). */
  private val LocalBatch = 256

  /** File systems whose recursive listing walks folder by folder (and, locally, reads permissions). */
  private val HierarchicalSchemes = Set("file", "hdfs", "viewfs", "webhdfs", "swebhdfs")

  /**
   * Which of `files` (statuses from a listing) have on storage still the listed size and
   * modification time: the set bits are their positions in `files`. A file gone, changed, or
   * whose status cannot be read now is left out: it is not skipped. `threads` check local files,
   * `requests` list on S3 at once, `perRun` files a run of an S3 listing (tests set fewer),
   * `readPages`: an S3 listing's pages read by [[S3ListPage]] (false: by the SDK; benches compare).
   */
  def unchanged(conf: Configuration, files: IndexedSeq[FileStatus], threads: Int, requests: Int = 1,
      perRun: Int = S3Listing.PageKeys, readPages: Boolean = true): java.util.BitSet = {
    val out = new java.util.BitSet(files.size)
    if (files.isEmpty) return out
    // One file system a call: a scan over several (a local folder and an HDFS one) is checked
    // on each by its own route, never one's files by another's (a local file of the same path).
    // (The authorities as written: `getAuthority` decodes one afresh each call, 100,000 times here.)
    val first = files.head.getPath.toUri
    val (firstScheme, firstAuthority) = (first.getScheme, first.getRawAuthority)
    def onFirst(u: java.net.URI): Boolean =
      java.util.Objects.equals(u.getScheme, firstScheme) && java.util.Objects.equals(u.getRawAuthority, firstAuthority)
    // The files at `ks`, on file systems of their own, each checked by its own route into `out`.
    def byFileSystem(ks: IndexedSeq[Int]): Unit =
      ks.groupBy { k => val u = files(k).getPath.toUri; (u.getScheme, u.getRawAuthority) }.values.foreach { on =>
        val part = unchanged(conf, on.map(files), threads, requests, perRun, readPages)
        var j = part.nextSetBit(0)
        while (j >= 0) { out.set(on(j)); j = part.nextSetBit(j + 1) }
      }
    def keep(found: Int => Unit, k: Int, now: Option[FileStatus]): Unit =
      if (now.exists(same(files(k), _))) found(k)
    val fs = files.head.getPath.getFileSystem(conf)
    // The file system's own scheme from its URI (`getScheme` is not implemented by every one).
    val scheme = fs.getUri.getScheme
    val local = scheme == "file" && (firstScheme == null || firstScheme == "file")
    def allOnFirst: Boolean = {
      var k = 1
      while (k < files.size && onFirst(files(k).getPath.toUri)) k += 1
      k == files.size
    }
    if (local) {
      // Local disk: each file's size and time straight from the OS (the time in milliseconds, as
      // Hadoop's local file system reports it), without building a status, a qualified path or a
      // parent path each. A file of another file system (told in the same pass, not one of its
      // own over a million files first) is left to its own route after.
      // Bits set by many threads: each task sets the words of its own files (LocalBatch is a
      // multiple of 64), no set of a million bits per task.
      val words = new Array[Long]((files.size + 63) / 64)
      val elsewhere = new Array[Long](words.length)
      IndexStore.inParallel(threads, (0 until files.size by LocalBatch).map { from => () =>
        val folders = new LocalFolders()
        try {
          var k = from
          val until = math.min(files.size, from + LocalBatch)
          while (k < until) {
            val f = files(k)
            val u = f.getPath.toUri
            if (!onFirst(u)) elsewhere(k >>> 6) |= 1L << k
            else try {
              // One stat per file (java.io.File's length, lastModified and isFile are one each).
              val a = folders.attributes(u.getPath)
              if (same(f, a.isRegularFile, a.size, a.lastModifiedTime.toMillis)) {
                words(k >>> 6) |= 1L << k
              }
            } catch {
              case _: java.nio.file.NoSuchFileException => // gone: read, not skipped
              case NonFatal(e) => warn(f.getPath.getParent, e)
            }
            k += 1
          }
        } finally folders.close()
      })
      out.or(java.util.BitSet.valueOf(words))
      val others = java.util.BitSet.valueOf(elsewhere)
      if (!others.isEmpty) byFileSystem(others.stream.toArray.toIndexedSeq)
    } else if (!allOnFirst) {
      byFileSystem(files.indices)
    } else if (!s3(fs, files, requests, perRun, readPages, out)) {
      // Not S3 listed in parallel runs (S3Listing): a listing per folder, or a flat one of many.
      val byDir = files.indices.groupBy(k => files(k).getPath.getParent)
      val ancestor = commonFolder(byDir.keys.toSeq)
      if (byDir.size > FolderLimit && !HierarchicalSchemes.contains(scheme) && ancestor.isDefined) {
        guarded(ancestor.get) {
          val now = new java.util.HashMap[String, FileStatus]()
          val it = fs.listFiles(ancestor.get, true)
          while (it.hasNext) { val s = it.next(); now.put(SourceResolver.normalize(s.getPath), s) }
          files.indices.foreach(k => keep(out.set(_), k, Option(now.get(SourceResolver.normalize(files(k).getPath)))))
        }
      } else {
        IndexStore.inParallel(threads, byDir.toSeq.map { case (dir, listed) => () =>
          val found = scala.collection.mutable.ArrayBuffer[Int]() // the folder's unchanged files' positions
          guarded(dir) {
            val dfs = dir.getFileSystem(conf)
            if (listed.size <= StatLimit) listed.foreach { k =>
              keep(found += _, k, try Some(dfs.getFileStatus(files(k).getPath)) catch { case _: java.io.FileNotFoundException => None })
            } else {
              val now = try dfs.listStatus(dir).iterator.map(s => s.getPath.getName -> s).toMap
                catch { case _: java.io.FileNotFoundException => Map.empty[String, FileStatus] }
              listed.foreach(k => keep(found += _, k, now.get(files(k).getPath.getName)))
            }
          }
          out.synchronized(found.foreach(out.set(_)))
        })
      }
    }
    out
  }

  /**
   * `files` checked on S3 with listings in parallel runs of `perRun` keys, `requests` at once, by
   * folder for at most [[FolderLimit]] folders, else over their common folder
   * ([[S3Listing.runsFor]]): the position of each file whose object has the listed size and time
   * is set in `out`. False, and nothing set, where S3Listing does not list this file system or
   * its listing failed: the caller then lists as Hadoop does.
   */
  private def s3(fs: org.apache.hadoop.fs.FileSystem, files: IndexedSeq[FileStatus], requests: Int, perRun: Int,
      readPages: Boolean, out: java.util.BitSet): Boolean = S3Listing.lister(fs, readPages).exists { lister =>
    val authority = fs.getUri.getRawAuthority
    if (!files.forall(f => f.getPath.toUri.getRawAuthority == authority)) false
    else try {
      val start = System.nanoTime()
      val runs = byRuns(files, perRun, out)((wanted, runs) => lister.statuses(wanted, runs, requests))
      val (read, bySdk) = lister.pages
      logInfo(f"bloomindex: checked ${files.size} file(s) on S3 in $runs run(s): $read page(s) read, " +
        f"$bySdk by the SDK's reader, ${(System.nanoTime() - start) / 1e6}%.0f ms")
      true
    } catch {
      case NonFatal(e) =>
        IndexCatalog.warnOnce(s"bloomindex: listing ${files.size} file(s) on S3 in parallel runs failed (${e.getMessage}); " +
          "checking them with Hadoop's listing instead")
        false
    }
  }

  /**
   * `files` (of one bucket) checked by listings in runs of `perRun` of their keys: `statuses`
   * gives the current size and time of each wanted key (distinct, in [[S3Listing.KeyOrder]]) as
   * the runs list them ([[S3Listing.statuses]]), and the position of each file whose object has
   * the listed size and time is set in `out`. Returns the number of runs. The folders are told
   * from the keys' strings (no parent `Path` built per file), and each file is compared with its
   * object's size and time as listed (no `FileStatus` built per file; the listing's objects are
   * files). (The warm-up runs it over made-up pages.)
   */
  private[catalog] def byRuns(files: IndexedSeq[FileStatus], perRun: Int, out: java.util.BitSet)(
      statuses: (IndexedSeq[String], IndexedSeq[S3Listing.Run]) => (Array[Long], Array[Long])): Int = {
    val keys = files.map(f => S3Listing.key(f.getPath))
    // A listing's files usually come in key order: then each is its own position among the
    // keys listed, else a map of the sorted keys' positions tells it.
    var sorted = true
    var k = 1
    while (sorted && k < keys.size) { sorted = S3Listing.KeyOrder.compare(keys(k - 1), keys(k)) < 0; k += 1 }
    val wanted = if (sorted) keys else S3Listing.sortedDistinct(keys)
    val position: Int => Int = if (sorted) k => k else {
      val at = new java.util.HashMap[String, Integer](wanted.size * 4 / 3 + 1)
      wanted.indices.foreach(w => at.put(wanted(w), w))
      k => at.get(keys(k)).intValue
    }
    val runs = S3Listing.runsFor(wanted, FolderLimit, perRun)
    val (sizes, times) = statuses(wanted, runs)
    k = 0
    while (k < files.size) {
      val w = position(k)
      if (sizes(w) >= 0 && same(files(k), isFile = true, sizes(w), times(w))) out.set(k)
      k += 1
    }
    runs.size
  }

  /**
   * Local files' attributes (those `Files.readAttributes` gives, links followed), each read
   * relative to its folder, held open while consecutive files are in it (a listing's files come
   * folder by folder): the system looks up one name per file, not every folder of its path, and
   * no `Path` of the whole path is built. Where the platform has no such folder handle
   * ([[java.nio.file.SecureDirectoryStream]]), by the whole path. One per thread; `close` it.
   */
  private final class LocalFolders extends java.io.Closeable {
    import java.nio.file.{Files, Paths, SecureDirectoryStream}
    import java.nio.file.attribute.{BasicFileAttributeView, BasicFileAttributes}
    private var folder: String = null // the folder's path, up to and without its last '/'
    private var stream: SecureDirectoryStream[java.nio.file.Path] = null
    private var missing = false // the folder itself is gone: so are its files
    private val local = java.nio.file.FileSystems.getDefault

    def attributes(path: String): BasicFileAttributes = {
      val slash = path.lastIndexOf('/')
      if (slash <= 0) return Files.readAttributes(Paths.get(path), classOf[BasicFileAttributes])
      if (folder == null || folder.length != slash || !path.regionMatches(0, folder, 0, slash)) {
        close()
        folder = path.substring(0, slash)
        missing = false
        try Files.newDirectoryStream(Paths.get(folder)) match {
          case s: SecureDirectoryStream[java.nio.file.Path] @unchecked => stream = s
          case other => other.close()
        } catch {
          case _: java.nio.file.NoSuchFileException | _: java.nio.file.NotDirectoryException => missing = true
          case NonFatal(_) => // not listable (a folder one may only pass through): each file by its whole path
        }
      }
      if (missing) throw new java.nio.file.NoSuchFileException(path)
      if (stream == null) Files.readAttributes(Paths.get(path), classOf[BasicFileAttributes])
      else stream.getFileAttributeView(local.getPath(path.substring(slash + 1)), classOf[BasicFileAttributeView]).readAttributes()
    }

    def close(): Unit = {
      if (stream != null) try stream.close() catch { case NonFatal(_) => }
      stream = null
      folder = null
    }
  }

  /** Runs `body`; a failure leaves the files under `dir` unchecked (so read), with one warning. */
  private def guarded(dir: Path)(body: => Unit): Unit =
    try body catch { case NonFatal(e) => warn(dir, e) }

  private def warn(dir: Path, e: Throwable): Unit =
    IndexCatalog.warnOnce(s"bloomindex: could not check the files of $dir against storage (${e.getMessage}); " +
      "they are read, not skipped")

  /** The deepest folder holding all of `dirs` (same file system), if any. */
  private def commonFolder(dirs: Seq[Path]): Option[Path] = {
    def chain(p: Path): List[Path] = Iterator.iterate(p)(_.getParent).takeWhile(_ != null).toList.reverse
    dirs.map(chain).reduceOption { (a, b) => a.zip(b).takeWhile { case (x, y) => x == y }.map(_._1) }
      .flatMap(_.lastOption)
  }
}
