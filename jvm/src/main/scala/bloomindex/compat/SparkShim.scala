package bloomindex.compat

import org.apache.spark.sql.catalyst.expressions.{And, Expression}
import org.apache.spark.sql.catalyst.trees.TreeNode
import org.apache.spark.sql.connector.read.Scan
import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation, PartitioningAwareFileIndex}
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation

/**
 * Where Spark's internals differ between the supported versions (see [[SparkVersions]]), the
 * code goes through here.
 *
 * What differs is the shape of the case classes we rebuild: `DataSourceV2ScanRelation` has five
 * fields in Spark 4.1, six in 4.2 and seven in 4.3, `FileSourceScanExec` ten in 4.1 and 4.2 and
 * eleven in 4.3. A call to their `copy` compiled against one version is a `NoSuchMethodError` on
 * another. So a node is rebuilt with Spark's own `TreeNode.makeCopy`, which finds the
 * constructor at run time, from its constructor arguments with the one argument we change
 * replaced: the other arguments, whichever there are on this version, are carried unchanged.
 * And our rules do not mix in Spark's helper traits (`PredicateHelper` gained methods in 4.2,
 * whose forwarders would be compiled into our classes): [[conjuncts]] is ours.
 *
 * Case classes are matched with type patterns, never with their extractors, whose arity differs
 * too (a source-level difference: the extractor compiles against one version only).
 */
object SparkShim {

  /** `scan` with its `Scan` replaced (`copy(scan = ...)` on every version). */
  def withScan(scan: DataSourceV2ScanRelation, newScan: Scan): DataSourceV2ScanRelation =
    replaceArg(scan, scan.scan, newScan)

  /** `scan` reading `relation` (`copy(relation = ...)` on every version). */
  def withRelation(scan: FileSourceScanExec, relation: HadoopFsRelation): FileSourceScanExec =
    replaceArg(scan, scan.relation, relation)

  /** `l` over `relation` (`copy(relation = ...)` on every version). */
  def withRelation(l: LogicalRelation, relation: HadoopFsRelation): LogicalRelation =
    replaceArg(l, l.relation, relation)

  /**
   * The file index's member `name` (a Scala-protected one is public in the class file; a private
   * one, `declared`, made accessible), None where this Spark's class has none.
   */
  private def member(name: String, declared: Boolean = false): Option[java.lang.reflect.Method] =
    try {
      val c = classOf[PartitioningAwareFileIndex]
      val m = if (declared) c.getDeclaredMethod(name) else c.getMethod(name)
      if (declared) m.setAccessible(true)
      Some(m)
    } catch { case _: ReflectiveOperationException | _: RuntimeException => None }

  /** `m` called on `index`; None where there is no such member, it fails or answers null. */
  private def call(m: Option[java.lang.reflect.Method], index: PartitioningAwareFileIndex): Option[AnyRef] =
    m.flatMap { m =>
      try Option(m.invoke(index)) catch { case _: ReflectiveOperationException | _: RuntimeException => None }
    }

  private lazy val leafDirsMethod = member("leafDirToChildrenFiles")
  private lazy val pathFiltersMethod = member("pathFilters", declared = true)
  private lazy val recursiveMethod = member("recursiveFileLookup")

  /**
   * The object that is `index`'s listing: its `leafDirToChildrenFiles`, the map of folders to
   * their files it holds until `refresh` builds a new one (a method of every Spark version,
   * protected in Scala, public in the class file; found by reflection). The same object at two
   * moments means the same listing. None where there is no such method or it fails.
   */
  def listingOf(index: PartitioningAwareFileIndex): Option[AnyRef] = call(leafDirsMethod, index)

  /**
   * Whether `index`'s `allFiles` and `matchPathPattern` are Spark's own (a subclass that
   * overrides either answers otherwise than [[allFilesOf]] reads it).
   */
  private def sparksOwn(index: PartitioningAwareFileIndex): Boolean =
    try {
      index.getClass.getMethod("allFiles").getDeclaringClass == classOf[PartitioningAwareFileIndex] &&
        index.getClass.getMethod("matchPathPattern", classOf[org.apache.hadoop.fs.FileStatus]).getDeclaringClass ==
          classOf[PartitioningAwareFileIndex]
    } catch { case _: ReflectiveOperationException | _: RuntimeException => false }

