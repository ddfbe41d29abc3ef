package bloomindex.pruning

import scala.reflect.ClassTag

import org.apache.spark.{Partition, SparkContext, TaskContext}
import org.apache.spark.rdd.RDD

/**
 * The RDD a pruned scan's marker ([[BloomIndexPrunedScanExec]]) returns, which each action on
 * its plan may point at another copy of the scan.
 *
 * Spark builds a plan node's RDD once (`SparkPlan.execute` is memoized) and runs that RDD again
 * for every later action on the same plan (a DataFrame collected twice), with the files its
 * first run chose. Before each action on a plan, Spark resets the plan's metrics
 * (`Dataset.withAction`); the marker checks its skipped files again there and [[route]]s this
 * RDD to the scan the action must read: the scan as planned, or a copy that also reads the
 * skipped files found changed on storage since ([[RecheckedScan]]). The next job's tasks are
 * serialized with the route current when it is submitted.
 *
 * Its partitions are slots: as many as the first scan's RDD had partitions, and at least one, so
 * a scan that skipped every file still has a task to read a file found changed. A later scan's
 * partitions are shared out among the slots in runs (as `coalesce` does), so the slots read in
 * turn read every partition in its order. Where the scan's partitions mean
 * something (`keyed`: a bucketed scan, whose partition `i` holds bucket `i`), partition `i` of a
 * later scan goes to slot `i`, and one with another number of partitions is refused with an
 * error rather than read into the wrong slots.
 *
 * The scans routed to are leaves and narrow chains over them (file scans, their code-generated
 * stage), computed inside this RDD's tasks: it declares no dependency, and each route's lineage
 * is completed on the driver before it can be serialized.
 */
final class RoutedScanRDD[T: ClassTag] private (sc: SparkContext, slots: Int, keyed: Boolean,
    @volatile private var current: RoutedScanRDD.Route[T]) extends RDD[T](sc, Nil) {

  /** Points the next jobs at `next` (the same scan again: nothing changes). */
  def route(next: RDD[T]): Unit = if (next ne current.rdd) current = RoutedScanRDD.Route(next, slots, keyed)

  /** The RDD the next job reads (for tests). */
  def routed: RDD[T] = current.rdd

  override protected def getPartitions: Array[Partition] = Array.tabulate[Partition](slots)(RoutedScanRDD.Slot)

  override def compute(split: Partition, context: TaskContext): Iterator[T] = {
    val r = current
    r.parts(split.index).iterator.flatMap(p => r.rdd.iterator(p, context))
  }

  override protected def getPreferredLocations(split: Partition): Seq[String] = {
    val r = current
    r.parts(split.index).toSeq.flatMap(r.rdd.preferredLocations).distinct
  }
}

object RoutedScanRDD {

  /** An RDD routed to `first`, the scan's RDD as its first run reads it. */
  def apply[T: ClassTag](first: RDD[T], keyed: Boolean): RoutedScanRDD[T] = {
    val slots = math.max(1, first.partitions.length)
    new RoutedScanRDD[T](first.sparkContext, slots, keyed, Route(first, slots, keyed))
  }

  private final case class Slot(index: Int) extends Partition

  /** `rdd` and, for each slot, the partitions of it the slot computes. */
  private final case class Route[T](rdd: RDD[T], parts: Array[Array[Partition]])

  private object Route {
    def apply[T](rdd: RDD[T], slots: Int, keyed: Boolean): Route[T] = {
      val ps = rdd.partitions
      if (keyed && ps.length != slots) {
        throw new IllegalStateException(s"bloomindex: a bucketed scan read again with ${ps.length} partitions where " +
          s"its plan has $slots; files it skipped changed on storage since its first run: read the table again " +
          "(a new DataFrame) to take a new listing")
      }
      completeLineage(rdd)
      // Slot i: partitions [i * m / slots, (i + 1) * m / slots), in order, so the slots in turn read them all in turn.
      val m = ps.length.toLong
      Route(rdd, Array.tabulate(slots)(i => ps.slice((i * m / slots).toInt, ((i + 1) * m / slots).toInt)))
    }
  }

  /** Computes each RDD's partitions and dependencies in `rdd`'s lineage, as the scheduler does for RDDs it knows. */
  private def completeLineage(rdd: RDD[_]): Unit = {
    rdd.partitions
    rdd.dependencies.foreach(d => completeLineage(d.rdd))
  }
}
