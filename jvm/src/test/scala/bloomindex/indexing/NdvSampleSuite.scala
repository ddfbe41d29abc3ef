package bloomindex.indexing

import bloomindex.log.{ColumnSpec, SourceSpec}
import bloomindex.sbbf.SbbfSizing.Sizing
import bloomindex.source.{SourceFile, SourceResolver}
import bloomindex.testing.{TempDirs, TestSpark}

import org.scalatest.funsuite.AnyFunSuite

class NdvSampleSuite extends AnyFunSuite {

  private lazy val spark = TestSpark.session

  test("distinct values per byte: each sampled file counted, summed over their bytes") {
    val path = TempDirs.create("ndv-sample").resolve("t").toString
    // 4 files of 1,000 rows: k distinct in every row (1,000 a file), g 10 values a file, n null.
    spark.range(0, 4000, 1, 4).selectExpr("id AS k", "id % 10 AS g", "CAST(NULL AS BIGINT) AS n").write.parquet(path)
    val snap = SourceResolver.snapshot(spark, SourceSpec(None, "parquet", Seq(path), Map.empty, Nil))
    assert(snap.files.size == 4)
    val cols = Seq("k", "g", "n").map(c => ColumnSpec(c, "BIGINT", 0.01, None, Sizing.Exact))
    val perByte = NdvSample.perByte(spark, snap.relation, snap.files, cols)
    val bytes = snap.files.map(_.size).sum.toDouble
    val Array(k, g, n) = perByte.map(_.get * bytes)
    assert(math.abs(k - 4000) / 4000 < 0.05, k)
    assert(math.abs(g - 40) / 40 < 0.05, g)
    assert(n == 0.0)
    assert(NdvSample.perByte(spark, snap.relation, Nil, cols).forall(_.isEmpty))
  }

  test("the sample: at most MaxFiles, spread over the files, at least one, within MaxBytes") {
    val files = (0 until 100).map(i => SourceFile(f"f$i%03d", 1000L, 0L))
    val picked = NdvSample.pick(files)
    assert(picked.size == NdvSample.MaxFiles && picked.map(_.path).distinct.size == picked.size)
    assert(picked.head.path == "f000" && picked.last.path.compareTo("f080") > 0)
    val huge = (0 until 5).map(i => SourceFile(s"h$i", NdvSample.MaxBytes, 0L))
    assert(NdvSample.pick(huge).map(_.path) == Seq("h0"))
    assert(NdvSample.pick(Nil).isEmpty)
  }
}
