package bloomindex.source

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * One kind of source: turns the plan nodes of its scans into [[ScanSource]]s. A new table
 * format is one more provider (and its build-side reading in [[bloomindex.source.SourceResolver]]).
 */
trait SourceProvider {
  /** The source a logical leaf reads, if it is of this provider's kind. */
  def describe(plan: LogicalPlan): Option[ScanSource]
}

/** The providers, in the order the catalog asks them. */
object SourceProviders {
  val all: Seq[SourceProvider] = Seq(DeltaProvider, FileRelationProvider, FileTableProvider, IcebergProvider)

  def describe(plan: LogicalPlan): Option[ScanSource] = all.iterator.flatMap(_.describe(plan)).toSeq.headOption
}
