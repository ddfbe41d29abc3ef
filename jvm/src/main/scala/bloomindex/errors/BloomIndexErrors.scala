package bloomindex.errors

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.trees.Origin

/**
 * The errors users see, in one place so their wording stays consistent.
 *
 * Each error has an error condition of its own, defined with its message template and SQLSTATE
 * in the resource `error/bloomindex-error-conditions.json` (the shape of Spark's
 * error-conditions.json): callers match `getCondition` / `getSqlState`, never the message. The
 * exceptions are Spark's `AnalysisException`, built with its constructor for libraries'
 * conditions (condition, SQLSTATE, template, parameters), so PySpark converts them, and they
 * keep condition and SQLSTATE when Spark attaches a SQL position (`withPosition`). Messages
 * render as Spark's do: `[CONDITION] message SQLSTATE: xxxxx`. They keep the SQL position
 * Spark attaches (`; line 1 pos 7`) but no query context: see [[BloomIndexAnalysisException]].
 *
 * API, one method per condition, named after it:
 *  - the index: [[notFound]], [[alreadyExists]], [[invalidName]], [[unsafeLocation]], [[damaged]], [[newerFormat]],
 *    [[columnNotFound]], [[notGlobal]], [[stale]], [[decodingContextChanged]],
 *    [[incrementalRefreshContextChanged]]; a lost commit race is [[ConcurrentBloomIndexUpdateException]]
 *    (condition `BLOOM_INDEX_CONCURRENT_UPDATE`, SQLSTATE 40001: retry the command);
 *  - CREATE's columns and options: [[noColumns]], [[sourceColumnNotFound]], [[duplicateColumn]],
 *    [[partitionColumn]], [[unsupportedColumnType]], [[unknownOption]], [[invalidOptionValue]],
 *    [[invalidBooleanOption]], [[fppUnreachable]], [[encryptedColumns]];
 *  - the source: [[sourceNotFound]], [[pathNotFound]], [[unsupportedFormat]], [[unsupportedFileFormat]],
 *    [[unsupportedSource]], [[multipleRelations]], [[sourceChanged]], [[sourceColumnGone]];
 *  - a query's run: [[joinFilterOutdated]];
 *    a table format's own (its provider's errors object, under `source/`,
 *    raises them through [[error]]);
 *  - per-column Bloom filter indexes: [[filterIndexAlreadyExists]], [[filterIndexNotFound]],
 *    [[filterIndexMultiColumn]];
 *  - `bloom_might_contain`: [[mightContainWrongNumArgs]], [[mightContainInvalidArgument]],
 *    [[mightContainKeyTypeMismatch]];
 *  - the advisor (RECOMMEND BLOOM INDEXES, EXPLAIN BLOOM INDEX WHATIF): [[invalidBudget]], [[whatIfColumnNotFound]];
 *  - configuration: [[invalidConf]];
 *  - the running Spark: [[unsupportedSparkVersion]];
 *  - [[error]]: any condition of the file by name, with its parameters.
 */
object BloomIndexErrors {

  /** Where the conditions are defined (a classpath resource of the jar). */
  val ConditionsResource = "error/bloomindex-error-conditions.json"

  /** A condition of [[ConditionsResource]]: its message template (with `<param>`s) and SQLSTATE. */
  final case class Condition(name: String, messageTemplate: String, sqlState: String)

  /** Every condition, read once from [[ConditionsResource]]. */
  lazy val conditions: Map[String, Condition] = {
    val in = Option(getClass.getClassLoader.getResourceAsStream(ConditionsResource)).getOrElse(
      throw new IllegalStateException(s"$ConditionsResource is missing from the classpath"))
    val tree = try new ObjectMapper().readTree(in) finally in.close()
    tree.properties().asScala.map { e =>
      val v = e.getValue
      val message = v.get("message").elements().asScala.map(_.asText).mkString("\n")
      e.getKey -> Condition(e.getKey, message, v.get("sqlState").asText)
    }.toMap
  }

  def condition(name: String): Condition =
    conditions.getOrElse(name, throw new IllegalArgumentException(s"unknown error condition $name"))

  /** An AnalysisException of condition `name` (defined in [[ConditionsResource]]). */
  def error(name: String, params: Map[String, String], cause: Throwable = null): AnalysisException =
    new BloomIndexAnalysisException(condition(name), params, Option(cause))

