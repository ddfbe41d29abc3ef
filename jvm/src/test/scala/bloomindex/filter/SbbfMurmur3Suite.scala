package bloomindex.filter

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets.UTF_8

import bloomindex.hash.Murmur3Hash
import bloomindex.sbbf.{SbbfKernel, SbbfSizing, TestData}

import org.scalatest.funsuite.AnyFunSuite

class SbbfMurmur3Suite extends AnyFunSuite {

  private val Four = Seq("hello", "parquet", "bloom", "filter")
  private def murmur(s: String): Long = Murmur3Hash.hashBytes(s.getBytes(UTF_8))

  /** The design written out directly: block = high word masked, the spec's mask in it. */
  private def reference(numBytes: Int, hashes: Array[Long]): Array[Int] = {
    val words = new Array[Int](numBytes / 4)
    val blocks = numBytes / 32
    for (h <- hashes) {
      val block = ((h >>> 32) & (blocks - 1)).toInt
      for (i <- 0 until 8) words(block * 8 + i) |= 1 << ((h.toInt * SbbfKernel.SALT(i)) >>> 27)
    }
    words
  }

  private def words(f: SbbfMurmur3): Array[Int] = {
    val out = new Array[Int](f.numBytes / 4)
    ByteBuffer.wrap(f.bitsetBytes).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(out)
    out
  }

  test("MurmurHash3 x64 128 with parquet-mr's seed: parquet-cpp's test vector, plain-encoded ints") {
    assert(Murmur3Hash.hashBytes(Array.tabulate[Byte](8)(_.toByte)) == 913737700387071329L)
    for (v <- Seq(0, 1, -1, 42, Int.MinValue, Int.MaxValue)) {
      val le = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(v).array()
      assert(Murmur3Hash.hashInt(v) == Murmur3Hash.hashBytes(le))
    }
    for (v <- Seq(0L, -1L, Long.MinValue, 1234567890123L)) {
      val le = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array()
      assert(Murmur3Hash.hashLong(v) == Murmur3Hash.hashBytes(le))
    }
  }

  test("rebuilds parquet-testing's bloom_filter.bin bit for bit, header included, and reads it") {
    val file = TestData.bytes("bloom_filter.bin")
    for (k <- TestData.kernels) {
      val f = SbbfMurmur3(1024, k)
      Four.foreach(s => f.insert(murmur(s)))
      assert(f.toBytes.toSeq == file.toSeq, s"${k.name} kernel")
    }
    val read = SbbfMurmur3.fromBytes(file)
    assert(read.numBytes == 1024)
    Four.foreach(s => assert(read.mightContain(murmur(s)), s))
    Seq("b", "c", "d", "Hello").foreach(s => assert(!read.mightContain(murmur(s)), s))
  }

  test("the remapped SBBF kernels set the design's bits, in both kernels, at every power of two") {
    val hashes = TestData.randomHashes(20000, 11)
    for (numBytes <- Seq(32, 64, 1024, 1 << 16, 1 << 20); k <- TestData.kernels) {
      val bulk = SbbfMurmur3(numBytes, k)
      bulk.insertAll(hashes, 0, hashes.length)
      assert(words(bulk).toSeq == reference(numBytes, hashes).toSeq, s"$numBytes bytes, ${k.name}")
      val one = SbbfMurmur3(numBytes, k)
      hashes.foreach(one.insert)
      assert(one == bulk)
    }
  }

  test("single and bulk checks agree with offsets; inserted hashes are always found") {
    val inserted = TestData.randomHashes(3000, 12)
    val probes = TestData.randomHashes(5000, 13) ++ inserted
    for (k <- TestData.kernels) {
      val f = SbbfMurmur3(4096, k)
      f.insertAll(inserted, 0, inserted.length)
      val expected = probes.map(f.mightContain)
      val out = new Array[Boolean](probes.length + 3)
      f.checkAll(probes, 0, probes.length, out, 3)
      assert(out.drop(3).toSeq == expected.toSeq)
      assert(expected.takeRight(inserted.length).forall(identity))
      assert(expected.take(5000).count(identity) < 5000)
      val bitmap = new Array[Long]((probes.length + 63) / 64)
      assert(f.checkAllBitmap(probes, 0, probes.length, bitmap) == expected.count(identity))
    }
  }

