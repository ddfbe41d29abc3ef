package bloomindex.catalog

import bloomindex.text.CaseFolding

import org.apache.spark.sql.internal.SQLConf

/** What of a session decides how its queries' `lower()` folds case, for text filters. */
object TextSession {

  /** Spark 4's switch between ICU's and the JDK's lower-case mapping (UTF8_BINARY strings). */
  val IcuCaseMappings = "spark.sql.icu.caseMappings.enabled"

  /** The case folding `lower()` runs with in a session with `conf`: the one `case = 'lower'` builds with. */
  def folding(conf: SQLConf): CaseFolding =
    if (conf.getConfString(IcuCaseMappings, "true").trim.equalsIgnoreCase("false")) CaseFolding.LowerJdk
    else CaseFolding.Lower

  /**
   * Why a filter folded with `folding` may not answer a predicate on `lower(c)` in a session with
   * `conf`, if it may not: the session's `lower()` folds otherwise, or the JVM's default locale
   * makes it differ from the root locale's (Turkish, Azeri, Lithuanian).
   */
  def lowerMismatch(folding: CaseFolding, conf: SQLConf): Option[String] =
    if (folding == CaseFolding.Off) Some("the filter does not fold case")
    else if (folding != TextSession.folding(conf)) {
      Some(s"the filter folds with ${folding.name}, this session's lower() with ${TextSession.folding(conf).name} ($IcuCaseMappings)")
    } else if (!CaseFolding.foldsAsRoot(java.util.Locale.getDefault)) {
      Some(s"the JVM's default locale (${java.util.Locale.getDefault}) lower-cases otherwise than the filter")
    } else None
}
