package bloomindex.layout

import bloomindex.log.{ColumnSpec, IndexData, IndexSpec, SourceSpec}
import bloomindex.sbbf.SbbfSizing.Sizing

import org.scalatest.funsuite.AnyFunSuite

/** The layouts as the log names them, and which one a build writes. */
class IndexLayoutSuite extends AnyFunSuite {

  private def data(layout: String) = IndexData("data/x", 1, 1, 1, 0, Map.empty, layout = layout)

  test("every layout name the log accepts has one implementation, and an unknown name is refused") {
    assert(IndexLayout.all.map(_.name).toSet == IndexData.all)
    IndexData.all.foreach(n => assert(IndexLayout.of(data(n)).name == n))
    val e = intercept[IllegalStateException](IndexLayout.of(data("pages")))
    assert(e.getMessage.contains("'pages'"))
  }

  test("only the rows layout keeps the columns together; probe files only in blocks and probes") {
    assert(IndexLayout.all.filterNot(_.perColumn) == Seq(IndexLayout.Rows))
    assert(IndexLayout.all.filter(_.probed) == Seq(IndexLayout.Blocks, IndexLayout.Probes))
    val spec = IndexSpec("ix", SourceSpec(None, "parquet", Seq("/t"), Map.empty, Nil),
      Seq("a", "b", "c").map(n => ColumnSpec(n, "STRING", 0.01, None, Sizing.Exact)), global = false)
    assert(IndexLayout.Rows.loadedWith(spec, 1) == Seq(0, 1, 2))
    Seq(IndexLayout.Columns, IndexLayout.Blocks, IndexLayout.Probes).foreach(l => assert(l.loadedWith(spec, 1) == Seq(1)))
  }

  test("a build writes probe files only, unless encrypted or block-major files are off") {
    assert(IndexLayout.forBuild(encrypted = false, blockMajor = true, testBlocks = false) == IndexLayout.Probes)
    assert(IndexLayout.forBuild(encrypted = true, blockMajor = true, testBlocks = false) == IndexLayout.Columns)
    assert(IndexLayout.forBuild(encrypted = false, blockMajor = false, testBlocks = true) == IndexLayout.Columns)
    assert(IndexLayout.forBuild(encrypted = false, blockMajor = true, testBlocks = true) == IndexLayout.Blocks)
  }

  test("a store's error or timeout may pass; damage, a file gone and bytes that do not parse do not") {
    // Parquet's own failure to parse a damaged footer: an IOException over Thrift's exception.
    val footer = intercept[java.io.IOException](
      org.apache.parquet.format.Util.readFileMetaData(new java.io.ByteArrayInputStream(Array.fill[Byte](64)(0x1f))))
    assert(!IndexLayout.passing(footer), footer)
    assert(!IndexLayout.passing(new java.util.concurrent.ExecutionException(footer)))
    assert(!IndexLayout.passing(new java.io.FileNotFoundException("gone")))
    assert(!IndexLayout.passing(new bloomindex.log.Checksums.Mismatch("probe file fails its checksum")))
    assert(IndexLayout.passing(new java.io.IOException("Connection reset")))
    assert(IndexLayout.passing(new java.net.SocketTimeoutException("Read timed out")))
    assert(IndexLayout.passing(new java.util.concurrent.ExecutionException(new java.io.InterruptedIOException("interrupted"))))
  }
}
