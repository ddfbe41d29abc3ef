package bloomindex.advisor

import java.util.Locale

import scala.util.Try

import bloomindex.hash.ParquetHash
import bloomindex.history.WorkloadHistory
import bloomindex.log.{IndexRoot, LogEntry, SourceSpec}
import bloomindex.source.{SourceIdentity, SourceProviders, SourceRef, SourceResolver}

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf

/**
 * One row of RECOMMEND BLOOM INDEXES. `kind`: `create` (a new index), `drop` (an index that
 * never pruned, or that no query looks up), `change_fpp` (an index whose fpp is far from the
 * one the advisor would give it), `candidate` (a column looked at and not recommended, with
 * its figures alone and why not). Files and bytes skipped are expected values per query (over
 * the queries that look up one of the columns) and summed over the workload.
 */
final case class Recommendation(kind: String, source: String, index: Option[String], columns: Seq[String],
    fpp: Seq[(String, Double)], queries: Long, filesSkippedPerQuery: Double, bytesSkippedPerQuery: Double,
    filesSkippedTotal: Double, bytesSkippedTotal: Double, indexBytes: Long, buildBytesRead: Long,
    buildReads: String, statement: String, reason: String)

/**
 * RECOMMEND BLOOM INDEXES: which columns to index, from a workload (the history, or one
 * query) and from the data (each column's spread over the files, measured on a sample of files).
 *
 * A candidate is a column the workload looks up (`=`, `IN`, `<=>`) of a type a filter holds,
 * not a partition column and not already indexed. Its fpp is [[FppPick]]'s, its size the
 * filters' at that fpp for the files' distinct counts. The set is chosen greedily: the candidate
 * with the most files skipped over the workload for its bytes (for its gain, without a budget)
 * next, while it fits; a set with the best single candidate alone is kept instead when that
 * skips more (the knapsack's greedy bound); then, under a budget, exchanges of one column for
 * another (or additions) while one skips more and fits. A candidate that does not skip, alone, at least one
 * file and `spark.bloomindex.advisor.minSkippedShare` of the files listed per query looking it up
 * is never recommended (a column whose values are in every file skips nothing, however often
 * it is queried); nor is a column whose last addition gains less than that.
 */
object Advisor {

  sealed trait Mode
  case object FromHistory extends Mode
  final case class ForQuery(query: String) extends Mode

  private final case class Group(sample: SourceSample, scans: Seq[(WorkloadScan, ScanEstimate)],
      profiles: Map[String, ColumnProfile], existing: Seq[LogEntry], identity: SourceIdentity) {
    def skipped(indexed: Map[String, Double]): Double = scans.map { case (s, e) => s.weight * e.skipped(indexed) }.sum
  }

  private final case class Candidate(group: Int, column: String, fpp: Double, bytes: Long, profile: ColumnProfile)

  /** Where a path without a store is read: the session's default file system. */
  private[bloomindex] def defaultFs(spark: SparkSession): java.net.URI =
    org.apache.hadoop.fs.FileSystem.getDefaultUri(spark.sessionState.newHadoopConf())

  def sampleFiles(spark: SparkSession): Int = spark.sessionState.conf.getConf(BloomIndexSQLConf.ADVISOR_SAMPLE_FILES)

  def recommend(spark: SparkSession, on: Option[SourceRef], mode: Mode, budget: Option[Long]): Seq[Recommendation] =
    WorkloadHistory.unrecorded(run(spark, on, mode, budget)) // its own planning and jobs are not the workload

