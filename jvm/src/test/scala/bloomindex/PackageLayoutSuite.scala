package bloomindex

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/**
 * The packages of the product code depend on each other without cycles (docs/architecture.md
 * draws the graph). Read from the sources: `package` lines, `import bloomindex.x...` lines and
 * fully qualified `bloomindex.x.Name` references in code.
 */
class PackageLayoutSuite extends AnyFunSuite {

  // With the per-Spark-line folders (build.sbt): each compiles into the same packages.
  private val roots = Seq("jvm/src/main/scala", "jvm/src/main/java", "jvm/src/main/scala-spark-4.1",
    "jvm/src/main/scala-spark-4.2").map(Paths.get(_))

  private def sources: Seq[Path] = roots.filter(Files.isDirectory(_)).flatMap { r =>
    Files.walk(r).iterator().asScala.filter(p => p.toString.endsWith(".scala") || p.toString.endsWith(".java")).toSeq
  }

  private val PackageLine = """(?m)^package ([\w.]+);?\s*$""".r
  // Not after a dot: org.apache.spark.sql.bloomindex (the configuration entries) is Spark's.
  // A package's name is lower case: the reference is the longest package its lower-case prefix names.
  private val Reference = """(?<![\w.])bloomindex\.([a-z]\w*(?:\.[a-z]\w*)*)""".r

  /** The code of a source: comments and string literals (configuration keys name packages too) removed. */
  private def withoutComments(text: String): String =
    text.replaceAll("(?s)\"\"\".*?\"\"\"", "\"\"").replaceAll("\"(?:[^\"\\\\\n]|\\\\.)*\"", "\"\"")
      .replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("//[^\n]*", "")

  private def packageOf(p: Path, text: String): String =
    PackageLine.findFirstMatchIn(text).map(_.group(1)).getOrElse(fail(s"$p has no package line"))

  /** package -> the packages it refers to (comments stripped). */
  private def graph: Map[String, Set[String]] = {
    val texts = sources.map(p => p -> new String(Files.readAllBytes(p), "UTF-8"))
    val packages = texts.map { case (p, t) => packageOf(p, t) }.toSet
    def named(chain: String): String = {
      val parts = chain.split('.')
      (parts.length to 1 by -1).map(n => "bloomindex." + parts.take(n).mkString(".")).find(packages)
        .getOrElse("bloomindex." + parts.head)
    }
    val edges = texts.map { case (p, text) =>
      val pkg = packageOf(p, text)
      val code = withoutComments(text)
      val refs = Reference.findAllMatchIn(code.replaceFirst("""(?m)^package [\w.]+;?""", "")).map(m => named(m.group(1)))
        .filter(_ != pkg).toSet
      pkg -> refs
    }
    edges.groupBy(_._1).map { case (k, v) => k -> v.flatMap(_._2).toSet }
  }

  test("the product's packages have no dependency cycles") {
    val g = graph
    assert(g.keySet.size >= 10, g.keySet)
    // Depth-first search; a back edge is a cycle, reported with its path.
    val state = scala.collection.mutable.Map[String, Int]().withDefaultValue(0)
    def visit(p: String, path: List[String]): Unit = {
      state(p) = 1
      g.getOrElse(p, Set.empty).toSeq.sorted.foreach { q =>
        if (state(q) == 1) fail(s"package cycle: ${(q :: path.takeWhile(_ != q) ::: List(q)).reverse.mkString(" -> ")}")
        if (state(q) == 0) visit(q, q :: path)
      }
      state(p) = 2
    }
    g.keys.toSeq.sorted.foreach(p => if (state(p) == 0) visit(p, List(p)))
  }

  test("docs/architecture.md's package table lists every package and exactly the packages each uses") {
    val Row = """(?m)^\| `?([\w.]+)`? \|.*\| ([^|]*) \|$""".r
    val doc = new String(Files.readAllBytes(Paths.get("docs/architecture.md")), "UTF-8")
    val table = Row.findAllMatchIn(doc).filter(_.group(1) != "package").map { m =>
      val name = if (m.group(1) == "root") "bloomindex" else if (m.group(1).startsWith("org.")) m.group(1) else s"bloomindex.${m.group(1)}"
      val uses = m.group(2).trim
      name -> (if (uses == "-") Set.empty[String] else uses.split(",").map(u => s"bloomindex.${u.trim}").toSet)
    }.toMap
    val g = graph
    assert(table.keySet == g.keySet, s"documented: ${table.keySet.toSeq.sorted}; in the code: ${g.keySet.toSeq.sorted}")
    val wrong = g.toSeq.sortBy(_._1).collect { case (p, uses) if table(p) != uses =>
      s"$p: documented ${table(p).toSeq.sorted.mkString(", ")}; uses ${uses.toSeq.sorted.mkString(", ")}"
    }
    assert(wrong.isEmpty, wrong.mkString("\n"))
  }

  test("the root package holds only the extension's entry point, which nothing depends on") {
    val RootReference = """(?<![\w.])bloomindex\.(\{|[A-Z])""".r
    val users = sources.filter { p =>
      val text = new String(Files.readAllBytes(p), "UTF-8")
      !PackageLine.findFirstMatchIn(text).exists(_.group(1) == "bloomindex") &&
        RootReference.findFirstIn(withoutComments(text)).isDefined
    }
    assert(users.isEmpty, s"refer to the root package: ${users.mkString(", ")}")
  }

  /**
   * Each format is its provider's affair: no product code outside `source/delta/` names Delta,
   * none outside `source/iceberg/` names Iceberg. Code is read without comments; a string
   * literal counts when it is the format's name, starts with it and a dot, or names the
   * format's classes (prose in configuration documentation does not).
   */
  test("no code outside a format's provider folder names the format") {
    val formats = Seq("delta" -> "source/delta/", "iceberg" -> "source/iceberg/")
    val Literal = "\"(?:[^\"\\\\\n]|\\\\.)*\"".r
    val found = for {
      p <- sources
      (format, folder) <- formats
      if !p.toString.replace('\\', '/').contains(s"/bloomindex/$folder")
      text = new String(Files.readAllBytes(p), "UTF-8")
      noComments = text.replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("(?m)^\\s*//[^\n]*", "").replaceAll("\\s//[^\n]*", "")
      code = withoutComments(text)
      identifiers = s"(?i)\\b\\w*$format\\w*\\b".r.findAllIn(code).toSeq
      literals = Literal.findAllIn(noComments).toSeq.filter { l =>
        val v = l.stripPrefix("\"").stripSuffix("\"").toLowerCase(java.util.Locale.ROOT)
        v == format || v.startsWith(format + ".") || v.contains(s"org.apache.$format") || v.contains(s"org.apache.spark.sql.$format")
      }
      if identifiers.nonEmpty || literals.nonEmpty
    } yield s"$p names $format: ${(identifiers ++ literals).distinct.mkString(", ")}"
    assert(found.isEmpty, found.mkString("\n"))
  }
}
