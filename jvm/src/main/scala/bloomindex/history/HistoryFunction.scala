package bloomindex.history

import bloomindex.errors.BloomIndexErrors

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo}
import org.apache.spark.sql.catalyst.plans.logical.{LocalRelation, LogicalPlan}
import org.apache.spark.sql.types._

/**
 * `SELECT * FROM bloom_index_history()`: the session's workload history (its index root, within
 * its limits, oldest first) as a table, read when the query is analysed (a DataFrame of it is a
 * snapshot; a query or a view over it reads it again). What this JVM recorded so far is written
 * first ([[WorkloadHistory.flush]]).
 */
object HistoryFunction {

  val FunctionName = "bloom_index_history"

  val schema: StructType = StructType(Seq(
    StructField("time", TimestampType, nullable = false),
    StructField("execution_id", LongType),
    StructField("source", StringType, nullable = false),
    StructField("provider", StringType, nullable = false),
    StructField("format", StringType, nullable = false),
    StructField("table", StringType),
    StructField("roots", ArrayType(StringType, containsNull = false), nullable = false),
    StructField("predicates", ArrayType(StructType(Seq(
      StructField("column", StringType, nullable = false),
      StructField("op", StringType, nullable = false),
      StructField("values", IntegerType, nullable = false))), containsNull = false), nullable = false),
    StructField("files_listed", LongType),
    StructField("files_read", LongType),
    StructField("bytes_listed", LongType),
    StructField("bytes_read", LongType),
    StructField("pruned", BooleanType, nullable = false),
    StructField("index_name", StringType),
    StructField("index_version", LongType),
    StructField("wall_time_ms", LongType)))

  private def n(o: Option[Long]): java.lang.Long = o.map(java.lang.Long.valueOf).orNull

  private def row(r: ScanRecord): Row = Row(
    new java.sql.Timestamp(r.timeMs), n(r.executionId), r.source, r.provider, r.format, r.table.orNull, r.roots,
    r.predicates.map(p => Row(p.column, p.op, p.values)), n(r.filesListed), n(r.filesRead),
    n(r.bytesListed), n(r.bytesRead), r.pruned, r.index.orNull, n(r.indexVersion), n(r.wallTimeMs))

  /** `spark`'s history as rows of [[schema]], oldest first. */
  def rows(spark: SparkSession): Seq[Row] = WorkloadHistory.read(spark).map(row)

  private def build(args: Seq[Expression]): LogicalPlan = {
    if (args.nonEmpty) throw BloomIndexErrors.historyArguments(FunctionName, args.size)
    LocalRelation.fromExternalRows(toAttributes(schema), rows(SparkSession.active))
  }

  private def toAttributes(s: StructType) =
    s.fields.toSeq.map(f => org.apache.spark.sql.catalyst.expressions.AttributeReference(f.name, f.dataType, f.nullable)())

  val function: (FunctionIdentifier, ExpressionInfo, Seq[Expression] => LogicalPlan) = (
    FunctionIdentifier(FunctionName),
    new ExpressionInfo(getClass.getName.stripSuffix("$"), FunctionName),
    build _)
}
