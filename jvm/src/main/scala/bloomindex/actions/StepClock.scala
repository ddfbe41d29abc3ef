package bloomindex.actions

import org.apache.spark.internal.Logging

/**
 * Where an automatic refresh's time goes (issue 29): each step's wall time in the running thread,
 * logged at INFO (logger `bloomindex.actions.StepClock`) when the refresh ends. Costs a
 * `System.nanoTime` per step; nothing is kept when no refresh is timed.
 */
private[actions] object StepClock extends Logging {

  private final class Clock(val what: String) {
    val start: Long = System.nanoTime()
    var last: Long = start
    val steps = new StringBuilder
  }

  private val current = new ThreadLocal[Clock]

  /** Runs `f` timed as `what`; the steps marked in it are logged at the end. */
  def timed[T](what: String)(f: => T): T = {
    if (current.get != null || !log.isInfoEnabled) return f
    val c = new Clock(what)
    current.set(c)
    try f finally {
      current.remove()
      logInfo(f"${c.what}: ${(System.nanoTime() - c.start) / 1e6}%.1f ms (${c.steps.toString.stripPrefix(", ")})")
    }
  }

  /** The time since the previous mark (or the start), as step `step`. */
  def mark(step: String): Unit = {
    val c = current.get
    if (c != null) {
      val now = System.nanoTime()
      c.steps.append(f", $step ${(now - c.last) / 1e6}%.1f")
      c.last = now
    }
  }
}
