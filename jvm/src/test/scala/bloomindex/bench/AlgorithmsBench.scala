package bloomindex.bench

import java.nio.file.{Files, Paths}

import com.fasterxml.jackson.databind.ObjectMapper

import bloomindex.filter.{BloomFilter, ClassicBloomFilter, ClassicKernels, FilterAlgorithm, Sbbf, SbbfMurmur3}
import bloomindex.sbbf.{SbbfKernels, SbbfSizing}
/**
 * `make bench-algorithms`, JVM part: for each filter design,
 *  - the false positive rate measured at 6 to 41 bits per distinct value (filters of 1 MiB, so
 *    every design has exactly the same bits: 8 Mi bits hold 8 Mi / b values), over 12 million
 *    absent probes, against the rate theory predicts and, for `sbbf`, the spec's table;
 *  - insert and check ns per hash per kernel, at 10.5 bits per value, for 32 KiB, 1 MiB and
 *    64 MiB filters (median of 5 rounds after warm-up; probes half present, half absent).
 *
 * Values are the longs 0, 1, 2, ... hashed as Spark hashes a bigint column for the design
 * (XXH64 or MurmurHash3 of the 8 plain-encoded bytes); probes are longs from 2^40 on, never
 * inserted. The classic design gets `k = round(b ln 2)`, its optimum at `b` bits per value.
 * Writes `bench/algorithms.json`; `bench/plot_algorithms.py` turns it into the report and plot.
 */
object AlgorithmsBench {

  private val BitsPerValue = Seq(6.0, 8.0, 10.5, 12.0, 16.9, 20.0, 26.4, 41.0)
  private val SpecTable = Map(6.0 -> 0.1, 10.5 -> 0.01, 16.9 -> 0.001, 26.4 -> 0.0001, 41.0 -> 0.00001)
  private val FprBytes = 1 << 20
  private val Probes = 12 * 1000 * 1000
  private val SpeedSizes = Seq(32 * 1024, 1 << 20, 64 << 20)
  private val SpeedBits = 10.5
  private val SpeedProbes = 4 * 1000 * 1000
  private val InsertsTimed = 4 * 1000 * 1000
  private val WarmupNanos = 1000L * 1000 * 1000
  private val Rounds = 5

  private final case class Design(alg: FilterAlgorithm, kernels: Seq[String]) {
    def make(numBytes: Int, bits: Double, kernel: String): BloomFilter = alg match {
      case FilterAlgorithm.SplitBlock => Sbbf(numBytes, SbbfKernels.byName(kernel))
      case FilterAlgorithm.SplitBlockMurmur3 => SbbfMurmur3(numBytes, SbbfKernels.byName(kernel))
      case FilterAlgorithm.Classic => ClassicBloomFilter(numBytes, classicK(bits), ClassicKernels.byName(kernel))
    }
    def theory(numBytes: Int, ndv: Long, bits: Double): Double = alg match {
      case FilterAlgorithm.Classic => ClassicBloomFilter.expectedFpp(numBytes * 8L, classicK(bits), ndv)
      case _ => SbbfSizing.expectedFpp(numBytes, ndv)
    }
  }

  private def classicK(bits: Double): Int = math.max(1, math.round(bits * math.log(2)).toInt)

  private def hashes(alg: FilterAlgorithm, from: Long, n: Int): Array[Long] = {
    val out = new Array[Long](n)
    var i = 0
    while (i < n) { out(i) = alg.hash.hashLong(from + i); i += 1 }
    out
  }

  private def time(count: Int)(body: => Unit): Double = Timing.nsPerItem(count, WarmupNanos, Rounds, warmCalls = 3)(body)