  private def run(spark: SparkSession, on: Option[SourceRef], mode: Mode, budget: Option[Long]): Seq[Recommendation] = {
    val onSpec = on.map(ref => SourceResolver.resolve(spark, ref))
    val scans = (mode match {
      case FromHistory => Workload.fromHistory(WorkloadHistory.read(spark), defaultFs(spark))
      case ForQuery(q) => Workload.fromQuery(spark, q, "RECOMMEND BLOOM INDEXES ... FOR")
    }).filter(s => onSpec.forall(spec => SourceProviders.ownSource(spec, s.source.identity)))
    val existing = new IndexRoot(spark).list().filter(_.state == "ACTIVE")
    val groups = scans.groupBy(_.source.key).values.toSeq.sortBy(_.head.source.display).flatMap { ss =>
      group(spark, ss, existing, mode, strict = on.isDefined)
    }
    val minShare = spark.sessionState.conf.getConf(BloomIndexSQLConf.ADVISOR_MIN_SKIPPED_SHARE)
    val candidates = groups.zipWithIndex.flatMap { case (g, gi) =>
      val indexed = g.existing.flatMap(_.spec.columns.filterNot(_.isText).map(_.name.toLowerCase(Locale.ROOT))).toSet
      g.profiles.values.toSeq.sortBy(_.column).filterNot(p => indexed.contains(p.column.toLowerCase(Locale.ROOT))).map { p =>
        val pick = FppPick.choose(p.files, p.ndvPerFile, p.avgFileBytes, meanValues(g, p.column), budget,
          usingWeight(g, Set(p.column))._1)
        Candidate(gi, p.column, pick.fpp, p.bytesAt(pick.fpp), p)
      }
    }
    val eligible = candidates.filter(c => worthIt(groups(c.group), Map.empty, c, minShare))
    val chosen = select(groups, eligible, budget, minShare)
    val creates = chosen.groupBy(_.group).toSeq.sortBy(_._1).map { case (gi, cs) => createRow(groups(gi), cs, existing) }
    val rejected = candidates.filterNot(chosen.contains).map { c =>
      val why =
        if (!eligible.contains(c)) "alone it skips less than 1 file or " + fmt(minShare * 100) + "% of the files listed per query looking it up"
        else if (budget.exists(c.bytes > _)) "its filters alone exceed the budget"
        else if (budget.isDefined) "the budget went to columns that skip more for their bytes"
        else "it adds too little to the recommended columns"
      candidateRow(groups(c.group), c, why)
    }
    val others = mode match {
      case FromHistory => groupsForExisting(spark, scans, existing, onSpec, groups).flatMap { case (e, g) => existingRows(e, g, budget) }
      case ForQuery(_) => groups.flatMap(g => g.existing.flatMap(e => fppRow(e, g, budget)))
    }
    creates ++ others ++ rejected
  }

  private def sameSource(e: LogEntry, s: ScannedSource): Boolean = Try(SourceProviders.ownSource(e.spec.source, s.identity)).getOrElse(false)

  /** The source of `scans` measured: its sample, its columns' profiles, each scan's estimate. */
  private def group(spark: SparkSession, scans: Seq[WorkloadScan], existing: Seq[LogEntry], mode: Mode,
      strict: Boolean): Option[Group] = {
    val source = scans.head.source
    val focus = mode match {
      case ForQuery(_) => Some(scans.flatMap(_.listing.getOrElse(Nil)).toSet).filter(_.nonEmpty)
      case FromHistory => None
    }
    val sample = try SourceSample.of(spark, source, sampleFiles(spark), focus) catch {
      case e: Exception if !strict => return None // a source of the history that is gone
    }
    val partition = sample.partitionColumns.map(_.toLowerCase(Locale.ROOT)).toSet
    val columns = scans.flatMap(_.cond.lookups.map(_.column)).distinct.flatMap(sample.field).filter { f =>
      ParquetHash.isIndexable(f.dataType) && !partition.contains(f.name.toLowerCase(Locale.ROOT))
    }.map(_.name).distinct
    val profiles = ColumnProfile.of(sample, columns)
    val estimates: Seq[(WorkloadScan, ScanEstimate)] = mode match {
      case FromHistory =>
        scans.map(s => s -> ScanEstimate.FromProfile(s.filesListed.getOrElse(sample.files.size.toLong).toDouble, s.cond, profiles))
      case ForQuery(_) =>
        val leaves = scans.flatMap(_.cond.lookups).filter(l => profiles.contains(l.column) && l.values.isDefined).distinct
        val holds = ColumnProfile.holding(sample, leaves)
        scans.map { s =>
          val listing = s.listing.getOrElse(sample.files.map(_.path))
          val files = listing.flatMap(holds.get)
          s -> ScanEstimate.FromFiles(listing.size.toDouble, s.cond, leaves, files)
        }
    }
    Some(Group(sample, estimates, profiles, existing.filter(e => sameSource(e, source)), source.identity))
  }

