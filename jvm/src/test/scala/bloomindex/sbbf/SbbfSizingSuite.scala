package bloomindex.sbbf

import bloomindex.filter.Sbbf

import org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter
import org.scalatest.funsuite.AnyFunSuite

import SbbfSizing.Sizing

class SbbfSizingSuite extends AnyFunSuite {

  // The spec's table: 6.0 bits -> 10%, 10.5 -> 1%, 16.9 -> 0.1%, 26.4 -> 0.01%, 41 -> 0.001%.
  private val specTable = Seq(0.1 -> 6.0, 0.01 -> 10.5, 0.001 -> 16.9, 0.0001 -> 26.4, 0.00001 -> 41.0)

  test("exact sizing meets the spec's measured table within 2%") {
    for ((fpp, bitsPerValue) <- specTable) {
      val ndv = 1000000L
      val perValue = SbbfSizing.exactBytes(ndv, fpp) * 8.0 / ndv
      assert(math.abs(perValue - bitsPerValue) / bitsPerValue < 0.02, s"$fpp: $perValue bits per value")
    }
  }

  test("the classic formula that Parquet writers use undershoots a blocked filter") {
    for ((fpp, bitsPerValue) <- specTable) {
      val perValue = SbbfSizing.optimalBits(1000000, fpp) / 1000000
      assert(perValue < bitsPerValue, s"$fpp: $perValue bits per value")
      assert(SbbfSizing.blockedFpp((perValue * 1000000 / 256).toInt, 1000000) > fpp)
    }
  }

  test("the blocked fpp estimate matches a measured rate") {
    val f = Sbbf(64 * 1024)
    val ndv = f.numBytes * 8 / 10
    f.insertAll(TestData.randomHashes(ndv, 11), 0, ndv)
    val probes = TestData.randomHashes(1000000, 12)
    val out = new Array[Boolean](probes.length)
    f.checkAll(probes, 0, probes.length, out, 0)
    val measured = out.count(identity).toDouble / probes.length
    val expected = SbbfSizing.expectedFpp(f.numBytes, ndv)
    assert(math.abs(measured - expected) / expected < 0.1, s"measured $measured, expected $expected")
  }

  test("the blocked fpp estimate of a loaded filter (about 190 values a block and more) matches a measured rate") {
    // The Poisson sum starts past 0 there; its first term's factorial was counted once too
    // often, dividing the rate by the start (0.0017 for 1,000 values in one block, really ~1).
    for ((bytes, ndv) <- Seq((32, 1000), (1024, 8000), (1024, 12000))) {
      val f = Sbbf(bytes)
      f.insertAll(TestData.randomHashes(ndv, 13), 0, ndv)
      val probes = TestData.randomHashes(200000, 14)
      val out = new Array[Boolean](probes.length)
      f.checkAll(probes, 0, probes.length, out, 0)
      val measured = out.count(identity).toDouble / probes.length
      val expected = SbbfSizing.expectedFpp(bytes, ndv)
      assert(math.abs(measured - expected) < 0.02, s"$bytes B, $ndv values: measured $measured, expected $expected")
    }
  }

  test("power-of-two sizing: Arrow's rule, clamped to 32 B .. 128 MiB") {
    assert(SbbfSizing.powerOfTwoBytes(0, 0.01) == 32)
    assert(SbbfSizing.powerOfTwoBytes(1, 0.01) == 32)
    assert(SbbfSizing.powerOfTwoBytes(Long.MaxValue / 16, 0.01) == SbbfSizing.MaxBytes)
    for (ndv <- Seq(10L, 1000L, 12345L, 1000000L); fpp <- Seq(0.1, 0.01, 0.001)) {
      val bytes = SbbfSizing.powerOfTwoBytes(ndv, fpp)
      assert(Integer.bitCount(bytes) == 1)
      val bits = SbbfSizing.optimalBits(ndv, fpp)
      assert(bytes * 8 >= bits.toLong && bytes * 4 < math.max(bits, 256))
    }
  }

  test("exact sizing: the smallest multiple of 32 bytes meeting the target") {
    // Twice, the pairs in another order the second time: the second answers come from what the
    // first calls found (exactBytes remembers), by their own ndv and fpp.
    val pairs = for (ndv <- Seq(1L, 10L, 20L, 21L, 999L, 12345L, 1000000L); fpp <- Seq(0.2, 0.01, 0.0101, 0.0001)) yield (ndv, fpp)
    for ((ndv, fpp) <- pairs ++ pairs.reverse) {
      val bytes = SbbfSizing.exactBytes(ndv, fpp)
      assert(bytes % 32 == 0 && SbbfSizing.expectedFpp(bytes, ndv) <= fpp)
      assert(bytes == 32 || SbbfSizing.expectedFpp(bytes - 32, ndv) > fpp)
    }
    assert(SbbfSizing.exactBytes(0, 0.5) == 32)
  }

  test("where parquet-java rounds differently: we follow Arrow C++, not parquet-java") {
    // parquet-java adds 255 to the bit count and then clears bit 8 (`& ~BITS_PER_BLOCK`, an
    // off-by-one mask), so near a power of two it lands on half or twice Arrow's size.
    val fpp = 0.01
    def parquetJavaBytes(ndv: Long): Int =
      new BlockSplitBloomFilter(BlockSplitBloomFilter.optimalNumOfBits(ndv, fpp) / 8).getBitsetSize
    val differing = (1L to 20000L).map(ndv => (ndv, SbbfSizing.powerOfTwoBytes(ndv, fpp), parquetJavaBytes(ndv)))
      .filter { case (_, ours, theirs) => ours != theirs }
    assert(differing.exists { case (_, ours, theirs) => theirs == ours / 2 }, "parquet-java undershoots somewhere")
    assert(differing.exists { case (_, ours, theirs) => theirs == ours * 2 }, "parquet-java overshoots somewhere")
    differing.foreach { case (ndv, ours, theirs) =>
      assert(theirs == 2 * ours || 2 * theirs == ours, s"ndv $ndv: ours $ours, parquet-java $theirs")
      // Ours is Arrow's: the smallest power of two holding the (truncated) estimate.
      val m = SbbfSizing.optimalBits(ndv, fpp).toLong
      assert(ours * 8L >= m && ours * 4L < m, s"ndv $ndv: $ours bytes for $m bits")
    }
  }

  test("bad arguments name the argument") {
    for (fpp <- Seq(0.0, 1.0, -0.5, 1.5, Double.NaN)) {
      assert(intercept[IllegalArgumentException](SbbfSizing.numBytes(10, fpp, Sizing.Exact)).getMessage.startsWith("fpp"))
    }
    assert(intercept[IllegalArgumentException](SbbfSizing.numBytes(-1, 0.01, Sizing.PowerOfTwo)).getMessage.startsWith("ndv"))
    assert(intercept[IllegalArgumentException](Sizing.fromName("round")).getMessage.startsWith("sizing"))
    assert(intercept[IllegalArgumentException](SbbfSizing.expectedFpp(48, 1)).getMessage.startsWith("numBytes"))
  }

  test("exact sizing meets the target by the blocked estimate") {
    for (fpp <- Seq(0.1, 0.01, 0.001)) {
      val bytes = SbbfSizing.numBytes(100000, fpp, Sizing.Exact)
      assert(SbbfSizing.expectedFpp(bytes, 100000) <= fpp)
    }
  }
}
