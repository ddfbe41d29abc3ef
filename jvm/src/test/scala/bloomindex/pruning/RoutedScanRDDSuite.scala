package bloomindex.pruning

import bloomindex.testing.TestSpark

import org.apache.spark.SparkContext
import org.apache.spark.rdd.RDD
import org.scalatest.funsuite.AnyFunSuite

/** The pruned scan's RDD: the scan as planned, and beside it what a later job is routed to read. */
class RoutedScanRDDSuite extends AnyFunSuite {

  private lazy val sc: SparkContext = TestSpark.session.sparkContext

  private def parts[T](rdd: RDD[T]): Seq[Seq[T]] = rdd.glom().collect().map(_.toSeq).toSeq

  test("each job reads the planned partitions in their slots and the extra scan routed to when it starts") {
    val routed = RoutedScanRDD(sc.parallelize(1 to 6, 3), keyed = false, ordered = false)
    assert(parts(routed) == Seq(Seq(1, 2), Seq(3, 4), Seq(5, 6)))
    // An extra scan's partitions are shared out among the slots in runs, after each slot's own.
    routed.route(Some(sc.parallelize(11 to 15, 5)))
    assert(routed.getNumPartitions == 3)
    assert(parts(routed) == Seq(Seq(1, 2, 11), Seq(3, 4, 12, 13), Seq(5, 6, 14, 15)))
    // A narrow chain over a scan is computed inside the slot's task.
    routed.route(Some(sc.parallelize(1 to 10, 5).map(_ * 10).filter(_ > 80)))
    assert(routed.collect().toSeq == Seq(1, 2, 3, 4, 5, 6, 90, 100))
    routed.route(None)
    assert(routed.collect().toSeq == (1 to 6))
    assert(routed.routed.isEmpty)
  }

  test("a planned scan without partitions still gives one slot, which reads an extra scan whole") {
    val routed = RoutedScanRDD(sc.emptyRDD[Int], keyed = false, ordered = false)
    assert(routed.getNumPartitions == 1)
    assert(routed.collect().isEmpty)
    routed.route(Some(sc.parallelize(Seq(7, 8, 9), 2)))
    assert(parts(routed) == Seq(Seq(7, 8, 9)))
  }

  test("a keyed scan reads extra partition i in slot i and refuses an extra scan of another number of partitions") {
    val routed = RoutedScanRDD(sc.parallelize(1 to 4, 2), keyed = true, ordered = false)
    routed.route(Some(sc.parallelize(Seq(5, 6, 7), 2)))
    assert(parts(routed) == Seq(Seq(1, 2, 5), Seq(3, 4, 6, 7)))
    val e = intercept[IllegalStateException](routed.route(Some(sc.parallelize(1 to 3, 3))))
    assert(e.getMessage.contains("has 3 partitions where the plan's has 2"), e.getMessage)
    assert(parts(routed) == Seq(Seq(1, 2, 5), Seq(3, 4, 6, 7)), "a refused route leaves the one before")
  }

  test("an ordered scan refuses rows read beside it") {
    val routed = RoutedScanRDD(sc.parallelize(1 to 4, 2), keyed = false, ordered = true)
    val e = intercept[IllegalStateException](routed.route(Some(sc.parallelize(Seq(0), 1))))
    assert(e.getMessage.contains("ordered"), e.getMessage)
    assert(routed.collect().toSeq == (1 to 4))
  }

  test("a lineage with a shuffle is refused") {
    val shuffled = sc.parallelize(1 to 4, 2).map(i => i -> i).reduceByKey(_ + _).map(_._1)
    intercept[IllegalArgumentException](RoutedScanRDD(shuffled, keyed = false, ordered = false))
  }
}
