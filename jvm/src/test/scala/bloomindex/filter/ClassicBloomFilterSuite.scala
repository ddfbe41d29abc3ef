package bloomindex.filter

import java.nio.{ByteBuffer, ByteOrder}

import bloomindex.sbbf.{SbbfSizing, TestData}

import org.scalatest.funsuite.AnyFunSuite

class ClassicBloomFilterSuite extends AnyFunSuite {

  private val kernels: Seq[ClassicKernel] = ClassicKernels.scalar +: ClassicKernels.vector.toSeq

  /** The design written out with java.util.BitSet and 64-bit arithmetic, independently of the kernels. */
  private def reference(numBytes: Int, k: Int, hashes: Array[Long]): java.util.BitSet = {
    val bits = new java.util.BitSet(numBytes * 8)
    val m = numBytes.toLong * 8
    for (h <- hashes) {
      val h1 = h.toInt.toLong
      val h2 = (h >>> 32).toInt.toLong
      for (i <- 1 to k) {
        val c = (h1 + i * h2).toInt // 32-bit wrap
        val positive = if (c < 0) ~c else c
        bits.set((positive % m).toInt)
      }
    }
    bits
  }

  private def bitSet(f: ClassicBloomFilter): java.util.BitSet = java.util.BitSet.valueOf(f.bitsetBytes)

  test("the classic vector kernel runs wherever the JVM has 512-bit vectors, the scalar one elsewhere") {
    // The JVM's own word on the CPU (the module is in the tests' boot layer: --add-modules).
    val bits = jdk.incubator.vector.LongVector.SPECIES_PREFERRED.vectorBitSize()
    assert(ClassicKernels.vector.isDefined == (bits >= 512), s"preferred vectors of $bits bits, kernel ${ClassicKernels.default.name}")
    assert(ClassicKernels.default eq ClassicKernels.vector.getOrElse(ClassicKernels.scalar))
  }

  test("every kernel sets the design's bits, at sizes that are and are not powers of two") {
    val hashes = TestData.randomHashes(20003, 21)
    for (numBytes <- Seq(8, 24, 1000, 4096, 123456, 1 << 20); k <- Seq(1, 3, 7, 13); kernel <- kernels) {
      val bulk = ClassicBloomFilter(numBytes, k, kernel)
      bulk.insertAll(hashes, 0, hashes.length)
      assert(bitSet(bulk) == reference(numBytes, k, hashes), s"$numBytes bytes, k = $k, ${kernel.name}")
      val one = ClassicBloomFilter(numBytes, k, kernel)
      hashes.foreach(one.insert)
      assert(one == bulk)
    }
  }

  test("the reciprocal remainder equals % for 31-bit dividends, at every bit count") {
    val rnd = new scala.util.Random(28)
    val counts = Seq(64, 128, 192, 8000, 1 << 20, (1 << 30) - 64, 1 << 30) ++ Seq.fill(200)((rnd.nextInt(1 << 24) + 1) * 64)
    for (m <- counts) {
      val r = new ClassicKernel.Reciprocal(m)
      val ps = Seq(0, 1, m - 1, m, m + 1, Int.MaxValue, Int.MaxValue - 1, Int.MaxValue / m * m, Int.MaxValue / m * m - 1) ++
        Seq.fill(2000)(rnd.nextInt(Int.MaxValue))
      for (p <- ps) assert(r.remainder(p) == p % m, s"$p % $m")
    }
  }

  test("kernels answer checks the same, false positives included, with offsets") {
    val inserted = TestData.randomHashes(4000, 22)
    val probes = TestData.randomHashes(50001, 23) ++ inserted
    val f = ClassicBloomFilter(4096, 5)
    f.insertAll(inserted, 0, inserted.length)
    val expected = probes.map(f.mightContain)
    assert(expected.takeRight(inserted.length).forall(identity))
    val fp = expected.take(50001).count(identity)
    assert(fp > 0 && fp < 50001)
    for (kernel <- kernels) {
      val out = new Array[Boolean](probes.length + 5)
      f.withKernel(kernel).checkAll(probes, 0, probes.length, out, 5)
      assert(out.drop(5).toSeq == expected.toSeq, kernel.name)
      val part = new Array[Boolean](100)
      f.withKernel(kernel).checkAll(probes, 17, 117, part, 0)
      assert(part.toSeq == expected.slice(17, 117).toSeq)
    }
    val bitmap = new Array[Long]((probes.length + 63) / 64)
    assert(f.checkAllBitmap(probes, 0, probes.length, bitmap) == expected.count(identity))
    assert((0 until probes.length).forall(i => ((bitmap(i >>> 6) >>> (i & 63)) & 1L) == 1L == expected(i)))
  }

