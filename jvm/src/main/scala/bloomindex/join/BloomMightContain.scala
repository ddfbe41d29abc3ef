package bloomindex.join

import bloomindex.catalog.{Coverage, GlobalFilter, IndexCatalog}
import bloomindex.errors.BloomIndexErrors

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo, Predicate, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types.{BooleanType, StringType}
import org.apache.spark.unsafe.types.UTF8String

/**
 * True when `child`'s value may be in the global filter, false when it certainly is not (or
 * cannot equal any value of the indexed column), null for a null value: the join key check
 * the join rule adds, and the SQL function `bloom_might_contain('<index>', '<column>', expr)`.
 *
 * Evaluated one row at a time only where it cannot be planned as [[bloomindex.execution.BloomFilterExec]]
 * (which hashes a batch of keys and checks them in bulk): a conjunct of a filter becomes that
 * operator; elsewhere (inside an OR, in a projection) this row-at-a-time form runs.
 *
 * `coverage`: for a join filter the rule added, the indexed side's files the filter was found
 * to hold when the plan was optimized. Such a check runs only as [[bloomindex.execution.BloomFilterExec]],
 * which lets every row through when the indexed side lists other files by the time the plan runs.
 * The SQL function has none: it answers with the filter of the version it named when analyzed.
 */
case class BloomMightContain(child: Expression, global: GlobalFilter, keyHash: KeyHash, coverage: Option[Coverage] = None)
  extends UnaryExpression with Predicate with CodegenFallback {

  override def nullable: Boolean = true

  override protected def nullSafeEval(value: Any): Any =
    keyHash.hashValue(value).exists(global.filter.mightContain)

  override def prettyName: String = "bloom_might_contain"

  override def toString: String = s"bloom_might_contain(${global.ref}, $child)"

  override def sql: String =
    s"bloom_might_contain('${global.ref.index}', '${global.ref.column}', ${child.sql})"

  override protected def withNewChildInternal(newChild: Expression): BloomMightContain = copy(child = newChild)
}

object BloomMightContain {

  val FunctionName = "bloom_might_contain"

  /**
   * `bloom_might_contain('<index>', '<column>', expr [, allowStale])`, resolved against the newest
   * ACTIVE version: refused when the index does not hold every current file of its source as it
   * is now, unless `allowStale` is true (see [[IndexCatalog.globalFilterNamed]]).
   */
  def build(args: Seq[Expression]): Expression = args match {
    case Seq(index, column, value, rest @ _*) if rest.size <= 1 =>
      val name = constantString(index, "index")
      val col = constantString(column, "column")
      val allowStale = rest.headOption.exists(constantBoolean)
      val spark = SparkSession.active
      val global = new IndexCatalog(spark).globalFilterNamed(name, col, allowStale)
      KeyHash.forTypes(value.dataType, global.ref.dataType, global.algorithm.hash) match {
        case Right(kh) => BloomMightContain(value, global, kh)
        case Left(why) => throw BloomIndexErrors.mightContainKeyTypeMismatch(FunctionName, value.sql, name, col, why)
      }
    case _ => throw BloomIndexErrors.mightContainWrongNumArgs(FunctionName, args.size)
  }

  private def constantString(e: Expression, what: String): String =
    if (e.foldable && e.dataType.isInstanceOf[StringType]) {
      Option(e.eval()).map(_.asInstanceOf[UTF8String].toString).getOrElse(
        throw BloomIndexErrors.mightContainInvalidArgument(FunctionName, s"the $what name is null"))
    } else throw BloomIndexErrors.mightContainInvalidArgument(FunctionName, s"the $what name must be a string literal, got ${e.sql}")

  private def constantBoolean(e: Expression): Boolean =
    if (e.foldable && e.dataType == BooleanType && e.eval() != null) e.eval().asInstanceOf[Boolean]
    else throw BloomIndexErrors.mightContainInvalidArgument(FunctionName, s"allow_stale must be true or false, got ${e.sql}")

  val function: (FunctionIdentifier, ExpressionInfo, Seq[Expression] => Expression) = (
    FunctionIdentifier(FunctionName),
    new ExpressionInfo(classOf[BloomMightContain].getName, FunctionName),
    build _)
}
