package bloomindex.sbbf

import bloomindex.filter.Sbbf
import bloomindex.hash.ParquetHash

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter
import org.apache.parquet.io.api.Binary
import org.scalatest.funsuite.AnyFunSuite

class SbbfSuite extends AnyFunSuite {

  test("the vector kernel runs in the test JVM (started with --add-modules jdk.incubator.vector) where the CPU has it") {
    assert(ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent, "the test JVM lacks the Vector API module")
    // 256-bit integer vectors in hardware (AVX2): not emulated (128-bit NEON, or -XX:MaxVectorSize=16).
    val bits = jdk.incubator.vector.IntVector.SPECIES_PREFERRED.vectorBitSize()
    assert(SbbfKernels.vector.isDefined == (bits >= 256), s"preferred vectors of $bits bits")
    assert(SbbfKernels.default.name == (if (bits >= 256) "vector" else "scalar"))
  }

  test("both kernels set identical bits and find every inserted hash") {
    val hashes = TestData.randomHashes(50000, 1)
    for (numBytes <- Seq(32, 96, 1024, 4000 * 32, 1 << 20)) {
      val filters = TestData.kernels.map { k =>
        val f = Sbbf(numBytes, k)
        f.insertAll(hashes, 0, hashes.length)
        f
      }
      filters.sliding(2).foreach { case Seq(a, b) => assert(a == b, s"kernels differ at $numBytes bytes") ; case _ => }
      filters.foreach { f =>
        val out = new Array[Boolean](hashes.length)
        f.checkAll(hashes, 0, hashes.length, out, 0)
        assert(out.forall(identity), s"false negative in ${f.kernel.name} kernel")
      }
    }
  }

  test("single and bulk operations agree, with offsets, in both kernels") {
    val inserted = TestData.randomHashes(3000, 2)
    val probes = TestData.randomHashes(5001, 3) ++ inserted.take(999)
    for (k <- TestData.kernels) {
      val one = Sbbf(2048, k)
      inserted.foreach(one.insert)
      val bulk = Sbbf(2048, k)
      bulk.insertAll(inserted, 0, 1500)
      bulk.insertAll(inserted, 1500, inserted.length)
      assert(one == bulk)

      val expected = probes.map(one.mightContain)
      val out = new Array[Boolean](probes.length + 7)
      one.checkAll(probes, 0, probes.length, out, 7)
      assert(out.drop(7).toSeq == expected.toSeq)

      val from = 13
      val bitmap = new Array[Long]((probes.length - from + 63) / 64)
      val count = one.checkAllBitmap(probes, from, probes.length, bitmap)
      val fromBitmap = (0 until probes.length - from).map(i => (bitmap(i >>> 6) >>> (i & 63) & 1L) == 1L)
      assert(fromBitmap == expected.drop(from).toSeq)
      assert(count == expected.drop(from).count(identity))
      assert(expected.takeRight(999).forall(identity))
    }
  }

  test("the scalar and vector kernels answer absent probes the same (false positives included)") {
    val f = Sbbf(256)
    f.withKernel(SbbfKernels.scalar).insertAll(TestData.randomHashes(400, 4), 0, 400)
    val probes = TestData.randomHashes(100000, 5)
    val answers = TestData.kernels.map { k =>
      val out = new Array[Boolean](probes.length)
      f.withKernel(k).checkAll(probes, 0, probes.length, out, 0)
      out.toSeq
    }
    assert(answers.distinct.size == 1)
    val fp = answers.head.count(identity).toDouble / probes.length
    assert(fp > 0.001 && fp < 0.5, s"a 256-byte filter with 400 values should have some false positives: $fp")
  }

  test("bits match parquet-java's BlockSplitBloomFilter for the same hashes") {
    val hashes = TestData.randomHashes(20000, 6)
    val theirs = new BlockSplitBloomFilter(8192)
    hashes.foreach(h => theirs.insertHash(h))
    val out = new java.io.ByteArrayOutputStream()
    theirs.writeTo(out)
    for (k <- TestData.kernels) {
      val ours = Sbbf(8192, k)
      ours.insertAll(hashes, 0, hashes.length)
      assert(ours.bitsetBytes.toSeq == out.toByteArray.toSeq)
    }
  }

