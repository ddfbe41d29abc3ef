package bloomindex.catalog

import java.io.File
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The check of local files against storage (each file's size and time read relative to its
 * folder, issue 26): exactly the files unchanged since the listing are found so, whatever the
 * order of folders, files and folders gone, folders reached through a link.
 */
class FreshFilesSuite extends AnyFunSuite {

  test("local files: unchanged exactly when size and modification time are the listing's") {
    val root = Files.createTempDirectory("fresh").toFile
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
}
