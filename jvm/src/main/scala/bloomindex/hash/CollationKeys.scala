package bloomindex.hash

import com.ibm.icu.util.VersionInfo

import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.catalyst.util.CollationFactory
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{CharType, StringType, VarcharType}
import org.apache.spark.unsafe.types.UTF8String

/**
 * Strings of a collation under which equal strings may differ in bytes (`UTF8_LCASE`, the ICU
 * collations such as `UNICODE_CI`, the `RTRIM` ones): their filters hold the hash of each
 * value's collation key, Spark's own (`CollationFactory.getCollationKeyBytes`, what its hash
 * aggregates and joins group by), so that every string equal to a value under the collation
 * hashes alike. Such a filter is no Parquet filter of the column's bytes: a footer's is never
 * taken for it. See docs/decisions.md ("Equality under a collation").
 */
object CollationKeys {

  /** Whether values of `s` are stored by collation key: a collated STRING (not CHAR or VARCHAR). */
  def keyed(s: StringType): Boolean =
    !CollationFactory.fetchCollation(s.collationId).supportsBinaryEquality && !s.isInstanceOf[CharType] && !s.isInstanceOf[VarcharType]

  def of(v: UTF8String, s: StringType): Array[Byte] = CollationFactory.getCollationKeyBytes(v, s.collationId)

  /**
   * The version of the data collation keys are computed from: ICU's, which Spark bundles (its
   * collators' sort keys for `UNICODE`, `UNICODE_CI` and the locale collations; its case mapping,
   * `UCharacter.toLowerCase`, for `UTF8_LCASE`). It changes between Spark releases (Spark 4.1
   * ships ICU 77.1, Spark 4.2 and 4.3 ICU 78.3), and with it the keys of some strings (`'#'`,
   * `'@'`, `'%'` sort otherwise under UCA 17): an index's keys answer for a query only where the
   * query computes keys with the same data. Recorded in a keyed column's decoding context.
   */
  def dataVersion: String =
    SQLConf.get.getConf(BloomIndexSQLConf.TEST_COLLATION_DATA_VERSION).getOrElse(s"icu-${VersionInfo.ICU_VERSION}")
}
