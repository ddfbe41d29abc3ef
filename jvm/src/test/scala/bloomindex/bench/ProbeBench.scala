package bloomindex.bench

import bloomindex.catalog.{FilePredicate, FileRows, IndexView}
import bloomindex.layout.ColumnData
import bloomindex.filter.FilterAlgorithm
import bloomindex.filter.Sbbf
import bloomindex.hash.ParquetHash
import bloomindex.log.{ColumnSpec, IndexData, IndexSpec, IndexState, LogEntry, SourceSpec}
import bloomindex.sbbf.SbbfSizing
import bloomindex.sbbf.SbbfSizing.Sizing

import org.apache.spark.sql.catalyst.expressions.{AttributeReference, EqualTo, In, Literal}
import org.apache.spark.sql.types.LongType

/**
 * The planning-time probe of `make bench-query`, alone: 10,000 indexed files (10,000 distinct
 * bigints each, exact sizing at fpp 0.01), a warm in-memory index, and the time to decide
 * which files a point lookup, a 10-value and a 1,000-value IN-list may match.
 */
object ProbeBench {

  def main(args: Array[String]): Unit = {
    val files = 10000
    val perFile = 10000
    val bytes = SbbfSizing.exactBytes(perFile, 0.01)
    val rnd = new java.util.Random(1)
    val builder = new ColumnData.Builder("k", FilterAlgorithm.SplitBlock)
    (0 until files).foreach { i =>
      val f = Sbbf(bytes)
      var j = 0
      while (j < perFile) { f.insert(ParquetHash.hashLong(i.toLong * perFile + j)); j += 1 }
      builder.add(s"file:/t/part-$i.parquet", 1L, 1L, perFile, 0L, f.toBytes)
    }
    val indexed = builder.result()
    val spec = IndexSpec("probe", SourceSpec(None, "parquet", Seq("file:/t"), Map.empty, Nil),
      Seq(ColumnSpec("k", "BIGINT", 0.01, None, Sizing.Exact)), global = false)
    val entry = LogEntry(1, IndexState.Active, "CREATE", "op", 0, 0, spec,
      Some(IndexData("data/op", files, 0, 0, 0, Map.empty)))
    val view = new IndexView(new org.apache.hadoop.fs.Path("file:/i/probe"), entry, Map.empty, _ => indexed)
    val k = AttributeReference("k", LongType)()
    val queries = Seq(
      "point" -> EqualTo(k, Literal(123456789L)),
      "IN-10" -> In(k, (0 until 10).map(i => Literal(i * 7919L * 1000))),
      "IN-1000" -> In(k, (0 until 1000).map(i => Literal(rnd.nextLong()))))
    println(s"# probe: $files files x $perFile values, ${bytes} bytes per filter, JDK ${System.getProperty("java.version")}")
    for ((name, expr) <- queries) {
      def run(): Int = {
        val pred = FilePredicate.translate(expr, view).toOption.get
        // As the catalog probes: each listed file's path looked up, then tested.
        val row = new FileRows(Array(indexed), Array(0))
        (0 until files).count { i =>
          row.rows(0) = indexed.indexOf(s"file:/t/part-$i.parquet", 1L, 1L)
          pred.mayMatch(row)
        }
      }
      (1 to 20).foreach(_ => run())
      val times = (1 to 10).map { _ =>
        val t0 = System.nanoTime(); run(); (System.nanoTime() - t0) / 1e6
      }.sorted
      println(f"$name%-8s kept ${run()}%5d of $files files, median ${times(5)}%.1f ms (min ${times.head}%.1f)")
    }
  }
}
