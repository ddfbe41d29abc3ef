package bloomindex.indexing

import scala.collection.mutable

import bloomindex.hash.FieldHasher
import bloomindex.log.ColumnSpec

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.{WriteJobStatsTracker, WriteTaskStats, WriteTaskStatsTracker}
import org.apache.spark.util.CollectionAccumulator

/**
 * A file's filter built by the write that wrote it: `key` names the file as the write's tasks saw
 * it ([[WriteTaskFilters.keyOf]]), `column` indexes the job's [[WriteTaskFilters.Job.columns]];
 * the rest is [[FileFilter]]'s (its `path` is the key until the refresh finds the final path).
 */
final case class WrittenFilter(key: String, column: Int, rows: Long, nulls: Long, ndv: Long, filter: Array[Byte])

/**
 * The filters of the files a Spark write is writing, built inside its tasks as the rows go out,
 * so that the on-write refresh after it reads no data (issue 29, docs/freshness.md).
 *
 * Spark's file writers tell each of a job's [[WriteTaskStatsTracker]]s of every file they open
 * (`newFile`), every row they write to it (`newRow`, the row of the data columns as written) and
 * every file they close (`closeFile`). [[Job]] wraps the write's own first tracker (Spark counts
 * the trackers a task returns stats for against the driver's list, so ours adds none): its task
 * instances delegate every call and also hash each row's indexed columns, one
 * [[DistinctHashes]] per open file and column; when a file closes, its filter is sized and
 * filled exactly as the build's data pass does it ([[DistinctPass.fileFilter]]) and sent to the
 * driver in an accumulator. Spark merges a result stage's accumulator updates once per
 * partition, from the attempt that succeeded (the one whose files were committed); the updates
 * of failed or denied attempts are dropped.
 *
 * Only what a read decodes as it was written is hashed here: the caller picks the columns
 * ([[WriteTaskFilters.writtenAsRead]]); a file with more than `maxDistinct` distinct values in a
 * column, whose build sizes its filter from an estimate, is left out (its refresh reads it).
 */
object WriteTaskFilters {

  /**
   * The key a written file is matched by: its name and its `depth` parent folders (the
   * partition folders, `k=1/`): the tasks see the file at a temporary path the committer moves
   * into place keeping those. Within one write job the key is unique (names carry the job's id,
   * the task's partition and a per-folder counter). Empty for a path with fewer folders.
   */
  def keyOf(path: String, depth: Int): String = split(path, depth).map(_._2).getOrElse("")

  /** `path` as (the folder above its key ([[folderKey]]); its key). */
  def split(path: String, depth: Int): Option[(String, String)] = {
    var p = new Path(path)
    val parts = mutable.ListBuffer[String]()
    var i = 0
    while (i <= depth && p != null && p.getName.nonEmpty) {
      parts.prepend(p.getName)
      p = p.getParent
      i += 1
    }
    if (i <= depth || p == null) None else Some((folderKey(p), parts.mkString("/")))
  }

  /** A folder as [[split]] and [[Job.output]] compare them: its authority (bucket, host) and path, without the scheme. */
  def folderKey(folder: Path): String = {
    val u = folder.toUri
    Option(u.getAuthority).filter(_.nonEmpty).map("//" + _).getOrElse("") + u.getPath.stripSuffix("/")
  }

  /**
   * One job's settings: the columns hashed and their ordinals among the written data columns,
   * the partition depth, the output folder ([[folderKey]]; files written elsewhere, such as a
   * partition's own location, are not matched) and the distinct count past which a file is left out.
   */
  final case class Job(columns: Array[ColumnSpec], ordinals: Array[Int], depth: Int, output: String, maxDistinct: Int)

  /** The write's tracker `delegate`, also building `job`'s filters into `out`. */
  final class Tracker(val delegate: WriteJobStatsTracker, job: Job, out: CollectionAccumulator[WrittenFilter])
    extends WriteJobStatsTracker {

    override def newTaskInstance(): WriteTaskStatsTracker = new TaskTracker(delegate.newTaskInstance(), job, out)

    override def processStats(stats: Seq[WriteTaskStats], jobCommitTime: Long): Unit =
      delegate.processStats(stats, jobCommitTime)
  }

  /** One open file's state: rows, per column the non-null count, a batch buffer and the distinct hashes. */
  private final class OpenFile(n: Int, scratch: DistinctHashes.Scratch) {
    var rows = 0L
    val nonNull = new Array[Long](n)
    val batch = new HashedBatch(n)
    val sets: Array[DistinctHashes] = Array.fill(n)(new DistinctHashes(scratch))
    /** Over `maxDistinct` in some column: no filter from this write. */
    var overflowed = false
  }

  private val Flush = 4096