  def main(args: Array[String]): Unit = {
    val out = Paths.get(args.headOption.getOrElse("bench/algorithms.json"))
    val sbbfKernels = SbbfKernels.vector.map(_.name).toSeq :+ "scalar"
    val classicKernels = ClassicKernels.vector.map(_.name).toSeq :+ "scalar"
    val designs = Seq(
      Design(FilterAlgorithm.SplitBlock, sbbfKernels),
      Design(FilterAlgorithm.SplitBlockMurmur3, sbbfKernels),
      Design(FilterAlgorithm.Classic, classicKernels))
    val mapper = new ObjectMapper()
    val root = mapper.createObjectNode()
    val cpu = Timing.cpu
    val env = root.putObject("env")
    env.put("jdk", System.getProperty("java.version"))
    env.put("cpu", cpu)
    env.put("cores", Runtime.getRuntime.availableProcessors())
    env.put("date", java.time.LocalDate.now().toString)
    env.put("probes", Probes)
    env.put("fpr_filter_bytes", FprBytes)
    println(s"# filter designs: JDK ${System.getProperty("java.version")}, $cpu")

    val fpr = root.putArray("fpr")
    for (d <- designs) {
      val probes = hashes(d.alg, 1L << 40, Probes)
      val answers = new Array[Boolean](Probes)
      for (b <- BitsPerValue) {
        val ndv = math.round(FprBytes * 8 / b).toInt
        val f = d.make(FprBytes, b, d.kernels.head)
        f.insertAll(hashes(d.alg, 0, ndv), 0, ndv)
        f.checkAll(probes, 0, Probes, answers, 0)
        val fp = answers.count(identity)
        val o = fpr.addObject()
        o.put("design", d.alg.name)
        o.put("bits_per_value", b)
        o.put("ndv", ndv)
        if (d.alg == FilterAlgorithm.Classic) o.put("k", classicK(b))
        o.put("probes", Probes)
        o.put("false_positives", fp)
        o.put("measured", fp.toDouble / Probes)
        o.put("theory", d.theory(FprBytes, ndv, b))
        if (d.alg == FilterAlgorithm.SplitBlock) SpecTable.get(b).foreach(o.put("spec", _))
        println(f"fpr   ${d.alg.name}%-13s $b%5.1f bits/value  measured ${fp.toDouble / Probes}%.3e  theory ${d.theory(FprBytes, ndv, b)}%.3e")
      }
    }

    val speed = root.putArray("speed")
    var sink = 0L
    for (d <- designs; bytes <- SpeedSizes) {
      val keys = math.round(bytes * 8 / SpeedBits).toInt
      val inserted = hashes(d.alg, 0, keys)
      val absent = hashes(d.alg, 1L << 40, SpeedProbes / 2)
      val rnd = new java.util.Random(7)
      val probes = Array.tabulate(SpeedProbes)(i => if (i % 2 == 0) inserted(rnd.nextInt(keys)) else absent(i / 2))
      val answers = new Array[Boolean](SpeedProbes)
      for (kernel <- d.kernels) {
        val f = d.make(bytes, SpeedBits, kernel)
        // Inserts into a filter of this size, at most InsertsTimed of them per round (a round of
        // 64 MiB's 51 M inserts would take minutes with the slowest kernel).
        val timed = math.min(keys, InsertsTimed)
        val insert = time(timed)(f.insertAll(inserted, 0, timed))
        val check = time(SpeedProbes) {
          f.checkAll(probes, 0, SpeedProbes, answers, 0)
          sink += (if (answers(SpeedProbes - 1)) 1 else 0)
        }
        for ((op, ns) <- Seq("insert" -> insert, "check" -> check)) {
          val o = speed.addObject()
          o.put("design", d.alg.name)
          o.put("kernel", kernel)
          o.put("filter_bytes", bytes)
          o.put("op", op)
          o.put("ns_per_op", ns)
        }
        println(f"speed ${d.alg.name}%-13s ${kernel}%-7s ${bytes >> 10}%6d KiB  insert $insert%6.2f ns  check $check%6.2f ns")
      }
    }
    if (sink == 42) println("")
    Files.createDirectories(out.toAbsolutePath.getParent)
    mapper.writerWithDefaultPrettyPrinter().writeValue(out.toFile, root)
    println(s"wrote $out")
  }
}
