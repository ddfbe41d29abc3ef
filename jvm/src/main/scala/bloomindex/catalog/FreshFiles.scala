package bloomindex.catalog

import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import bloomindex.build.IndexStore
import bloomindex.source.SourceResolver

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.FileStatus

/**
 * Whether files are still what a listing said they were. A scan of plain files reads the files
 * its file index listed, and a file index keeps its listing (a catalog table's for the whole
 * session, a DataFrame's for its life): a file rewritten in place since is read with its new
 * bytes, while the index's word on it is about the bytes it held when listed. So before a file
 * is skipped on an index's word, its status is taken again from storage.
 *
 * One request per folder: the files of a folder are checked with one listing of it (S3 and GCS
 * list 1,000 names a request), or one status each where only [[StatLimit]] or fewer are asked
 * about; folders in parallel. See docs/decisions.md ("A listing older than the file").
 */
object FreshFiles {

  /** At most this many files of one folder are checked one status each; more by a listing of the folder. */
  val StatLimit = 2

  private def same(listed: FileStatus, now: FileStatus): Boolean =
    now.isFile && now.getLen == listed.getLen && now.getModificationTime == listed.getModificationTime

  /**
   * The normalized paths of `files` (statuses from a listing) whose size and modification time
   * on storage are still the listed ones. A file gone, changed, or whose status cannot be read
   * now is left out: it is not skipped.
   */
  def unchanged(conf: Configuration, files: Seq[FileStatus], threads: Int): Set[String] = {
    val out = ConcurrentHashMap.newKeySet[String]()
    val tasks = files.groupBy(_.getPath.getParent).toSeq.map { case (dir, listed) => () =>
      try {
        val fs = dir.getFileSystem(conf)
        if (listed.size <= StatLimit) listed.foreach { f =>
          val now = try Some(fs.getFileStatus(f.getPath)) catch { case _: java.io.FileNotFoundException => None }
          if (now.exists(same(f, _))) out.add(SourceResolver.normalize(f.getPath))
        } else {
          val now = try fs.listStatus(dir).iterator.map(s => s.getPath.getName -> s).toMap
            catch { case _: java.io.FileNotFoundException => Map.empty[String, FileStatus] }
          listed.foreach { f =>
            if (now.get(f.getPath.getName).exists(same(f, _))) out.add(SourceResolver.normalize(f.getPath))
          }
        }
      } catch {
        case NonFatal(e) =>
          IndexCatalog.warnOnce(s"bloomindex: could not check the files of $dir against storage (${e.getMessage}); " +
            "they are read, not skipped")
      }
      ()
    }
    IndexStore.inParallel(threads, tasks)
    out.asScala.toSet
  }
}
