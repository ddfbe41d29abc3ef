package bloomindex.bench

import bloomindex.index.{ColumnSpec, DistinctHashes, IndexFilters}
import bloomindex.sbbf.SbbfSizing.Sizing

/** Prototype timings: ways to count a file's distinct hashes and fill its filter. */
object DistinctBench {
  def main(args: Array[String]): Unit = {
    val n = args.headOption.map(_.toInt).getOrElse(100000)
    val files = 40
    val rnd = new java.util.Random(1)
    val data = Array.fill(files)(Array.fill(n)(rnd.nextLong()))
    val c = ColumnSpec("x", "bigint", 0.01, None, Sizing.Exact)
    var sink = 0L
    def run(name: String)(perFile: Array[Long] => Int): Unit = {
      for (round <- 0 until 12) {
        val t0 = System.nanoTime()
        data.foreach(d => sink += perFile(d))
        val ns = (System.nanoTime() - t0).toDouble / (files.toLong * n)
        if (round >= 9) println(f"$name%-30s $ns%6.2f ns/value")
      }
    }
    def batches(d: Array[Long])(f: (Int, Int) => Unit): Unit = {
      var i = 0
      while (i < d.length) { val e = math.min(d.length, i + 4096); f(i, e); i = e }
    }
    val scratch = new DistinctHashes.Scratch
    val dh = new DistinctHashes(scratch)
    run("DistinctHashes + filter") { d =>
      dh.clear()
      batches(d)((a, b) => dh.add(d, a, b))
      val k = dh.distinct()
      IndexFilters.ofDistinct(c, dh.keys, k).numBytes
    }
    run("DistinctHashes only") { d =>
      dh.clear()
      batches(d)((a, b) => dh.add(d, a, b))
      dh.distinct()
    }
    run("buffer + sort + filter") { d =>
      val buf = d.clone()
      java.util.Arrays.sort(buf)
      var k = 0; var i = 0
      while (i < buf.length) { if (i == 0 || buf(i) != buf(i - 1)) { buf(k) = buf(i); k += 1 }; i += 1 }
      val f = IndexFilters.forFile(c, k); f.insertAll(buf, 0, k); f.numBytes
    }
    run("radix top32 + filter") { d =>
      val k = RadixDistinct.distinct(d, d.length)
      val f = IndexFilters.forFile(c, k._2); f.insertAll(k._1, 0, k._2); f.numBytes
    }
    run("radix only") { d => RadixDistinct.distinct(d, d.length)._2 }
    run("filter only (known size)") { d =>
      val f = IndexFilters.forFile(c, d.length); f.insertAll(d, 0, d.length); f.numBytes
    }
    run("sizing only") { d => IndexFilters.fileBytes(c, d.length) }
    val fixed = IndexFilters.fileBytes(c, n)
    run("alloc + insert (size given)") { d => val f = IndexFilters.ofBytes(fixed); f.insertAll(d, 0, d.length); f.numBytes }
    println(sink)
  }
}

object RadixDistinct {
  /** Sorts by the high 32 bits (4 LSD passes of 8 bits), then removes duplicates within equal-top runs. */
  def distinct(in: Array[Long], len: Int): (Array[Long], Int) = {
    var a = java.util.Arrays.copyOf(in, len)
    var b = new Array[Long](len)
    val count = new Array[Int](256)
    var shift = 32
    while (shift < 64) {
      java.util.Arrays.fill(count, 0)
      var i = 0
      while (i < len) { count(((a(i) >>> shift) & 0xff).toInt) += 1; i += 1 }
      var sum = 0; var d = 0
      while (d < 256) { val c = count(d); count(d) = sum; sum += c; d += 1 }
      i = 0
      while (i < len) { val v = a(i); val dd = ((v >>> shift) & 0xff).toInt; b(count(dd)) = v; count(dd) += 1; i += 1 }
      val t = a; a = b; b = t
      shift += 8
    }
    var k = 0
    var i = 0
    while (i < len) {
      var j = i + 1
      val top = a(i) >>> 32
      while (j < len && (a(j) >>> 32) == top) j += 1
      if (j - i == 1) { a(k) = a(i); k += 1 }
      else {
        java.util.Arrays.sort(a, i, j)
        var m = i
        while (m < j) { if (m == i || a(m) != a(m - 1)) { a(k) = a(m); k += 1 }; m += 1 }
      }
      i = j
    }
    (a, k)
  }
}
