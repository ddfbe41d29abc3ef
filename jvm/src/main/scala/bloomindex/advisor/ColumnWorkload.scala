package bloomindex.advisor

import java.util.Locale

import bloomindex.history.ScanRecord

/**
 * One column's point lookups in a recorded workload, as [[FppModel]] takes them.
 *
 * @param scans           scans of the source the records hold (with a filter)
 * @param lookups         of those, the scans comparing the column by `=`, `IN` or `<=>` (the
 *                        lookups a filter of the column answers)
 * @param valuesPerLookup the values those compare it with, on average (>= 1)
 */
final case class ColumnWorkload(scans: Long, lookups: Long, valuesPerLookup: Double) {

  /** The share of the source's scans that look the column up. */
  def share: Double = if (scans == 0) 0.0 else lookups.toDouble / scans

  /** Lookups one build serves, for [[FppModel.choose]]: the lookups recorded, at least 1. */
  def lookupsPerBuild: Double = math.max(1.0, lookups.toDouble)
}

object ColumnWorkload {

  private val LookupOps = Set("=", "IN", "<=>")

  /**
   * `column`'s lookups among `records` (the scans of one source, the caller's to select: by
   * the source's identity), the column matched without regard to case. None without records.
   */
  def of(records: Seq[ScanRecord], column: String): Option[ColumnWorkload] = {
    if (records.isEmpty) return None
    val key = column.toLowerCase(Locale.ROOT)
    val values = records.flatMap { r =>
      val ps = r.predicates.filter(p => LookupOps.contains(p.op) && p.column.toLowerCase(Locale.ROOT) == key)
      if (ps.isEmpty) None else Some(math.max(1, ps.map(_.values).sum))
    }
    val v = if (values.isEmpty) 1.0 else values.sum.toDouble / values.size
    Some(ColumnWorkload(records.size.toLong, values.size.toLong, v))
  }
}
