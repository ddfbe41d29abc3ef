package bloomindex.text

import java.nio.charset.StandardCharsets.UTF_8

import scala.collection.mutable
import scala.util.Random

import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import bloomindex.text.TextCases.{Count, Spark}
import bloomindex.text.TextSearch.Operand

/**
 * Soundness against Spark itself: for random values and predicates, whenever Spark's own
 * expression says a value matches, the value's units satisfy what the predicate requires (so a file
 * holding the value is never skipped). Seeded; BLOOMINDEX_TEXT_CASES sets the count (20,000).
 * Also: the independent LIKE reference agrees with Spark, the foldings are Spark's `lower()`, and
 * pruning happens (requirements that a non-matching value misses are common, not vacuous).
 */
class TextSoundnessSuite extends AnyFunSuite {

  private val specs: Seq[TextFilterSpec] =
    for {
      kind <- (1 to 4).map(TextKind.NGrams(_)) ++ Seq(TextKind.Tokens(), TextKind.Tokens(Separators.Only.of(" -%")))
      folding <- Seq(CaseFolding.Off, CaseFolding.Lower)
    } yield TextFilterSpec(kind, folding)

  /** Per predicate family and spec: cases Spark matched, of those the prunable ones, and non-matches pruned. */
  private final class Stats {
    val matched = mutable.Map.empty[String, Int].withDefaultValue(0)
    val prunable = mutable.Map.empty[String, Int].withDefaultValue(0)
    val pruned = mutable.Map.empty[String, Int].withDefaultValue(0)
  }

  private def check(stats: Stats, family: String, spec: TextFilterSpec, value: String, sparkMatches: Boolean,
      requirement: Requirement, predicate: => String): Unit = {
    val key = s"$family / ${spec.settings}"
    val units = spec.units(value)
    val may = requirement.mayMatch(units.contains)
    if (sparkMatches) {
      stats.matched(key) += 1
      if (requirement.prunable) stats.prunable(key) += 1
      if (!may) fail(s"UNSOUND: $predicate matches ${show(value)} under Spark, but ${spec.settings} requires " +
        s"${requirement.describe} of units ${units.map(show).mkString("{", ", ", "}")}")
    } else if (!may) stats.pruned(key) += 1
  }

  private def show(s: String): String =
    "'" + s.flatMap(c => if (c < 0x20 || c > 0x7e) f"\\u${c.toInt}%04x" else c.toString) + "'"

  private def report(stats: Stats): Unit =
    for (key <- stats.matched.keys.toSeq.sorted)
      info(s"$key: ${stats.matched(key)} matches, ${stats.prunable(key)} prunable; ${stats.pruned(key)} non-matches pruned")

  test(s"LIKE, ILIKE and lower(c) LIKE: never a requirement a matching value lacks ($Count cases)") {
    val rng = new Random(25)
    val stats = new Stats
    var refusedPatterns = 0
    for (_ <- 1 to Count) {
      val s = TextCases.value(rng)
      val other = TextCases.value(rng)
      val target = if (rng.nextInt(4) == 0) other else s
      val escape = TextCases.Escapes(rng.nextInt(TextCases.Escapes.size))

      // c LIKE p
      val p = TextCases.likePattern(target, escape, rng)
      val spark = Spark.like(s, p, escape)
      assert(TextCases.referenceLike(s, p, escape) == spark, s"reference and Spark differ: ${show(s)} LIKE ${show(p)} ESCAPE '$escape'")
      if (spark.isEmpty) refusedPatterns += 1
      for (spec <- specs) {
        val r = TextSearch.like(spec, p, escape)
        if (spark.isEmpty) assert(!r.prunable, s"Spark refuses ${show(p)} ESCAPE '$escape', yet $r")
        check(stats, "like", spec, s, spark.contains(true), r, s"LIKE ${show(p)} ESCAPE '$escape'")
      }

      // c ILIKE p: Spark's lower(c) LIKE lower(p)
      val ip = TextCases.likePattern(TextCases.recase(target, rng), escape, rng)
      val ispark = Spark.ilike(s, ip, escape)
      assert(TextCases.referenceLike(Spark.lower(s), Spark.lower(ip), escape) == ispark)
      for (spec <- specs) {
        val r = TextSearch.ilike(spec, ip, escape)
        if (spec.folding == CaseFolding.Off) assert(!r.prunable)
        check(stats, "ilike", spec, s, ispark.contains(true), r, s"ILIKE ${show(ip)} ESCAPE '$escape'")
      }

      // lower(c) LIKE p, p written against lower(c)
      val lp = TextCases.likePattern(Spark.lower(target), escape, rng)
      val lspark = Spark.lowerLike(s, lp, escape)
      for (spec <- specs)
        check(stats, "lower-like", spec, s, lspark.contains(true), TextSearch.like(spec, lp, escape, Operand.Lower),
          s"lower(c) LIKE ${show(lp)} ESCAPE '$escape'")
    }
    report(stats)
    info(s"$refusedPatterns patterns Spark refused")
    assert(refusedPatterns > Count / 100)
    // Not vacuous: matching cases with something required, and non-matching values skipped.
    for (family <- Seq("like", "ilike", "lower-like"); kind <- Seq("ngrams(3)", "tokens separators=not-letter-or-digit")) {
      val folding = if (family == "like") "none" else "lower"
      val key = s"$family / $kind case=$folding"
      assert(stats.prunable(key) > stats.matched(key) / 10, key)
      assert(stats.pruned(key) > Count / 50, key)
    }
  }

