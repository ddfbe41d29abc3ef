package bloomindex.catalog

import java.io.File
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.scalatest.funsuite.AnyFunSuite
import bloomindex.testing.TempDirs

/**
 * The check of local files against storage (each file's size and time read relative to its
 * folder, issue 26): exactly the files unchanged since the listing are found so, whatever the
 * order of folders, files and folders gone, folders reached through a link.
 */
class FreshFilesSuite extends AnyFunSuite {

  test("local files: unchanged exactly when size and modification time are the listing's") {
    val root = TempDirs.create("fresh").toFile
    val dirs = Seq("a", "b", "c=1", "gone").map { d => val f = new File(root, d); f.mkdirs(); f }
    Files.createSymbolicLink(new File(root, "link").toPath, dirs(0).toPath)
    // The same names in each folder, of other sizes: a file looked up in the wrong folder is found changed.
    dirs.zipWithIndex.foreach { case (d, j) =>
      (0 until 5).foreach(i => Files.write(new File(d, s"part-é$i.parquet").toPath, Array.fill[Byte](i + 1 + 10 * j)(1)))
    }
    val fs = new Path(root.toURI).getFileSystem(new Configuration())
    def listed(dir: String): Seq[FileStatus] = fs.listStatus(new Path(new File(root, dir).toURI)).filter(_.isFile).toSeq
    val a = listed("a")
    val b = listed("b")
    val c = listed("c=1")
    val gone = listed("gone")
    val viaLink = listed("link")
    // Folders interleaved (the folder held open changes often), and a file listed twice.
    val files = (a.zip(b).flatMap { case (x, y) => Seq(x, y) } ++ c ++ gone ++ viaLink ++ a.take(1) ++ b.takeRight(2)).toIndexedSeq
    // Changed since listed: a time (a), a size (b), a file deleted (c), a whole folder deleted.
    def local(s: FileStatus) = new File(s.getPath.toUri)
    assert(local(a(1)).setLastModified(a(1).getModificationTime + 7000))
    Files.write(local(b(2)).toPath, Array.fill[Byte](50)(2))
    assert(local(b(2)).setLastModified(b(2).getModificationTime))
    assert(local(c(3)).delete())
    gone.foreach(s => assert(local(s).delete()))
    assert(new File(root, "gone").delete())
    val changed = Set(a(1).getPath, b(2).getPath, c(3).getPath, viaLink(1).getPath) ++ gone.map(_.getPath)
    // viaLink(1) is a(1) reached through the link: changed too (same name in the same folder).
    assert(viaLink(1).getPath.getName == a(1).getPath.getName)
    for (threads <- Seq(1, 3)) {
      val bits = FreshFiles.unchanged(new Configuration(), files, threads)
      files.indices.foreach { k =>
        assert(bits.get(k) == !changed.contains(files(k).getPath), s"threads $threads: ${files(k).getPath}")
      }
    }
    assert(FreshFiles.unchanged(new Configuration(), IndexedSeq.empty, 2).isEmpty)
  }

  test("files of several file systems: each checked by its own, never one's files by another's route") {
    val root = TempDirs.create("fresh-fs").toFile
    val f = new File(root, "part-0.parquet")
    Files.write(f.toPath, Array.fill[Byte](10)(1))
    val conf = new Configuration()
    // A scheme this configuration maps to a file system that cannot answer for its paths.
    conf.set("fs.mirror.impl", classOf[org.apache.hadoop.fs.RawLocalFileSystem].getName)
    conf.setBoolean("fs.mirror.impl.disable.cache", true)
    val local = new Path(root.toURI).getFileSystem(conf).getFileStatus(new Path(f.toURI))
    // The same path on another file system, listed with the local file's size and time (a
    // mirror): the local disk must not answer for it.
    val other = new FileStatus(local.getLen, false, 1, 0L, local.getModificationTime, new Path("mirror", null, f.getAbsolutePath))
    // The local route tells another file system's file in its own pass (here in the second of
    // three batches of local files checked on threads of their own).
    val mixed = IndexedSeq.fill(300)(local) ++ IndexedSeq(other) ++ IndexedSeq.fill(300)(local)
    for (files <- Seq(IndexedSeq(local, other), IndexedSeq(other, local, local), mixed); threads <- Seq(1, 2)) {
      val bits = FreshFiles.unchanged(conf, files, threads)
      files.indices.foreach(k => assert(bits.get(k) == (files(k) eq local), s"${files.map(_.getPath)}: ${files(k).getPath}"))
    }
  }

