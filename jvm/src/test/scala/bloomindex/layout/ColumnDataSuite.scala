package bloomindex.layout

import bloomindex.filter.{BloomFilter, FilterAlgorithm}
import bloomindex.sbbf.SbbfSizing.Sizing

import org.scalatest.funsuite.AnyFunSuite

/** The compact form of a loaded column answers exactly as the filters it was built from. */
class ColumnDataSuite extends AnyFunSuite {

  private def filters(alg: FilterAlgorithm, n: Int, rnd: java.util.Random): Seq[(String, BloomFilter, Seq[Long])] =
    (0 until n).map { i =>
      val values = Seq.fill(1 + rnd.nextInt(400))(rnd.nextLong())
      // Sizes differ from file to file (as exact sizing makes them): offsets must hold.
      val f = alg.forNdv(values.size.toLong, 0.01, Sizing.Exact)
      values.foreach(v => f.insert(alg.hash.hashLong(v)))
      (if (i % 3 == 0) s"file:/t/p=${i % 5}/part-$i.parquet" else s"file:/t/part-é$i.parquet", f, values)
    }

  for (alg <- FilterAlgorithm.all) test(s"${alg.name}: every check equals the filter's own") {
    val rnd = new java.util.Random(alg.name.hashCode)
    val files = filters(alg, 300, rnd)
    val b = new ColumnData.Builder("c", alg)
    files.zipWithIndex.foreach { case ((p, f, vs), i) => b.add(p, 1000L + i, 2000L + i, vs.size, i % 2, f.toBytes) }
    val d = b.result()
    assert(d.numFiles == files.size && d.unreadable == 0)
    files.zipWithIndex.foreach { case ((p, f, vs), i) =>
      val r = d.indexOf(p, 1000L + i, 2000L + i)
      assert(r >= 0 && d.path(r) == p && d.rowCount(r) == vs.size && d.nullCount(r) == i % 2)
      vs.foreach(v => assert(d.mightContain(r, alg.hash.hashLong(v))))
      (0 until 200).foreach { _ =>
        val h = rnd.nextLong()
        assert(d.mightContain(r, h) == f.mightContain(h))
      }
      // Held only as it was built: same size and modification time.
      assert(d.indexOf(p, 1001L + i, 2000L + i) == -1 && d.indexOf(p, 1000L + i, 1999L + i) == -1)
    }
    assert(d.indexOf("file:/t/part-999999.parquet") == -1 && d.indexOf("file:/other/part-1.parquet") == -1)
    assert(d.heapBytes > files.map(_._2.numBytes.toLong).sum)
  }

  test("a filter that does not deserialize drops its file's row, counted with an example") {
    val alg = FilterAlgorithm.SplitBlock
    val good = alg.forNdv(10, 0.01, Sizing.Exact)
    val b = new ColumnData.Builder("k", alg)
    b.add("file:/t/a.parquet", 1, 1, 10, 0, good.toBytes)
    b.add("file:/t/b.parquet", 1, 1, 10, 0, Array[Byte](1, 2, 3))
    val d = b.result()
    assert(d.numFiles == 1 && d.indexOf("file:/t/a.parquet") == 0 && d.indexOf("file:/t/b.parquet") == -1)
    assert(d.unreadable == 1 && d.unreadableExample.contains("file:/t/b.parquet column k"))
  }

  test("no files, and files sharing no prefix") {
    val empty = new ColumnData.Builder("k", FilterAlgorithm.Classic).result()
    assert(empty.numFiles == 0 && empty.indexOf("file:/x") == -1)
    val alg = FilterAlgorithm.SplitBlock
    val b = new ColumnData.Builder("k", alg)
    Seq("file:/a/x.parquet", "s3a://b/y.parquet", "hdfs://nn/z.parquet").foreach(p => b.add(p, 1, 1, 1, 0, alg.forNdv(1, 0.01).toBytes))
    val d = b.result()
    assert(Seq("file:/a/x.parquet", "s3a://b/y.parquet", "hdfs://nn/z.parquet").map(d.indexOf).sorted == Seq(0, 1, 2))
  }

