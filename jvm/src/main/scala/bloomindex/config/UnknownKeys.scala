package bloomindex.config

import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf

/**
 * A `spark.bloomindex.*` key the project does not know (`spark.bloomindex.fpp=2` for
 * `spark.bloomindex.fpp.default`) would otherwise be ignored without a word: each one gets a
 * warning when a session starts, naming the closest known key. Keys set later with `SET` are
 * not checked (SQLConf accepts any key there, as for Spark's own).
 */
object UnknownKeys extends Logging {

  private val Prefix = "spark.bloomindex."

  /** The public keys, with the per-scheme log store key as its pattern. */
  private lazy val known: Seq[String] = BloomIndexSQLConf.all.map(_.key).filter(_.startsWith(Prefix))

  private def isKnown(key: String): Boolean = known.exists { k =>
    val hole = k.indexOf('<')
    if (hole < 0) k == key
    else {
      val (before, after) = (k.substring(0, hole), k.substring(k.indexOf('>') + 1))
      key.length > before.length + after.length && key.startsWith(before) && key.endsWith(after) &&
        !key.substring(before.length, key.length - after.length).contains('.')
    }
  }

  /** The unknown `spark.bloomindex.*` keys among `keys`, each with the closest known key. */
  def unknown(keys: Iterable[String]): Seq[(String, String)] =
    keys.toSeq.distinct.sorted.filter(k => k.startsWith(Prefix) && !isKnown(k)).map(k => k -> closest(k))

  /** A known key the unknown one is a part of (or that is a part of it) first, else the fewest edits. */
  def closest(key: String): String = known.minBy { k =>
    if (k.startsWith(key + ".") || key.startsWith(k + ".")) (0, k.length) else (1, editDistance(key, k))
  }

  private val warned = java.util.Collections.newSetFromMap(new java.util.WeakHashMap[SparkSession, java.lang.Boolean]())

  /**
   * Logs one warning per unknown key of the session's configuration, once per session (Spark
   * builds the check rules, where this is called from, more than once per session state).
   */
  def warn(spark: SparkSession): Unit = if (warned.synchronized(warned.add(spark))) {
    unknown(spark.conf.getAll.keys).foreach { case (key, near) =>
      logWarning(s"bloomindex: unknown configuration key '$key' is ignored; did you mean '$near'?")
    }
  }

  /** Takes `copy` (a copy of a session, same settings) as warned already: its keys were the original's. */
  def warnedFor(copy: SparkSession): Unit = warned.synchronized(warned.add(copy))

  private def editDistance(a: String, b: String): Int = {
    var previous = Array.tabulate(b.length + 1)(identity)
    for (i <- 1 to a.length) {
      val current = new Array[Int](b.length + 1)
      current(0) = i
      for (j <- 1 to b.length) {
        val substitution = previous(j - 1) + (if (a(i - 1) == b(j - 1)) 0 else 1)
        current(j) = math.min(substitution, math.min(previous(j), current(j - 1)) + 1)
      }
      previous = current
    }
    previous(b.length)
  }
}