  test("S3 listing runs: every wanted key is in exactly one run, each run's range is its keys, folders kept apart") {
    import S3Listing.{KeyOrder, Run}
    val rnd = new scala.util.Random(26)
    val folders = Seq("t/p=1/", "t/p=10/", "t/p=1-x/", "t/p=2/sub/", "t/")
    val keys = (0 until 300).map(i => folders(rnd.nextInt(folders.size)) + s"part-${rnd.nextInt(10000)}.parquet")
      .distinct.sorted(KeyOrder).toIndexedSeq
    // The keys a run lists: under its prefix (directly, where delimited), after `after`, up to `last`.
    def inRun(r: Run, k: String): Boolean =
      k.startsWith(r.prefix) && (!r.delimited || !k.substring(r.prefix.length).contains('/')) &&
        (r.after == null || KeyOrder.gt(k, r.after)) && KeyOrder.lteq(k, r.last)
    for (byFolder <- Seq(true, false); perRun <- Seq(1, 7, 1000)) {
      val runs = S3Listing.runs(keys, "t/", byFolder, perRun)
      keys.foreach(k => assert(runs.count(inRun(_, k)) == 1, s"$k byFolder=$byFolder perRun=$perRun"))
      assert(runs.forall(r => keys.count(inRun(r, _)) <= perRun))
      if (byFolder) {
        // A folder's run lists only that folder (a subfolder's objects aside): no other folder's keys lie in it.
        assert(runs.forall(r => folders.contains(r.prefix) && r.delimited))
        assert(runs.forall(r => keys.filter(inRun(r, _)).forall(k => S3Listing.folderOf(k) == r.prefix)))
        assert(runs.size == keys.groupBy(S3Listing.folderOf).values.map(g => (g.size + perRun - 1) / perRun).sum)
      } else {
        // Over the common folder, from the first key's folder on.
        assert(runs.head.after == S3Listing.folderOf(keys.head) && runs.forall(r => r.prefix == "t/" && !r.delimited))
        assert(runs.size == (keys.size + perRun - 1) / perRun)
      }
    }
    assert(S3Listing.runs(IndexedSeq.empty, "t/", byFolder = true, 5).isEmpty)
    assert(S3Listing.sortedDistinct(keys.reverse ++ keys.take(9) ++ keys.takeRight(3)) == keys)
    // runsFor: by folder up to the limit, else over the keys' common folder.
    assert(S3Listing.runsFor(keys, 16, 1000).forall(_.delimited))
    val over = S3Listing.runsFor(keys, 2, 1000)
    assert(over.size == 1 && over.head == Run("t/", "t/p=1-x/", keys.last, delimited = false), over)
    assert(S3Listing.runsFor(IndexedSeq("t/p=1/a", "t/p=1/b"), 0, 1000) == Seq(Run("t/p=1/", null, "t/p=1/b", delimited = false)))
    assert(S3Listing.runsFor(IndexedSeq("a/x", "b/y"), 1, 1000) == Seq(Run("", "a/", "b/y", delimited = false)))
    assert(S3Listing.runsFor(IndexedSeq("t/part-1", "t/part-2"), 1, 1) ==
      Seq(Run("t/", null, "t/part-1", delimited = true), Run("t/", "t/part-1", "t/part-2", delimited = true)))
    assert(S3Listing.key(new Path("s3a://b/t/a b/x=%2F")) == "t/a b/x=%2F") // the key as written, not URI-escaped
  }

  test("S3 key order is by code point (S3's UTF-8 byte order), not by UTF-16 unit") {
    val words = Seq("a", "ab", "a/", "a0", "\uE000", "\uD83D\uDE00", "\uFFFF", "z", "", "\u00E9", "a\uD83D\uDE00b", "a\uFFFFb")
    def utf8(s: String): Seq[Int] = s.getBytes("UTF-8").toSeq.map(_ & 0xff)
    val bytesOrder: Ordering[Seq[Int]] = Ordering.Implicits.seqOrdering[Seq, Int]
    for (x <- words; y <- words) {
      assert(math.signum(S3Listing.KeyOrder.compare(x, y)) == math.signum(bytesOrder.compare(utf8(x), utf8(y))), s"$x vs $y")
    }
    // Where the orders part: an emoji (a surrogate pair) sorts after U+FFFF in S3, before it in UTF-16.
    assert(S3Listing.KeyOrder.lt("\uFFFF", "\uD83D\uDE00") && "\uFFFF".compareTo("\uD83D\uDE00") > 0)
  }

  test("S3 listing is not used off S3A") {
    assert(S3Listing.lister(new Path("file:///tmp").getFileSystem(new Configuration())).isEmpty)
  }
}
