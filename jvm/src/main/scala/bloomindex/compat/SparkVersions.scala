package bloomindex.compat

import bloomindex.errors.BloomIndexErrors

/**
 * The Spark versions this jar runs on, and the check made at session start.
 *
 * One jar serves every supported Spark: it is compiled against the build's Spark (the
 * Makefile's `.venv`), and where the others differ in a way that reaches our bytecode, the code
 * goes through [[SparkShim]] (see docs/decisions.md, "Spark versions"). `make test-spark-versions`
 * checks that every reference of the jar into Spark resolves in each supported version
 * (tests/spark_versions/linkcheck.py) and runs the smoke tests there.
 */
object SparkVersions {

  /** The oldest supported Spark (major, minor), inclusive. */
  val Oldest: (Int, Int) = (4, 1)

  /** The newest supported Spark (major, minor), inclusive: every patch release of it. */
  val Newest: (Int, Int) = (4, 3)

  /** The supported range as users read it. */
  val SupportedRange: String = s"${Oldest._1}.${Oldest._2}.x to ${Newest._1}.${Newest._2}.x"

  /**
   * A system property that stands in for the running Spark's version in [[check]]: tests set it
   * to a version outside the range to see the error a user on that Spark gets. Never set in use.
   */
  val VersionOverrideProperty = "bloomindex.testing.sparkVersion"

  /** The running Spark's version (or the test override). */
  def running: String = sys.props.getOrElse(VersionOverrideProperty, org.apache.spark.SPARK_VERSION)

  /** (major, minor) of a version string such as `4.2.0`, `4.3.0-SNAPSHOT` or `4.1.4-preview`. */
  def majorMinor(version: String): Option[(Int, Int)] = {
    val MajorMinor = """^(\d+)\.(\d+)(?:[.\-+].*)?$""".r
    version.trim match {
      case MajorMinor(major, minor) => Some((major.toInt, minor.toInt))
      case _ => None
    }
  }

  def isSupported(version: String): Boolean = majorMinor(version).exists { mm =>
    Ordering[(Int, Int)].gteq(mm, Oldest) && Ordering[(Int, Int)].lteq(mm, Newest)
  }

  /** Fails with `BLOOM_INDEX_UNSUPPORTED_SPARK_VERSION` unless the running Spark is supported. */
  def check(): Unit = {
    val version = running
    if (!isSupported(version)) throw BloomIndexErrors.unsupportedSparkVersion(version, SupportedRange)
  }
}