  test("rebuilds parquet-testing's bloom_filter.xxhash.bin bit for bit, header included") {
    val file = TestData.bytes("bloom_filter.xxhash.bin")
    val f = Sbbf(1024)
    Seq("hello", "parquet", "bloom", "filter").foreach(s => f.insert(ParquetHash.hashBytes(s.getBytes(UTF_8))))
    assert(f.toParquetBytes.toSeq == file.toSeq)
    val read = Sbbf.fromParquetBytes(file)
    assert(read == f)
    Seq("hello", "parquet", "bloom", "filter").foreach(s => assert(read.mightContain(ParquetHash.hashBytes(s.getBytes(UTF_8)))))
    Seq("b", "c", "d", "Hello").foreach(s => assert(!read.mightContain(ParquetHash.hashBytes(s.getBytes(UTF_8))), s))
    // Same answer as parquet-java's own hash of a Binary.
    val theirs = new BlockSplitBloomFilter(1024)
    assert(theirs.hash(Binary.fromString("hello")) == ParquetHash.hashBytes("hello".getBytes(UTF_8)))
  }

  test("merge ORs equal-size filters and refuses different sizes") {
    val a = Sbbf(1024)
    val b = Sbbf(1024)
    val ha = TestData.randomHashes(100, 7)
    val hb = TestData.randomHashes(100, 8)
    a.insertAll(ha, 0, 100)
    b.insertAll(hb, 0, 100)
    val both = Sbbf(1024)
    both.insertAll(ha ++ hb, 0, 200)
    assert(a.copy().merge(b) == both)
    val e = intercept[IllegalArgumentException](a.merge(Sbbf(2048)))
    assert(e.getMessage.contains("other"))
  }

  test("serde round trip for sizes that are multiples of 32 but not powers of two") {
    for (n <- Seq(32, 64, 96, 32 * 1000)) {
      val f = Sbbf(n)
      f.insertAll(TestData.randomHashes(n / 8, n), 0, n / 8)
      assert(Sbbf.fromParquetBytes(f.toParquetBytes) == f)
      assert(Sbbf.fromBitset(f.bitsetBytes) == f)
    }
  }

  test("hostile or broken serialized filters are refused before anything large is allocated") {
    val good = Sbbf(1024).toParquetBytes
    val truncated = good.take(good.length - 1)
    assert(intercept[IllegalArgumentException](Sbbf.fromParquetBytes(truncated)).getMessage.contains("1024"))
    // numBytes = 2^30 in the header (zigzag varint), no bitset.
    val huge = new java.io.ByteArrayOutputStream()
    val header = new org.apache.parquet.format.BloomFilterHeader(1 << 30,
      org.apache.parquet.format.BloomFilterAlgorithm.BLOCK(new org.apache.parquet.format.SplitBlockAlgorithm()),
      org.apache.parquet.format.BloomFilterHash.XXHASH(new org.apache.parquet.format.XxHash()),
      org.apache.parquet.format.BloomFilterCompression.UNCOMPRESSED(new org.apache.parquet.format.Uncompressed()))
    org.apache.parquet.format.Util.writeBloomFilterHeader(header, huge)
    assert(intercept[IllegalArgumentException](Sbbf.fromParquetBytes(huge.toByteArray)).getMessage.contains("numBytes"))
    assert(intercept[IllegalArgumentException](Sbbf.fromParquetBytes(Array[Byte](1, 2, 3))).getMessage.contains("bytes"))
    assert(intercept[IllegalArgumentException](Sbbf.fromBitset(new Array[Byte](33))).getMessage.contains("numBytes"))
  }

  test("bad sizes and kernels name the argument") {
    assert(intercept[IllegalArgumentException](Sbbf(100)).getMessage.startsWith("numBytes"))
    assert(intercept[IllegalArgumentException](Sbbf(0)).getMessage.startsWith("numBytes"))
    assert(intercept[IllegalArgumentException](SbbfKernels.byName("gpu")).getMessage.startsWith("kernel"))
  }
}
