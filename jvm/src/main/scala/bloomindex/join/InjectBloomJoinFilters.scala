package bloomindex.join

import bloomindex.catalog.{Coverage, GlobalFilter, IndexCatalog}
import bloomindex.compat.SparkShim
import bloomindex.source.{ScanSource, SourceProviders}

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.catalyst.catalog.HiveTableRelation
import org.apache.spark.sql.catalyst.expressions.{Alias, And, Attribute, AttributeSet, Cast, EqualTo, Exists, Expression, ExprId, InSubquery, KnownFloatingPointNormalized, ListQuery, SubqueryExpression}
import org.apache.spark.sql.catalyst.optimizer.PushDownPredicates
import org.apache.spark.sql.catalyst.plans.{Inner, JoinType, LeftOuter, LeftSemi, RightOuter}
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreeNodeTag
import org.apache.spark.sql.catalyst.trees.TreePattern.{EXISTS_SUBQUERY, IN_SUBQUERY, JOIN}
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2Relation, FileTable}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType

/**
 * Join pre-filtering: for an equi-join where one side's key is a column with a global filter
 * in an ACTIVE Bloom index covering every current file of that side's table, adds
 * `bloom_might_contain(filter, key)` on the other side and pushes it down as far as Spark's
 * predicate push-down takes it (to the scan, below any exchange). Rows whose key is
 * certainly absent from the indexed side never reach the join.
 *
 * Which side may be filtered: both sides of an inner join and of a left semi join; only the
 * null-supplying side of a left or right outer join; nothing of full outer, anti and
 * existence joins (the preserved side keeps its rows whether they match or not). The indexed
 * side's key must be the indexed column itself (through projections, filters, joins and
 * aggregations that pass it unchanged) or an integral widening of it; the other key is then
 * hashed as the indexed type, exactly or not at all.
 *
 * A pre-CBO rule: it runs once, after Spark's own push-down, and before statistics.
 */
class InjectBloomJoinFilters(spark: SparkSession) extends Rule[LogicalPlan] {

  import InjectBloomJoinFilters._

