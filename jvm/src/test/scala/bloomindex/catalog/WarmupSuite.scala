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
    assert(probed.size == 4) // two values, each on an unfiltered listing and a filtered one
    val rewritten = (0 until n).filter(_ % 97 == 5).toSet
    val added = n / 64
    probed.foreach { p =>
      // Every listed file read; the rewritten and the new ones are not covered, never skipped.
      assert(p.read == n + added)
      assert(p.covered == n - rewritten.size)
      assert(rewritten.forall(i => !p.skipped.get(i)))
      assert((n until n + added).forall(i => !p.skipped.get(i)))
    }
    // The value of file n / 2 keeps that file; a value in no file keeps only false positives.
    val (present, absent) = (probed.head, probed(2))
    assert(!present.skipped.get(n / 2))
    assert(present.count > (n - rewritten.size) * 9 / 10)
    assert(absent.count > (n - rewritten.size) * 9 / 10)
    assert(Files.list(parent).count() == 0)
    assert(Warmup.bulk(0, parent).isEmpty)
  }
}
