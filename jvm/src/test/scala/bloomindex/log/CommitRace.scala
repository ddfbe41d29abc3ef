package bloomindex.log

import java.nio.file.{Files, Paths}
import java.util.UUID

import bloomindex.errors.ConcurrentBloomIndexUpdateException

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * One of the processes of tests/s3's commit race (no Spark session: a JVM with the Hadoop
 * configuration given as arguments). For each of `rounds` versions from `first`, it meets the
 * other process at a barrier of local files, then commits a copy of the entry before `first`
 * as that version through [[IndexLog.commit]] with the store the configuration chooses, and
 * prints one line per round: `<version> <operation id> won`,
 * `<version> <operation id> lost <condition>` or `<version> <operation id> error <exception>`.
 *
 * Arguments: indexDir barrierDir me other first rounds [key=value ...]
 */
object CommitRace {

  def main(args: Array[String]): Unit = {
    val Array(indexDir, barrierDir, me, other, first, rounds) = args.take(6)
    val conf = new Configuration()
    args.drop(6).foreach { kv =>
      val i = kv.indexOf('=')
      conf.set(kv.substring(0, i), kv.substring(i + 1))
    }
    val log = new IndexLog(new Path(indexDir), conf)
    val template = log.read(first.toLong - 1)
    // Loads the store and the file system's connection pool before the first round.
    log.versions()
    val out = new StringBuilder
    for (v <- first.toLong until first.toLong + rounds.toInt) {
      val entry = template.copy(version = v, operation = s"RACE $me", operationId = UUID.randomUUID().toString,
        timestamp = System.currentTimeMillis())
      meet(barrierDir, v, me, other)
      val outcome = try { log.commit(entry); "won" } catch {
        case e: ConcurrentBloomIndexUpdateException => s"lost ${e.getCondition}"
        case scala.util.control.NonFatal(e) => s"error ${e.getClass.getName}: ${e.getMessage}".replace('\n', ' ')
      }
      out.append(s"$v ${entry.operationId} $outcome\n")
    }
    print(out)
    System.out.flush()
  }

  /** Marks `me` ready for round `v`, then waits (spinning) until `other` is too. */
  private def meet(dir: String, v: Long, me: String, other: String): Unit = {
    Files.createFile(Paths.get(dir, s"$v.$me"))
    val theirs = Paths.get(dir, s"$v.$other")
    val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
    while (!Files.exists(theirs)) {
      if (System.nanoTime() > deadline) throw new IllegalStateException(s"round $v: $other never came")
      Thread.onSpinWait()
    }
  }
}
