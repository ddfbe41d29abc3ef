package bloomindex.testing

import java.net.URI
import java.util.concurrent.atomic.AtomicInteger

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{DelegateToFileSystem, FSDataInputStream, Path, RawLocalFileSystem}

/**
 * The local disk under scheme `stall://`, whose reads can be made to hang: while
 * [[StallingFileSystem.stall]] holds, every `open` waits until [[StallingFileSystem.release]]
 * (an object store that stops answering); while [[StallingFileSystem.failOpensOf]] holds, opens
 * of the paths it names fail with an IOException (a store's passing error). Registered with `fs.stall.impl` and, for
 * `FileContext` (the log stores' commits), `fs.AbstractFileSystem.stall.impl` ([[StallingFs]]).
 */
class StallingFileSystem extends RawLocalFileSystem {
  override def getUri: URI = StallingFileSystem.Uri
  override def getScheme: String = "stall"

  override def open(f: Path, bufferSize: Int): FSDataInputStream = {
    StallingFileSystem.waitWhileStalled()
    StallingFileSystem.failing.foreach { part =>
      if (f.toString.contains(part)) throw new java.io.IOException(s"$f: the store failed the request (a test's injected error)")
    }
    super.open(f, bufferSize)
  }
}

object StallingFileSystem {
  private val Uri = URI.create("stall:///")
  private val lock = new Object
  private var stalled = false
  private val waiting = new AtomicInteger()

  /** Reads that have waited on a stall so far. */
  def stalledReads: Int = waiting.get

  def stall(): Unit = lock.synchronized { stalled = true }

  @volatile private[testing] var failing: Option[String] = None

  /** Opens of paths containing `part` fail (None: none do). */
  def failOpensOf(part: Option[String]): Unit = failing = part

  def release(): Unit = lock.synchronized { stalled = false; lock.notifyAll() }

  private def waitWhileStalled(): Unit = lock.synchronized {
    if (stalled) waiting.incrementAndGet()
    // At most 2 minutes, so a test that forgets to release cannot hang the suite's JVM.
    val until = System.currentTimeMillis() + 120000L
    while (stalled && System.currentTimeMillis() < until) lock.wait(1000L)
  }
}

/** [[StallingFileSystem]] as a `FileContext` file system. */
class StallingFs(uri: URI, conf: Configuration)
  extends DelegateToFileSystem(uri, new StallingFileSystem, conf, "stall", false)