  /** The mean number of values a query of `g` looks `column` up with. */
  private def meanValues(g: Group, column: String): Double = {
    val ls = g.scans.flatMap { case (s, _) => s.cond.lookups.filter(_.column == column).map(l => (s.weight, l.count)) }
    if (ls.isEmpty) 1.0 else ls.map { case (w, n) => w * n.toDouble }.sum / ls.map(_._1).sum
  }

  private def usingWeight(g: Group, columns: Set[String]): (Long, Double) = {
    val using = g.scans.filter { case (s, _) => s.cond.lookups.exists(l => columns.contains(l.column)) }
    (using.map(_._1.weight).sum, using.map { case (s, e) => s.weight * e.listed }.sum)
  }

  /** Whether adding `c` to `indexed` skips at least one file and `minShare` of the files listed per query using it. */
  private def worthIt(g: Group, indexed: Map[String, Double], c: Candidate, minShare: Double): Boolean = {
    val gain = g.skipped(indexed + (c.column -> c.fpp)) - g.skipped(indexed)
    val (queries, listed) = usingWeight(g, Set(c.column))
    queries > 0 && gain / queries >= 1.0 && gain >= minShare * listed
  }

  private def select(groups: Seq[Group], cands: Seq[Candidate], budget: Option[Long], minShare: Double): Seq[Candidate] = {
    def total(sel: Seq[Candidate]): Double = sel.groupBy(_.group).map { case (gi, cs) =>
      groups(gi).skipped(cs.map(c => c.column -> c.fpp).toMap) }.sum
    def gainOf(sel: Seq[Candidate], c: Candidate): Double = {
      val g = groups(c.group)
      val now = sel.filter(_.group == c.group).map(x => x.column -> x.fpp).toMap
      g.skipped(now + (c.column -> c.fpp)) - g.skipped(now)
    }
    var sel = Vector.empty[Candidate]
    var left = cands.toVector
    var used = 0L
    var going = true
    while (going) {
      val fits = left.filter(c => budget.forall(b => used + c.bytes <= b))
      val scored = fits.map(c => c -> gainOf(sel, c)).filter(_._2 > 0)
      if (scored.isEmpty) going = false
      else {
        val (best, _) = budget match {
          case Some(_) => scored.maxBy { case (c, gain) => (gain / math.max(1L, c.bytes), gain) }
          case None => scored.maxBy(_._2)
        }
        sel :+= best
        used += best.bytes
        left = left.filterNot(_ == best)
      }
    }
    // Columns that, with the others, no longer pay for themselves: dropped, the least gain first.
    var pruning = true
    while (pruning) {
      val weak = sel.filterNot(c => worthIt(groups(c.group), sel.filter(x => x.group == c.group && x != c)
        .map(x => x.column -> x.fpp).toMap, c, minShare))
      if (weak.isEmpty) pruning = false
      else sel = sel.filterNot(_ == weak.minBy(c => gainOf(sel.filterNot(_ == c), c)))
    }
    val single = cands.filter(c => budget.forall(c.bytes <= _)).sortBy(c => -total(Seq(c))).headOption
    val start = single match {
      case Some(s) if total(Seq(s)) > total(sel) => Vector(s)
      case _ => sel
    }
    if (budget.isEmpty) start else improve(start, cands.toVector, budget.get, total, groups, minShare)
  }

  /**
   * Under a budget, the greedy set by gain per byte can leave bytes unused that a column with
   * more gain, but less per byte, would have used: exchanges of one chosen column for one
   * other, or of two for one, or adding one: whichever skips the most files and fits, while one skips more
   * (at most 50 rounds; each column of the result still pays for itself).
   */
  private def improve(start: Vector[Candidate], cands: Vector[Candidate], budget: Long, total: Seq[Candidate] => Double,
      groups: Seq[Group], minShare: Double): Vector[Candidate] = {
    var sel = start
    var best = total(sel)
    var rounds = 0
    var better = true
    while (better && rounds < 50) {
      rounds += 1
      // Out: nothing, one chosen column or two; in: one other column.
      val outs: Seq[Set[Candidate]] = Set.empty[Candidate] +: (sel.map(Set(_)) ++ sel.combinations(2).map(_.toSet).toSeq)
      val moves = for {
        out <- outs
        in <- cands if !sel.contains(in)
        next = sel.filterNot(out.contains) :+ in
        if next.map(_.bytes).sum <= budget
        if next.forall(c => worthIt(groups(c.group), next.filter(x => x.group == c.group && x != c)
          .map(x => x.column -> x.fpp).toMap, c, minShare))
      } yield next -> total(next)
      val top = if (moves.isEmpty) None else Some(moves.maxBy(_._2))
      top match {
        case Some((next, t)) if t > best * (1 + 1e-9) + 1e-9 => sel = next; best = t
        case _ => better = false
      }
    }
    sel
  }