  private final class TaskTracker(delegate: WriteTaskStatsTracker, job: Job, out: CollectionAccumulator[WrittenFilter])
    extends WriteTaskStatsTracker {

    private val n = job.columns.length
    private val hashers: Array[FieldHasher] = job.columns.map(c =>
      c.algorithm.hasher(org.apache.spark.sql.types.DataType.fromDDL(c.dataType)))
    private val textHashers: Array[TextHasher] = job.columns.map(c =>
      c.text.map(t => new TextHasher(t.spec, c.algorithm.hash)).orNull)
    private val scratch = new DistinctHashes.Scratch
    private val open = mutable.HashMap[String, OpenFile]()
    // The file of the last row: writers write a file's rows in a run.
    private var lastPath: String = _
    private var last: OpenFile = _

    override def newPartition(partitionValues: InternalRow): Unit = delegate.newPartition(partitionValues)

    override def newFile(filePath: String): Unit = {
      delegate.newFile(filePath)
      open(filePath) = new OpenFile(n, scratch)
    }

    override def newRow(filePath: String, row: InternalRow): Unit = {
      delegate.newRow(filePath, row)
      val f = if (filePath eq lastPath) last else {
        lastPath = filePath
        last = open.getOrElse(filePath, null)
        last
      }
      if (f == null || f.overflowed) return
      f.rows += 1
      var i = 0
      while (i < n) {
        val o = job.ordinals(i)
        if (!row.isNullAt(o)) {
          f.nonNull(i) += 1
          if (textHashers(i) != null) textHashers(i).hash(row.getUTF8String(o), f.batch, i)
          else f.batch.append(i, hashers(i).hashRow(row, o))
          if (f.batch.counts(i) >= Flush) flush(f, i)
        }
        i += 1
      }
    }

    private def flush(f: OpenFile, i: Int): Unit = {
      val s = f.sets(i)
      s.add(f.batch.hashes(i), 0, f.batch.counts(i))
      f.batch.counts(i) = 0
      if (s.size > job.maxDistinct && s.distinct() > job.maxDistinct) {
        f.overflowed = true
        f.sets.foreach(_.clear())
      }
    }

    override def closeFile(filePath: String): Unit = {
      delegate.closeFile(filePath)
      open.remove(filePath).foreach { f =>
        if (filePath eq lastPath) { lastPath = null; last = null }
        var i = 0
        while (i < n && !f.overflowed) { flush(f, i); i += 1 }
        if (!f.overflowed) {
          val key = keyOf(filePath, job.depth)
          if (key.nonEmpty) {
            i = 0
            while (i < n) {
              val ff = DistinctPass.fileFilter(key, i, f.rows, f.rows - f.nonNull(i), f.sets(i), job.columns(i))
              out.add(WrittenFilter(key, i, ff.rows, ff.nulls, ff.ndv, ff.filter))
              i += 1
            }
          }
        }
      }
    }

    override def getFinalStats(taskCommitTime: Long): WriteTaskStats = {
      // A file the writer did not close (an aborted task never gets here) sends nothing.
      open.clear()
      delegate.getFinalStats(taskCommitTime)
    }
  }
}

/**
 * What one write's tasks built ([[WriteTaskFilters]]), on the driver after the write committed:
 * the filters of the files it wrote, by key. A key two files of the job share (it should not
 * happen) is dropped: those files are read. `schema`: the columns the write wrote (its data
 * columns, then its partition columns), names and types as written, which the refresh may list
 * the source with instead of inferring its schema ([[bloomindex.source.SourceProvider.writtenFrame]]).
 */
final class WrittenFilters(job: WriteTaskFilters.Job, filters: Seq[WrittenFilter],
    val schema: Option[org.apache.spark.sql.types.StructType] = None) {

  private val byKey: Map[String, Map[Int, WrittenFilter]] =
    filters.groupBy(_.key).flatMap { case (k, fs) =>
      if (fs.map(_.column).distinct.size != fs.size) None else Some(k -> fs.map(f => f.column -> f).toMap)
    }

  /** Files with filters. */
  def size: Int = byKey.size

  /**
   * The filters of those of `files` (paths as the source lists them now) this write built, for
   * every column of `cols` (an index's columns, matched by their whole spec), as the build's
   * rows of the files (`column` indexes `cols`). A file without all of them is not in the result.
   */
  def forFiles(files: Seq[bloomindex.source.SourceFile], cols: Seq[ColumnSpec]): Seq[FileFilter] = {
    val at = cols.map(c => job.columns.indexWhere(_ == c))
    if (at.exists(_ < 0) || byKey.isEmpty) return Nil
    files.flatMap { f =>
      WriteTaskFilters.split(f.path, job.depth).filter(_._1 == job.output).flatMap(k => byKey.get(k._2)) match {
        case Some(m) if at.forall(m.contains) =>
          cols.indices.map { i =>
            val w = m(at(i))
            FileFilter(f.path, i, w.rows, w.nulls, w.ndv, w.filter, fromFooter = false)
          }
        case _ => Nil
      }
    }
  }
}