  /** A syntax error in one of our statements, at `position` (0-based) of `command`. */
  def parse(command: String, position: Int, near: String, message: String): ParseException = {
    val before = command.substring(0, math.min(position, command.length))
    val line = before.count(_ == '\n') + 1
    val column = position - (before.lastIndexOf('\n') + 1)
    new ParseException(Some(command), Origin(Some(line), Some(column)), "PARSE_SYNTAX_ERROR",
      Map("error" -> s"'$near'", "hint" -> s": $message"))
  }

  // ------------------------------------------------------------------ the index

  def notFound(name: String): AnalysisException =
    error("BLOOM_INDEX_NOT_FOUND", Map("indexName" -> name))

  def commandInProgress(name: String, operation: String, version: Long, command: String): AnalysisException =
    error("BLOOM_INDEX_COMMAND_IN_PROGRESS",
      Map("indexName" -> name, "operation" -> operation, "version" -> version.toString, "command" -> command))

  def alreadyExists(name: String): AnalysisException =
    error("BLOOM_INDEX_ALREADY_EXISTS", Map("indexName" -> name))

  def invalidName(name: String): AnalysisException =
    error("BLOOM_INDEX_INVALID_NAME", Map("indexName" -> String.valueOf(name)))

  /** `path`, a folder of index `name`, is a symbolic link: writes would leave `root` (`rootKey`). */
  def unsafeLocation(name: String, path: String, rootKey: String, root: String): AnalysisException =
    error("BLOOM_INDEX_UNSAFE_LOCATION", Map("indexName" -> name, "path" -> path, "rootKey" -> rootKey, "root" -> root))

  /** Index `name`'s log entry `version` is of a format newer than this build reads. */
  def newerFormat(name: String, version: Long, problem: String): AnalysisException =
    error("BLOOM_INDEX_NEWER_FORMAT", Map("indexName" -> name, "version" -> version.toString, "problem" -> problem))

  /** What is wrong with the stored index: "version 3 has no data", "already exists and its log ...". */
  def damaged(name: String, problem: String, cause: Throwable = null): AnalysisException =
    error("BLOOM_INDEX_DAMAGED", Map("indexName" -> name, "problem" -> problem), cause)

  def columnNotFound(name: String, column: String): AnalysisException =
    error("BLOOM_INDEX_COLUMN_NOT_FOUND", Map("indexName" -> name, "column" -> column))

  def notGlobal(name: String): AnalysisException =
    error("BLOOM_INDEX_NOT_GLOBAL", Map("indexName" -> name))

  def stale(name: String, column: String, missing: Int, total: Int, source: String, version: Long): AnalysisException =
    error("BLOOM_INDEX_STALE", Map("indexName" -> name, "column" -> column, "missing" -> missing.toString,
      "total" -> total.toString, "source" -> source, "version" -> version.toString))

  def decodingContextChanged(name: String, column: String, source: String, reason: String): AnalysisException =
    error("BLOOM_INDEX_DECODING_CONTEXT_CHANGED",
      Map("indexName" -> name, "column" -> column, "source" -> source, "reason" -> reason))

  def incrementalRefreshContextChanged(name: String, reason: String, source: String): AnalysisException =
    error("BLOOM_INDEX_INCREMENTAL_REFRESH_CONTEXT_CHANGED", Map("indexName" -> name, "reason" -> reason, "source" -> source))

  // ------------------------------------------------------------------ CREATE: columns and options

  def noSource(name: String): AnalysisException = error("BLOOM_INDEX_NO_SOURCE", Map("indexName" -> name))

  def noColumns(): AnalysisException = error("BLOOM_INDEX_NO_COLUMNS", Map.empty)

  def sourceColumnNotFound(column: String, source: String, columns: Seq[String]): AnalysisException =
    error("BLOOM_INDEX_SOURCE_COLUMN_NOT_FOUND", Map("column" -> column, "source" -> source, "columns" -> columns.mkString(", ")))

  def duplicateColumn(column: String): AnalysisException =
    error("BLOOM_INDEX_DUPLICATE_COLUMN", Map("column" -> column))

  def partitionColumn(column: String, source: String): AnalysisException =
    error("BLOOM_INDEX_PARTITION_COLUMN", Map("column" -> column, "source" -> source))

  def corruptRecordColumn(column: String, source: String): AnalysisException =
    error("BLOOM_INDEX_CORRUPT_RECORD_COLUMN", Map("column" -> column, "source" -> source))

  def xmlWildcardColumn(column: String, source: String): AnalysisException =
    error("BLOOM_INDEX_XML_WILDCARD_COLUMN", Map("column" -> column, "source" -> source))

