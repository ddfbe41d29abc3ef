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

  private val roots = Seq("jvm/src/main/scala", "jvm/src/main/java").map(Paths.get(_))

  private def sources: Seq[Path] = roots.filter(Files.isDirectory(_)).flatMap { r =>
    Files.walk(r).iterator().asScala.filter(p => p.toString.endsWith(".scala") || p.toString.endsWith(".java")).toSeq
  }

  private val PackageLine = """(?m)^package ([\w.]+);?\s*$""".r
  // Not after a dot: org.apache.spark.sql.bloomindex (the configuration entries) is Spark's.
  private val Reference = """(?<![\w.])bloomindex\.([a-z]\w*)\b""".r

  /** The code of a source: comments and string literals (configuration keys name packages too) removed. */
  private def withoutComments(text: String): String =
    text.replaceAll("(?s)\"\"\".*?\"\"\"", "\"\"").replaceAll("\"(?:[^\"\\\\\n]|\\\\.)*\"", "\"\"")
      .replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("//[^\n]*", "")

  /** package -> the packages it refers to (comments stripped). */
  private def graph: Map[String, Set[String]] = {
    val edges = sources.map { p =>
      val text = new String(Files.readAllBytes(p), "UTF-8")
      val pkg = PackageLine.findFirstMatchIn(text).map(_.group(1)).getOrElse(fail(s"$p has no package line"))
      val code = withoutComments(text)
      val refs = Reference.findAllMatchIn(code.replaceFirst("""(?m)^package [\w.]+;?""", "")).map(m => s"bloomindex.${m.group(1)}")
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
      val name = if (m.group(1) == "root") "bloomindex" else if (m.group(1).contains(".")) m.group(1) else s"bloomindex.${m.group(1)}"
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
}
