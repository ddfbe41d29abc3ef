package bloomindex.indexing

import org.scalatest.funsuite.AnyFunSuite

class DistinctHashesSuite extends AnyFunSuite {

  test("counts exactly what a set counts: duplicates, zero, equal high bits, any order of batches") {
    val rnd = new java.util.Random(9)
    val base = Array.fill(5000)(rnd.nextLong())
    // Values sharing their high 22 bits with others, 0, the extremes, and repeats of everything.
    val tricky = Array(0L, -1L, Long.MinValue, Long.MaxValue, 1L, 2L, 3L, 0x7fffffffL, 0x80000000L) ++
      base.take(50).map(v => v ^ 1L) ++ base.take(50).map(v => v ^ 0x40000000L) ++ base.take(40).map(v => v ^ (1L << 41)) ++
      (0 until 40).map(i => 0x1234500000000000L | (i * 977L))  // one long run of equal high bits
    val repeated = (base ++ tricky).zipWithIndex.flatMap { case (v, i) => Seq.fill(1 + i % 3)(v) }
    val all = scala.util.Random.javaRandomToRandom(rnd).shuffle(repeated.toSeq).toArray
    val scratch = new DistinctHashes.Scratch
    for (compactAt <- Seq(64, 1000, DistinctHashes.DefaultCompactAt); batch <- Seq(1, 7, 4096)) {
      val d = new DistinctHashes(scratch, compactAt)
      all.grouped(batch).foreach(b => d.add(b, 0, b.length))
      val n = d.distinct()
      assert(n == all.toSet.size, s"compactAt $compactAt, batch $batch")
      assert(d.keys.take(n).toSet == all.toSet)
      // Sorted on the high bits, as the filter insert relies on for locality.
      assert(d.keys.take(n).map(_ >>> 42).sliding(2).forall(p => p.length < 2 || p(0) <= p(1)))
      d.clear()
      assert(d.distinct() == 0 && d.size == 0)
    }
  }

  test("adding after deduplicating, and merging instances") {
    val a = new DistinctHashes(null)
    a.add(Array(5L, 5L, 7L), 0, 3)
    assert(a.distinct() == 2)
    a.add(Array(7L, 9L), 0, 2)
    val b = new DistinctHashes(null)
    b.add(Array(1L, 9L, 11L), 0, 3)
    a.addAll(b)
    assert(a.toArray.toSet == Set(1L, 5L, 7L, 9L, 11L))
  }
}
