package bloomindex.pruning

import scala.reflect.ClassTag

import org.apache.spark.{Partition, ShuffleDependency, SparkContext, TaskContext}
import org.apache.spark.rdd.RDD

/**
 * The RDD a pruned scan's marker ([[BloomIndexPrunedScanExec]]) returns: the scan as planned,
 * and beside it a scan of the skipped files a run found changed on storage, which each action on
 * the plan may set again.
 *
 * Spark builds a plan node's RDD once (`SparkPlan.execute` is memoized) and runs that RDD again
 * for every later action on the same plan (a DataFrame collected twice), with the files its
 * first run chose. Before each action on a plan, Spark resets the plan's metrics
 * (`Dataset.withAction`); the marker checks its skipped files again there ([[RecheckedScan]])
 * and [[route]]s this RDD's extra reads: a copy of the scan that reads only the files found
 * changed, or nothing. A job's tasks are serialized with the route current when its stage is
 * submitted.
 *
 * Partition `i` (a slot) reads the planned scan's partition `i`, always the same (a stage
 * recomputed in part, or an action of many jobs, never reads a planned file twice or not at
 * all), then the extra scan's partitions given to it: in runs (as `coalesce` shares them out),
 * or, where the scan's partitions mean something (`keyed`: a bucketed scan, whose partition `i`
 * holds bucket `i`), the extra scan's partition `i`; an extra scan with another number of
 * partitions, or any extra scan where the scan's output is ordered (`ordered`: the rows read
 * beside would break that order), is refused with an error rather than read in the wrong place.
 * At least one slot, so a scan that skipped every file still has a task to read a file found
 * changed. Each slot carries its planned partition itself, so a task does not carry every
 * other's; the extra scan's partitions (only the changed files) go with every task.
 *
 * Both scans are file scans or narrow chains over them (their code-generated stage), computed
 * inside the slot's task: this RDD declares no dependency (refusing a lineage with a shuffle),
 * and each scan's lineage is completed on the driver before it can be serialized.
 */
final class RoutedScanRDD[T: ClassTag] private (sc: SparkContext, planned: RDD[T],
    @transient private val slots: Array[Partition], keyed: Boolean, ordered: Boolean) extends RDD[T](sc, Nil) {

  @volatile private var extra: Option[RoutedScanRDD.Extra[T]] = None

  /** Sets what the next jobs read beside the planned scan (None: nothing). */
  def route(next: Option[RDD[T]]): Unit = next match {
    case Some(rdd) if extra.exists(_.rdd eq rdd) =>
    case _ => extra = next.map(RoutedScanRDD.Extra(_, slots.length, keyed, ordered))
  }

  /** What the next job reads beside the planned scan (for tests). */
  def routed: Option[RDD[T]] = extra.map(_.rdd)

  override protected def getPartitions: Array[Partition] = slots

  override def compute(split: Partition, context: TaskContext): Iterator[T] = {
    val slot = split.asInstanceOf[RoutedScanRDD.Slot]
    slot.planned.iterator.flatMap(p => planned.iterator(p, context)) ++
      extra.iterator.flatMap(e => e.parts(slot.index).iterator.flatMap(p => e.rdd.iterator(p, context)))
  }

  override protected def getPreferredLocations(split: Partition): Seq[String] = {
    val slot = split.asInstanceOf[RoutedScanRDD.Slot]
    (slot.planned.toSeq.flatMap(planned.preferredLocations) ++
      extra.toSeq.flatMap(e => e.parts(slot.index).toSeq.flatMap(e.rdd.preferredLocations))).distinct
  }
}

object RoutedScanRDD {

  /** An RDD of the scan as planned (`planned`: its RDD as the first run reads it), nothing beside yet. */
  def apply[T: ClassTag](planned: RDD[T], keyed: Boolean, ordered: Boolean): RoutedScanRDD[T] = {
    completeLineage(planned)
    val ps = planned.partitions
    val slots = Array.tabulate[Partition](math.max(1, ps.length))(i => Slot(i, ps.lift(i).toArray))
    new RoutedScanRDD[T](planned.sparkContext, planned, slots, keyed, ordered)
  }

  /** Partition `index`: the planned scan's partition of that index (none past its last). */
  private final case class Slot(index: Int, planned: Array[Partition]) extends Partition

  /** The extra scan and, for each slot, the partitions of it the slot reads. */
  private final case class Extra[T](rdd: RDD[T], parts: Array[Array[Partition]])

  private object Extra {
    def apply[T](rdd: RDD[T], slots: Int, keyed: Boolean, ordered: Boolean): Extra[T] = {
      val ps = rdd.partitions
      def refuse(why: String) = throw new IllegalStateException(s"bloomindex: files a scan skipped changed on " +
        s"storage after its plan was made, and $why: read the table again (a new DataFrame) to plan it on a new listing")
      if (ordered) refuse("the scan's rows are ordered, which reading them beside the scan would break")
      if (keyed && ps.length != slots) refuse(s"the scan of them has ${ps.length} partitions where the plan's has $slots")
      completeLineage(rdd)
      // Slot i: partitions [i * m / slots, (i + 1) * m / slots), so the slots in turn read them all in turn.
      val m = ps.length.toLong
      Extra(rdd, Array.tabulate(slots)(i => ps.slice((i * m / slots).toInt, ((i + 1) * m / slots).toInt)))
    }
  }

  /** Computes each RDD's partitions and dependencies in `rdd`'s lineage, as the scheduler does for RDDs it knows. */
  private def completeLineage(rdd: RDD[_]): Unit = {
    rdd.partitions
    rdd.dependencies.foreach {
      case s: ShuffleDependency[_, _, _] =>
        throw new IllegalArgumentException(s"bloomindex: a pruned scan's RDD reads a shuffle (${s.rdd}); it must be a scan")
      case d => completeLineage(d.rdd)
    }
  }
}
