package bloomindex.filter

import bloomindex.hash.{Murmur3Hash, ParquetHash}
import bloomindex.sbbf.{SbbfSizing, TestData}
import bloomindex.sbbf.SbbfSizing.Sizing

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types.{LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

class FilterAlgorithmSuite extends AnyFunSuite {

  test("names: the three designs, case-insensitive; anything else names the choices") {
    assert(FilterAlgorithm.names == Seq("sbbf", "sbbf-murmur3", "classic"))
    assert(FilterAlgorithm.fromName(" SBBF-Murmur3 ") == FilterAlgorithm.SplitBlockMurmur3)
    assert(FilterAlgorithm.Default == FilterAlgorithm.SplitBlock)
    val e = intercept[IllegalArgumentException](FilterAlgorithm.fromName("cuckoo"))
    assert(e.getMessage.startsWith("algorithm") && e.getMessage.contains("'classic'"))
    assert(intercept[IllegalArgumentException](FilterAlgorithm.fromName(null)).getMessage.startsWith("algorithm"))
  }

  test("each design: sized filter, inserts found, serde and bitset round trips, merge") {
    val hashes = TestData.randomHashes(5000, 31)
    for (alg <- FilterAlgorithm.all; sizing <- Seq(Sizing.Exact, Sizing.PowerOfTwo)) {
      val f = alg.forNdv(5000, 0.01, sizing)
      assert(f.algorithm == alg)
      assert(f.numBytes == alg.numBytes(5000, 0.01, sizing))
      assert(alg.expectedFpp(f.numBytes, 5000, 0.01) <= 0.0101, s"$alg $sizing")
      f.insertAll(hashes, 0, 2500)
      hashes.drop(2500).foreach(f.insert)
      assert(hashes.forall(f.mightContain), alg)
      assert(alg.fromBytes(f.toBytes) == f, alg)
      assert(alg.fromBitset(f.bitsetBytes, 0.01) == f, alg)
      val other = alg.empty(f.numBytes, 0.01)
      other.insert(42L)
      val merged = f.copy().merge(other)
      assert(merged.mightContain(42L) && !(merged == f && !f.mightContain(42L)))
      assert(alg.empty(alg.minBytes, 0.01).numBytes == alg.minBytes)
    }
  }

  test("shared state: a filter over the same arrays, readable after Java serialization, refused across designs") {
    for (alg <- FilterAlgorithm.all) {
      val f = alg.forNdv(1000, 0.01)
      f.insertAll(TestData.randomHashes(1000, 41), 0, 1000)
      val state = alg.shared(f)
      val wrapped = alg.wrapShared(state)
      assert(wrapped == f)
      f.insert(4242L)
      assert(wrapped.mightContain(4242L), s"$alg: the wrapped filter shares the bits, no copy")
      val out = new java.io.ByteArrayOutputStream()
      new java.io.ObjectOutputStream(out).writeObject(state)
      val back = new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(out.toByteArray)).readObject()
      assert(alg.wrapShared(back) == f)
      val other = FilterAlgorithm.all.find(_ != alg).get
      assert(intercept[IllegalArgumentException](other.shared(f)).getMessage.startsWith("filter"))
    }
    assert(intercept[IllegalArgumentException](FilterAlgorithm.Classic.wrapShared(new Array[Int](8)))
      .getMessage.startsWith("filter"))
  }

  test("filters of different designs never merge") {
    val filters = FilterAlgorithm.all.map(_.empty(1024, 0.01))
    for (a <- filters; b <- filters if a.algorithm != b.algorithm) {
      assert(intercept[IllegalArgumentException](a.copy().merge(b)).getMessage.startsWith("other"))
    }
  }

  test("hashers: sbbf-murmur3 hashes the same plain encoding with MurmurHash3, the others with XXH64") {
    assert(FilterAlgorithm.SplitBlock.hash eq ParquetHash)
    assert(FilterAlgorithm.Classic.hash eq ParquetHash)
    assert(FilterAlgorithm.SplitBlockMurmur3.hash eq Murmur3Hash)
    val row = InternalRow(42L, UTF8String.fromString("héllo"))
    for (alg <- FilterAlgorithm.all) {
      assert(alg.hasher(LongType).hashRow(row, 0) == alg.hash.hashLong(42L))
      assert(alg.hasher(StringType).hashRow(row, 1) == alg.hash.hashBytes("héllo".getBytes("UTF-8")))
    }
    assert(Murmur3Hash.hashLong(42L) != ParquetHash.hashLong(42L))
  }

  test("the sbbf design is the existing Sbbf, serialized as Parquet does") {
    val f = FilterAlgorithm.SplitBlock.forNdv(100, 0.01)
    assert(f.isInstanceOf[Sbbf])
    assert(f.toBytes.toSeq == f.asInstanceOf[Sbbf].toParquetBytes.toSeq)
    assert(f.numBytes == SbbfSizing.numBytes(100, 0.01, Sizing.PowerOfTwo))
  }

  test("bad arguments are IllegalArgumentExceptions naming the argument") {
    for (alg <- FilterAlgorithm.all) {
      assert(intercept[IllegalArgumentException](alg.forNdv(-1, 0.01)).getMessage.startsWith("ndv"))
      assert(intercept[IllegalArgumentException](alg.forNdv(10, 1.5)).getMessage.startsWith("fpp"))
      assert(intercept[IllegalArgumentException](alg.empty(7, 0.01)).getMessage.startsWith("numBytes"))
      assert(intercept[IllegalArgumentException](alg.fromBytes(Array[Byte](1, 2, 3))).getMessage.startsWith("bytes"))
    }
  }
}