  test("a Hadoop path is found as its string is, without building it; a duplicate path keeps its first row") {
    val alg = FilterAlgorithm.SplitBlock
    def build(paths: Seq[String]): ColumnData = {
      val b = new ColumnData.Builder("k", alg)
      paths.zipWithIndex.foreach { case (p, i) => b.add(p, 10L + i, 20L + i, 1, 0, alg.forNdv(1, 0.01).toBytes) }
      b.result()
    }
    val local = Seq("file:/t/x/part-0.parquet", "file:/t/x/part-é1.parquet", "file:/t/x/p=a b/part-2.parquet",
      "file:/t/x/part-3.parquet")
    val remote = Seq("hdfs://nn:8020/w/t/part-0.parquet", "hdfs://nn:8020/w/t/part-1.parquet")
    val mixed = Seq("file:/a/x.parquet", "s3a://b/y.parquet", "hdfs://nn/z.parquet")
    // Paths held, others under the prefix, in other folders, schemes and authorities, and paths
    // shorter than the prefix.
    val asked = local ++ remote ++ mixed ++ Seq("file:/t/x/part-9.parquet", "file:/t/y/part-0.parquet", "file:/t/x",
      "file:/t/x/", "hdfs://other:8020/w/t/part-0.parquet", "hdfs://nn:8020/w/t/part-1.parquetx", "s3a://b/x/y.parquet",
      "file:/t/x/part-\u00e91.parquet", "file:/t/x/part-0.parquet#frag", "/t/x/part-0.parquet")
    for (held <- Seq(local, remote, mixed, local ++ remote)) {
      val d = build(held)
      asked.foreach { s =>
        val path = new org.apache.hadoop.fs.Path(s)
        assert(d.indexOf(path) == d.indexOf(path.toString), s)
        assert(d.indexOf(path) < 0 || d.path(d.indexOf(path)) == path.toString, s)
      }
      held.zipWithIndex.foreach { case (s, i) =>
        assert(d.indexOf(new org.apache.hadoop.fs.Path(s), 10L + i, 20L + i) == d.indexOf(s), s)
        assert(d.indexOf(new org.apache.hadoop.fs.Path(s), 11L + i, 20L + i) == -1, s)
      }
      // The batched lookup answers as the one by one, whatever the batch size, for held and
      // other paths, sizes and times equal or not.
      val cases = (asked ++ held).zipWithIndex.flatMap { case (s, i) =>
        val j = held.indexOf(s) max 0
        Seq((s, 10L + j, 20L + j), (s, 10L + j, 21L + j), (s, 11L + i, 20L + i))
      }
      val scratch = new ColumnData.Scratch(7)
      for (batch <- Seq(1, 3, 7)) cases.grouped(batch).foreach { g =>
        val out = Array.fill(batch)(-9)
        d.indexOfAll(g.map(c => new org.apache.hadoop.fs.Path(c._1)).toArray, g.map(_._2).toArray, g.map(_._3).toArray, g.size, out, scratch)
        g.zipWithIndex.foreach { case ((s, size, time), b) =>
          assert(out(b) == d.indexOf(new org.apache.hadoop.fs.Path(s), size, time), s"$s $size $time")
        }
        assert(out.drop(g.size).forall(_ == -9))
      }
      assert(cases.exists { case (s, size, time) => d.indexOf(new org.apache.hadoop.fs.Path(s), size, time) >= 0 })
    }
    val dup = build(Seq("file:/t/a.parquet", "file:/t/b.parquet", "file:/t/a.parquet"))
    assert(dup.numFiles == 2 && dup.indexOf("file:/t/a.parquet", 10L, 20L) == 0 && dup.indexOf("file:/t/a.parquet", 12L, 22L) == -1)
    assert(dup.indexOf("file:/t/b.parquet", 11L, 21L) == 1)
  }

  // Issue 26: a million-file column's path table is built in ranges on several threads; it must be
  // a table entering the names one by one makes, whatever the ranges, threads and collisions.
  test("the path table built in ranges: every name found from its home, the first of equal names kept") {
    val rnd = new java.util.Random(26)
    for (round <- 0 until 40) {
      val m = 1 + rnd.nextInt(300)
      var cap = 16
      while (cap < 2 * m) cap <<= 1
      // Names from a small pool (duplicates), with homes crowded into a few slots near the ranges'
      // and the table's ends (long probes that cross them), or anywhere.
      val pool = 1 + rnd.nextInt(m)
      val crowded = round % 2 == 0
      val poolHash = Array.fill(pool)(if (crowded) cap - 1 - rnd.nextInt(6) + (rnd.nextInt(4) * cap / 4) else rnd.nextInt(Int.MaxValue))
      val picks = Array.fill(m)(rnd.nextInt(pool))
      val bytes = picks.map(k => s"part-$k.parquet".getBytes("UTF-8"))
      val names = bytes.flatten
      val ends = bytes.map(_.length).scanLeft(0)(_ + _).tail
      val hashes = picks.map(poolHash)
      def name(r: Int): Int = picks(r)
      def check(slots: Array[Int], dropped: Array[Boolean]): Unit = {
        val first = (0 until m).groupBy(name).map { case (k, rs) => k -> rs.min }
        (0 until m).foreach(r => assert((dropped != null && dropped(r)) == (first(name(r)) != r), s"round $round file $r"))
        assert(slots.filter(_ != 0).sorted.toSeq == first.values.toSeq.sorted.map(_ + 1))
        // A lookup of each name from its home meets no empty slot before it.
        first.foreach { case (k, r) =>
          var s = hashes(r) & (cap - 1)
          while (slots(s) != 0 && name(slots(s) - 1) != k) s = (s + 1) & (cap - 1)
          assert(slots(s) == r + 1, s"round $round name $k")
        }
      }
      val one = ColumnData.pathTable(names, ends, hashes, m, cap, threads = 1, rangeSlots = cap)
      check(one._1, one._2)
      for (range <- Seq(1, 2, 4, 16); threads <- Seq(1, 3)) {
        val (slots, dropped) = ColumnData.pathTable(names, ends, hashes, m, cap, threads, range)
        check(slots, dropped)
      }
    }
  }
}
