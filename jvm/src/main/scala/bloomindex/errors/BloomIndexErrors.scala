package bloomindex.errors

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.trees.Origin

/** The errors users see, in one place so their wording stays consistent. */
object BloomIndexErrors {

  /**
   * Spark's error condition for a message given whole (printed without a prefix). An error
   * condition matters: PySpark cannot convert an AnalysisException that has none once Spark
   * attached the SQL text's position to it (as it does for errors of function lookups).
   */
  val MessageCondition = "_LEGACY_ERROR_TEMP_1332"

  def analysis(message: String, cause: Throwable = null): AnalysisException =
    new AnalysisException(MessageCondition, Map("errorMessage" -> message), Option(cause))

  /** A syntax error in one of our statements, at `position` (0-based) of `command`. */
  def parse(command: String, position: Int, near: String, message: String): ParseException = {
    val before = command.substring(0, math.min(position, command.length))
    val line = before.count(_ == '\n') + 1
    val column = position - (before.lastIndexOf('\n') + 1)
    new ParseException(Some(command), Origin(Some(line), Some(column)), "PARSE_SYNTAX_ERROR",
      Map("error" -> s"'$near'", "hint" -> s": $message"))
  }

  def notFound(name: String): AnalysisException =
    analysis(s"Bloom index '$name' does not exist")

  def alreadyExists(name: String): AnalysisException =
    analysis(s"Bloom index '$name' already exists; use IF NOT EXISTS, or DROP BLOOM INDEX it first")
}

/**
 * Two writers raced for the same log version of an index and this one lost: nothing it did
 * is visible. Safe to retry the command.
 */
class ConcurrentBloomIndexUpdateException(val index: String, val version: Long, detail: String, cause: Throwable = null)
  extends AnalysisException(
    BloomIndexErrors.MessageCondition,
    Map("errorMessage" -> (s"Bloom index '$index': another command committed log version $version first " +
      s"($detail lost the race); nothing was changed by this one, retry it")),
    Option(cause))
