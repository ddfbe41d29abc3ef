package bloomindex.layout

import java.nio.file.Files

import bloomindex.filter.{BloomFilter, FilterAlgorithm}
import bloomindex.sbbf.SbbfSizing.Sizing

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite
import bloomindex.testing.{FlipSample, TempDirs}

/**
 * Probe files (a column's filters block-major): what a query reads of them answers exactly as
 * the filters they were written from; a damaged file is refused by name, a block row that
 * cannot be read answers "maybe".
 */
class ProbeFileSuite extends AnyFunSuite {

  private val conf = new Configuration()
  /** The column the suite's probe files are written for and read as. */
  private val Column = "c"

  private def filters(alg: FilterAlgorithm, n: Int, rnd: java.util.Random): Seq[(String, BloomFilter, Seq[Long])] =
    (0 until n).map { i =>
      val values = Seq.fill(1 + rnd.nextInt(300))(rnd.nextLong())
      // Exact sizing: sizes differ from file to file, so files fall into several sections.
      val f = alg.forNdv(values.size.toLong, 0.01, Sizing.Exact)
      values.foreach(v => f.insert(alg.hash.hashLong(v)))
      (s"file:/t/part-$i.parquet", f, values)
    }

  /** Writes `files` into probe files of at most `perFile` rows each and loads them as a query would. */
  private def write(alg: FilterAlgorithm, files: Seq[(String, BloomFilter, Seq[Long])], perFile: Int,
      sectionBytes: Int, format: Int = ProbeFile.Format): Seq[Path] = {
    val dir = TempDirs.create("probe").toFile
    files.grouped(perFile).zipWithIndex.map { case (group, k) =>
      val p = new Path(dir.toURI.toString, s"_part-$k.probe")
      val w = new ProbeFile.Writer(conf, p, alg, Column, sectionBytes, format)
      group.foreach { case (path, f, vs) => w.add(path, 10L, 20L, vs.size, 1L, vs.distinct.size, path.hashCode % 2 == 0, f.toBytes) }
      val len = w.close()
      assert(len == new java.io.File(p.toUri).length())
      p
    }.toSeq
  }

  private def load(alg: FilterAlgorithm, files: Seq[(String, BloomFilter, Seq[Long])], perFile: Int,
      sectionBytes: Int, format: Int = ProbeFile.Format, gap: Long = BlockFilters.DefaultGapBytes): (ColumnData, Seq[Path]) = {
    val paths = write(alg, files, perFile, sectionBytes, format)
    val b = new ColumnData.Builder("c", alg)
    val footers = paths.map(p => ProbeFile.readFooter(conf, p, None, Column)).toArray
    assert(footers.forall(_.algorithm == alg))
    BlockFilters.addTo(b, alg, conf, "column=c", paths.toArray, paths.map(p => new java.io.File(p.toUri).length()).toArray,
      footers, 4, 4, Long.MaxValue, gap)
    (b.result(), paths)
  }

  for (alg <- FilterAlgorithm.all) test(s"${alg.name}: every check through the block rows equals the filter's own") {
    val rnd = new java.util.Random(alg.name.hashCode)
    val files = filters(alg, 200, rnd)
    // Small sections: each size's files are split over several, and over three files.
    val (d, _) = load(alg, files, perFile = 80, sectionBytes = 4096)
    assert(d.numFiles == files.size && d.fetchesBlocks)
    val probed = files.map(_._3.head).map(alg.hash.hashLong) ++ Seq.fill(300)(rnd.nextLong())
    val probes = d.probes(probed.toArray)
    files.foreach { case (p, f, vs) =>
      val r = d.indexOf(p, 10L, 20L)
      assert(r >= 0 && d.rowCount(r) == vs.size && d.nullCount(r) == 1)
      probed.indices.foreach(k => assert(probes(k).mightContain(r) == f.mightContain(probed(k)), s"$p hash ${probed(k)}"))
      vs.take(20).foreach(v => assert(d.mightContain(r, alg.hash.hashLong(v))))
    }
    // Fetched rows are held (and counted), up to the cap.
    assert(d.heapBytes > 0)
  }

