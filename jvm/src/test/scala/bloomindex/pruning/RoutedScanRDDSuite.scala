package bloomindex.pruning

import bloomindex.testing.TestSpark

import org.apache.spark.SparkContext
import org.apache.spark.rdd.RDD
import org.scalatest.funsuite.AnyFunSuite

/** The pruned scan's RDD, routed between jobs to another RDD of the same elements' kind. */
class RoutedScanRDDSuite extends AnyFunSuite {

  private lazy val sc: SparkContext = TestSpark.session.sparkContext

  private def parts[T](rdd: RDD[T]): Seq[Seq[T]] = rdd.glom().collect().map(_.toSeq).toSeq

  test("jobs read the RDD routed to when they start, in as many partitions as the first had") {
    val first = sc.parallelize(1 to 6, 3)
    val routed = RoutedScanRDD(first, keyed = false)
    assert(parts(routed) == Seq(Seq(1, 2), Seq(3, 4), Seq(5, 6)))
    // A later scan's partitions are shared out among the slots in runs, all of them in order.
    val later = sc.parallelize(1 to 10, 5)
    routed.route(later)
    assert(routed.getNumPartitions == 3)
    assert(parts(routed) == Seq(Seq(1, 2), Seq(3, 4, 5, 6), Seq(7, 8, 9, 10)))
    // A narrow chain over a scan is computed inside the slot's task.
    routed.route(later.map(_ * 10).filter(_ > 50))
    assert(routed.collect().toSeq == Seq(60, 70, 80, 90, 100))
    routed.route(first)
    assert(routed.collect().toSeq == (1 to 6))
  }

  test("a first RDD without partitions still gives one slot, which reads a later scan whole") {
    val routed = RoutedScanRDD(sc.emptyRDD[Int], keyed = false)
    assert(routed.getNumPartitions == 1)
    assert(routed.collect().isEmpty)
    routed.route(sc.parallelize(Seq(7, 8, 9), 2))
    assert(parts(routed) == Seq(Seq(7, 8, 9)))
  }

  test("a keyed scan keeps partition i in slot i and refuses a later scan of another number of partitions") {
    val routed = RoutedScanRDD(sc.parallelize(1 to 4, 2), keyed = true)
    routed.route(sc.parallelize(Seq(5, 6, 7), 2))
    assert(parts(routed) == Seq(Seq(5), Seq(6, 7)))
    val e = intercept[IllegalStateException](routed.route(sc.parallelize(1 to 3, 3)))
    assert(e.getMessage.contains("3 partitions where its plan has 2"), e.getMessage)
    assert(parts(routed) == Seq(Seq(5), Seq(6, 7)), "a refused route leaves the one before")
  }
}
