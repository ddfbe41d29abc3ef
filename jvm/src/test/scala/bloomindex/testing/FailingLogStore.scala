package bloomindex.testing

import java.io.IOException

import bloomindex.log.LocalLogStore

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * A local log store that fails on demand, for the actions' suites: set [[FailingLogStore.failOn]]
 * to a test of the entry's JSON, and the next commit it matches fails with an IOException (once);
 * with `steal`, another writer is made to commit that version first (a lost race).
 */
class FailingLogStore(conf: Configuration) extends LocalLogStore(conf) {
  override def createIfAbsent(path: Path, content: String): Unit = {
    if (FailingLogStore.matches(content)) {
      if (FailingLogStore.steal) super.createIfAbsent(path, content)
      else throw new IOException(s"injected failure committing ${path.getName}")
    }
    super.createIfAbsent(path, content)
  }

  override def read(path: Path, maxBytes: Int, status: Option[org.apache.hadoop.fs.FileStatus]): String = {
    if (FailingLogStore.failsRead(path)) throw new IOException(s"injected failure reading ${path.getName}")
    super.read(path, maxBytes, status)
  }
}

object FailingLogStore {
  @volatile private var test: String => Boolean = _ => false
  @volatile var steal: Boolean = false

  /** The next commit whose entry JSON passes `t` fails (or, with `steal`, loses its race). */
  def failOn(t: String => Boolean, lostRace: Boolean = false): Unit = synchronized {
    test = t
    steal = lostRace
  }

  @volatile private var readTest: (Seq[Path], Int) = (Nil, 0)

  /** Reads of `paths` fail once `after` reads of them succeeded (an object store's passing errors). */
  def failReadsOf(paths: Seq[Path], after: Int): Unit = synchronized { readTest = (paths, after) }

  private def failsRead(path: Path): Boolean = synchronized {
    val (paths, n) = readTest
    paths.exists(p => p.getName == path.getName && p.getParent.getName == path.getParent.getName) && {
      if (n > 0) { readTest = (paths, n - 1); false } else true
    }
  }

  def reset(): Unit = { failOn(_ => false); synchronized { readTest = (Nil, 0) } }

  private def matches(content: String): Boolean = synchronized {
    val hit = test(content)
    if (hit) test = _ => false
    hit
  }

  /** The entry JSON's state is `state`, and (if given) its operation contains `operation`. */
  def entry(state: String, operation: String = ""): String => Boolean = json =>
    json.matches(s"""(?s).*"state"\\s*:\\s*"$state".*""") && json.contains(operation)
}