  // Issue 26: the reads of an object store (each footer in one read of the file's end, block
  // rows coalesced into ranges read in parallel) answer exactly as the reads before.
  for (alg <- FilterAlgorithm.all) test(s"${alg.name}: footers read with any tail, rows with any gap, answer the same") {
    val rnd = new java.util.Random(7L + alg.name.hashCode)
    val files = filters(alg, 150, rnd)
    val paths = write(alg, files, perFile = 60, sectionBytes = 2048)
    val lengths = paths.map(p => new java.io.File(p.toUri).length()).toArray
    val reference = paths.map(p => ProbeFile.readFooter(conf, p, None, Column))
    for (tail <- Seq(0L, 1L, 100L, 1000L, 64L << 10, 1L << 30)) {
      val footers = paths.indices.map(k => ProbeFile.readFooter(conf, paths(k), Some(lengths(k)), Column, tailBytes = tail))
      footers.indices.foreach { k =>
        val (a, b) = (footers(k), reference(k))
        assert(a.algorithm == b.algorithm && a.sections.toSeq == b.sections.toSeq && a.files.toSeq == b.files.toSeq, s"tail $tail")
        if (tail >= lengths(k)) assert(a.bytesRead == lengths(k))
      }
    }
    val est = ProbeFile.tailEstimates(lengths, files.map(_._2.toBytes.length.toLong).sum, 1024)
    est.indices.foreach(k => assert(est(k) >= 1024 && est(k) <= lengths(k)))
    assert(ProbeFile.tailEstimates(lengths, 0L, 0).forall(_ == 0L))
    val probed = (files.map(_._3.head).map(alg.hash.hashLong) ++ Seq.fill(200)(rnd.nextLong())).toArray
    for (gap <- Seq(-1L, 0L, 64L, 4096L, 1L << 20)) {
      val b = new ColumnData.Builder("c", alg)
      BlockFilters.addTo(b, alg, conf, "column=c", paths.toArray, lengths, reference.toArray, 3, 5, Long.MaxValue, gap)
      val d = b.result()
      val probes = d.probes(probed)
      files.foreach { case (p, f, _) =>
        val r = d.indexOf(p, 10L, 20L)
        probed.indices.foreach(k => assert(probes(k).mightContain(r) == f.mightContain(probed(k)), s"gap $gap $p"))
      }
    }
  }

