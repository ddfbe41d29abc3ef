package bloomindex.sql

import bloomindex.advisor.{Advisor, Recommendation, WhatIf}
import bloomindex.errors.BloomIndexErrors
import bloomindex.source.SourceRef

import org.apache.spark.network.util.JavaUtils
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types._

/**
 * `RECOMMEND BLOOM INDEXES [ON source] [BUDGET size] [FOR query | FROM HISTORY]`: one row per
 * recommendation ([[Advisor.recommend]]); without FOR, the workload history. The query is kept
 * as text and planned when the command runs; the budget is checked then too (a parser may
 * throw only ParseExceptions).
 */
case class RecommendBloomIndexesCommand(source: Option[SourceRef], query: Option[String], budget: Option[String])
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = RecommendBloomIndexesCommand.schema.map(f =>
    AttributeReference(f.name, f.dataType, f.nullable)())

  override def run(spark: SparkSession): Seq[Row] =
    Advisor.recommend(spark, source, query.map(Advisor.ForQuery).getOrElse(Advisor.FromHistory),
      budget.map(RecommendBloomIndexesCommand.parseBudget))
      .map(RecommendBloomIndexesCommand.row)
}

object RecommendBloomIndexesCommand {

  val schema: StructType = StructType(Seq(
    StructField("kind", StringType, nullable = false),
    StructField("source", StringType, nullable = false),
    StructField("index_name", StringType),
    StructField("columns", ArrayType(StringType, containsNull = false), nullable = false),
    StructField("fpp", MapType(StringType, DoubleType, valueContainsNull = false), nullable = false),
    StructField("queries", LongType, nullable = false),
    StructField("files_skipped_per_query", DoubleType, nullable = false),
    StructField("bytes_skipped_per_query", DoubleType, nullable = false),
    StructField("files_skipped_total", DoubleType, nullable = false),
    StructField("bytes_skipped_total", DoubleType, nullable = false),
    StructField("index_bytes", LongType, nullable = false),
    StructField("build_bytes_read", LongType, nullable = false),
    StructField("build_reads", StringType, nullable = false),
    StructField("statement", StringType, nullable = false),
    StructField("reason", StringType, nullable = false)))

  def row(r: Recommendation): Row = Row(r.kind, r.source, r.index.orNull, r.columns, r.fpp.toMap, r.queries,
    r.filesSkippedPerQuery, r.bytesSkippedPerQuery, r.filesSkippedTotal, r.bytesSkippedTotal, r.indexBytes,
    r.buildBytesRead, r.buildReads, r.statement, r.reason)

  /** A storage budget as written (`'512m'`, `1048576`, `2g`): bytes, or BLOOM_INDEX_INVALID_BUDGET. */
  def parseBudget(text: String): Long = {
    val t = text.trim
    val bytes = try JavaUtils.byteStringAsBytes(t) catch { case _: NumberFormatException => -1L }
    if (t.isEmpty || bytes <= 0) throw BloomIndexErrors.invalidBudget(text)
    bytes
  }
}

/**
 * `EXPLAIN BLOOM INDEX WHATIF (col, ...) [OPTIONS (fpp = x)] FOR query`: per scan of the query
 * with a filter on a source having one of the columns, the files an index on them would keep
 * ([[WhatIf.estimate]]), without building it.
 */
case class ExplainBloomIndexWhatIfCommand(columns: Seq[String], options: Map[String, String], query: String)
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = ExplainBloomIndexWhatIfCommand.schema.map(f =>
    AttributeReference(f.name, f.dataType, f.nullable)())

  override def run(spark: SparkSession): Seq[Row] =
    WhatIf.estimate(spark, columns, ExplainBloomIndexWhatIfCommand.fppOf(options), query).map { r =>
    Row(r.source, r.columns, r.fpp, r.listed, r.kept, r.keptLow, r.keptHigh, r.holding, r.sampledFiles, r.method)
  }
}

object ExplainBloomIndexWhatIfCommand {

  /** The `fpp` of WHATIF's OPTIONS (the only option), checked as CREATE checks it. */
  def fppOf(options: Map[String, String]): Option[Double] = {
    options.keys.find(_.toLowerCase(java.util.Locale.ROOT) != "fpp").foreach(k =>
      throw BloomIndexErrors.unknownOption(k, "WHATIF", Seq("fpp")))
    options.values.headOption.map { v =>
      val d = scala.util.Try(v.trim.toDouble).getOrElse(Double.NaN)
      if (!(d > 0 && d < 1)) throw BloomIndexErrors.invalidOptionValue("fpp", v, "must be a number in (0, 1)")
      d
    }
  }

  val schema: StructType = StructType(Seq(
    StructField("source", StringType, nullable = false),
    StructField("columns", ArrayType(StringType, containsNull = false), nullable = false),
    StructField("fpp", DoubleType, nullable = false),
    StructField("files_listed", LongType, nullable = false),
    StructField("files_kept", DoubleType, nullable = false),
    StructField("files_kept_low", DoubleType, nullable = false),
    StructField("files_kept_high", DoubleType, nullable = false),
    StructField("files_holding", DoubleType, nullable = false),
    StructField("files_sampled", IntegerType, nullable = false),
    StructField("method", StringType, nullable = false)))
}
