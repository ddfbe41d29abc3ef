package bloomindex.catalog

import bloomindex.layout.ColumnData
import bloomindex.source.SourceResolver

import org.apache.hadoop.fs.{FileStatus, Path}

/**
 * The files a pruning decision skips, by normalized path ([[bloomindex.source.SourceResolver.normalize]]):
 * what the scan wrappers test each listed file against. Two forms, the same answers:
 *  - [[SkippedFiles.Paths]]: the paths themselves, for a decision that skips a few files;
 *  - [[SkippedFiles.Positions]]: for one that skips many (a point lookup over a million files
 *    skips nearly all of them), a bit per file of the index column that decided (its position
 *    there), and a path is found again through the column's path table. No string per file is
 *    built or held: a million skipped files cost 125 KB, not a set of a million paths.
 * Both skip only files of the decided listing the index found unable to match: a path the
 * decision did not skip (a file listed since, another file) is not in either.
 *
 * A scan tests a listed file by [[contains(f:org\.apache\.hadoop\.fs\.FileStatus)* its identity]]:
 * path, size and modification time as decided. A listing taken again after the decision (a
 * `REFRESH TABLE` between a plan's optimization and its run, a partitioned table's files listed
 * again at the scan) may list a skipped path rewritten since: that file is read.
 */
sealed trait SkippedFiles {
  /** Whether the decision skipped the file of this normalized path (whatever its size and time now). */
  def contains(path: String): Boolean
  /** [[contains]] of the path's normalized string. */
  def contains(path: Path): Boolean
  /** Whether the decision skipped this file as it is listed now: the same path, size and modification time. */
  def contains(f: FileStatus): Boolean
  def size: Int
  def isEmpty: Boolean = size == 0
  def nonEmpty: Boolean = !isEmpty
  /** The skipped paths (built on demand: for tests and small decisions). */
  def paths: Iterator[String]
  def exists(p: String => Boolean): Boolean = paths.exists(p)
}

object SkippedFiles {

  val empty: SkippedFiles = Paths(Map.empty)

  /**
   * Every file but those at `read` (normalized paths): a copy of a pruned scan that reads only
   * the skipped files a later run found changed, beside the scan as planned
   * ([[bloomindex.pruning.RoutedScanRDD]]). It has no list of its paths.
   */
  final case class AllBut(read: Set[String]) extends SkippedFiles {
    def contains(path: String): Boolean = !read.contains(path)
    def contains(path: Path): Boolean = !read.contains(SourceResolver.normalize(path))
    def contains(f: FileStatus): Boolean = contains(f.getPath)
    def size: Int = Int.MaxValue
    def paths: Iterator[String] =
      throw new UnsupportedOperationException("the files a scan of only some files skips are not listed")
  }

  /** Each skipped file's normalized path, with its size and modification time as decided. */
  final case class Paths(files: Map[String, (Long, Long)]) extends SkippedFiles {
    def contains(path: String): Boolean = files.contains(path)
    def contains(path: Path): Boolean = files.nonEmpty && files.contains(SourceResolver.normalize(path))
    def contains(f: FileStatus): Boolean =
      files.nonEmpty && files.get(SourceResolver.normalize(f.getPath)).contains((f.getLen, f.getModificationTime))
    def size: Int = files.size
    def paths: Iterator[String] = files.keysIterator
  }

  /**
   * The files at the set bits of `bits`, positions in `column` (the index column whose data the
   * decision read). `column` is immutable (one index version's data), so a position names one
   * path for the decision's life.
   */
  final class Positions(val column: ColumnData, val bits: java.util.BitSet) extends SkippedFiles {
    val size: Int = bits.cardinality()
    def contains(path: String): Boolean = {
      val i = column.indexOf(path)
      i >= 0 && bits.get(i)
    }
    def contains(path: Path): Boolean = {
      val i = column.indexOf(path)
      i >= 0 && bits.get(i)
    }
    // The decision skips only files the column holds as listed: its size and time are the decided ones.
    def contains(f: FileStatus): Boolean = {
      val i = column.indexOf(f.getPath, f.getLen, f.getModificationTime)
      i >= 0 && bits.get(i)
    }
    def paths: Iterator[String] = Iterator.iterate(bits.nextSetBit(0))(i => bits.nextSetBit(i + 1))
      .takeWhile(_ >= 0).map(column.path)

    override def equals(o: Any): Boolean = o match {
      case p: Positions => (p.column eq column) && p.bits == bits
      case _ => false
    }
    override def hashCode(): Int = System.identityHashCode(column) * 31 + bits.hashCode()
    override def toString: String = s"SkippedFiles.Positions($size of ${column.numFiles} in ${column.column})"
  }
}