  // Issue 26: a query's load parses the footers straight into arrays (ProbeFile.Entries) and builds
  // the column from them per probe file; it must be the column the entries added one by one build.
  for (alg <- FilterAlgorithm.all; format <- ProbeFile.Formats.toSeq.sorted)
    test(s"${alg.name}, probe file format $format: the load from footers as arrays builds the same column") {
      val rnd = new java.util.Random(31L * format + alg.name.hashCode)
      val dir = TempDirs.create("probe").toFile
      // Folders, non-ASCII names, another scheme (no prefix shared by all), a path in two probe files.
      val groups: Seq[Seq[String]] = Seq(
        (0 until 70).map(i => if (i % 3 == 0) s"file:/t/p=${i % 4}/part-$i.parquet" else s"file:/t/part-é$i.parquet"),
        (0 until 50).map(i => s"file:/t/p=9/part-x$i.parquet"),
        Seq.empty,
        (0 until 30).map(i => s"s3a://b/t/part-$i.parquet") :+ "file:/t/p=9/part-x7.parquet" :+ "file:/t/part-é1.parquet")
      val made = scala.collection.mutable.Map[(String, Int), BloomFilter]()
      val paths = groups.zipWithIndex.map { case (group, k) =>
        val p = new Path(dir.toURI.toString, s"_part-$k.probe")
        val w = new ProbeFile.Writer(conf, p, alg, Column, 1024, format)
        group.foreach { path =>
          val values = Seq.fill(1 + rnd.nextInt(200))(rnd.nextLong())
          val f = alg.forNdv(values.size.toLong, 0.01, Sizing.Exact)
          values.foreach(v => f.insert(alg.hash.hashLong(v)))
          made((path, k)) = f
          w.add(path, 100L + k, 200L + path.length, values.size, k, values.size, false, f.toBytes)
        }
        w.close()
        p
      }
      val lengths = paths.map(p => new java.io.File(p.toUri).length()).toArray
      def column(compact: Boolean): ColumnData = {
        val footers = ProbeFile.readEachFooter(conf, paths.zip(lengths), 2, Column, alg, format >= ProbeFile.ChecksumsSince,
          compact = compact).map(_.toOption.get)
        footers.zip(paths).foreach { case (f, p) =>
          assert(f.entries.isDefined == compact)
          if (compact) {
            // The same entries as the footer read one object each.
            val e = f.entries.get
            val one = ProbeFile.readFooter(conf, p, None, Column).files
            assert(e.count == one.length && f.fileCount == one.length)
            one.indices.foreach { i =>
              val o = one(i)
              assert(e.path(i) == o.path && e.size(i) == o.size && e.modificationTime(i) == o.modificationTime &&
                e.rowCount(i) == o.rowCount && e.nullCount(i) == o.nullCount && e.section(i) == o.section &&
                e.position(i) == o.position && e.numHashes(i) == o.numHashes)
            }
          }
        }
        val b = new ColumnData.Builder("c", alg)
        BlockFilters.addTo(b, alg, conf, "column=c", paths.toArray, lengths, footers, 3, 3, Long.MaxValue)
        b.result()
      }
      val (one, arrays) = (column(compact = false), column(compact = true))
      // Duplicates: the first kept (the second probe file's copy of part-x7, and the first file's é1).
      assert(arrays.numFiles == one.numFiles && one.numFiles == groups.map(_.size).sum - 2)
      val hashes = (made.values.flatMap(_ => Seq.fill(3)(rnd.nextLong())) ++ Seq(alg.hash.hashLong(1L))).toArray
      val (p1, p2) = (one.probes(hashes), arrays.probes(hashes))
      (0 until one.numFiles).foreach { i =>
        assert(arrays.path(i) == one.path(i) && arrays.size(i) == one.size(i) &&
          arrays.modificationTime(i) == one.modificationTime(i) && arrays.rowCount(i) == one.rowCount(i) &&
          arrays.nullCount(i) == one.nullCount(i))
        assert(arrays.indexOf(one.path(i)) == i && arrays.indexOf(new Path(one.path(i)), one.size(i), one.modificationTime(i)) == i)
        hashes.indices.foreach(k => assert(p2(k).mightContain(i) == p1(k).mightContain(i)))
      }
      // Each file answers as the filter written for it (the first probe file's, for the duplicates).
      groups.zipWithIndex.foreach { case (group, k) => group.foreach { path =>
        val i = arrays.indexOf(path)
        if (arrays.size(i) == 100L + k) hashes.indices.foreach(h => assert(p2(h).mightContain(i) == made((path, k)).mightContain(hashes(h))))
      } }
      assert(arrays.indexOf("file:/t/part-999.parquet") == -1 && arrays.indexOf("s3a://b/t/part-1.parquetx") == -1)
    }

  test("coalesce: neighbouring rows within the gap are one range, capped in length") {
    def rows(spans: (Long, Int)*) = spans.zipWithIndex.map { case ((o, n), k) => (o, n, java.lang.Long.valueOf(k.toLong)) }
    val r = BlockFilters.coalesce(rows((1000L, 100), (0L, 100), (150L, 50), (5000L, 10)), gap = 100, maxBytes = 1 << 20)
    assert(r.map(x => (x.offset, x.length, x.rows.size)) == Seq((0L, 200L, 2), (1000L, 100L, 1), (5000L, 10L, 1)))
    assert(BlockFilters.coalesce(rows((0L, 100), (100L, 100)), gap = 0, maxBytes = 1 << 20).size == 1)
    assert(BlockFilters.coalesce(rows((0L, 100), (101L, 100)), gap = 0, maxBytes = 1 << 20).size == 2)
    assert(BlockFilters.coalesce(rows((0L, 100), (100L, 100)), gap = 10, maxBytes = 150).size == 2)
  }

