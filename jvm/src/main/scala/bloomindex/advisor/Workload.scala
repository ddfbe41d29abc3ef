package bloomindex.advisor

import java.util.Locale

import scala.util.Try

import bloomindex.history.ScanRecord
import bloomindex.source.{ScanSource, SourceIdentity, SourceProviders, SourceRef, SourceResolver}

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{And, Attribute, EqualNullSafe, EqualTo, Expression, In, InSet, Literal, Or}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan, Project}

/**
 * Who a scanned source is, as the advisor names it again: the provider (`files`, `delta`,
 * `iceberg`), the catalog table if any, the file format and the root folders. [[ref]] is how
 * [[bloomindex.source.SourceResolver]] finds it again (the table, else `format.`root``).
 */
final case class ScannedSource(provider: String, table: Option[String], format: String, roots: Seq[String]) {

  def display: String = table.getOrElse(s"$pathFormat.`${roots.mkString(",")}`")

  /** The path format its provider resolves `format.`path`` with. */
  def pathFormat: String = SourceProviders.all.find(_.name == provider).map { p =>
    if (p.pathFormats.contains(format.toLowerCase(Locale.ROOT))) format.toLowerCase(Locale.ROOT)
    else p.pathFormats.toSeq.sorted.headOption.getOrElse(format)
  }.getOrElse(format)

  def ref: Option[SourceRef] = table match {
    case Some(t) => Some(SourceRef(t.split('.').toSeq))
    case None if roots.size == 1 => Some(SourceRef(Seq(pathFormat, roots.head)))
    case None => None
  }

  /**
   * Who it is as indexes are matched to it: its roots' paths, and their stores where every root
   * names one (a record of an older bloomindex holds bare paths: compared by path, as then).
   */
  lazy val identity: SourceIdentity = SourceIdentity.of(provider, table, roots)

  /** Scans of one source share this: a table by name, else its roots (by store where named). */
  def key: (String, Option[String], Seq[String]) =
    (provider, table.map(_.toLowerCase(Locale.ROOT)), if (table.isDefined) Nil else identity.comparable.toSeq.sorted)
}

object ScannedSource {
  /** A recorded scan's source, an older record's bare roots on `defaultFs` ([[ScanRecord.rootsOn]]). */
  def of(r: ScanRecord, defaultFs: java.net.URI): ScannedSource = ScannedSource(r.provider, r.table, r.format, r.rootsOn(defaultFs))
  /** A scan's source, its roots as the scan names them (with their store). */
  def of(s: ScanSource): ScannedSource = ScannedSource(s.provider.name, s.table, s.format, s.roots.map(_.toString).sorted)
}

/**
 * A filter as far as a Bloom index answers it: `Lookup`s of a column (`=`, `IN`, `<=>`: the
 * values, when known; the number of values otherwise), under AND and OR; anything else is
 * `Opaque` (an index says "maybe" to it).
 */
sealed trait Cond {
  def lookups: Seq[Lookup] = this match {
    case l: Lookup => Seq(l)
    case AllOf(cs) => cs.flatMap(_.lookups)
    case AnyOf(cs) => cs.flatMap(_.lookups)
    case Opaque => Nil
  }
}
final case class Lookup(column: String, count: Int, values: Option[Seq[Literal]]) extends Cond
final case class AllOf(children: Seq[Cond]) extends Cond
final case class AnyOf(children: Seq[Cond]) extends Cond
case object Opaque extends Cond

/**
 * One scan of the workload: its source, its filter, how many times it ran (`weight`) and what
 * the history says it listed and read (None for a query given as text).
 */
final case class WorkloadScan(source: ScannedSource, cond: Cond, weight: Long,
    filesListed: Option[Long], filesRead: Option[Long], index: Option[String], listing: Option[Seq[String]] = None)

object Workload {

  /**
   * The history's scans. The history keeps the columns and value counts, not the filter's
   * shape: its lookups are taken as one AND (each column narrows the files), which is how
   * point lookups and IN lists on several columns are written.
   */
  def fromHistory(records: Seq[ScanRecord], defaultFs: java.net.URI): Seq[WorkloadScan] = records.map { r =>
    val looks = r.predicates.filter(p => p.op != "IS NULL" && p.values > 0).map(p => Lookup(p.column, p.values, None))
    WorkloadScan(ScannedSource.of(r, defaultFs), if (looks.isEmpty) Opaque else AllOf(looks), 1L, r.filesListed, r.filesRead, r.index)
  }

