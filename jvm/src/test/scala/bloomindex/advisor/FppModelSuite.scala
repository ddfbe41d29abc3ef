package bloomindex.advisor

import bloomindex.filter.FilterAlgorithm
import bloomindex.history.{ColumnPredicate, ScanRecord}
import bloomindex.sbbf.SbbfSizing
import bloomindex.sbbf.SbbfSizing.Sizing

import org.scalatest.funsuite.AnyFunSuite

class FppModelSuite extends AnyFunSuite {

  private val exact = Sizing.Exact

  // 20,000 distinct values in files of 100 kB: loading a filter costs more than the false
  // positive reads it saves well above 1e-4. By hand: at 1e-3 .. 1e-4 a split block filter
  // grows ~9.5 bits a value a decade (SbbfSizingSuite's table: 16.9 -> 26.4), 0.52 bytes a
  // value per e-fold; with 100 lookups a build the load term falls 0.52 * 20000 / 100 = 104
  // bytes a file per e-fold while the false positive term rises p * 100000: even at 1e-4 the
  // cost still falls with a larger rate (10 < 104), so the cost's minimum is near 1e-3 and the
  // cap decides: 0.1 / (1 x 1000 files) = 1e-4.
  test("the cap on false positive files decides for a table of 1,000 files: 1e-4") {
    val c = FppModel.choose(files = 1000, ndvPerFile = 20000, avgFileBytes = 100000, lookupValuesPerQuery = 1,
      budgetBytes = None, sizing = exact)
    assert(math.abs(c.fpp - 1e-4) < 1e-12, c)
    assert(math.abs(c.expectedFalsePositiveFiles - 0.1) < 1e-9, c)
    assert(c.limitedBy == "false positives", c)
    assert(c.bytesPerFile == SbbfSizing.exactBytes(20000, c.fpp).toLong)
  }

  test("more files, a smaller rate (the same expected false positive files)") {
    val rates = Seq(10L, 100L, 1000L, 10000L, 100000L).map(f => f -> FppModel.choose(f, 20000, 100000, 1, None, exact))
    // Never larger with more files; strictly smaller once the cap binds (from 1,000 files:
    // below that the cap, 0.1 / files, is above the cost's own minimum near 1e-3).
    rates.sliding(2).foreach { case Seq((f1, a), (f2, b)) =>
      assert(b.fpp <= a.fpp, s"$f1 files: ${a.fpp}, $f2 files: ${b.fpp}")
      if (f1 >= 1000) assert(b.fpp < a.fpp, s"$f1 files: ${a.fpp}, $f2 files: ${b.fpp}")
    }
    assert(rates.head._2.limitedBy == "cost" && rates(1)._2.limitedBy == "cost", rates)
    assert(math.abs(rates(3)._2.fpp - 1e-5) < 1e-15)
    assert(math.abs(rates(4)._2.fpp - 1e-6) < 1e-15)
    // A fixed 0.01 over 1,000 files: 10 false positive files a lookup; auto's: 0.1.
    assert(rates(2)._2.expectedFalsePositiveFiles <= 0.1 + 1e-9)
  }

  test("an IN of 10 values divides the rate by 10") {
    val one = FppModel.choose(1000, 20000, 100000, 1, None, exact)
    val ten = FppModel.choose(1000, 20000, 100000, 10, None, exact)
    assert(math.abs(ten.fpp - one.fpp / 10) < 1e-15, s"$one $ten")
  }

  test("without the cap, the files cancel out: the cost's own minimum, near the hand-derived 1e-3") {
    val choices = Seq(10L, 1000L, 100000L).map(f =>
      FppModel.choose(f, 20000, 100000, 1, None, exact, maxFalsePositiveFiles = 1e12))
    assert(choices.map(_.fpp).distinct.size == 1, choices)
    val c = choices.head
    assert(c.limitedBy == "cost", c)
    // By hand (see the first test): the load term's slope, 0.35 .. 0.52 bytes a value per e-fold
    // between 1e-2 and 1e-4, equals the false positive term's p * 100000 at p = 7e-4 .. 1.04e-3.
    assert(c.fpp >= 5e-4 && c.fpp <= 2e-3, c)
    // And it is the minimum of the cost on a grid 10x finer than the model's own.
    val fine = (0 to 1200).map(i => math.pow(10, -6 + 5.0 * i / 1200))
    val best = fine.map(p => FppModel.cost(1000, 20000, 100000, 1, p, exact)).min
    assert(FppModel.cost(1000, 20000, 100000, 1, c.fpp, exact) <= best * 1.001)
  }

  test("many lookups a build: the cost goes below the cap, down to the range's bound") {
    val cap = FppModel.choose(1000, 20000, 100000, 1, None, exact)
    val busy = FppModel.choose(1000, 20000, 100000, 1, None, exact, lookupsPerBuild = 10000)
    assert(busy.fpp < cap.fpp && busy.limitedBy == "cost", busy)
    val endless = FppModel.choose(1000, 20000, 100000, 1, None, exact, lookupsPerBuild = 1e12)
    assert(endless.fpp == FppModel.MinFpp && endless.limitedBy == "range", endless)
  }