  for (alg <- FilterAlgorithm.all; format <- ProbeFile.Formats.toSeq.sorted) {
    test(s"${alg.name}, probe file format $format: each filter read back whole is the bytes it was written from") {
      val rnd = new java.util.Random(31L * format + alg.name.hashCode)
      val files = filters(alg, 120, rnd)
      val paths = write(alg, files, perFile = 50, sectionBytes = 2048, format)
      val back = scala.collection.mutable.Map[String, (ProbeFile.FileEntry, Array[Byte])]()
      paths.foreach { p =>
        val read = ProbeFile.readFilters(conf, p, new java.io.File(p.toUri).length(), Column)
        read.foreach { case (e, f) => back(e.path) = (e, f) }
        assert(read.footer.algorithm == alg && read.footer.sections.length > 1)
      }
      assert(back.size == files.size)
      files.foreach { case (path, f, vs) =>
        val (e, bytes) = back(path)
        assert(java.util.Arrays.equals(bytes, f.toBytes), path)
        assert(e.rowCount == vs.size && e.size == 10L && e.modificationTime == 20L && e.nullCount == 1L)
        // Format 1 does not record ndv and origin.
        if (format >= 2) assert(e.ndv == vs.distinct.size && e.fromFooter == (path.hashCode % 2 == 0))
        else assert(e.ndv == -1L && !e.fromFooter)
        vs.foreach(v => assert(alg.fromBytes(bytes).mightContain(alg.hash.hashLong(v))))
      }
    }
  }

  test("format 4: the entries of a table's files take under 60% of format 3's footer, read back the same") {
    val alg = FilterAlgorithm.SplitBlock
    val dir = TempDirs.create("probe4").toFile
    val f = alg.forNdv(10, 0.01, Sizing.Exact).toBytes
    // As a Spark write names its files, in a table's folder; numbers as a listing gives them.
    val entries = (0 until 500).map(i => (f"s3a://bucket/warehouse/db.db/orders/date=2026-11-${i % 28 + 1}%02d/" +
      f"part-$i%05d-6f1c0d2e-0b5a-4c7e-9a51-3d2f8e7b1a90.c000.snappy.parquet", 40000L + 17 * i, 1764201600000L + i))
    def footerBytes(format: Int): (Long, ProbeFile.Footer) = {
      val p = new Path(dir.toURI.toString, s"_f$format.probe")
      val w = new ProbeFile.Writer(conf, p, alg, Column, ProbeFile.SectionBytes, format)
      entries.foreach { case (path, size, time) => w.add(path, size, time, 2000L, 0L, 10L, false, f) }
      val length = w.close()
      val footer = ProbeFile.readFooter(conf, p, None, Column)
      (length - footer.sections.map(_.length).sum, footer)
    }
    val (three, f3) = footerBytes(3)
    val (four, f4) = footerBytes(4)
    assert(f4.files.toSeq == f3.files.toSeq && f4.files.map(_.path).toSeq == entries.map(_._1))
    // Per file 162 bytes in format 3; the folder once and 18 bytes of numbers instead of 50 in format 4.
    assert(four * 10 < three * 6, s"format 4: $four bytes, format 3: $three")
  }

  test("a column of probe files of formats 3 and 4 together (an incremental REFRESH keeps older ones) loads as one") {
    val alg = FilterAlgorithm.SplitBlock
    val files = filters(alg, 90, new java.util.Random(5)).zipWithIndex.map { case ((p, f, v), i) =>
      // Some in a folder of their own, so the folders the probe files share differ.
      (if (i % 4 == 0) p.replace("file:/t/", "file:/t/d=1/") else p, f, v)
    }
    val dir = TempDirs.create("probe34").toFile
    val paths = files.grouped(30).zipWithIndex.map { case (group, k) =>
      val p = new Path(dir.toURI.toString, s"_part-$k.probe")
      val w = new ProbeFile.Writer(conf, p, alg, Column, 1024, if (k == 1) 3 else 4)
      group.foreach { case (path, f, vs) => w.add(path, 10L + k, 20L, vs.size, 1L, vs.size, false, f.toBytes) }
      w.close()
      p
    }.toSeq
    val lengths = paths.map(p => new java.io.File(p.toUri).length()).toArray
    def column(compact: Boolean): ColumnData = {
      val footers = ProbeFile.readEachFooter(conf, paths.zip(lengths), 2, Column, alg, checksums = true, compact = compact).map(_.toOption.get)
      assert(footers.map(_.format).toSeq == Seq(4, 3, 4))
      val b = new ColumnData.Builder("c", alg)
      BlockFilters.addTo(b, alg, conf, "column=c", paths.toArray, lengths, footers, 3, 4, Long.MaxValue)
      b.result()
    }
    val (one, arrays) = (column(compact = false), column(compact = true))
    assert(arrays.numFiles == files.size && one.numFiles == files.size)
    val probes = arrays.probes(files.map(_._3.head).map(alg.hash.hashLong).toArray)
    files.zipWithIndex.foreach { case ((path, _, _), j) =>
      val i = arrays.indexOf(new Path(path), 10L + j / 30, 20L)
      assert(i >= 0 && arrays.path(i) == path && one.indexOf(path) == one.indexOf(new Path(path), 10L + j / 30, 20L), path)
      assert(probes(j).mightContain(i), s"$path holds its own first value")
    }
  }

