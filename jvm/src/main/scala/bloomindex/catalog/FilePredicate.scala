package bloomindex.catalog

import java.nio.charset.StandardCharsets

import bloomindex.hash.PlainHash
import bloomindex.layout.ColumnData
import bloomindex.text.{Requirement, TextSearch}

import org.apache.spark.sql.catalyst.expressions.{And, Attribute, EqualNullSafe, EqualTo, Expression, In, InSet, IsNotNull, IsNull, Literal, Or}
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/**
 * A predicate turned into a test on one indexed file: `mayMatch(file)` is false only when no
 * row of the file can satisfy the predicate. Built from `=`, `<=>`, `IN`, `IS [NOT] NULL` on
 * indexed columns and AND/OR of them; anything else is not translated (and so never prunes).
 */
sealed trait FilePredicate {
  /** The index columns (positions in the spec) the test reads. */
  def columns: Set[Int]
  def mayMatch(f: FileRows): Boolean
  /** What text filters were asked, and why parts of the predicate asked none (for EXPLAIN). */
  def notes: Seq[String] = Nil
}

/**
 * One file as the columns of an index hold it: `rows(c)` is its position in `data(c)`
 * (positions in the spec; only the columns a predicate reads are set).
 */
final class FileRows(val data: Array[ColumnData], val rows: Array[Int])

object FilePredicate {

  /** Why a predicate did not translate, for `BloomIndex.explain`. */
  final case class NotApplicable(reason: String)

  /**
   * A test of `hashes` against the file's filter of `column`: `any` (one of them may be in it:
   * equality, IN) or all of them (a text filter's required units).
   */
  private final case class Hashes(column: Int, hashes: Array[Long], any: Boolean) extends FilePredicate {
    def columns: Set[Int] = Set(column)
    // The column's tests for the hashes, made once per column data (for probe files, the block
    // rows they need are fetched then, for every file at once).
    @volatile private var prepared: (ColumnData, Array[ColumnData.Probe]) = _
    def mayMatch(f: FileRows): Boolean = {
      val d = f.data(column)
      val r = f.rows(column)
      var p = prepared
      if (p == null || (p._1 ne d)) { p = (d, d.probes(hashes)); prepared = p }
      val probes = p._2
      var i = 0
      while (i < probes.length) {
        if (probes(i).mightContain(r) == any) return any
        i += 1
      }
      !any
    }
  }

  /** `p`, with notes for EXPLAIN. */
  private final case class Noted(p: FilePredicate, extra: Seq[String]) extends FilePredicate {
    def columns: Set[Int] = p.columns
    def mayMatch(f: FileRows): Boolean = p.mayMatch(f)
    override def notes: Seq[String] = extra ++ p.notes
  }

  private final case class HasNull(column: Int) extends FilePredicate {
    def columns: Set[Int] = Set(column)
    def mayMatch(f: FileRows): Boolean = f.data(column).nullCount(f.rows(column)) > 0
  }
  private final case class HasNonNull(column: Int) extends FilePredicate {
    def columns: Set[Int] = Set(column)
    def mayMatch(f: FileRows): Boolean = {
      val d = f.data(column)
      val r = f.rows(column)
      d.nullCount(r) < d.rowCount(r)
    }
  }
  // AllOf and OneOf test their parts in a loop over an array: called once per file (a million
  // in a probe), where `forall` over a Seq boxed each answer.
  private final case class AllOf(ps: Seq[FilePredicate]) extends FilePredicate {
    private val parts = ps.toArray
    def columns: Set[Int] = ps.flatMap(_.columns).toSet
    def mayMatch(f: FileRows): Boolean = {
      var i = 0
      while (i < parts.length) { if (!parts(i).mayMatch(f)) return false; i += 1 }
      true
    }
    override def notes: Seq[String] = ps.flatMap(_.notes)
  }
  private final case class OneOf(ps: Seq[FilePredicate]) extends FilePredicate {
    private val parts = ps.toArray
    def columns: Set[Int] = ps.flatMap(_.columns).toSet
    def mayMatch(f: FileRows): Boolean = {
      var i = 0
      while (i < parts.length) { if (parts(i).mayMatch(f)) return true; i += 1 }
      false
    }
    override def notes: Seq[String] = ps.flatMap(_.notes)
  }