  test(s"contains, startswith, endswith, =, IN, instr, locate on c and on lower(c) ($Count cases)") {
    val rng = new Random(2025)
    val stats = new Stats
    for (_ <- 1 to Count) {
      val s = TextCases.value(rng)
      val target = if (rng.nextInt(4) == 0) TextCases.value(rng) else s
      val x = TextCases.piece(target, rng)
      val lx = TextCases.piece(Spark.lower(target), rng)
      val lowerS = Spark.lower(s)
      for (spec <- specs) {
        check(stats, "contains", spec, s, Spark.contains(s, x), TextSearch.contains(spec, x), s"contains ${show(x)}")
        check(stats, "instr", spec, s, Spark.instr(s, x) > 0, TextSearch.contains(spec, x), s"instr ${show(x)} > 0")
        check(stats, "locate", spec, s, Spark.locate(x, s) > 0, TextSearch.contains(spec, x), s"locate ${show(x)} > 0")
        check(stats, "startswith", spec, s, Spark.startsWith(s, x), TextSearch.startsWith(spec, x), s"startswith ${show(x)}")
        check(stats, "endswith", spec, s, Spark.endsWith(s, x), TextSearch.endsWith(spec, x), s"endswith ${show(x)}")
        check(stats, "equals", spec, s, Spark.equalTo(s, x), TextSearch.equalTo(spec, x), s"= ${show(x)}")
        val list = Seq(x, TextCases.value(rng), if (rng.nextBoolean()) s else lx)
        check(stats, "in", spec, s, list.exists(Spark.equalTo(s, _)), TextSearch.in(spec, list), s"IN ${list.map(show)}")
        check(stats, "lower-contains", spec, s, Spark.contains(lowerS, lx), TextSearch.contains(spec, lx, Operand.Lower),
          s"contains(lower(c), ${show(lx)})")
        check(stats, "lower-startswith", spec, s, Spark.startsWith(lowerS, lx), TextSearch.startsWith(spec, lx, Operand.Lower),
          s"startswith(lower(c), ${show(lx)})")
        check(stats, "lower-endswith", spec, s, Spark.endsWith(lowerS, lx), TextSearch.endsWith(spec, lx, Operand.Lower),
          s"endswith(lower(c), ${show(lx)})")
        check(stats, "lower-equals", spec, s, Spark.equalTo(lowerS, lx), TextSearch.equalTo(spec, lx, Operand.Lower),
          s"lower(c) = ${show(lx)}")
      }
    }
    report(stats)
    for (family <- Seq("contains", "startswith", "equals", "lower-contains")) {
      val folding = if (family.startsWith("lower")) "lower" else "none"
      val key = s"$family / ngrams(3) case=$folding"
      assert(stats.prunable(key) > stats.matched(key) / 10, key)
      assert(stats.pruned(key) > Count / 50, key)
    }
    assert(stats.pruned("equals / tokens separators=not-letter-or-digit case=lower") > Count / 50)
  }

  test(s"RLIKE: never a requirement a matching value lacks ($Count cases)") {
    val rng = new Random(7)
    val stats = new Stats
    var analysed = 0
    for (_ <- 1 to Count) {
      val s = TextCases.value(rng)
      val target = if (rng.nextInt(4) == 0) TextCases.value(rng) else s
      val r = TextCases.regex(target, rng)
      val spark = Spark.rlike(s, r)
      if (RegexRuns.parse(r).isRight) analysed += 1
      for (spec <- specs) {
        val req = TextSearch.rlike(spec, r)
        if (spark.isEmpty) assert(!req.prunable)
        check(stats, "rlike", spec, s, spark.contains(true), req, s"RLIKE ${show(r)}")
        val lower = TextSearch.rlike(spec, r, Operand.Lower)
        check(stats, "lower-rlike", spec, s, Spark.rlike(Spark.lower(s), r).contains(true), lower, s"lower(c) RLIKE ${show(r)}")
      }
    }
    report(stats)
    info(s"$analysed of $Count expressions within the analysed subset")
    assert(analysed > Count / 2)
    assert(stats.prunable("rlike / ngrams(2) case=none") > stats.matched("rlike / ngrams(2) case=none") / 10)
  }

