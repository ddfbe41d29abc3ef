package bloomindex.advisor

import org.scalatest.funsuite.AnyFunSuite

/** The advisor's arithmetic on its own (no Spark): spreads, estimates, rounding. */
class AdvisorEstimatesSuite extends AnyFunSuite {

  private def profile(col: String, files: Long, hold: Double): ColumnProfile =
    ColumnProfile(col, "BIGINT", files, files.toInt, 100, 100.0 * files, hold, Seq.fill(files.toInt)(100L), 1000.0, None)

  test("the history's scans of one folder, recorded before and after the roots named their store, are one source") {
    def rec(roots: String*) = bloomindex.history.ScanRecord(1L, None, roots.head, "files", "parquet", None, roots,
      Seq(bloomindex.history.ColumnPredicate("id", "=", 1)), Some(8L), Some(8L), None, None, None, None, None)
    val local = new java.net.URI("file:///")
    val scans = Workload.fromHistory(Seq(rec("/data/t"), rec("file:/data/t"), rec("s3a://prod/data/t")), local)
    assert(scans(0).source.key == scans(1).source.key && scans(1).source.key != scans(2).source.key)
    assert(scans(0).source.ref.contains(bloomindex.source.SourceRef(Seq("parquet", "file:/data/t"))))
  }

  test("the share of files holding a value, solved from a sample") {
    // Each value in one file of 100, 10 sampled: the sample sees each value once.
    assert(ColumnProfile.solveShare(1.0, 10, 100) == 1.0 / 100)
    // Every value in every file: pairs / distinct = n.
    assert(ColumnProfile.solveShare(10.0, 10, 100) == 1.0)
    // Values in half of the files: a sample of 10 sees each in p n / (1 - (1-p)^n) files.
    val ratio = 0.5 * 10 / (1 - math.pow(0.5, 10))
    assert(math.abs(ColumnProfile.solveShare(ratio, 10, 100) - 0.5) < 1e-9)
  }

  test("a profile's estimate: clustered values skip, values in every file never do") {
    val clustered = ScanEstimate.FromProfile(100, Lookup("a", 1, None), Map("a" -> profile("a", 100, 0.01)))
    val kept = clustered.kept(Map("a" -> 0.01))
    assert(math.abs(kept.expected - (1 + 99 * 0.01)) < 1e-9)
    assert(kept.low <= kept.expected && kept.expected <= kept.high)
    assert(clustered.kept(Map.empty).expected == 100.0) // not indexed: every file
    val everywhere = ScanEstimate.FromProfile(100, Lookup("b", 3, None), Map("b" -> profile("b", 100, 1.0)))
    assert(everywhere.skipped(Map("b" -> 0.001)) == 0.0)
    // AND: each column narrows; OR with a column without a filter: every file.
    val both = Map("a" -> profile("a", 100, 0.01), "b" -> profile("b", 100, 1.0))
    val and = ScanEstimate.FromProfile(100, AllOf(Seq(Lookup("a", 1, None), Lookup("b", 1, None))), both)
    assert(math.abs(and.kept(Map("a" -> 0.01)).expected - kept.expected) < 1e-9)
    val or = ScanEstimate.FromProfile(100, AnyOf(Seq(Lookup("a", 1, None), Opaque)), both)
    assert(or.kept(Map("a" -> 0.01)).expected == 100.0)
  }

  test("a query's estimate from files' measured holdings, and its range when sampled") {
    val leaf = Lookup("a", 2, None)
    val files = Seq(Array(true), Array(false), Array(false), Array(false))
    val all = ScanEstimate.FromFiles(4, leaf, Seq(leaf), files)
    val fp = 1 - math.pow(1 - 0.1, 2)
    assert(math.abs(all.kept(Map("a" -> 0.1)).expected - (1 + 3 * fp)) < 1e-9)
    assert(all.holding(Map("a" -> 0.1)) == 1.0)
    // The same four files standing for 40: the expectation scales, the range widens.
    val sampled = ScanEstimate.FromFiles(40, leaf, Seq(leaf), files)
    val k = sampled.kept(Map("a" -> 0.1))
    assert(math.abs(k.expected - 10 * (1 + 3 * fp)) < 1e-9)
    assert(k.high - k.low > 10 * (all.kept(Map("a" -> 0.1)).high - all.kept(Map("a" -> 0.1)).low) / 2)
  }

  test("fpp rounded down to two significant digits") {
    assert(FppPick.roundDown(0.0023713) == 0.0023)
    assert(FppPick.roundDown(0.0125) == 0.012)
    assert(FppPick.roundDown(0.1) == 0.1)
    assert(FppPick.roundDown(1e-6) == 1e-6)
  }
}
