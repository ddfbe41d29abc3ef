package bloomindex.sbbf

import bloomindex.filter.{Sbbf, SbbfSerde}

import org.scalatest.funsuite.AnyFunSuite

class SbbfBitsSuite extends AnyFunSuite {

  private def filled(numBytes: Int, hashes: Array[Long]): Sbbf = {
    val f = Sbbf(numBytes)
    f.insertAll(hashes, 0, hashes.length)
    f
  }

  test("folding is exactly the filter built at half the size, for any even block count") {
    val hashes = TestData.randomHashes(20000, 4)
    for (blocks <- Seq(2, 6, 64, 1000, 4096)) {
      val big = filled(blocks * 32, hashes).bitsetBytes
      val half = SbbfBits.fold(big, 0, big.length)
      assert(Sbbf.fromBitset(half) == filled(blocks * 16, hashes), s"$blocks blocks")
      // The same from inside a larger array (a serialized filter's bitset).
      val serialized = SbbfSerde.write(big, 0, big.length)
      val (at, n) = SbbfSerde.locateBitset(serialized)
      assert(n == big.length && java.util.Arrays.equals(SbbfBits.fold(serialized, at, n), half))
    }
    assertThrows[IllegalArgumentException](SbbfBits.fold(new Array[Byte](96), 0, 96))
  }

  test("measured false positive rate matches probes and the expected rate") {
    for ((ndv, bytes) <- Seq((10000, 12800), (50000, 40960), (3000, 32 * 1024))) {
      val f = filled(bytes, TestData.randomHashes(ndv, 5))
      val b = f.bitsetBytes
      val measured = SbbfBits.measuredFpp(b, 0, b.length)
      val probes = TestData.randomHashes(400000, 6)
      val hits = probes.count(f.mightContain).toDouble / probes.length
      val expected = SbbfSizing.expectedFpp(bytes, ndv)
      assert(math.abs(measured - expected) <= 0.1 * expected + 1e-5, s"$ndv in $bytes: $measured vs $expected")
      assert(math.abs(measured - hits) <= 0.15 * measured + 2e-4, s"$ndv in $bytes: $measured vs probes $hits")
    }
    assert(SbbfBits.measuredFpp(new Array[Byte](64), 0, 64) == 0.0)
    assert(SbbfBits.measuredFpp(Array.fill[Byte](64)(-1), 0, 64) == 1.0)
  }

  test("the distinct count estimated from the bits is within a few percent") {
    for ((ndv, bytes) <- Seq((100, 4096), (10000, 12800), (200000, 1 << 18))) {
      val b = filled(bytes, TestData.randomHashes(ndv, 7)).bitsetBytes
      val est = SbbfBits.estimateNdv(b, 0, b.length)
      assert(math.abs(est - ndv) <= 0.03 * ndv + 2, s"$ndv in $bytes bytes: estimated $est")
    }
    assert(SbbfBits.estimateNdv(new Array[Byte](32), 0, 32) == 0)
    assert(SbbfBits.estimateNdv(Array.fill[Byte](32)(-1), 0, 32) == Long.MaxValue)
  }

  test("serialized forms: one copy of the bits, the header this serde writes") {
    val f = filled(4096, TestData.randomHashes(300, 8))
    val bytes = f.toParquetBytes
    assert(bytes.length == SbbfSerde.serializedLength(4096))
    assert(java.util.Arrays.equals(bytes, SbbfSerde.write(f.bitsetBytes, 0, 4096)))
    assert(Sbbf.fromParquetBytes(bytes) == f)
    assertThrows[IllegalArgumentException](SbbfSerde.locateBitset(bytes.take(100)))
  }
}
