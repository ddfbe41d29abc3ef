package bloomindex.bench

import bloomindex.filter.Sbbf
import bloomindex.sbbf.{SbbfKernel, SbbfKernels}

import org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter

/**
 * `make bench-sbbf`: bulk insert and check, ns per hash, for our vector and scalar kernels
 * against parquet-java's `BlockSplitBloomFilter.insertHash/findHash`, on filters of 32 KiB,
 * 1 MiB and 64 MiB at 10 bits per key. Each figure is the median of several timed rounds
 * after 1.5 s of warm-up; probes are half present, half absent.
 */
object SbbfBench {

  private val Sizes = Seq(32 * 1024, 1024 * 1024, 64 * 1024 * 1024)
  private val Probes = 4 * 1000 * 1000
  private val WarmupNanos = 1500L * 1000 * 1000
  private val Rounds = 7

  /** Median ns per hash of `body`, which handles `count` hashes per call. */
  private def time(count: Int)(body: => Unit): Double = Timing.nsPerItem(count, WarmupNanos, Rounds, warmCalls = 5)(body)

  def main(args: Array[String]): Unit = {
    val kernels: Seq[SbbfKernel] = SbbfKernels.vector.toSeq :+ SbbfKernels.scalar
    val rnd = new java.util.Random(42)
    val cpu = Timing.cpu
    println(s"# SBBF benchmark: JDK ${System.getProperty("java.version")}, $cpu, " +
      s"${Runtime.getRuntime.availableProcessors()} cores; kernels: ${kernels.map(_.name).mkString(", ")}")
    println(f"${"size"}%-8s ${"op"}%-7s ${"impl"}%-13s ${"ns/op"}%8s ${"vs parquet-java"}%16s")
    var sink = 0L
    for (bytes <- Sizes) {
      val keys = bytes * 8 / 10
      val inserted = Array.fill(keys)(rnd.nextLong())
      val probes = Array.tabulate(Probes)(i => if (i % 2 == 0) inserted(rnd.nextInt(keys)) else rnd.nextLong())
      val out = new Array[Boolean](Probes)
      val label = if (bytes >= (1 << 20)) s"${bytes >> 20} MiB" else s"${bytes >> 10} KiB"

      // Insert: a fresh filter per round would time allocation, so insert into a reused one.
      val theirsFilter = new BlockSplitBloomFilter(bytes, bytes)
      val theirsInsert = time(keys) {
        var i = 0
        while (i < keys) { theirsFilter.insertHash(inserted(i)); i += 1 }
      }
      val theirsCheck = time(Probes) {
        var i = 0
        var hits = 0
        while (i < Probes) { if (theirsFilter.findHash(probes(i))) hits += 1; i += 1 }
        sink += hits
      }
      println(f"$label%-8s ${"insert"}%-7s ${"parquet-java"}%-13s $theirsInsert%8.2f ${"1.00x"}%16s")
      println(f"$label%-8s ${"check"}%-7s ${"parquet-java"}%-13s $theirsCheck%8.2f ${"1.00x"}%16s")
      for (k <- kernels) {
        val f = Sbbf(bytes, k)
        val insert = time(keys)(f.insertAll(inserted, 0, keys))
        val check = time(Probes) {
          f.checkAll(probes, 0, Probes, out, 0)
          sink += (if (out(Probes - 1)) 1 else 0)
        }
        val ref = Sbbf.fromBitset({ val o = new java.io.ByteArrayOutputStream(); theirsFilter.writeTo(o); o.toByteArray })
        require(ref == f, s"${k.name} kernel's bits differ from parquet-java's at $label")
        println(f"$label%-8s ${"insert"}%-7s ${"ours-" + k.name}%-13s $insert%8.2f ${theirsInsert / insert}%15.2fx")
        println(f"$label%-8s ${"check"}%-7s ${"ours-" + k.name}%-13s $check%8.2f ${theirsCheck / check}%15.2fx")
      }
    }
    if (sink == 42) println("")
  }
}
