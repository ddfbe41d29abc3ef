import scala.xml.{Elem, Node}
import scala.xml.transform.{RewriteRule, RuleTransformer}

/**
 * The published pom's dependencies. Spark is not a managed dependency of the build (build.sbt
 * compiles against PySpark's jars), so the pom gets spark-sql as `provided` here; Scala's own
 * libraries are Spark's too (`provided`: a `--packages` resolution must not put a second
 * scala-library on the class path); test-only libraries are left out. What remains at compile
 * scope is what Spark lacks: zero-allocation-hashing.
 */
object PomDependencies {

  private def dependency(group: String, artifact: String, version: String, scope: String): Elem =
    <dependency>
      <groupId>{group}</groupId>
      <artifactId>{artifact}</artifactId>
      <version>{version}</version>
      <scope>{scope}</scope>
    </dependency>

  def sparkProvided(pom: Node, sparkVersion: String): Node = {
    val rule = new RewriteRule {
      override def transform(n: Node): Seq[Node] = n match {
        case e: Elem if e.label == "dependencies" =>
          val kept = e.child.flatMap {
            case d: Elem if d.label == "dependency" && (d \ "scope").text == "test" => Nil
            case d: Elem if d.label == "dependency" && (d \ "groupId").text == "org.scala-lang" =>
              Seq(dependency("org.scala-lang", (d \ "artifactId").text, (d \ "version").text, "provided"))
            case other => Seq(other)
          }
          e.copy(child = kept :+ dependency("org.apache.spark", "spark-sql_2.13", sparkVersion, "provided"))
        case other => Seq(other)
      }
    }
    new RuleTransformer(rule).transform(pom).head
  }
}