  /** At most this many units of one requirement are probed (any non-empty subset of them is as sound). */
  private val MaxUnits = 32

  /** Translates `e`; Left(reason) when no part of it can prune. */
  def translate(e: Expression, index: IndexView): Either[NotApplicable, FilePredicate] = e match {
    case And(a, b) =>
      (translate(a, index), translate(b, index)) match {
        case (Right(x), Right(y)) => Right(AllOf(Seq(x, y)))
        // A file is skipped when any conjunct excludes it; why the other did not is kept for EXPLAIN.
        case (Right(x), Left(r)) => Right(if (textReason(r)) Noted(x, Seq(r.reason)) else x)
        case (Left(r), Right(y)) => Right(if (textReason(r)) Noted(y, Seq(r.reason)) else y)
        // Neither prunes: say why a text predicate did not, rather than why IS NOT NULL did not.
        case (Left(r1), Left(r2)) => Left(if (textReason(r2) && !textReason(r1)) r2 else r1)
      }
    case Or(a, b) =>
      (translate(a, index), translate(b, index)) match {
        case (Right(x), Right(y)) => Right(OneOf(Seq(x, y)))
        case (Left(r), _) => Left(r) // only when every disjunct excludes it
        case (_, Left(r)) => Left(r)
      }
    case EqualTo(a: Attribute, l: Literal) => equality(a, Seq(l.value), index)
    case EqualTo(l: Literal, a: Attribute) => equality(a, Seq(l.value), index)
    case EqualNullSafe(a: Attribute, l: Literal) => if (l.value == null) isNull(a, index) else equality(a, Seq(l.value), index)
    case EqualNullSafe(l: Literal, a: Attribute) => if (l.value == null) isNull(a, index) else equality(a, Seq(l.value), index)
    case In(a: Attribute, list) if list.forall(_.isInstanceOf[Literal]) =>
      equality(a, list.map(_.asInstanceOf[Literal].value), index)
    case InSet(a: Attribute, set) => equality(a, set.toSeq, index)
    // CHAR(n) read with read-side padding: the scan compares the padded value.
    case EqualTo(CharPadded(a, n), l: Literal) => padded(a, n, Seq(l.value), index)
    case EqualTo(l: Literal, CharPadded(a, n)) => padded(a, n, Seq(l.value), index)
    case In(CharPadded(a, n), list) if list.forall(_.isInstanceOf[Literal]) =>
      padded(a, n, list.map(_.asInstanceOf[Literal].value), index)
    case InSet(CharPadded(a, n), set) => padded(a, n, set.toSeq, index)
    case TextPredicates(m) => text(m, index)
    case IsNull(a: Attribute) => isNull(a, index)
    case IsNotNull(a: Attribute) => column(a, index).map(HasNonNull)
    case other => Left(NotApplicable(s"predicate shape: ${other.prettyName}"))
  }

  /**
   * `readSidePadding(c, n)`, Spark's read of a CHAR(n) column under read-side padding (the
   * default): the stored value, padded with spaces to n characters when shorter.
   */
  private object CharPadded {
    def unapply(e: Expression): Option[(Attribute, Int)] = e match {
      case s: StaticInvoke if s.functionName == "readSidePadding" &&
          s.staticObject == classOf[org.apache.spark.sql.catalyst.util.CharVarcharCodegenUtils] =>
        s.arguments match {
          case Seq(a: Attribute, Literal(n: Int, IntegerType)) => Some((a, n))
          case _ => None
        }
      case _ => None
    }
  }

  /** At most this many stored forms are probed per looked-up CHAR value (one per trailing space). */
  private val MaxPaddedForms = 64