  /** `dataType` is its SQL name (`ARRAY<INT>`); `reason` why it cannot be hashed. */
  def unsupportedColumnType(column: String, dataType: String, reason: String): AnalysisException =
    error("BLOOM_INDEX_UNSUPPORTED_COLUMN_TYPE", Map("column" -> column, "type" -> dataType, "reason" -> reason))

  /** `target`: "index" or "column 'x'". */
  def unknownOption(option: String, target: String, known: Seq[String]): AnalysisException =
    error("BLOOM_INDEX_UNKNOWN_OPTION",
      Map("option" -> option, "target" -> target, "known" -> known.sorted.mkString(", ")))

  /** `Invalid fpp '2': must be a number in (0, 1)`. */
  def invalidOptionValue(option: String, value: String, reason: String): AnalysisException =
    error("BLOOM_INDEX_INVALID_OPTION_VALUE", Map("option" -> option, "value" -> value, "reason" -> reason))

  def invalidBooleanOption(option: String, value: String): AnalysisException =
    error("BLOOM_INDEX_INVALID_BOOLEAN_OPTION", Map("option" -> option, "value" -> value))

  def fppUnreachable(fpp: Double, algorithm: String, reason: String): AnalysisException =
    error("BLOOM_INDEX_FPP_UNREACHABLE", Map("fpp" -> fpp.toString, "algorithm" -> algorithm, "reason" -> reason))

  def encryptedColumns(name: String, columns: String, source: String, reason: String, option: String): AnalysisException =
    error("BLOOM_INDEX_ENCRYPTED_COLUMNS",
      Map("indexName" -> name, "columns" -> columns, "source" -> source, "reason" -> reason, "option" -> option))

  // ------------------------------------------------------------------ the source

  def sourceNotFound(source: String): AnalysisException =
    error("BLOOM_INDEX_SOURCE_NOT_FOUND", Map("source" -> source))

  def pathNotFound(path: String): AnalysisException =
    error("BLOOM_INDEX_PATH_NOT_FOUND", Map("path" -> path))

  def unsupportedFormat(format: String, supported: Seq[String]): AnalysisException =
    error("BLOOM_INDEX_UNSUPPORTED_FORMAT", Map("format" -> format, "supported" -> supported.sorted.mkString(", ")))

  def unsupportedFileFormat(format: String): AnalysisException =
    error("BLOOM_INDEX_UNSUPPORTED_FILE_FORMAT", Map("format" -> format))

  /** `source` reads no files (a view over a range, a JDBC table ...). */
  def unsupportedSource(source: String): AnalysisException =
    error("BLOOM_INDEX_UNSUPPORTED_SOURCE", Map("source" -> source))

  def multipleRelations(source: String): AnalysisException =
    error("BLOOM_INDEX_MULTIPLE_RELATIONS", Map("source" -> source))

  def joinFilterOutdated(source: String, reason: String): AnalysisException =
    error("BLOOM_INDEX_JOIN_FILTER_OUTDATED", Map("source" -> source, "reason" -> reason))

  def sourceChanged(source: String): AnalysisException =
    error("BLOOM_INDEX_SOURCE_CHANGED", Map("source" -> source))

  def sourceColumnTypeChanged(column: String, name: String, source: String, indexed: String, current: String): AnalysisException =
    error("BLOOM_INDEX_SOURCE_COLUMN_TYPE_CHANGED", Map("column" -> column, "indexName" -> name, "source" -> source,
      "indexedType" -> indexed, "currentType" -> current))

  def orphaned(name: String, source: String): AnalysisException =
    error("BLOOM_INDEX_ORPHANED", Map("indexName" -> name, "source" -> source))

  def sourceColumnGone(column: String, name: String, source: String, columns: Seq[String]): AnalysisException =
    error("BLOOM_INDEX_SOURCE_COLUMN_GONE",
      Map("column" -> column, "indexName" -> name, "source" -> source, "columns" -> columns.mkString(", ")))

  // ------------------------------------------------------------------ per-column Bloom filter indexes

  def filterIndexAlreadyExists(column: String, source: String, name: String): AnalysisException =
    error("BLOOM_FILTER_INDEX_ALREADY_EXISTS", Map("column" -> column, "source" -> source, "indexName" -> name))

  /** `target`: the source, or "Column 'c' of <source>". */
  def filterIndexNotFound(target: String): AnalysisException =
    error("BLOOM_FILTER_INDEX_NOT_FOUND", Map("target" -> target))

