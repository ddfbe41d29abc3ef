package bloomindex.catalog

import java.nio.file.Files

import org.scalatest.funsuite.AnyFunSuite
import bloomindex.testing.TempDirs

/**
 * The warm-up's per-file part runs the query's own load and probe over made-up files: it must
 * work (a warm-up that fails warms nothing, and its failures are swallowed), answer as a probe
 * should, and leave nothing behind.
 */
class WarmupSuite extends AnyFunSuite {

  test("the per-file warm-up probes its made-up index correctly and deletes its folder") {
    val parent = TempDirs.create("warmup")
    val n = 3000
    val t0 = System.nanoTime()
    val probed = Warmup.bulk(n, parent)
    info(f"${n} files in ${(System.nanoTime() - t0) / 1e6}%.0f ms")
    // Two values, each on an unfiltered listing and a filtered one; then `k = v` alone and
    // `k = v OR k IN (w, -1)` on the filtered one.
    assert(probed.size == 6)
    val rewritten = (0 until n).filter(_ % 97 == 5).toSet
    val added = n / 64
    probed.zipWithIndex.foreach { case (p, k) =>
      // Every listed file read (and, of the unfiltered listing's 64 others, the 16 whose names a
      // scan reads: `_x=1.parquet`, not empty); the rewritten and the new ones are not covered,
      // never skipped.
      assert(p.read == n + added + (if (k < 4 && k % 2 == 0) 16 else 0))
      if (k < 4 && k % 2 == 0) assert((n + added until n + added + 64).forall(i => !p.skipped.get(i)))
      assert(p.covered == n - rewritten.size)
      assert(rewritten.forall(i => !p.skipped.get(i)))
      assert((n until n + added).forall(i => !p.skipped.get(i)))
    }
    // The value of file n / 2 keeps that file; a value in no file keeps only false positives.
    val (present, absent) = (probed.head, probed(2))
    assert(!present.skipped.get(n / 2))
    assert(present.count > (n - rewritten.size) * 9 / 10)
    assert(absent.count > (n - rewritten.size) * 9 / 10)
    val (alone, either) = (probed(4), probed(5))
    assert(!alone.skipped.get(n / 2) && alone.count > (n - rewritten.size) * 9 / 10)
    assert(!either.skipped.get(n / 2) && !either.skipped.get(n / 4) && either.count > (n - rewritten.size) * 8 / 10)
    probed.drop(4).foreach(p => assert(p.read == n + added && (n until n + added).forall(i => !p.skipped.get(i))))
    assert(Files.list(parent).count() == 0)
    assert(Warmup.bulk(0, parent).isEmpty)
  }

  test("the local check's warm-up finds exactly its unchanged files and deletes its folder") {
    val parent = TempDirs.create("warmup-local")
    val n = 1000
    val unchanged = Warmup.localCheck(n, parent)
    assert((0 until n).forall(i => unchanged.get(i) == (i % 97 != 5)))
    assert(unchanged.cardinality == (0 until n).count(_ % 97 != 5))
    assert(Files.list(parent).count() == 0)
    assert(Warmup.localCheck(0, parent).isEmpty)
  }

  test("the S3 check's warm-up finds exactly the made-up files its made-up pages hold unchanged") {
    // 2,500 files: three runs of 1,000 keys, the last pages truncated by the marker and new files.
    val n = 2500
    val unchanged = Warmup.s3Check(n)
    assert(unchanged.cardinality == (0 until n).count(_ % 97 != 5))
    assert((0 until n).forall(i => unchanged.get(i) == (i % 97 != 5)))
    assert(Warmup.s3Check(0).isEmpty)
  }
}
