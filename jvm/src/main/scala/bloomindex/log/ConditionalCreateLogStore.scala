package bloomindex.log

import java.io.IOException
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{FileAlreadyExistsException, Files, Paths}
import scala.annotation.tailrec

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileAlreadyExistsException => HadoopFileAlreadyExists, CreateFlag, FileContext, Options, Path}

/**
 * Stores whose create can carry a "must not exist" precondition checked by the service in the
 * same step as the write: the entry is written straight to its name, and the store refuses
 * the write when the name exists. A refused write is a lost race, unless the object there
 * holds exactly our bytes: then an earlier attempt of this same write (retried by the client
 * after a lost answer) succeeded.
 */
abstract class ConditionalCreateLogStore(conf: Configuration) extends LogStore(conf) {

  /** Writes `bytes` to `path` under the store's "must not exist" precondition. */
  protected def conditionalCreate(path: Path, bytes: Array[Byte]): Unit

  /** Whether `e` (or a cause) is the store's refusal of the precondition. */
  protected def preconditionFailed(e: Throwable): Boolean

  /** Whether `e` says another conditional write of the same name is in flight (retry). */
  protected def conflictInFlight(e: Throwable): Boolean = false

  override def createIfAbsent(path: Path, content: String): Unit = {
    val bytes = content.getBytes(UTF_8)
    @tailrec def attempt(n: Int): Unit = {
      val outcome = try { conditionalCreate(path, bytes); None } catch {
        case e: IOException if preconditionFailed(e) =>
          if (holds(path, bytes)) None
          else Some(new FileAlreadyExistsException(path.toString, null, s"exists (${e.getClass.getSimpleName})"))
        case e: IOException if conflictInFlight(e) && n < LogStore.ConflictRetries => Some(e)
      }
      outcome match {
        case None => ()
        case Some(lost: FileAlreadyExistsException) => throw lost
        case Some(_) =>
          Thread.sleep(50L << n)
          attempt(n + 1)
      }
    }
    attempt(0)
  }

  private def holds(path: Path, bytes: Array[Byte]): Boolean =
    try read(path, bytes.length + 1).getBytes(UTF_8).sameElements(bytes)
    catch { case _: IOException => false }
}
