package bloomindex.catalog

import java.util.concurrent.atomic.AtomicBoolean

import scala.util.control.NonFatal

import bloomindex.filter.FilterAlgorithm
import bloomindex.hash.ParquetHash
import bloomindex.log.{ColumnSpec, Decoding, ColumnDecoding, IndexData, IndexSpec, IndexState, LogEntry, LogJson, SourceSpec}
import bloomindex.sbbf.SbbfSizing.Sizing
import bloomindex.layout.{ColumnData, IndexLayout}

import org.apache.spark.sql.types.{LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String

/**
 * A driver's first pruned query would otherwise also pay for loading and first running the
 * code it goes through (the log's JSON, hashing, the compact column form): a tenth of a second
 * of its planning on a fresh JVM. When the extension is installed, a low-priority daemon thread
 * runs that code once on made-up data, in memory (no file, no Spark job, no session state),
 * while the session starts. Failures are ignored: it is only a warm-up.
 */
object Warmup {

  private val started = new AtomicBoolean(false)

  def start(): Unit = if (started.compareAndSet(false, true)) {
    val t = new Thread(() => try run() catch { case NonFatal(_) => }, "bloomindex-warmup")
    t.setDaemon(true)
    t.setPriority(Thread.MIN_PRIORITY)
    t.start()
  }

  private def run(): Unit = {
    val spec = IndexSpec("warmup", SourceSpec(None, "parquet", Seq("file:/warmup"), Map.empty, Nil),
      Seq(ColumnSpec("k", "BIGINT", 0.01, None, Sizing.Exact), ColumnSpec("s", "STRING", 0.01, None, Sizing.Exact)),
      global = false)
    val decoding = Decoding("parquet", Seq(ColumnDecoding("k", "BIGINT", Map.empty, Map.empty, Map.empty)))
    val entry = LogEntry(1, IndexState.Active, "CREATE", "warmup", 0L, 0L, spec,
      Some(IndexData("data/warmup", 2, 2, 64, 0, Map.empty, None, Some(decoding), IndexLayout.Probes.name)))
    LogJson.read(LogJson.write(entry))
    val alg = FilterAlgorithm.SplitBlock
    val b = new ColumnData.Builder("k", alg)
    (0 until 2).foreach { i =>
      val f = alg.forNdv(4, 0.01, Sizing.Exact)
      f.insert(ParquetHash.hashValue(i.toLong, LongType))
      f.insert(ParquetHash.hashValue(UTF8String.fromString(s"v$i"), StringType))
      b.add(s"file:/warmup/part-$i.parquet", 1L, 1L, 4L, 0L, f.toBytes)
    }
    val d = b.result()
    val probes = d.probes(Array(ParquetHash.hashValue(1L, LongType)))
    (0 until d.numFiles).foreach(i => probes(0).mightContain(d.indexOf(d.path(i), 1L, 1L)))
  }
}