  // A streaming query's plan (a micro-batch's) gets no check: a stream-stream join keeps each
  // side's rows as state and matches them with the other side's rows of later batches, which
  // a global filter of the files there now cannot speak for (a row dropped in batch 0 misses its
  // match arriving in batch 1).
  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!spark.sessionState.conf.getConf(BloomIndexSQLConf.JOIN_FILTER_ENABLED) || plan.isStreaming) plan
    else plan.transformUpWithPruning(_.containsAnyPattern(JOIN, IN_SUBQUERY, EXISTS_SUBQUERY)) {
      case j @ Join(left, right, joinType, Some(condition), _) if filterable(joinType) != ((false, false)) =>
        val pairs = SparkShim.conjuncts(condition).flatMap {
          case EqualTo(a, b) if a.deterministic && b.deterministic && evaluates(a, left) && evaluates(b, right) => Some((a, b))
          case EqualTo(a, b) if a.deterministic && b.deterministic && evaluates(a, right) && evaluates(b, left) => Some((b, a))
          case _ => None
        }
        if (pairs.isEmpty) j
        else {
          val (leftOk, rightOk) = filterable(joinType)
          val notes = Seq.newBuilder[String]
          val newLeft = if (leftOk) withChecks(left, pairs, right, notes) else left
          val newRight = if (rightOk) withChecks(right, pairs.map(_.swap), left, notes) else right
          // A side that got no check is kept as it was (pushing a check down and taking it out
          // again, for a key on partition columns, makes an equal copy).
          val out = if ((newLeft fastEquals left) && (newRight fastEquals right)) j else j.copy(left = newLeft, right = newRight)
          val n = notes.result()
          if (n.nonEmpty) out.setTagValue(NotAppliedTag, n)
          out
        }

      // `k IN (subquery)` and `EXISTS (... WHERE inner.k = outer.k)` become left semi joins only
      // after this rule: their keys filter the outer rows the same way, now.
      case f @ Filter(condition, child) if SubqueryExpression.hasSubquery(condition) =>
        val pairs = SparkShim.conjuncts(condition).flatMap {
          case InSubquery(values, l: ListQuery) if values.size == l.plan.output.size =>
            // A value that reads no column (`5 IN (SELECT ...)`) is a filter a scan would take as
            // a partition filter, outside the check's test of the indexed side when the plan runs.
            values.zip(l.plan.output).filter(v => v._1.deterministic && evaluates(v._1, child)).map(p => (p._1, p._2, l.plan)) ++
              subqueryPairs(l.joinCond, child, l.plan)
          case e: Exists => subqueryPairs(e.joinCond, child, e.plan)
          case _ => Nil
        }
        if (pairs.isEmpty) f
        else {
          val notes = Seq.newBuilder[String]
          val filtered = pairs.groupBy(_._3).foldLeft(child) { case (c, (sub, ps)) =>
            withChecks(c, ps.map(p => (p._1, p._2)), sub, notes)
          }
          if (filtered eq child) f else f.copy(child = filtered)
        }
    }

  /** (outer key, subquery key, subquery plan) of the equalities of a correlated subquery. */
  private def subqueryPairs(conditions: Seq[Expression], outer: LogicalPlan, sub: LogicalPlan) =
    conditions.flatMap(SparkShim.conjuncts).flatMap {
      case EqualTo(a, b) if a.deterministic && b.deterministic && evaluates(a, outer) && evaluates(b, sub) => Some((a, b, sub))
      case EqualTo(a, b) if a.deterministic && b.deterministic && evaluates(a, sub) && evaluates(b, outer) => Some((b, a, sub))
      case _ => None
    }

  private def evaluates(e: Expression, side: LogicalPlan): Boolean =
    e.references.nonEmpty && e.references.subsetOf(side.outputSet)

  /** `app` with a check of each key against the global filter of its counterpart in `source`. */
  private def withChecks(
      app: LogicalPlan,
      pairs: Seq[(Expression, Expression)],
      source: LogicalPlan,
      notes: scala.collection.mutable.Builder[String, Seq[String]]): LogicalPlan = {
    val existing = app.flatMap(_.expressions.flatMap(_.collect { case b: BloomMightContain => b }))
    val checks = pairs.flatMap { case (appKey, sourceKey) =>
      globalFilterOf(sourceKey, source).flatMap { case (global, coverage) =>
        KeyHash.forTypes(appKey.dataType, global.ref.dataType, global.algorithm.hash)
          .map(kh => BloomMightContain(appKey, global, kh, Some(coverage)))
      } match {
        case Right(check) => Some(check)
        case Left(why) =>
          notes += s"${rowsOf(appKey, app)} not checked against ${keyOf(sourceKey, source)}: $why"
          None
      }
    }.filterNot(c => existing.exists(e => e.global == c.global && e.child.semanticEquals(c.child)))
    if (checks.isEmpty) app else withoutPlannedChecks(pushDown(Filter(checks.reduce[Expression](And), app)), app, notes)
  }

  /**
   * `plan` without the checks pushed down to where they would be evaluated before the plan
   * runs ([[InjectBloomJoinFilters.plannedAttributes]]): a check whose key reads only a file
   * source's partition columns (or its file metadata) right above its scan, which the scan
   * takes as a partition filter when it lists its files, or only a local relation's columns,
   * which Spark filters while it optimizes. Either runs outside
   * [[bloomindex.execution.BloomFilterExec]]: without its test, when the plan runs, that the
   * indexed side still lists the files the filter holds, and without its tolerance of a key
   * that fails on a value the query's other filters drop. A partitioned side is left to
   * Spark's dynamic partition pruning, which filters its partitions by the other side's keys.
   */
  private def withoutPlannedChecks(plan: LogicalPlan, app: LogicalPlan,
      notes: scala.collection.mutable.Builder[String, Seq[String]]): LogicalPlan = plan.transformUp {
    case f @ Filter(condition, child) if condition.exists(isJoinCheck) =>
      val planned = plannedAttributes(child)
      val (dropped, kept) = SparkShim.conjuncts(condition).partition(c =>
        isJoinCheck(c) && c.references.nonEmpty && c.references.subsetOf(planned))
      dropped.collect { case c: BloomMightContain =>
        notes += s"${rowsOf(c.child, app)} not checked against ${c.global.ref}: the key reads only partition " +
          "columns or local rows, which are filtered when the query is planned or lists its files, outside the " +
          "check's test of the indexed side when the plan runs (a partitioned side is left to Spark's dynamic " +
          "partition pruning)"
      }
      if (dropped.isEmpty) f else if (kept.isEmpty) child else Filter(kept.reduce[Expression](And), child)
  }

  private def isJoinCheck(e: Expression): Boolean = e match {
    case b: BloomMightContain => b.coverage.isDefined
    case _ => false
  }

  /**
   * "the rows of <source>" for a key whose values come from a file source, else of the key: a
   * note says which side's rows would have been checked, since a join has a note per direction
   * and the other direction may well be filtered.
   */
  private def rowsOf(key: Expression, side: LogicalPlan): String =
    key.references.headOption.flatMap(a => origin(side, a.exprId))
      .map { case (leaf, _) => s"the rows of ${leaf.display} (key ${key.sql})" }.getOrElse(s"the rows with key ${key.sql}")

  private def keyOf(key: Expression, side: LogicalPlan): String = key match {
    case a: Attribute => origin(side, a.exprId).map { case (leaf, name) => s"${leaf.display}.$name" }.getOrElse(a.sql)
    case other => other.sql
  }

  private def pushDown(plan: LogicalPlan): LogicalPlan = {
    var current = plan
    var i = 0
    var done = false
    while (!done && i < 16) {
      val next = PushDownPredicates(current)
      done = next.fastEquals(current)
      current = next
      i += 1
    }
    current
  }

  /** The global filter that holds every value `key` can take on `side`, or why there is none. */
  private def globalFilterOf(key: Expression, side: LogicalPlan): Either[String, (GlobalFilter, Coverage)] = {
    val column = key match {
      case a: Attribute => Right(a)
      case _: KnownFloatingPointNormalized =>
        Left("floating point key: the join equates NaNs and signed zeros whatever their bits")
      case Cast(a: Attribute, to, _, _)
          if KeyHash.integralWidth(a.dataType) > 0 && KeyHash.integralWidth(a.dataType) <= KeyHash.integralWidth(to) =>
        Right(a)
      case other => Left("not a column of a file source (or an integral widening of one)")
    }
    column.flatMap { a =>
      originLeaf(side, a.exprId).flatMap { case (node, name) =>
        SourceProviders.describe(node).map(leaf => (leaf, name, InjectBloomJoinFilters.readerConf(node)))
      }.toRight("its values do not come unchanged from a file source").flatMap {
        case (leaf, name, readerConf) => indexed(leaf, name, readerConf).filterOrElse(
          { case (g, _) => g.ref.dataType == a.dataType || KeyHash.integralWidth(a.dataType) > 0 && KeyHash.integralWidth(g.ref.dataType) > 0 },
          s"type mismatch: ${a.name} is ${a.dataType.sql}, the index holds ${name} as another type")
      }
    }
  }

  private def indexed(leaf: ScanSource, column: String, readerConf: Option[SQLConf]): Either[String, (GlobalFilter, Coverage)] =
    new IndexCatalog(spark).globalFilterFor(leaf, column, readerConf)
}