  /**
   * What the unpartitioned `index.allFiles()` returns, taken from `listing` (its [[listingOf]]:
   * the map of folders to their files) without Spark's work per file: `allFiles` builds a list
   * of every root's files and filters it by the path filters (`pathGlobFilter`, `modifiedBefore`,
   * `modifiedAfter`), allocating per file even when there is none; at a million files about a
   * third of the planning thread's time in a warm planning (issue 26). Here the roots' arrays,
   * in the roots' order, as they are (one root: wrapped, not copied). Only where that is
   * exactly `allFiles`: no path filter, no recursive lookup, and every root qualified and
   * a folder of the listing (`allFiles` looks each up by its qualified path, which a root found
   * in the listing as it is already is), and `allFiles` and `matchPathPattern` not overridden.
   * None otherwise, or where this Spark's class is not the one read here (the caller calls
   * `allFiles`).
   */
  def allFilesOf(index: PartitioningAwareFileIndex, listing: AnyRef): Option[IndexedSeq[org.apache.hadoop.fs.FileStatus]] = {
    type Status = org.apache.hadoop.fs.FileStatus
    val dirs = listing match {
      case m: scala.collection.Map[_, _] => m.asInstanceOf[scala.collection.Map[org.apache.hadoop.fs.Path, Any]]
      case _ => return None
    }
    if (!index.partitionSchema.isEmpty || !sparksOwn(index)) return None
    val plain = call(pathFiltersMethod, index).exists { case s: scala.collection.Seq[_] => s.isEmpty; case _ => false } &&
      call(recursiveMethod, index).exists { case b: java.lang.Boolean => !b.booleanValue; case _ => false }
    if (!plain) return None
    val roots = index.rootPaths
    val arrays = new Array[Array[Status]](roots.size)
    var i = 0
    roots.foreach { root =>
      if (root.toUri.getScheme == null) return None
      dirs.get(root) match {
        case Some(a: Array[Status @unchecked]) => arrays(i) = a
        case _ => return None
      }
      i += 1
    }
    if (arrays.length == 1) return Some(scala.collection.immutable.ArraySeq.unsafeWrapArray(arrays(0)))
    val out = new Array[Status](arrays.map(_.length).sum)
    var k = 0
    arrays.foreach { a => System.arraycopy(a, 0, out, k, a.length); k += a.length }
    Some(scala.collection.immutable.ArraySeq.unsafeWrapArray(out))
  }

  /**
   * A listing ([[listingOf]]) held weakly, to tell later whether an index still holds it: the
   * index holds its current listing, so a listing let go is not the current one.
   */
  final class ListingMark(listing: AnyRef) {
    private val of = new java.lang.ref.WeakReference(listing)
    def current(index: PartitioningAwareFileIndex): Boolean = {
      val l = of.get
      l != null && listingOf(index).exists(_ eq l)
    }
  }

  /**
   * A copy of `node` with its constructor argument `old` (found by identity, exactly once)
   * replaced by `replacement`, built by Spark's `makeCopy` like any tree transformation.
   */
  def replaceArg[T <: TreeNode[_]](node: T, old: AnyRef, replacement: AnyRef): T = {
    val args = node.productIterator.map(_.asInstanceOf[AnyRef]).toArray
    val at = args.indices.filter(i => args(i) eq old)
    if (at.size != 1) {
      throw new IllegalStateException(
        s"${node.getClass.getName}: ${at.size} constructor arguments are the one to replace")
    }
    args(at.head) = replacement
    // makeCopy returns the node's own class (BaseType is a supertype of T only in the bound).
    node.makeCopy(args).asInstanceOf[T]
  }

  /**
   * `target.name()` where `target`'s class has that public method, else `absent`: for interface
   * methods a later Spark added with a default (a direct call compiled against 4.2 would be a
   * reference that Spark 4.1's jars cannot resolve). An exception of the method is rethrown.
   */
  def callIfPresent[T](target: AnyRef, name: String, absent: => T): T = {
    val method = try Some(target.getClass.getMethod(name)) catch { case _: NoSuchMethodException => None }
    method match {
      case Some(m) =>
        try m.invoke(target).asInstanceOf[T]
        catch { case e: java.lang.reflect.InvocationTargetException => throw e.getCause }
      case None => absent
    }
  }

  /** The conjuncts of a condition (`a AND b AND c` -> `a, b, c`), as Spark's PredicateHelper. */
  def conjuncts(condition: Expression): Seq[Expression] = condition match {
    case And(l, r) => conjuncts(l) ++ conjuncts(r)
    case other => Seq(other)
  }
}