  def filterIndexMultiColumn(name: String, columns: Seq[String]): AnalysisException =
    error("BLOOM_FILTER_INDEX_MULTI_COLUMN", Map("indexName" -> name, "columns" -> columns.mkString(", ")))

  // ------------------------------------------------------------------ bloom_might_contain

  def mightContainWrongNumArgs(function: String, count: Int): AnalysisException =
    error("BLOOM_MIGHT_CONTAIN_WRONG_NUM_ARGS",
      Map("functionName" -> function, "signature" -> "'<index>', '<column>', expr", "count" -> count.toString))

  def mightContainInvalidArgument(function: String, problem: String): AnalysisException =
    error("BLOOM_MIGHT_CONTAIN_INVALID_ARGUMENT", Map("functionName" -> function, "problem" -> problem))

  def mightContainKeyTypeMismatch(function: String, key: String, name: String, column: String, reason: String): AnalysisException =
    error("BLOOM_MIGHT_CONTAIN_KEY_TYPE_MISMATCH",
      Map("functionName" -> function, "key" -> key, "indexName" -> name, "column" -> column, "reason" -> reason))

  // ------------------------------------------------------------------ configuration

  /** `key`'s value cannot be used: `problem` says why ("is empty: set it to a folder"). */
  /** A workload history table function called with arguments (it takes none). */
  def historyArguments(functionName: String, count: Int): AnalysisException =
    error("BLOOM_INDEX_HISTORY_ARGUMENTS", Map("functionName" -> functionName, "count" -> count.toString))

  // ------------------------------------------------------------------ the advisor

  def invalidBudget(value: String): AnalysisException =
    error("BLOOM_INDEX_INVALID_BUDGET", Map("value" -> value))

  def whatIfColumnNotFound(column: String, sources: String): AnalysisException =
    error("BLOOM_INDEX_WHATIF_COLUMN_NOT_FOUND", Map("column" -> column, "sources" -> sources))

  /** The text `command` plans (EXPLAIN BLOOM INDEX FOR, WHATIF, RECOMMEND ... FOR) holds `statement`, a command. */
  def notAQuery(command: String, statement: String): AnalysisException =
    error("BLOOM_INDEX_NOT_A_QUERY", Map("command" -> command, "statement" -> statement))

  def invalidConf(key: String, problem: String): AnalysisException =
    error("BLOOM_INDEX_INVALID_CONF", Map("key" -> key, "problem" -> problem))

  // ------------------------------------------------------------------ the running Spark

  /** The session's Spark (`sparkVersion`) is outside the range this jar runs on (`supported`). */
  def unsupportedSparkVersion(sparkVersion: String, supported: String): AnalysisException =
    error("BLOOM_INDEX_UNSUPPORTED_SPARK_VERSION", Map("sparkVersion" -> sparkVersion, "supported" -> supported))

  /** The condition of [[ConcurrentBloomIndexUpdateException]]. */
  val ConcurrentUpdateCondition = "BLOOM_INDEX_CONCURRENT_UPDATE"
}

/**
 * An AnalysisException of one of our conditions. When Spark attaches the SQL text's position
 * (`withPosition`, as it does to errors of function lookups: `bloom_might_contain`), this one
 * keeps line and position (in the message, and as fields) but attaches no query context:
 * PySpark 4.2 logs an exception that has a query context with a message it renders from
 * Spark's own conditions file, which lacks ours, and fails there instead of converting it
 * (a Py4JJavaError instead of an AnalysisException).
 */
class BloomIndexAnalysisException(condition: BloomIndexErrors.Condition, params: Map[String, String], cause: Option[Throwable])
  extends AnalysisException(condition.name, condition.sqlState, condition.messageTemplate, params, cause, None) {

  override def withPosition(origin: Origin): AnalysisException = {
    val positioned = copy(line = origin.line, startPosition = origin.startPosition)
    positioned.setStackTrace(getStackTrace)
    positioned
  }
}

/**
 * Two writers raced for the same log version of an index and this one lost: nothing it did
 * is visible. Safe to retry the command. Condition `BLOOM_INDEX_CONCURRENT_UPDATE`, SQLSTATE
 * 40001 (serialization failure); in Python, `bloomindex.ConcurrentBloomIndexUpdateError`.
 */
class ConcurrentBloomIndexUpdateException(val index: String, val version: Long, detail: String, cause: Throwable = null)
  extends BloomIndexAnalysisException(
    BloomIndexErrors.condition(BloomIndexErrors.ConcurrentUpdateCondition),
    Map("indexName" -> index, "version" -> version.toString, "operation" -> detail),
    Option(cause))
