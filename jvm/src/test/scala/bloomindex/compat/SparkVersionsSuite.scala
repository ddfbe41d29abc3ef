package bloomindex.compat

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.{AnalysisException, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.expressions.{And, AttributeReference, EqualTo, Literal, Or}
import org.apache.spark.sql.catalyst.parser.{CatalystSqlParser, ParseException}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LocalRelation, LogicalPlan}
import org.apache.spark.sql.types.IntegerType

import bloomindex.BloomIndexExtensions

/** The supported Spark range, the session-start check, and the shim's node rebuilding. */
class SparkVersionsSuite extends AnyFunSuite {

  private def withVersion[T](version: String)(body: => T): T = {
    val prop = SparkVersions.VersionOverrideProperty
    val before = sys.props.get(prop)
    sys.props(prop) = version
    try body finally before match {
      case Some(v) => sys.props(prop) = v
      case None => sys.props -= prop
    }
  }

  test("the range is 4.1.x to 4.3.x, patch releases and pre-release suffixes included") {
    Seq("4.1.0", "4.1.4", "4.2.0", "4.2.1", "4.3.0", "4.3.0-SNAPSHOT", "4.1.0-preview1", "4.3.12")
      .foreach(v => assert(SparkVersions.isSupported(v), v))
    Seq("4.0.1", "4.0.0", "3.5.4", "4.4.0", "4.4.0-SNAPSHOT", "5.0.0", "4", "four.two", "", "4.2a")
      .foreach(v => assert(!SparkVersions.isSupported(v), v))
    assert(SparkVersions.SupportedRange == "4.1.x to 4.3.x")
    assert(SparkVersions.majorMinor("4.3.0-SNAPSHOT").contains((4, 3)))
  }

  test("the Spark the tests run on is supported, and the extension loads on it") {
    assert(SparkVersions.isSupported(org.apache.spark.SPARK_VERSION), org.apache.spark.SPARK_VERSION)
    assert(sys.props.get(SparkVersions.VersionOverrideProperty).isEmpty)
    new BloomIndexExtensions().apply(new SparkSessionExtensions)
  }

  test("on an unsupported Spark the extension fails at session start, naming the range") {
    Seq("4.0.1", "4.4.0", "3.5.4").foreach { v =>
      val e = withVersion(v)(intercept[AnalysisException](new BloomIndexExtensions().apply(new SparkSessionExtensions)))
      assert(e.getCondition == "BLOOM_INDEX_UNSUPPORTED_SPARK_VERSION")
      assert(e.getSqlState == "0A000")
      assert(e.getMessage.contains(s"bloomindex runs on Spark 4.1.x to 4.3.x; this session's Spark is $v."), e.getMessage)
    }
    // The override only stands in for the running version: a supported one passes.
    withVersion("4.3.0")(new BloomIndexExtensions().apply(new SparkSessionExtensions))
  }

  private val a = AttributeReference("a", IntegerType)()
  private val b = AttributeReference("b", IntegerType)()

  test("replaceArg rebuilds a node with one constructor argument replaced, the others carried") {
    val left = LocalRelation(a)
    val right = LocalRelation(b)
    val f = Filter(EqualTo(a, Literal(1)), left)
    val g = SparkShim.replaceArg(f, left, right)
    assert(g.child eq right)
    assert(g.condition eq f.condition)
    assert(f.child eq left, "the original is unchanged")
    val h = SparkShim.replaceArg(f, f.condition, EqualTo(a, Literal(2)))
    assert(h.condition == EqualTo(a, Literal(2)) && (h.child eq left))
  }

  test("replaceArg refuses an argument the node does not hold") {
    val f = Filter(EqualTo(a, Literal(1)), LocalRelation(a))
    val e = intercept[IllegalStateException](SparkShim.replaceArg(f, LocalRelation(a), LocalRelation(b)))
    assert(e.getMessage.contains("0 constructor arguments"), e.getMessage)
  }

  test("conjuncts splits ANDs only, as Spark's PredicateHelper does") {
    val p1 = EqualTo(a, Literal(1))
    val p2 = EqualTo(b, Literal(2))
    val p3 = Or(p1, p2)
    assert(SparkShim.conjuncts(And(And(p1, p2), p3)) == Seq(p1, p2, p3))
    assert(SparkShim.conjuncts(p3) == Seq(p3))
  }

  /** Answers parseQuery itself; everything else is the delegate's. */
  class OnlyQueries {
    var calls = 0
    def parseQuery(sql: String): LogicalPlan = { calls += 1; LocalRelation(a) }
  }

  test("DelegatingParser: the methods ours declares answer from ours, every other is the delegate's") {
    val ours = new OnlyQueries
    val p = DelegatingParser(ours, CatalystSqlParser)
    assert(p.parseQuery("SELECT 1") == LocalRelation(a) && ours.calls == 1)
    assert(p.parsePlan("SELECT 1") == CatalystSqlParser.parsePlan("SELECT 1"))
    assert(p.parseExpression("a + 1") == CatalystSqlParser.parseExpression("a + 1"))
    assert(p.parseDataType("array<int>") == CatalystSqlParser.parseDataType("array<int>"))
    assert(p.parseTableIdentifier("db.t") == CatalystSqlParser.parseTableIdentifier("db.t"))
    assert(p.parseMultipartIdentifier("a.b.c") == Seq("a", "b", "c"))
    assert(ours.calls == 1)
    // The delegate's exceptions come through as they are, not wrapped by reflection.
    val e = intercept[ParseException](p.parsePlan("SELEC 1"))
    assert(e.getCondition == "PARSE_SYNTAX_ERROR")
    assert(p.toString.startsWith("OnlyQueries(") && p == p && p != DelegatingParser(ours, CatalystSqlParser))
  }

  test("DelegatingParser answers every method of this Spark's ParserInterface") {
    val p = DelegatingParser(new OnlyQueries, CatalystSqlParser)
    val methods = classOf[org.apache.spark.sql.catalyst.parser.ParserInterface].getMethods
      .filter(m => m.getParameterCount == 1 && m.getParameterTypes()(0) == classOf[String])
    assert(methods.map(_.getName).toSet.contains("parseRoutineParam"))
    methods.foreach { m =>
      // Each call reaches an implementation (the delegate's): a ParseException for this text at
      // most, never an AbstractMethodError or a reflection error.
      try m.invoke(p, "x") catch {
        case e: java.lang.reflect.InvocationTargetException =>
          assert(e.getCause.isInstanceOf[ParseException] || e.getCause.isInstanceOf[AnalysisException], s"${m.getName}: ${e.getCause}")
      }
    }
  }
}