  private def indexName(g: Group, existing: Seq[LogEntry]): String = {
    val base = g.sample.source.table.map(_.split('.').last)
      .getOrElse(g.sample.source.roots.headOption.map(r => r.stripSuffix("/").split('/').last).getOrElse("source"))
      .replaceAll("[^A-Za-z0-9_-]", "_").take(100)
    val taken = existing.map(_.spec.name.toLowerCase(Locale.ROOT)).toSet
    val first = s"${base}_bloom"
    (Iterator(first) ++ Iterator.from(2).map(i => s"${first}_$i")).find(n => !taken.contains(n.toLowerCase(Locale.ROOT))).get
  }

  private def fmt(d: Double): String = java.math.BigDecimal.valueOf(d).stripTrailingZeros().toPlainString

  private def quoteIdent(c: String): String = if (c.matches("[A-Za-z_][A-Za-z0-9_]*")) c else s"`${c.replace("`", "``")}`"

  private def createStatement(name: String, source: String, cols: Seq[(String, Double)]): String =
    s"CREATE BLOOM INDEX $name ON $source FOR COLUMNS (" +
      cols.map { case (c, f) => s"${quoteIdent(c)} OPTIONS (fpp = ${fmt(f)})" }.mkString(", ") + ")"

  private def spread(p: ColumnProfile): String =
    f"${p.column}: a value in ${p.holdFraction * 100}%.1f%% of ${p.files} files (~${p.ndvPerFile}%.0f distinct per file)"

  private def figures(g: Group, indexed: Map[String, Double]): (Long, Double, Double) = {
    val (queries, _) = usingWeight(g, indexed.keySet)
    val total = g.skipped(indexed)
    (queries, if (queries > 0) total / queries else 0.0, total)
  }

  private def createRow(g: Group, cs: Seq[Candidate], existing: Seq[LogEntry]): Recommendation = {
    val indexed = cs.map(c => c.column -> c.fpp)
    val (queries, perQuery, total) = figures(g, indexed.toMap)
    val build = cs.map(_.profile.buildBytes)
    val name = indexName(g, existing)
    Recommendation("create", g.sample.display, Some(name), cs.map(_.column), indexed, queries, perQuery,
      perQuery * g.sample.avgFileBytes, total, total * g.sample.avgFileBytes, cs.map(_.bytes).sum, build.map(_._1).sum,
      build.map(_._2).distinct.mkString(", "), createStatement(name, g.sample.display, indexed),
      cs.map(c => spread(c.profile)).mkString("; "))
  }

  /** A column looked at and not recommended: its figures alone, and why not. */
  private def candidateRow(g: Group, c: Candidate, why: String): Recommendation = {
    val (queries, perQuery, total) = figures(g, Map(c.column -> c.fpp))
    val (build, reads) = c.profile.buildBytes
    Recommendation("candidate", g.sample.display, None, Seq(c.column), Seq(c.column -> c.fpp), queries, perQuery,
      perQuery * g.sample.avgFileBytes, total, total * g.sample.avgFileBytes, c.bytes, build, reads,
      createStatement(indexName(g, Nil), g.sample.display, Seq(c.column -> c.fpp)), s"not recommended: $why; ${spread(c.profile)}")
  }