  test("what a lookup reads: the footers, then one block row per section") {
    val alg = FilterAlgorithm.SplitBlock
    val files = filters(alg, 50, new java.util.Random(7))
    // Rows read one by one (no coalescing): exactly the rows.
    val (d, paths) = load(alg, files, perFile = 50, sectionBytes = Int.MaxValue, gap = -1)
    IndexStore.resetLoaded()
    val before = d.heapBytes
    d.probes(Array(alg.hash.hashLong(42L)))
    val rows = IndexStore.loadedBytes().get("column=c").longValue()
    // One 32-byte block per file: 50 files, whatever their sizes.
    assert(rows == 50L * 32 && d.heapBytes - before == rows)
    d.probes(Array(alg.hash.hashLong(42L)))
    assert(IndexStore.loadedBytes().get("column=c").longValue() == rows, "held rows are not read again")
    // Coalesced (the default): the same rows held; the bytes between them read too, within the file.
    val (c, _) = load(alg, files, perFile = 50, sectionBytes = Int.MaxValue)
    IndexStore.resetLoaded()
    val held = c.heapBytes
    c.probes(Array(alg.hash.hashLong(42L)))
    val read = IndexStore.loadedBytes().get("column=c").longValue()
    assert(c.heapBytes - held == 50L * 32 && read >= 50L * 32 && read <= new java.io.File(paths.head.toUri).length())
  }