  /**
   * `readSidePadding(a, n)` equal to one of `values`: a file may store the value padded (Spark
   * pads CHAR values on write) or not (other writers), and any stored value shorter than n that
   * pads to it matches. So each value is probed as it is and with each of its trailing spaces
   * removed while it stays shorter than n characters (a value of n characters or more is
   * returned as stored).
   */
  private def padded(a: Attribute, n: Int, values: Seq[Any], index: IndexView): Either[NotApplicable, FilePredicate] = {
    // Under a collation the padded value is compared by its collation key, and the stored forms
    // that pad to an equal string are not the literal without its trailing spaces only ('a'
    // read as 'a ' equals 'a' + NO-BREAK SPACE under UNICODE_CI, 'a ' + ZERO WIDTH SPACE under
    // UNICODE): not enumerable.
    a.dataType match {
      case s: StringType if bloomindex.hash.CollationKeys.keyed(s) =>
        return Left(NotApplicable(s"CHAR($n) ${a.name} is compared padded under collation ${s.sql}, whose equal " +
          "strings the index cannot enumerate from the literal"))
      case _ =>
    }
    // A malformed literal would be probed as its decoded string's bytes, not its own.
    if (values.exists { case s: org.apache.spark.unsafe.types.UTF8String => !s.isValid; case _ => false }) {
      return Left(NotApplicable(s"CHAR($n) ${a.name}: a literal that is not valid UTF-8"))
    }
    val forms = values.flatMap {
      case null => Nil
      case s: org.apache.spark.unsafe.types.UTF8String =>
        val v = s.toString
        val chars = v.codePointCount(0, v.length)
        // Stored forms shorter than n that pad to v: v without 1..k of its trailing spaces.
        val shorter = if (chars != n) Nil else {
          val trailing = v.length - v.replaceAll(" +$", "").length
          (1 to trailing).map(k => v.substring(0, v.length - k))
        }
        (v +: shorter).map(org.apache.spark.unsafe.types.UTF8String.fromString)
      case other => Seq(other)
    }
    if (forms.size > MaxPaddedForms * math.max(1, values.size)) {
      Left(NotApplicable(s"CHAR($n) ${a.name}: too many stored forms to probe"))
    } else equality(a, forms, index)
  }

  private def column(a: Attribute, index: IndexView): Either[NotApplicable, Int] = {
    // By the scan's exact spelling; a column the scan decodes otherwise than the build did
    // (IndexCatalog.unusableColumns) is not used.
    val i = index.column(a.name) match {
      case Left(why) => return Left(NotApplicable(why))
      case Right(i) => i
    }
    val indexed = DataType.fromDDL(index.spec.columns(i).dataType)
    val actual = a.dataType
    if (!sameType(indexed, actual)) Left(NotApplicable(s"type mismatch on ${a.name}: index ${indexed.sql}, query ${actual.sql}"))
    else actual match {
      // Collated strings: the index holds collation keys (its context says so, or the column
      // would not be usable). CHAR and VARCHAR types kept as such (spark.sql.preserveCharVarcharTypeInfo): no.
      case s: StringType if s.sql != "STRING" && !bloomindex.hash.CollationKeys.keyed(s) =>
        Left(NotApplicable(s"collation: ${a.name} is ${s.sql}, where equal strings may differ in bytes"))
      case _ => Right(i)
    }
  }

  // Collation is checked separately; the index stores the type's SQL form.
  private def sameType(indexed: DataType, actual: DataType): Boolean = (indexed, actual) match {
    case (_: StringType, _: StringType) => true
    case _ => indexed == actual
  }

  private val TextPrefix = "text filter: "
  private def textReason(r: NotApplicable): Boolean = r.reason.startsWith(TextPrefix)

  /**
   * `m` (a string predicate) against the text filters of its column: each filter that can answer
   * is a conjunct (a file is skipped when any excludes it), probing the units it requires.
   */
  private def text(m: TextPredicates.Match, index: IndexView): Either[NotApplicable, FilePredicate] = {
    val a = m.attribute
    index.textColumns(a.name) match {
      case Left(_) if index.column(a.name).isRight =>
        Left(NotApplicable(s"predicate shape: a string predicate on ${a.name}, which has an equality filter only"))
      case Left(why) => Left(NotApplicable(TextPrefix + why))
      case Right(_) if a.dataType.sql != "STRING" =>
        Left(NotApplicable(s"${TextPrefix}collation: ${a.name} is ${a.dataType.sql}; text filters answer for STRING (UTF8_BINARY) only"))
      case Right(is) =>
        val conf = org.apache.spark.sql.internal.SQLConf.get
        val parts = is.map { i =>
          val c = index.spec.columns(i)
          val spec = c.text.get.spec
          val r = (m.on, TextSession.lowerMismatch(spec.folding, conf)) match {
            case (TextSearch.Operand.Lower, Some(why)) => Requirement.NotPrunable(s"the predicate is on lower(${a.name}) and $why")
            case _ => m.requirement(spec)
          }
          i -> r
        }
        val prunable = parts.filter(_._2.prunable)
        if (prunable.isEmpty) {
          Left(NotApplicable(TextPrefix + parts.map { case (i, r) => s"${index.spec.columns(i).display}: ${r.describe}" }.mkString("; ")))
        } else Right(AllOf(prunable.map { case (i, r) =>
          val probed = s"${TextPrefix}${index.spec.columns(i).display} probed ${r.describe}"
          Noted(fromRequirement(i, r, index), Seq(probed))
        }))
    }
  }