  /** Each existing index in scope, with the measured group of its source when the workload scans it. */
  private def groupsForExisting(spark: SparkSession, scans: Seq[WorkloadScan], existing: Seq[LogEntry],
      onSpec: Option[SourceSpec], groups: Seq[Group]): Seq[(LogEntry, (Seq[WorkloadScan], Option[Group]))] =
    existing.filter(e => onSpec.forall(s => SourceProviders.identity(s) == SourceProviders.identity(e.spec.source) ||
      groups.exists(g => g.existing.contains(e)))).map { e =>
      (e, (scans.filter(s => sameSource(e, s.source)), groups.find(_.existing.contains(e))))
    }

  private def existingRows(e: LogEntry, scansAndGroup: (Seq[WorkloadScan], Option[Group]), budget: Option[Long]): Seq[Recommendation] = {
    val (scans, g) = scansAndGroup
    if (scans.isEmpty) return Nil // the history never scanned its source with a filter: nothing to judge by
    val applied = scans.filter(_.index.exists(_.equalsIgnoreCase(e.spec.name)))
    val pruned = applied.exists(s => (for (l <- s.filesListed; r <- s.filesRead) yield r < l).getOrElse(false))
    val cols = e.spec.columns.map(_.sourceName.toLowerCase(Locale.ROOT)).toSet
    val looked = scans.filter(_.cond.lookups.exists(l => cols.contains(l.column.toLowerCase(Locale.ROOT))))
    val drop = if (applied.nonEmpty && !pruned)
      Some(s"answered ${applied.map(_.weight).sum} scans of the history and skipped no file")
    else if (applied.isEmpty && looked.isEmpty)
      Some(s"none of the history's ${scans.map(_.weight).sum} filtered scans of its source looks up its columns")
    else None
    drop match {
      case Some(reason) => Seq(Recommendation("drop", e.spec.source.display, Some(e.spec.name), e.spec.columns.map(_.display),
        e.spec.columns.map(c => c.display -> c.fpp), applied.map(_.weight).sum, 0.0, 0.0, 0.0, 0.0,
        e.data.map(_.filterBytes).getOrElse(0L), 0L, "", s"DROP BLOOM INDEX ${e.spec.name}", reason))
      case None => g.toSeq.flatMap(fppRow(e, _, budget))
    }
  }

  /** An index whose fpp, for some column, is 5 times or more from the advisor's (either way). */
  private def fppRow(e: LogEntry, g: Group, budget: Option[Long]): Option[Recommendation] = {
    if (e.spec.columns.exists(_.isText)) return None
    val best = e.spec.columns.map { c =>
      g.profiles.find(_._1.equalsIgnoreCase(c.name)).map(_._2) match {
        case Some(p) => c.name -> FppPick.choose(p.files, p.ndvPerFile, p.avgFileBytes, meanValues(g, p.column), budget,
          usingWeight(g, Set(p.column))._1).fpp
        case None => c.name -> c.fpp
      }
    }
    val far = e.spec.columns.zip(best).filter { case (c, (_, b)) => c.fpp / b >= 5 || b / c.fpp >= 5 }
    if (far.isEmpty) None
    else {
      val indexed = best.map { case (c, f) => g.profiles.keys.find(_.equalsIgnoreCase(c)).getOrElse(c) -> f }
      val (queries, perQuery, total) = figures(g, indexed.toMap)
      val now = figures(g, e.spec.columns.map(c => g.profiles.keys.find(_.equalsIgnoreCase(c.name)).getOrElse(c.name) -> c.fpp).toMap)._3
      val bytes = indexed.map { case (c, f) => g.profiles.get(c).map(_.bytesAt(f)).getOrElse(0L) }.sum
      Some(Recommendation("change_fpp", e.spec.source.display, Some(e.spec.name), e.spec.columns.map(_.name), best, queries,
        perQuery, perQuery * g.sample.avgFileBytes, total, total * g.sample.avgFileBytes, bytes,
        e.spec.columns.flatMap(c => g.profiles.get(c.name).map(_.buildBytes._1)).sum, "",
        s"DROP BLOOM INDEX ${e.spec.name}; " + createStatement(e.spec.name, e.spec.source.display, best),
        far.map { case (c, (_, b)) => s"${c.name}: fpp ${fmt(c.fpp)}, best ${fmt(b)}" }.mkString("; ") +
          f" (files skipped over the workload: $now%.1f now, $total%.1f at the best fpp)"))
    }
  }
}