  // Issue 26: a probe file whose bytes before its footer's read are within the coalescing gap is
  // read whole in that one read; its block rows are then held, and lookups of any value read nothing.
  test("a small probe file is read whole with its footer: no lookup reads a block row; a damaged row is recorded and refused") {
    val alg = FilterAlgorithm.SplitBlock
    bloomindex.log.Checksums.resetDamage()
    val rnd = new java.util.Random(26)
    val files = filters(alg, 600, rnd)
    val paths = write(alg, files, perFile = 200, sectionBytes = 1 << 20)
    val lengths = paths.map(p => new java.io.File(p.toUri).length()).toArray
    val filterBytes = files.map(_._2.toBytes.length.toLong).sum
    val est = ProbeFile.tailEstimates(lengths, filterBytes, 1024)
    assert(est.indices.forall(k => est(k) < lengths(k)), "the estimates alone read part of each file")
    assert(ProbeFile.tailEstimates(lengths, filterBytes, 1024, 1L << 20, Long.MaxValue).toSeq == lengths.toSeq)
    assert(ProbeFile.tailEstimates(lengths, filterBytes, 1024, 0L, Long.MaxValue).toSeq == est.toSeq, "a gap of 0: none of these read whole")
    assert(ProbeFile.tailEstimates(lengths, filterBytes, 1024, -1L, Long.MaxValue).toSeq == est.toSeq)
    // The budget: the first file fits, the second would pass it.
    assert(ProbeFile.tailEstimates(lengths, filterBytes, 1024, 1L << 20, lengths(0) + 1).toSeq ==
      lengths(0) +: est.toSeq.tail)
    assert(ProbeFile.tailEstimates(lengths, filterBytes, 0, 1L << 20, Long.MaxValue).forall(_ == 0L))
    val probed = (files.map(_._3.head).map(alg.hash.hashLong) ++ Seq.fill(300)(rnd.nextLong())).toArray

    def loadWith(tails: Array[Long], cap: Long): ColumnData = {
      val footers = ProbeFile.readEachFooter(conf, paths.zip(lengths), 4, Column, alg, checksums = true,
        k => tails(k), compact = true).map(_.toOption.get)
      assert(footers.indices.forall(k => tails(k) == 0L || footers(k).bytesRead == tails(k)))
      val b = new ColumnData.Builder("c", alg)
      BlockFilters.addTo(b, alg, conf, "column=c", paths.toArray, lengths, footers, 4, 4, cap)
      b.result()
    }
    def answersExactly(d: ColumnData, except: Set[String] = Set.empty): Unit = {
      val probes = d.probes(probed)
      files.foreach { case (p, f, _) =>
        val r = d.indexOf(p, 10L, 20L)
        probed.indices.foreach { k =>
          assert(probes(k).mightContain(r) == (except.contains(p) || f.mightContain(probed(k))), s"$p hash ${probed(k)}")
        }
      }
    }
    val whole = ProbeFile.tailEstimates(lengths, filterBytes, 1024, 1L << 20, Long.MaxValue)
    // Read whole: every row held at once (counted), none read by the lookups.
    val allRows = paths.flatMap(p => ProbeFile.readFooter(conf, p, None, Column).sections).map(s => s.blocks.toLong * s.rowBytes).sum
    val d = loadWith(whole, Long.MaxValue)
    assert(d.heapBytes - loadWith(lengths.map(_ => 0L), Long.MaxValue).heapBytes == allRows)
    IndexStore.resetLoaded()
    answersExactly(d)
    assert(Option(IndexStore.loadedBytes().get("column=c")).forall(_.longValue() == 0L), IndexStore.loadedBytes())
    // Without the whole read (or with no room in the cache) the same answers, the rows read.
    val e = loadWith(est, Long.MaxValue)
    answersExactly(e)
    assert(IndexStore.loadedBytes().get("column=c").longValue() > 0L)
    IndexStore.resetLoaded()
    answersExactly(loadWith(whole, 0L))
    assert(IndexStore.loadedBytes().get("column=c").longValue() > 0L, "a cache cap of 0 holds no row")

    // A row damaged in the file: not held from the whole read; the lookup that needs it reads it,
    // finds the damage (recorded) and answers maybe for its section's files only.
    val f = new java.io.File(paths.head.toUri)
    new java.io.File(f.getParentFile, s".${f.getName}.crc").delete()
    val footer = ProbeFile.readFooter(conf, paths.head, None, Column)
    val s0 = footer.sections(0)
    val bytes = Files.readAllBytes(f.toPath)
    (0 until s0.blocks).foreach(k => bytes((s0.rowOffset(k) + 5).toInt) = (bytes((s0.rowOffset(k) + 5).toInt) ^ 0x04).toByte)
    Files.write(f.toPath, bytes)
    bloomindex.log.Checksums.resetDamage()
    val damaged = loadWith(whole, Long.MaxValue)
    assert(bloomindex.log.Checksums.damageOf(paths.head.toString).exists(_._2 == Set(0)), "recorded as the load found it")
    answersExactly(damaged, footer.files.filter(_.section == 0).map(_.path).toSet)
  }

  test("a damaged probe file is refused naming it; a row that cannot be read answers maybe") {
    val alg = FilterAlgorithm.SplitBlock
    val files = filters(alg, 20, new java.util.Random(3))
    val (d, paths) = load(alg, files, perFile = 20, sectionBytes = Int.MaxValue)
    val p = paths.head
    val f = new java.io.File(p.toUri)
    val bytes = Files.readAllBytes(f.toPath)
    new java.io.File(f.getParentFile, s".${f.getName}.crc").delete() // the local file system's checksum: damage it is not
    def refused(b: Array[Byte]): String = {
      Files.write(f.toPath, b)
      intercept[IllegalStateException](ProbeFile.readFooter(conf, p, None, Column)).getMessage
    }
    assert(refused(bytes.take(bytes.length - 5)).contains(s"$p: not a probe file"))
    assert(refused(bytes.take(10)).contains("bytes"))
    val badLen = bytes.clone()
    java.nio.ByteBuffer.wrap(badLen).putInt(bytes.length - 12, bytes.length)
    assert(refused(badLen).contains("footer of"))
    val badFormat = bytes.clone()
    java.nio.ByteBuffer.wrap(badFormat).putInt(bytes.length - 16, 9)
    assert(refused(badFormat).contains("format 9"))
    // The data gone after the footers were read: every file of it is a "maybe".
    f.delete()
    val probe = d.probes(Array(123L, 456L))
    files.foreach { case (path, _, _) => assert(probe.forall(_.mightContain(d.indexOf(path)))) }
  }