  private def fromRequirement(i: Int, r: Requirement, index: IndexView): FilePredicate = {
    val hash = index.spec.columns(i).algorithm.hash
    def hashes(units: Seq[String]) = units.take(MaxUnits).map(u => hash.hashBytes(u.getBytes(StandardCharsets.UTF_8))).toArray
    r match {
      case Requirement.AllOf(units) => Hashes(i, hashes(units), any = false)
      case Requirement.And(ps) => AllOf(ps.filter(_.prunable).map(fromRequirement(i, _, index)))
      case Requirement.Or(ps) => OneOf(ps.map(fromRequirement(i, _, index)))
      // Never inside And / Or (Requirement drops or propagates it); a file it covers may match.
      case Requirement.NotPrunable(_) => HasRows(i)
    }
  }

  /** The file has rows (always true of an indexed file: a conservative stand-in). */
  private final case class HasRows(column: Int) extends FilePredicate {
    def columns: Set[Int] = Set(column)
    def mayMatch(f: FileRows): Boolean = true
  }

  private def isNull(a: Attribute, index: IndexView): Either[NotApplicable, FilePredicate] = column(a, index).map(HasNull)

  private def equality(a: Attribute, values: Seq[Any], index: IndexView): Either[NotApplicable, FilePredicate] =
    column(a, index) match {
      case Right(i) => equalityOn(a, i, values, index)
      case Left(why) =>
        // No equality filter answers: a text filter of the column may (`c = s` requires s's units).
        val strings = values.filter(_ != null)
        if (strings.nonEmpty && strings.forall(_.isInstanceOf[UTF8String]) && index.textColumns(a.name).isRight) {
          text(TextPredicates.Match(a, TextSearch.Operand.Value, TextPredicates.equality(strings.map(_.asInstanceOf[UTF8String]))), index)
        } else Left(why)
    }

  private def equalityOn(a: Attribute, i: Int, values: Seq[Any], index: IndexView): Either[NotApplicable, FilePredicate] = {
      val dt = a.dataType
      val nonNull = values.filter(_ != null) // `col = NULL` and `col IN (NULL)` match nothing
      probes(nonNull, dt, index.spec.columns(i).algorithm.hash) match {
        case None => Left(NotApplicable(s"NaN literal on ${a.name}: NaN may be stored in many bit patterns"))
        case Some(hashes) => Right(Hashes(i, hashes, any = true))
      }
    }

  /**
   * Hashes (with the column's filter design's hash) of every stored representation Spark's
   * equality treats as equal to the values; None where that set cannot be enumerated (NaN).
   */
  private def probes(values: Seq[Any], dt: DataType, hash: PlainHash): Option[Array[Long]] = {
    val out = Array.newBuilder[Long]
    values.foreach { v =>
      (dt, v) match {
        case (FloatType, f: Float) =>
          if (f.isNaN) return None
          out += hash.hashFloat(f)
          if (f == 0.0f) out += hash.hashFloat(-f) // 0.0 = -0.0 in Spark
        case (DoubleType, d: Double) =>
          if (d.isNaN) return None
          out += hash.hashDouble(d)
          if (d == 0.0) out += hash.hashDouble(-d)
        case _ =>
          try out += hash.hashValue(v, dt)
          catch { case _: IllegalArgumentException => return None } // a literal we cannot place: do not prune
      }
    }
    Some(out.result())
  }
}