object InjectBloomJoinFilters {

  /** Why a join got no filter on a side that could have had one, for `BloomIndex.explain`. */
  val NotAppliedTag: TreeNodeTag[Seq[String]] = TreeNodeTag[Seq[String]]("bloomindex.joinFilter.notApplied")

  /**
   * The attributes of `plan`'s output that a filter right above it is evaluated on before the
   * plan runs: a file scan's partition columns and file metadata (Spark's file scans split off
   * the filters that read only those and apply them as they list files; a Hive table's scan,
   * its partition columns), and every column of a local relation (Spark evaluates a filter
   * over one while it optimizes); through projections and filters, as Spark collapses those.
   */
  private[join] def plannedAttributes(plan: LogicalPlan): AttributeSet = plan match {
    case p: Project =>
      val below = plannedAttributes(p.child)
      AttributeSet(p.projectList.collect {
        case a: Attribute if below.contains(a) => a
        case al @ Alias(a: Attribute, _) if below.contains(a) => al.toAttribute
      })
    case f: Filter => plannedAttributes(f.child)
    case l: LogicalRelation => l.relation match {
      case fs: HadoopFsRelation => beyondData(l.output, fs.dataSchema, fs.partitionSchema)
      case _ => AttributeSet.empty
    }
    case r: DataSourceV2Relation => r.table match {
      case t: FileTable => beyondData(r.output, t.dataSchema, t.fileIndex.partitionSchema)
      case _ => AttributeSet.empty
    }
    case h: HiveTableRelation => AttributeSet(h.partitionCols)
    case l: LocalRelation => l.outputSet
    case _ => AttributeSet.empty
  }

