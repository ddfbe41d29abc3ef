package bloomindex.bench

/** What the JVM benchmarks share: warm-up then the median of timed rounds, and the CPU's name. */
object Timing {

  def median(xs: Seq[Double]): Double = xs.sorted.apply(xs.size / 2)

  /**
   * Median ns per item of `body`, which handles `count` items per call: first at least
   * `warmCalls` calls and `warmupNanos` of warm-up (until C2 has compiled the loop; the Vector
   * API is very slow before), then `rounds` timed calls.
   */
  def nsPerItem(count: Int, warmupNanos: Long, rounds: Int, warmCalls: Int)(body: => Unit): Double = {
    val warmEnd = System.nanoTime() + warmupNanos
    var warm = 0
    while (warm < warmCalls || System.nanoTime() < warmEnd) { body; warm += 1 }
    median((1 to rounds).map { _ =>
      val t0 = System.nanoTime()
      body
      (System.nanoTime() - t0).toDouble / count
    })
  }

  /** The `model name` of /proc/cpuinfo, or "?". */
  lazy val cpu: String = scala.util.Try(scala.io.Source.fromFile("/proc/cpuinfo").getLines()
    .find(_.startsWith("model name")).map(_.split(":")(1).trim).getOrElse("?")).getOrElse("?")
}
