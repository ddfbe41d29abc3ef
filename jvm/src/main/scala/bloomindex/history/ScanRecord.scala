package bloomindex.history

import java.io.StringWriter
import java.time.Instant

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.core.JsonFactory
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import org.apache.spark.sql.catalyst.expressions.{And, Attribute, EqualNullSafe, EqualTo, Expression, In, InSet, IsNull, Or}

/**
 * One column of a scan's filter that a Bloom index could answer: `op` is `=`, `IN`, `<=>` or
 * `IS NULL`, `values` how many values it compares with (summed over the filter's occurrences).
 * The values themselves are never kept.
 */
final case class ColumnPredicate(column: String, op: String, values: Int)

/**
 * One scan of an indexable source, as the workload history keeps it (a JSON line in
 * `<index root>/_history/`, a row of `bloom_index_history()`).
 *
 * @param timeMs      when the scan was planned (epoch milliseconds)
 * @param executionId the SQL execution that planned it (None: planned outside one, e.g. EXPLAIN)
 * @param filesListed files the scan listed (after partition pruning), None when unknown
 * @param filesRead   of those, the files it reads (after Bloom index pruning)
 * @param index       the index whose decision applied (it may have skipped nothing), with its log version
 * @param wallTimeMs  the SQL execution's duration (its start to its end event), None when unknown
 */
final case class ScanRecord(
    timeMs: Long,
    executionId: Option[Long],
    source: String,
    provider: String,
    format: String,
    table: Option[String],
    roots: Seq[String],
    predicates: Seq[ColumnPredicate],
    filesListed: Option[Long],
    filesRead: Option[Long],
    bytesListed: Option[Long],
    bytesRead: Option[Long],
    index: Option[String],
    indexVersion: Option[Long],
    wallTimeMs: Option[Long]) {

  /**
   * Its roots with their store. Recorded so since 2026-11-29 (`s3a://prod/t`, `file:/data/t`); a
   * bare path, as an older bloomindex recorded, is taken on the default file system `defaultFs`,
   * where a read of that path goes: one folder's scans of before and after are then one source
   * (the advisor would otherwise group them apart, and read the older ones' folder again on the
   * default file system). An older record of an object store's folder, whose store was not kept,
   * is then another store's and no longer matched to that store's indexes.
   */
  def rootsOn(defaultFs: java.net.URI): Seq[String] = roots.map { r =>
    val u = new org.apache.hadoop.fs.Path(r).toUri
    if (u.getScheme != null) r else new org.apache.hadoop.fs.Path(defaultFs.getScheme, defaultFs.getAuthority, u.getPath).toString
  }

  def pruned: Boolean = (for (l <- filesListed; r <- filesRead) yield r < l).getOrElse(false)

  /** The record as one line of JSON (no line break). */
  def toJson: String = {
    val out = new StringWriter()
    val g = ScanRecord.factory.createGenerator(out)
    g.writeStartObject()
    g.writeStringField("time", Instant.ofEpochMilli(timeMs).toString)
    executionId.foreach(g.writeNumberField("execution_id", _))
    g.writeStringField("source", source)
    g.writeStringField("provider", provider)
    g.writeStringField("format", format)
    table.foreach(g.writeStringField("table", _))
    g.writeArrayFieldStart("roots")
    roots.foreach(g.writeString)
    g.writeEndArray()
    g.writeArrayFieldStart("predicates")
    predicates.foreach { p =>
      g.writeStartObject()
      g.writeStringField("column", p.column)
      g.writeStringField("op", p.op)
      g.writeNumberField("values", p.values)
      g.writeEndObject()
    }
    g.writeEndArray()
    filesListed.foreach(g.writeNumberField("files_listed", _))
    filesRead.foreach(g.writeNumberField("files_read", _))
    bytesListed.foreach(g.writeNumberField("bytes_listed", _))
    bytesRead.foreach(g.writeNumberField("bytes_read", _))
    g.writeBooleanField("pruned", pruned)
    index.foreach(g.writeStringField("index_name", _))
    indexVersion.foreach(g.writeNumberField("index_version", _))
    wallTimeMs.foreach(g.writeNumberField("wall_time_ms", _))
    g.writeEndObject()
    g.close()
    out.toString
  }
}

object ScanRecord {
  private val factory = new JsonFactory()
  private val mapper = new ObjectMapper()

  /** A line [[ScanRecord.toJson]] wrote (fields it does not know are ignored). */
  def fromJson(line: String): ScanRecord = {
    val n = mapper.readTree(line)
    def str(f: String): Option[String] = Option(n.get(f)).filterNot(_.isNull).map(_.asText)
    def long(f: String): Option[Long] = Option(n.get(f)).filter(_.isNumber).map(_.asLong)
    def arr(f: String): Seq[JsonNode] = Option(n.get(f)).filter(_.isArray).map(_.elements().asScala.toSeq).getOrElse(Nil)
    ScanRecord(
      timeMs = Instant.parse(str("time").getOrElse(throw new IllegalArgumentException("no time"))).toEpochMilli,
      executionId = long("execution_id"),
      source = str("source").getOrElse(""),
      provider = str("provider").getOrElse(""),
      format = str("format").getOrElse(""),
      table = str("table"),
      roots = arr("roots").map(_.asText),
      predicates = arr("predicates").map(p => ColumnPredicate(p.path("column").asText, p.path("op").asText, p.path("values").asInt)),
      filesListed = long("files_listed"),
      filesRead = long("files_read"),
      bytesListed = long("bytes_listed"),
      bytesRead = long("bytes_read"),
      index = str("index_name"),
      indexVersion = long("index_version"),
      wallTimeMs = long("wall_time_ms"))
  }
}

/** The columns of a filter under `=`, `IN`, `<=>` and `IS NULL`: names and value counts only. */
object Predicates {

  /**
   * The predicates of `condition` a Bloom index could answer, in order of first appearance,
   * one per column and operator (`a = 1 OR a = 2`: `=` with 2 values). Only a column compared
   * as it is (not under a cast or a function) with constants counts, under AND and OR, never
   * under NOT. `column` names the scan's column an attribute reads.
   */
  def of(condition: Expression, column: String => String): Seq[ColumnPredicate] = {
    val acc = mutable.LinkedHashMap.empty[(String, String), Int]
    def add(a: Attribute, op: String, n: Int): Unit = {
      val k = (column(a.name), op)
      acc(k) = acc.getOrElse(k, 0) + n
    }
    def walk(e: Expression): Unit = e match {
      case And(l, r) => walk(l); walk(r)
      case Or(l, r) => walk(l); walk(r)
      case EqualTo(a: Attribute, v) if v.foldable => add(a, "=", 1)
      case EqualTo(v, a: Attribute) if v.foldable => add(a, "=", 1)
      case EqualNullSafe(a: Attribute, v) if v.foldable => add(a, "<=>", 1)
      case EqualNullSafe(v, a: Attribute) if v.foldable => add(a, "<=>", 1)
      case In(a: Attribute, list) if list.forall(_.foldable) => add(a, "IN", list.size)
      case InSet(a: Attribute, set) => add(a, "IN", set.size)
      case IsNull(a: Attribute) => add(a, "IS NULL", 0)
      case _ => ()
    }
    walk(condition)
    acc.iterator.map { case ((c, op), n) => ColumnPredicate(c, op, n) }.toSeq
  }
}
