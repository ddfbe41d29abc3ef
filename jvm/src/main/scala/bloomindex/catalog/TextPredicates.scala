package bloomindex.catalog

import bloomindex.text.{Requirement, TextFilterSpec, TextSearch}
import bloomindex.text.TextSearch.Operand

import org.apache.spark.sql.catalyst.expressions.{Attribute, Contains, EndsWith, EqualTo, Expression, GreaterThan,
  GreaterThanOrEqual, ILike, In, InSet, LessThan, LessThanOrEqual, Like, LikeAll, LikeAny, Literal, Lower, RLike,
  StartsWith, StringInstr, StringLocate}
import org.apache.spark.sql.types.{IntegerType, StringType}
import org.apache.spark.unsafe.types.UTF8String

/**
 * String predicates a text filter (tokens, n-grams) may answer, as Catalyst plans them after
 * optimization: `LIKE` (and `ILIKE`, which Spark plans as `lower(c) LIKE lower(p)`), the
 * `startswith` / `endswith` / `contains` that Spark's LIKE simplification turns patterns into,
 * `LIKE ALL` / `LIKE ANY`, `RLIKE`, `instr(c, s) > 0`, `locate(s, c[, pos]) > 0`, and `=` / `IN`
 * on `lower(c)` (`=` and `IN` on `c` itself go through the equality path, which asks text
 * filters when no equality filter answers). The column is `c` or `lower(c)` ([[Operand]]); its
 * type must be STRING of the default collation (checked by the caller: under another collation
 * these predicates compare otherwise than the bytes a filter holds).
 *
 * Each match gives the column's attribute, whether the predicate is on `lower(c)`, and what it
 * requires of a filter with given settings ([[TextSearch]]); literals that are null match
 * nothing and are left to Spark (not pruned).
 *
 * A literal that is not valid UTF-8, or holds U+FFFD, is left to Spark too ([[Str]]): `contains`,
 * `startswith`, `endswith`, `instr` and `locate` compare bytes, and a malformed literal's bytes
 * can lie inside a well-formed character of a value, whose units never hold the literal's
 * replacement character; `LIKE` compares the value's `toString`, while a folded filter holds
 * the units of the value's `toValidString` lowered: both replace malformed bytes with U+FFFD, but
 * not the same number of times.
 */
private[catalog] object TextPredicates {

  final case class Match(attribute: Attribute, on: Operand, requirement: TextFilterSpec => Requirement)

  private object Column {
    def unapply(e: Expression): Option[(Attribute, Operand)] = e match {
      case a: Attribute if isString(a) => Some((a, Operand.Value))
      case Lower(a: Attribute) if isString(a) => Some((a, Operand.Lower))
      case _ => None
    }
  }

  private def isString(a: Attribute): Boolean = a.dataType.isInstanceOf[StringType]

  private object Str {
    def unapply(e: Expression): Option[String] = e match {
      case Literal(s: UTF8String, _: StringType) if wellFormed(s) => Some(s.toString)
      case _ => None
    }
  }

  /** Valid UTF-8 without U+FFFD: a literal whose characters every reading of a value agrees on. */
  private def wellFormed(s: UTF8String): Boolean = s.isValid && s.toString.indexOf('\uFFFD') < 0

  private object Positive {
    /** `x > 0`, `x >= 1`, `0 < x`, `1 <= x` (x an integer). */
    def unapply(e: Expression): Option[Expression] = e match {
      case GreaterThan(x, Literal(0, IntegerType)) => Some(x)
      case GreaterThanOrEqual(x, Literal(1, IntegerType)) => Some(x)
      case LessThan(Literal(0, IntegerType), x) => Some(x)
      case LessThanOrEqual(Literal(1, IntegerType), x) => Some(x)
      case _ => None
    }
  }

  def unapply(e: Expression): Option[Match] = e match {
    case Like(Column(a, on), Str(p), escape) => Some(Match(a, on, TextSearch.like(_, p, escape, on)))
    // Before ReplaceExpressions (a plan not yet optimized): Spark's lower(c) LIKE lower(p).
    case ILike(a: Attribute, Str(p), escape) if isString(a) => Some(Match(a, Operand.Lower, TextSearch.ilike(_, p, escape)))
    case StartsWith(Column(a, on), Str(s)) => Some(Match(a, on, TextSearch.startsWith(_, s, on)))
    case EndsWith(Column(a, on), Str(s)) => Some(Match(a, on, TextSearch.endsWith(_, s, on)))
    case Contains(Column(a, on), Str(s)) => Some(Match(a, on, TextSearch.contains(_, s, on)))
    case RLike(Column(a, on), Str(p)) => Some(Match(a, on, TextSearch.rlike(_, p, on)))
    case LikeAll(Column(a, on), patterns) if patterns.nonEmpty && patterns.forall(p => p != null && wellFormed(p)) =>
      val ps = patterns.map(_.toString)
      Some(Match(a, on, spec => ps.map(TextSearch.like(spec, _, '\\', on)).reduce(_ and _)))
    case LikeAny(Column(a, on), patterns) if patterns.nonEmpty && patterns.forall(p => p != null && wellFormed(p)) =>
      val ps = patterns.map(_.toString)
      Some(Match(a, on, spec => ps.map(TextSearch.like(spec, _, '\\', on)).reduce(_ or _)))
    case Positive(StringInstr(Column(a, on), Str(s))) => Some(Match(a, on, TextSearch.contains(_, s, on)))
    // locate(s, c, pos) > 0: s occurs in c (at pos or later); 0 for a pos below 1 or no occurrence.
    case Positive(StringLocate(Str(s), Column(a, on), _)) => Some(Match(a, on, TextSearch.contains(_, s, on)))
    case EqualTo(Lower(a: Attribute), Str(s)) if isString(a) => Some(Match(a, Operand.Lower, TextSearch.equalTo(_, s, Operand.Lower)))
    case EqualTo(Str(s), Lower(a: Attribute)) if isString(a) => Some(Match(a, Operand.Lower, TextSearch.equalTo(_, s, Operand.Lower)))
    case In(Lower(a: Attribute), list) if isString(a) && list.nonEmpty && list.forall(Str.unapply(_).isDefined) =>
      val values = list.flatMap(Str.unapply)
      Some(Match(a, Operand.Lower, TextSearch.in(_, values, Operand.Lower)))
    case InSet(Lower(a: Attribute), set) if isString(a) && set.nonEmpty && set.forall {
          case u: UTF8String => wellFormed(u)
          case _ => false
        } =>
      val values = set.toSeq.map(_.toString)
      Some(Match(a, Operand.Lower, TextSearch.in(_, values, Operand.Lower)))
    case _ => None
  }

  /**
   * What `c = s` / `c IN (values)` on the column itself requires of a text filter: the equality
   * path asks this where no equality filter answers. A folded filter answers it too (`c = s`
   * implies `fold(c) = fold(s)`); under ICU's folding the value Spark lowers is `toValidString`.
   */
  def equality(values: Seq[UTF8String]): TextFilterSpec => Requirement = spec => {
    val strings = values.map(v => if (spec.folding == bloomindex.text.CaseFolding.Lower) v.toValidString else v.toString)
    TextSearch.in(spec, strings, Operand.Value)
  }
}
