package bloomindex.catalog

import bloomindex.layout.ColumnData
import bloomindex.source.SourceResolver

import org.apache.hadoop.fs.Path

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
 */
sealed trait SkippedFiles {
  def contains(path: String): Boolean
  /** [[contains]] of the path's normalized string. */
  def contains(path: Path): Boolean
  def size: Int
  def isEmpty: Boolean = size == 0
  def nonEmpty: Boolean = !isEmpty
  /** The skipped paths (built on demand: for tests and small decisions). */
  def paths: Iterator[String]
  def exists(p: String => Boolean): Boolean = paths.exists(p)
}

object SkippedFiles {

  val empty: SkippedFiles = Paths(Set.empty)

  final case class Paths(set: Set[String]) extends SkippedFiles {
    def contains(path: String): Boolean = set.contains(path)
    def contains(path: Path): Boolean = set.nonEmpty && set.contains(SourceResolver.normalize(path))
    def size: Int = set.size
    def paths: Iterator[String] = set.iterator
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