  test("RLIKE: a class nested in a class ends where Java ends it; a ']' first in one gives up") {
    // `[a[]x]yz]` is one class {a, ], x, y, z} in Java: "a" matches, so no run may be required.
    assert(Spark.rlike("a", "[a[]x]yz]").contains(true))
    for (r <- Seq("[a[]x]yz]", "[a[^]x]yz]", "q[a[]x]yzq", "[[]x]ab]")) {
      assert(RegexRuns.parse(r).isLeft, r)
      for (spec <- specs) assert(!TextSearch.rlike(spec, r).prunable, s"$r $spec")
    }
    // Nested classes closed as Java closes them: the run after the outer class is required.
    assert(Spark.rlike("bxyz", "[a[bc]d]xyz").contains(true) && Spark.rlike("bxy", "[a[bc]d]xyz").contains(false))
    for (r <- Seq("[a[bc]d]xyz", "[a-z&&[^b]]xyz")) {
      val runs = RegexRuns.parse(r).fold(why => fail(s"$r: $why"), identity).filter(_ != LikePattern.Many)
      assert(new String(runs, 0, runs.length) == "xyz", r)
    }
  }

  test("RLIKE: comments mode turned on anywhere, inside a group too, gives up") {
    // In comments mode `#` runs to the end of the line: `((?x)#)abc\n)` is one group holding a
    // comment, and every value matches; the `)` after `#` ends nothing.
    assert(Spark.rlike("zzz", "((?x)#)abc\n)").contains(true))
    // And whitespace, in classes too: `[ ]) abc]` is one class holding `)`, `a`, `b`, `c`.
    assert(Spark.rlike("c", "((?x)[ ]) abc])").contains(true))
    for (r <- Seq("((?x)#)abc\n)", "(?=(?x)#)abc\n)", "((?x:#)) abc\n))", "((?ix)#)abc\n)", "((?-x)#)abc",
        "a(b(?x)c)d", "(?<n>(?x) )abc", "((?x)#) foo \n)", "((?x)[ ]) abc])")) {
      assert(RegexRuns.parse(r).isLeft, r)
      for (spec <- specs) {
        assert(!TextSearch.rlike(spec, r).prunable, s"$r $spec")
        assert(!TextSearch.rlike(spec, r, Operand.Lower).prunable, s"lower $r $spec")
      }
    }
    // Flags set inside a group end with it (Java restores them); an escaped or quoted `(?x)` is text.
    assert(Spark.rlike("aBxyz", "(a(?i)b)xyz").contains(true) && Spark.rlike("abXYZ", "(a(?i)b)xyz").contains(false))
    for ((r, run) <- Seq("(a(?i)b)xyz" -> "xyz", "\\(\\?x\\)xyz" -> "(?x)xyz", "\\Q(?x)\\Exyz" -> "(?x)xyz")) {
      val runs = RegexRuns.parse(r).fold(why => fail(s"$r: $why"), identity).filter(_ != LikePattern.Many)
      assert(new String(runs, 0, runs.length) == run, r)
    }
  }

  test(s"the foldings are Spark's lower(), with and without ICU ($Count values and patterns)") {
    val rng = new Random(1)
    for (_ <- 1 to Count) {
      val s = TextCases.value(rng)
      val p = TextCases.likePattern(TextCases.recase(s, rng), '\\', rng)
      for (x <- Seq(s, p)) {
        assert(CaseFolding.Lower.fold(x) == Spark.lower(x), show(x))
        assert(CaseFolding.LowerJdk.fold(x) == Spark.lowerWithoutIcu(x), show(x))
      }
    }
    // They differ from each other: ICU's final sigma looks past '_', the JDK's does not.
    assert(CaseFolding.Lower.fold("ΑΣ_Β") == "ας_β" && CaseFolding.LowerJdk.fold("ΑΣ_Β") == "ασ_β")
  }

  test(s"UTF-8 bytes, valid or not: the units of the string Spark decodes; byte-level contains is sound ($Count cases)") {
    val rng = new Random(99)
    val broken = IndexedSeq(Array(0x80), Array(0xC0, 0x80), Array(0xE2, 0x82), Array(0xED, 0xA0, 0x80), Array(0xF8),
      Array(0xF4, 0x90, 0x80, 0x80), Array(0xE0, 0x80, 0xAF), Array(0xFF)).map(_.map(_.toByte))
    for (_ <- 1 to Count) {
      val parts = Seq.fill(rng.nextInt(6))(if (rng.nextInt(5) == 0) broken(rng.nextInt(broken.size)) else TextCases.value(rng).getBytes(UTF_8))
      val bytes = Array(7.toByte) ++ parts.flatten ++ Array(9.toByte)
      val (off, len) = (1, bytes.length - 2)
      val decoded = new String(bytes, off, len, UTF_8)
      assert(Utf8.isValid(bytes, off, len) == java.util.Arrays.equals(decoded.getBytes(UTF_8), bytes.slice(off, off + len)))
      val u = UTF8String.fromBytes(bytes, off, len)
      assert(u.toString == decoded)
      val x = TextCases.piece(decoded, rng)
      for (spec <- specs if spec.folding == CaseFolding.Off) {
        val fromBytes = mutable.ArrayBuffer.empty[String]
        spec.foreachUnitUtf8(bytes, off, len, (b, o, l) => fromBytes += new String(b, o, l, UTF_8))
        assert(fromBytes.toSet == spec.units(decoded), show(decoded))
        if (u.contains(UTF8String.fromString(x)))
          assert(TextSearch.contains(spec, x).mayMatch(fromBytes.toSet), s"${show(decoded)} contains ${show(x)}")
      }
    }
  }
}