  /** The scans of `query`'s optimized plan that have a filter, with its literal values (a command is refused). */
  def fromQuery(spark: SparkSession, query: String, command: String): Seq[WorkloadScan] = {
    val plan = QueryText.dataFrame(spark, query, command).queryExecution.optimizedPlan
    scansOf(plan).map { case (scan, condition, cond) =>
      val listing = listed(scan, condition)
      WorkloadScan(ScannedSource.of(scan), cond, 1L, listing.map(_.size.toLong), None, None, listing)
    }
  }

  /**
   * The files the scan lists for `condition`: its file index asked with the partition filters
   * and the data filters (a table format's index skips by its statistics there); None when the
   * index cannot be asked so.
   */
  private def listed(scan: ScanSource, condition: Expression): Option[Seq[String]] = Try {
    val partitionColumns = scan.index.partitionSchema.fieldNames.map(_.toLowerCase(Locale.ROOT)).toSet
    val (partition, data) = splitConjuncts(condition).filter(_.deterministic)
      .partition(_.references.forall(a => partitionColumns.contains(a.name.toLowerCase(Locale.ROOT))))
    scan.index.listFiles(partition, data).flatMap(_.files).map(f => SourceResolver.normalize(f.getPath)).distinct
  }.toOption

  private def splitConjuncts(e: Expression): Seq[Expression] = e match {
    case And(l, r) => splitConjuncts(l) ++ splitConjuncts(r)
    case o => Seq(o)
  }

  /** Each (scan, filter) of `plan`: a Filter right over a scan leaf (through projections). */
  def scansOf(plan: LogicalPlan): Seq[(ScanSource, Expression, Cond)] = plan.collect {
    case Filter(condition, child) =>
      leafUnder(child).flatMap(leaf => Try(SourceProviders.describe(leaf)).toOption.flatten).map { scan =>
        (scan, condition, condOf(condition, name => column(scan, name)))
      }.toSeq
  }.flatten

  private def leafUnder(p: LogicalPlan): Option[LogicalPlan] = p match {
    case Project(_, c) => leafUnder(c)
    case l if l.children.isEmpty => Some(l)
    case _ => None
  }

  private def column(scan: ScanSource, name: String): String = {
    val fields = scan.dataSchema.fieldNames
    if (fields.contains(name)) name else fields.find(_.equalsIgnoreCase(name)).getOrElse(name)
  }

  /** `condition` as a [[Cond]]; a column compared as it is (no cast, no function) with literals. */
  def condOf(condition: Expression, column: String => String): Cond = {
    def lit(e: Expression): Option[Literal] = e match {
      case l: Literal if l.value != null => Some(l)
      case _ => None
    }
    def walk(e: Expression): Cond = e match {
      case And(l, r) => flat(AllOf(Seq(walk(l), walk(r))))
      case Or(l, r) => flat(AnyOf(Seq(walk(l), walk(r))))
      case EqualTo(a: Attribute, v) if lit(v).isDefined => Lookup(column(a.name), 1, Some(lit(v).toSeq))
      case EqualTo(v, a: Attribute) if lit(v).isDefined => Lookup(column(a.name), 1, Some(lit(v).toSeq))
      case EqualNullSafe(a: Attribute, v) if lit(v).isDefined => Lookup(column(a.name), 1, Some(lit(v).toSeq))
      case EqualNullSafe(v, a: Attribute) if lit(v).isDefined => Lookup(column(a.name), 1, Some(lit(v).toSeq))
      case In(a: Attribute, list) if list.nonEmpty && list.forall(lit(_).isDefined) =>
        Lookup(column(a.name), list.size, Some(list.flatMap(lit)))
      case InSet(a: Attribute, set) if set.nonEmpty && !set.contains(null) =>
        val vs = set.toSeq.map(v => Literal(v, a.dataType))
        Lookup(column(a.name), vs.size, Some(vs))
      case _ => Opaque
    }
    walk(condition)
  }

  private def flat(c: Cond): Cond = c match {
    case AllOf(cs) =>
      val kids = cs.flatMap { case AllOf(g) => g; case Opaque => Nil; case o => Seq(o) }
      if (kids.isEmpty) Opaque else if (kids.size == 1) kids.head else AllOf(kids)
    case AnyOf(cs) =>
      if (cs.contains(Opaque)) Opaque // one branch the index cannot answer: the OR keeps every file
      else AnyOf(cs.flatMap { case AnyOf(g) => g; case o => Seq(o) })
    case o => o
  }
}