  test("sizing: powers of two; exact is the smallest power of two meeting the blocked rate") {
    assert(SbbfMurmur3.numBytes(4, 0.01, SbbfSizing.Sizing.PowerOfTwo) == 32)
    for ((ndv, fpp) <- Seq((1000L, 0.01), (12345L, 0.001), (1000000L, 0.05), (3L, 0.5))) {
      val p2 = SbbfMurmur3.numBytes(ndv, fpp, SbbfSizing.Sizing.PowerOfTwo)
      assert(p2 == SbbfSizing.powerOfTwoBytes(ndv, fpp))
      val exact = SbbfMurmur3.numBytes(ndv, fpp, SbbfSizing.Sizing.Exact)
      assert(Integer.bitCount(exact) == 1)
      assert(SbbfSizing.expectedFpp(exact, ndv) <= fpp)
      if (exact > 32) assert(SbbfSizing.expectedFpp(exact / 2, ndv) > fpp)
    }
    assert(SbbfMurmur3.numBytes(Long.MaxValue / 2, 0.01, SbbfSizing.Sizing.Exact) == SbbfSizing.MaxBytes)
  }

  test("serde round trip, merge, and merge refuses other sizes and designs") {
    val a = SbbfMurmur3(2048)
    val b = SbbfMurmur3(2048)
    a.insertAll(TestData.randomHashes(300, 14), 0, 300)
    b.insertAll(TestData.randomHashes(300, 15), 0, 300)
    assert(SbbfMurmur3.fromBytes(a.toBytes) == a)
    assert(SbbfMurmur3.fromBitset(a.bitsetBytes) == a)
    val both = SbbfMurmur3(2048)
    both.insertAll(TestData.randomHashes(300, 14) ++ TestData.randomHashes(300, 15), 0, 600)
    assert(a.copy().merge(b) == both)
    assert(intercept[IllegalArgumentException](a.merge(SbbfMurmur3(4096))).getMessage.startsWith("other"))
    assert(intercept[IllegalArgumentException](a.merge(bloomindex.filter.Sbbf(2048))).getMessage.startsWith("other"))
  }

  test("hostile sizes and headers are refused with IllegalArgumentException") {
    for (n <- Seq(0, 16, 96, 1000, 3 * 1024, SbbfSizing.MaxBytes * 2, -32)) {
      assert(intercept[IllegalArgumentException](SbbfMurmur3(n)).getMessage.startsWith("numBytes"), n)
    }
    def header(n: Int, hash: Int, alg: Int, body: Int): Array[Byte] = {
      val b = ByteBuffer.allocate(12 + body).order(ByteOrder.LITTLE_ENDIAN)
      b.putInt(n).putInt(hash).putInt(alg)
      b.array()
    }
    assert(intercept[IllegalArgumentException](SbbfMurmur3.fromBytes(header(1024, 1, 0, 1024))).getMessage.contains("hash"))
    assert(intercept[IllegalArgumentException](SbbfMurmur3.fromBytes(header(1024, 0, 7, 1024))).getMessage.contains("algorithm"))
    assert(intercept[IllegalArgumentException](SbbfMurmur3.fromBytes(header(1 << 30, 0, 0, 0))).getMessage.contains("numBytes"))
    assert(intercept[IllegalArgumentException](SbbfMurmur3.fromBytes(header(96, 0, 0, 96))).getMessage.contains("numBytes"))
    assert(intercept[IllegalArgumentException](SbbfMurmur3.fromBytes(header(1024, 0, 0, 1023))).getMessage.contains("1023"))
    assert(intercept[IllegalArgumentException](SbbfMurmur3.fromBytes(Array[Byte](0, 4, 0))).getMessage.contains("header"))
    assert(intercept[IllegalArgumentException](SbbfMurmur3.fromBitset(new Array[Byte](96))).getMessage.contains("numBytes"))
  }
}
