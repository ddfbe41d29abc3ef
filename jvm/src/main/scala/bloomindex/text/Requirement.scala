package bloomindex.text

/**
 * What every value matching a predicate holds, as units (tokens or n-grams) of a [[TextFilterSpec]]:
 * a file whose filter lacks what is required holds no match and may be skipped.
 *
 * {{{
 *   val r = TextSearch.like(TextFilterSpec.ngrams(3), "%abcd%")   // AllOf(abc, bcd)
 *   r.mayMatch(unit => filter.mightContain(ParquetHash.hashBytes(unit.getBytes(UTF_8))))
 *   r.or(TextSearch.contains(spec, "xy"))                         // NotPrunable: "xy" is shorter than 3
 * }}}
 */
sealed abstract class Requirement {

  /** Whether a file may hold a match, given whether its filter may hold a unit. */
  def mayMatch(holds: String => Boolean): Boolean

  /** The distinct units a check may probe, in order. */
  def units: Seq[String]

  def prunable: Boolean = true

  /** Both predicates hold: a file may be skipped if either requirement is missed. */
  def and(other: Requirement): Requirement = (this, other) match {
    case (_: Requirement.NotPrunable, _) => other
    case (_, _: Requirement.NotPrunable) => this
    case (Requirement.AllOf(a), Requirement.AllOf(b)) => Requirement.AllOf((a ++ b).distinct)
    case _ => Requirement.And(Seq(this, other))
  }

  /** Either predicate holds: a file may be skipped only if both requirements are missed. */
  def or(other: Requirement): Requirement = (this, other) match {
    case (n: Requirement.NotPrunable, _) => n
    case (_, n: Requirement.NotPrunable) => n
    case _ => Requirement.Or(Seq(this, other))
  }

  /** For EXPLAIN: `all of [abc, bcd]`, `not prunable: ...`. */
  def describe: String
}

object Requirement {

  /** Nothing is required: the predicate cannot skip a file, for `reason`. */
  final case class NotPrunable(reason: String) extends Requirement {
    def mayMatch(holds: String => Boolean): Boolean = true
    def units: Seq[String] = Nil
    override def prunable: Boolean = false
    def describe: String = s"not prunable: $reason"
  }

  /** Every one of `units` (never empty). Any non-empty subset is as sound: a caller may probe fewer. */
  final case class AllOf(units: Seq[String]) extends Requirement {
    require(units.nonEmpty, "AllOf: at least one unit")
    def mayMatch(holds: String => Boolean): Boolean = units.forall(holds)
    def describe: String = units.map(quote).mkString("all of [", ", ", "]")
  }

  final case class And(parts: Seq[Requirement]) extends Requirement {
    def mayMatch(holds: String => Boolean): Boolean = parts.forall(_.mayMatch(holds))
    def units: Seq[String] = parts.flatMap(_.units).distinct
    def describe: String = parts.map(_.describe).mkString("(", " and ", ")")
  }

  final case class Or(parts: Seq[Requirement]) extends Requirement {
    def mayMatch(holds: String => Boolean): Boolean = parts.exists(_.mayMatch(holds))
    def units: Seq[String] = parts.flatMap(_.units).distinct
    def describe: String = parts.map(_.describe).mkString("(", " or ", ")")
  }

  /** `AllOf(units)`, or why nothing is required when `units` is empty. */
  def allOf(units: Seq[String], reasonIfNone: => String): Requirement =
    if (units.isEmpty) NotPrunable(reasonIfNone) else AllOf(units.distinct)

  private def quote(unit: String): String = "'" + unit.replace("\\", "\\\\").replace("'", "\\'") + "'"
}