  /**
   * Attributes of `output` that are partition columns (also where the files hold a column of the
   * same name) or no data column (file metadata), by the session's resolver.
   */
  private def beyondData(output: Seq[Attribute], data: StructType, partitions: StructType): AttributeSet = {
    val resolver = SQLConf.get.resolver
    AttributeSet(output.filter(a => partitions.fieldNames.exists(resolver(_, a.name)) || !data.fieldNames.exists(resolver(_, a.name))))
  }

  /** (left may be filtered, right may be filtered). */
  def filterable(joinType: JoinType): (Boolean, Boolean) = joinType match {
    case Inner | LeftSemi => (true, true)
    case LeftOuter => (false, true)
    case RightOuter => (true, false)
    case _ => (false, false)
  }

  /**
   * The file source whose column `id` (by name) is, if the attribute's values on `plan` are a
   * subset of that column's: followed through the operators that pass an attribute on
   * unchanged (or drop rows, or null it), stopping at anything else (a union mixes sources).
   */
  private[join] def origin(plan: LogicalPlan, id: ExprId): Option[(ScanSource, String)] =
    originLeaf(plan, id).flatMap { case (leaf, name) => SourceProviders.describe(leaf).map(_ -> name) }

  /**
   * The settings the scan of `leaf` builds its reader with: a V1 file relation's session's, as
   * they are when it first runs (None: the running session's).
   */
  private[join] def readerConf(leaf: LeafNode): Option[SQLConf] = leaf match {
    case l: LogicalRelation => l.relation match {
      case fs: HadoopFsRelation => Some(fs.sparkSession.sessionState.conf)
      case _ => None
    }
    case _ => None
  }

  /** [[origin]]'s leaf node, and the column's name there. */
  private[join] def originLeaf(plan: LogicalPlan, id: ExprId): Option[(LeafNode, String)] = plan match {
    case leaf: LeafNode =>
      leaf.output.find(_.exprId == id).map(a => leaf -> a.name)
    case p: Project =>
      p.projectList.find(_.exprId == id).flatMap {
        case a: Attribute => originLeaf(p.child, a.exprId)
        case Alias(a: Attribute, _) => originLeaf(p.child, a.exprId)
        case _ => None
      }
    case a: Aggregate =>
      a.aggregateExpressions.find(_.exprId == id).flatMap {
        case attr: Attribute if a.groupingExpressions.exists(_.semanticEquals(attr)) => originLeaf(a.child, attr.exprId)
        case Alias(attr: Attribute, _) if a.groupingExpressions.exists(_.semanticEquals(attr)) => originLeaf(a.child, attr.exprId)
        case _ => None
      }
    case j: Join =>
      Seq(j.left, j.right).find(_.outputSet.exists(_.exprId == id)).flatMap(originLeaf(_, id))
    case u @ (_: Filter | _: Sort | _: LocalLimit | _: GlobalLimit | _: Distinct | _: Deduplicate |
        _: SubqueryAlias | _: Repartition | _: RepartitionByExpression | _: Sample | _: ResolvedHint |
        _: Window | _: Generate) =>
      val child = u.children.head
      if (child.outputSet.exists(_.exprId == id)) originLeaf(child, id) else None
    case _ => None
  }
}