  test("a size budget caps it: the smallest rate whose filters fit") {
    val free = FppModel.choose(1000, 20000, 100000, 1, None, exact)
    // 12 bits a value over 1,000 files: between 1% (10.5 bits) and 0.1% (16.9 bits).
    val budget = 1000L * 20000 * 12 / 8
    val c = FppModel.choose(1000, 20000, 100000, 1, Some(budget), exact)
    assert(c.totalBytes(1000) <= budget, c)
    assert(c.fpp > free.fpp && c.fpp > 1e-3 && c.fpp < 1e-2, c)
    assert(c.limitedBy == "budget", c)
    // A rate 1% smaller no longer fits.
    assert(SbbfSizing.exactBytes(20000, c.fpp * 0.99).toLong * 1000 > budget)
    // A budget too small for any rate in range: the range's largest.
    val tiny = FppModel.choose(1000, 20000, 100000, 1, Some(1L), exact)
    assert(tiny.fpp == FppModel.MaxFpp && tiny.limitedBy == "budget", tiny)
    // A budget larger than the filters need changes nothing.
    assert(FppModel.choose(1000, 20000, 100000, 1, Some(Long.MaxValue), exact) == free)
  }

  test("the rate stays in range") {
    // 10 million files: the cap (1e-8) is below the range; 1 file of 1 byte: the cost wants above it.
    val huge = FppModel.choose(10000000L, 10, 1000, 1, None, exact)
    assert(huge.fpp == FppModel.MinFpp && huge.limitedBy == "range", huge)
    val tiny = FppModel.choose(1, 1000000, 1, 1, None, exact)
    assert(tiny.fpp == FppModel.MaxFpp, tiny)
  }

  test("the classic design reads its whole filter per probe: a larger rate than the blocked one's") {
    val blocked = FppModel.choose(100, 20000, 100000, 1, None, exact, maxFalsePositiveFiles = 1e12)
    val classic = FppModel.choose(100, 20000, 100000, 1, None, exact, FilterAlgorithm.Classic, maxFalsePositiveFiles = 1e12)
    assert(classic.fpp > blocked.fpp, s"$classic $blocked")
  }

  test("power-of-two sizing: the chosen size is the rule's own") {
    val c = FppModel.choose(1000, 20000, 100000, 1, None, Sizing.PowerOfTwo)
    assert(c.bytesPerFile == SbbfSizing.powerOfTwoBytes(20000, c.fpp).toLong)
    assert(java.lang.Long.bitCount(c.bytesPerFile) == 1)
  }

  test("bad input is refused") {
    intercept[IllegalArgumentException](FppModel.choose(0, 1, 1, 1, None, exact))
    intercept[IllegalArgumentException](FppModel.choose(10, -1, 1, 1, None, exact))
    intercept[IllegalArgumentException](FppModel.choose(10, 1, Double.NaN, 1, None, exact))
    intercept[IllegalArgumentException](FppModel.choose(10, 1, 1, 1, Some(-1L), exact))
    intercept[IllegalArgumentException](FppModel.choose(10, 1, 1, 1, None, exact, lookupsPerBuild = 0))
  }

  private def scan(preds: ColumnPredicate*) = ScanRecord(0L, None, "t", "files", "parquet", None, Seq("file:/t"),
    preds, None, None, None, None, None, None, None)

  test("a column's workload: lookups by =, IN and <=> (case aside), their values, the share of scans") {
    val records = Seq(
      scan(ColumnPredicate("K", "=", 1)),
      scan(ColumnPredicate("k", "IN", 10), ColumnPredicate("k", "=", 1)), // one lookup of 11 values
      scan(ColumnPredicate("k", "IS NULL", 0)),                            // not a lookup
      scan(ColumnPredicate("other", "=", 1)),
      scan(ColumnPredicate("k", "<=>", 1)))
    val w = ColumnWorkload.of(records, "k").get
    assert(w.scans == 5 && w.lookups == 3)
    assert(w.valuesPerLookup == (1 + 11 + 1) / 3.0)
    assert(w.share == 0.6 && w.lookupsPerBuild == 3.0)
    val none = ColumnWorkload.of(records, "absent").get
    assert(none.lookups == 0 && none.valuesPerLookup == 1.0 && none.lookupsPerBuild == 1.0)
    assert(ColumnWorkload.of(Nil, "k").isEmpty)
  }

  test("the advisor's rounded rate still fits the budget that chose it") {
    // 100 files of 10,000 values: the model's rate for 1.5 MB (0.00546...) rounded down to 0.0054
    // needs 1,504,000 bytes; rounded up (0.0055) it fits.
    for (budget <- Seq(1500000L, 1600000L, 1700000L, 1800000L)) {
      val model = FppModel.choose(100, 10000, 1e8, 1, Some(budget), exact)
      assert(100 * SbbfSizing.exactBytes(10000, model.fpp).toLong <= budget, model)
      val pick = FppPick.choose(100, 10000, 1e8, 1, Some(budget), lookups = 100)
      assert(100 * SbbfSizing.exactBytes(10000, pick.fpp).toLong <= budget, s"$budget: $pick")
      assert(math.abs(pick.fpp - model.fpp) <= model.fpp * 0.1, s"$model -> $pick")
    }
    // Without a budget, rounded down as before.
    assert(FppPick.choose(1000, 20000, 100000, 1, None, lookups = 100).fpp == FppPick.roundDown(
      FppModel.choose(1000, 20000, 100000, 1, None, exact, lookupsPerBuild = 100).fpp))
  }

  test("a rate no filter reaches is reported as the largest filter's rate") {
    // 100 million values a file: a 128 MiB filter reaches about 0.009, not the 1e-6 asked.
    val c = FppModel.choose(files = 1000, ndvPerFile = 1e8, avgFileBytes = 1e9, lookupValuesPerQuery = 1,
      budgetBytes = None, sizing = exact)
    val largest = SbbfSizing.expectedFpp(SbbfSizing.MaxBytes, 100000000L)
    assert(largest > 0.005 && largest < 0.02, largest)
    assert(c.bytesPerFile == SbbfSizing.MaxBytes.toLong, c)
    assert(c.fpp >= largest * (1 - 1e-9), c)
    assert(math.abs(c.expectedFalsePositiveFiles - c.fpp * 1000) < 1e-6, c)
  }
}