  test("sizing: k = round(-log2 fpp); exact is the smallest multiple of 64 bits meeting the rate") {
    assert(ClassicBloomFilter.numHashesFor(0.5) == 1)
    assert(ClassicBloomFilter.numHashesFor(0.1) == 3)
    assert(ClassicBloomFilter.numHashesFor(0.01) == 7)
    assert(ClassicBloomFilter.numHashesFor(0.001) == 10)
    for ((ndv, fpp) <- Seq((1000L, 0.01), (12345L, 0.001), (1000000L, 0.05), (3L, 0.5), (100000L, 1e-6))) {
      val k = ClassicBloomFilter.numHashesFor(fpp)
      val exact = ClassicBloomFilter.numBytes(ndv, fpp, SbbfSizing.Sizing.Exact)
      assert(exact % 8 == 0)
      assert(ClassicBloomFilter.expectedFpp(exact * 8L, k, ndv) <= fpp)
      if (exact > 8) assert(ClassicBloomFilter.expectedFpp(exact * 8L - 64, k, ndv) > fpp)
      // Close to the textbook optimum m = -n ln p / ln(2)^2.
      val optimum = -ndv * math.log(fpp) / math.pow(math.log(2), 2) / 8
      if (ndv >= 1000) assert(math.abs(exact - optimum) / optimum < 0.06, s"$exact vs $optimum")
      val p2 = ClassicBloomFilter.numBytes(ndv, fpp, SbbfSizing.Sizing.PowerOfTwo)
      assert(Integer.bitCount(p2) == 1 && p2 >= exact && p2 < 2 * exact)
    }
    assert(ClassicBloomFilter.numBytes(0, 0.01, SbbfSizing.Sizing.Exact) == 8)
    assert(ClassicBloomFilter.numBytes(Long.MaxValue / 4, 0.01, SbbfSizing.Sizing.Exact) == ClassicBloomFilter.MaxBytes)
  }

  test("a filter sized for n values at fpp measures about fpp on absent probes") {
    val n = 20000
    val f = ClassicBloomFilter.forNdv(n, 0.01)
    f.insertAll(TestData.randomHashes(n, 24), 0, n)
    val probes = TestData.randomHashes(200000, 25)
    val out = new Array[Boolean](probes.length)
    f.checkAll(probes, 0, probes.length, out, 0)
    val rate = out.count(identity).toDouble / probes.length
    assert(rate > 0.006 && rate < 0.0125, s"measured $rate")
    assert(math.abs(f.expectedFpp(n) - 0.01) < 0.001)
  }

  test("serde round trip and merge; merge refuses other sizes, other k and other designs") {
    val a = ClassicBloomFilter(1000, 4)
    a.insertAll(TestData.randomHashes(200, 26), 0, 200)
    val bytes = a.toBytes
    assert(bytes.length == 1008)
    assert(ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getInt(0) == 8000)
    assert(ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getInt(4) == 4)
    assert(ClassicBloomFilter.fromBytes(bytes) == a)
    assert(ClassicBloomFilter.fromBitset(a.bitsetBytes, 4) == a)
    val b = ClassicBloomFilter(1000, 4)
    b.insertAll(TestData.randomHashes(200, 27), 0, 200)
    val both = ClassicBloomFilter(1000, 4)
    both.insertAll(TestData.randomHashes(200, 26) ++ TestData.randomHashes(200, 27), 0, 400)
    assert(a.copy().merge(b) == both)
    for (other <- Seq(ClassicBloomFilter(1000, 5), ClassicBloomFilter(1008, 4), SbbfMurmur3(1024))) {
      assert(intercept[IllegalArgumentException](a.merge(other)).getMessage.startsWith("other"))
    }
  }

  test("hostile sizes, k and headers are refused with IllegalArgumentException") {
    for (n <- Seq(0, 4, 12, 1001, -8, ClassicBloomFilter.MaxBytes + 8)) {
      assert(intercept[IllegalArgumentException](ClassicBloomFilter(n, 3)).getMessage.startsWith("numBytes"), n)
    }
    for (k <- Seq(0, -1, 65)) {
      assert(intercept[IllegalArgumentException](ClassicBloomFilter(64, k)).getMessage.startsWith("numHashes"), k)
    }
    assert(intercept[IllegalArgumentException](ClassicBloomFilter.numHashesFor(1e-30)).getMessage.startsWith("fpp"))
    assert(intercept[IllegalArgumentException](ClassicBloomFilter.numHashesFor(1.0)).getMessage.startsWith("fpp"))
    def header(numBits: Int, k: Int, body: Int): Array[Byte] =
      ByteBuffer.allocate(8 + body).order(ByteOrder.LITTLE_ENDIAN).putInt(numBits).putInt(k).array()
    assert(intercept[IllegalArgumentException](ClassicBloomFilter.fromBytes(header(1 << 30 | 64, 3, 0))).getMessage.contains("numBits"))
    assert(intercept[IllegalArgumentException](ClassicBloomFilter.fromBytes(header(Int.MinValue, 3, 0))).getMessage.contains("numBits"))
    assert(intercept[IllegalArgumentException](ClassicBloomFilter.fromBytes(header(100, 3, 13))).getMessage.contains("numBits"))
    assert(intercept[IllegalArgumentException](ClassicBloomFilter.fromBytes(header(640, 3, 79))).getMessage.contains("79"))
    assert(intercept[IllegalArgumentException](ClassicBloomFilter.fromBytes(header(640, 0, 80))).getMessage.contains("numHashes"))
    assert(intercept[IllegalArgumentException](ClassicBloomFilter.fromBytes(Array[Byte](1, 2))).getMessage.contains("header"))
    assert(intercept[IllegalArgumentException](ClassicKernels.byName("gpu")).getMessage.startsWith("kernel"))
  }
}