  test("format 3: a bit of a probe file flipped (each bit in make test-flips; a sample and both ends in CI) is refused by a checksum or a check, or changes nothing read") {
    bloomindex.log.Checksums.resetDamage()
    for (alg <- FilterAlgorithm.all) {
      val files = filters(alg, 6, new java.util.Random(11))
      val p = write(alg, files, perFile = 6, sectionBytes = 512).head
      val f = new java.io.File(p.toUri)
      new java.io.File(f.getParentFile, s".${f.getName}.crc").delete()
      val good = Files.readAllBytes(f.toPath)
      val footer = ProbeFile.readFooter(conf, p, None, Column, checksums = true)
      assert(footer.checked && footer.sections.forall(_.checked) && footer.sections.length > 1)
      def rows(ft: ProbeFile.Footer): Seq[Either[String, Seq[Byte]]] = {
        val in = ProbeFile.open(conf, p, Some(good.length.toLong))
        try ft.sections.toSeq.flatMap(s => (0 until s.blocks).map { b =>
          try Right(ProbeFile.readRow(in, s, b).toSeq) catch { case e: bloomindex.log.Checksums.Mismatch => Left(e.getMessage) }
        }) finally in.close()
      }
      val goodRows = rows(footer)
      val goodFilters = ProbeFile.readFilters(conf, p, good.length, Column).map { case (e, b) => e.path -> b.toSeq }.toMap
      var (footerRefused, rowRefused, unread) = (0, 0, 0)
      val unreadAt = scala.collection.mutable.Set.empty[Int]
      val flips = FlipSample.bits(good.length, alg.name)
      for (at <- flips; i = at / 8; bit = at % 8) {
        val b = good.clone()
        b(i) = (b(i) ^ (1 << bit)).toByte
        Files.write(f.toPath, b)
        try {
          val ft = ProbeFile.readFooter(conf, p, None, Column, checksums = true)
          // The footer passed: it is the same footer, and each block row is the written one or refused.
          assert(ft.sections.toSeq == footer.sections.toSeq && ft.files.toSeq == footer.files.toSeq, s"byte $i bit $bit")
          // A query's load (the entries as arrays) reads the same footer (one flip a byte: the test's time).
          if (bit == i % 8) {
            val e = ProbeFile.readFooter(conf, p, None, Column, checksums = true, compact = true).entries.get
            assert((0 until e.count).map(e.path) == footer.files.map(_.path).toSeq, s"byte $i bit $bit")
          }
          val now = rows(ft)
          val changed = now.zip(goodRows).count { case (a, g) => a != g }
          assert(now.zip(goodRows).forall { case (a, g) => a == g || a.isLeft }, s"byte $i bit $bit")
          if (changed > 0) rowRefused += 1 else { unread += 1; unreadAt += at }
          // Read back whole (REFRESH): the written filters, or fewer (a damaged section's left out).
          val back = ProbeFile.readFilters(conf, p, b.length, Column).map { case (e, x) => e.path -> x.toSeq }.toMap
          assert(back.forall { case (k, v) => goodFilters.get(k).contains(v) }, s"byte $i bit $bit")
          assert(back.size == goodFilters.size || changed > 0)
        } catch {
          case _: IllegalStateException | _: bloomindex.log.Checksums.Mismatch => footerRefused += 1
        }
      }
      Files.write(f.toPath, good)
      // Only the leading magic (its 8 bytes) is read by nobody: every other flip is refused.
      assert(unreadAt.toSet == flips.filter(_ < 8 * 8).toSet,
        s"${alg.name}: $footerRefused footer, $rowRefused row, $unread unread (${unreadAt.toSeq.sorted.take(20)})")
      assert(footerRefused + rowRefused + unread == flips.length)
      if (flips.length == good.length * 8) assert(unread == 8 * 8)
    }
  }

  test("a block row that fails its checksum answers maybe for its section's files only, and is recorded") {
    val alg = FilterAlgorithm.SplitBlock
    bloomindex.log.Checksums.resetDamage()
    val files = filters(alg, 40, new java.util.Random(5))
    val (d, paths) = load(alg, files, perFile = 40, sectionBytes = 1024)
    val p = paths.head
    val f = new java.io.File(p.toUri)
    new java.io.File(f.getParentFile, s".${f.getName}.crc").delete()
    val footer = ProbeFile.readFooter(conf, p, None, Column)
    // Damage every row of section 0 (the one the probe below reads, whatever its block).
    val s0 = footer.sections(0)
    val b = Files.readAllBytes(f.toPath)
    (0 until s0.blocks).foreach(k => b((s0.rowOffset(k) + 3).toInt) = (b((s0.rowOffset(k) + 3).toInt) ^ 0x10).toByte)
    Files.write(f.toPath, b)
    val absent = 987654321L
    val h = alg.hash.hashLong(absent)
    val probe = d.probes(Array(h))(0)
    val inSection0 = footer.files.filter(_.section == 0).map(_.path).toSet
    assert(inSection0.nonEmpty && inSection0.size < files.size)
    files.foreach { case (path, flt, _) =>
      val r = d.indexOf(path, 10L, 20L)
      if (inSection0.contains(path)) assert(probe.mightContain(r), path)
      else assert(probe.mightContain(r) == flt.mightContain(h), path)
    }
    val recorded = bloomindex.log.Checksums.damageOf(p.toString)
    assert(recorded.exists(_._2 == Set(0)), recorded)
    assert(bloomindex.log.IndexLog.warnings().toString.contains(s"probe file $p: section 0"))
    // Read back whole, section 0's files are left out, the others given.
    val back = ProbeFile.readFilters(conf, p, b.length, Column).map(_._1.path).toSet
    assert(back == files.map(_._1).toSet -- inSection0)
  }

  test("data with checksums refuses a probe file without them; format 2 files are read as before") {
    val alg = FilterAlgorithm.SplitBlock
    val files = filters(alg, 5, new java.util.Random(9))
    val p2 = write(alg, files, perFile = 5, sectionBytes = 4096, format = 2).head
    assert(!ProbeFile.readFooter(conf, p2, None, Column).checked)
    assert(intercept[IllegalStateException](ProbeFile.readFooter(conf, p2, None, Column, checksums = true)).getMessage
      .contains("has no checksums"))
  }

  test("format 5: a probe file read as another column's fails its footer checksum; format 4 binds no column") {
    val alg = FilterAlgorithm.SplitBlock
    val files = filters(alg, 5, new java.util.Random(13))
    val p5 = write(alg, files, perFile = 5, sectionBytes = 4096).head
    new java.io.File(new java.io.File(p5.toUri).getParentFile, s".${p5.getName}.crc").delete()
    assert(ProbeFile.readFooter(conf, p5, None, Column, checksums = true).files.length == 5)
    // The same bytes read for another column (a file moved into its folder): refused as damage, by name.
    for (other <- Seq("d", "C", "c ", "")) {
      val e = intercept[bloomindex.log.Checksums.Mismatch](ProbeFile.readFooter(conf, p5, None, other, checksums = true))
      assert(e.getMessage.contains(s"$p5: probe file footer fails its checksum") && e.getMessage.contains(s"not a file of column $other"))
      val each = ProbeFile.readEachFooter(conf, Seq(p5 -> new java.io.File(p5.toUri).length()), 1, other, alg, checksums = true)
      assert(each.head.left.exists(_.isInstanceOf[bloomindex.log.Checksums.Mismatch]))
    }
    // Format 4 (indexes built before format 5) recorded no column: read for any, as before.
    val p4 = write(alg, files, perFile = 5, sectionBytes = 4096, format = 4).head
    assert(ProbeFile.readFooter(conf, p4, None, "d", checksums = true).files.length == 5)
  }
}
