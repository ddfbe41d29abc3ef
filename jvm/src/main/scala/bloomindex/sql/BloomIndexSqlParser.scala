package bloomindex.sql

import java.util.Locale

import scala.collection.mutable.ArrayBuffer

import bloomindex.actions.ColumnRequest
import bloomindex.compat.DelegatingParser
import bloomindex.errors.BloomIndexErrors
import bloomindex.source.SourceRef

import org.apache.spark.sql.catalyst.parser.{ParameterContext, ParserInterface}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * The parser extension: our statements are parsed here, everything else goes to Spark's
 * parser unchanged (so Spark's own syntax errors stay Spark's).
 *
 * {{{
 *   CREATE BLOOM INDEX [IF NOT EXISTS] name ON {source | VIEW view | LOCATION 'path' USING format}
 *     FOR COLUMNS (col [USING TOKENS | USING NGRAMS (n)] [OPTIONS (...)], ...) [OPTIONS (...)]
 *   REFRESH BLOOM INDEX name [INCREMENTAL | FULL]
 *   ALTER BLOOM INDEX name SET OPTIONS (refresh = 'on_write' | 'background' | 'manual')
 *   OPTIMIZE BLOOM INDEX name
 *   VACUUM BLOOM INDEX name [RETAIN n HOURS]
 *   DROP BLOOM INDEX [IF EXISTS] name
 *   SHOW BLOOM INDEXES [ON source]
 *   DESCRIBE BLOOM INDEX [EXTENDED] name
 *   EXPLAIN BLOOM INDEX FOR query
 *   EXPLAIN BLOOM INDEX WHATIF (col, ...) [OPTIONS (fpp = x)] FOR query
 *   RECOMMEND BLOOM INDEXES [ON source] [BUDGET size] [FOR query | FROM HISTORY [BUDGET size]]
 *   CREATE BLOOMFILTER INDEX ON [TABLE] t FOR COLUMNS (c [OPTIONS (fpp = 0.1, numItems = 5000000)], ...)
 *   DROP BLOOMFILTER INDEX ON [TABLE] t [FOR COLUMNS (c, ...)]
 * }}}
 *
 * Spark sees it through [[BloomIndexSqlParser.apply]], a `ParserInterface` of the running Spark's
 * shape (Spark 4.3 added methods to the interface).
 *
 * A statement is ours when its first two words are one of the pairs above (CREATE BLOOM,
 * CREATE BLOOMFILTER, REFRESH BLOOM, ALTER BLOOM, OPTIMIZE BLOOM, VACUUM BLOOM, DROP BLOOM, DROP
 * BLOOMFILTER, SHOW BLOOM, DESC[RIBE] BLOOM, EXPLAIN BLOOM, RECOMMEND BLOOM); from there on it is parsed strictly and a
 * mistake is a ParseException that says what was expected. Hand-written rather than ANTLR-generated:
 * ten statements do not need
 * a generated parser, and this keeps the build free of code generation.
 */
class BloomIndexSqlParser(delegate: ParserInterface) {

  def parsePlan(sqlText: String): LogicalPlan =
    BloomIndexSqlParser.parseOurs(sqlText).getOrElse(delegate.parsePlan(sqlText))

  def parsePlanWithParameters(sqlText: String, context: ParameterContext): LogicalPlan =
    BloomIndexSqlParser.parseOurs(sqlText).getOrElse(delegate.parsePlanWithParameters(sqlText, context))
}

object BloomIndexSqlParser {

  /**
   * The parser the extension injects: [[BloomIndexSqlParser]]'s two methods in front of
   * `delegate`, every other method of Spark's `ParserInterface` (whichever the running Spark's
   * has) the delegate's: see [[DelegatingParser]].
   */
  def apply(delegate: ParserInterface): ParserInterface = DelegatingParser(new BloomIndexSqlParser(delegate), delegate)

  /** Our statement as a command, or None when the text is not one of ours. */
  def parseOurs(sql: String): Option[LogicalPlan] = {
    val tokens = try Lexer.tokenize(sql) catch {
      case _: Lexer.LexError => return None // not lexable by us: certainly not ours, Spark reports it
    }
    val words = tokens.take(3).map(t => if (t.kind == Lexer.Word) t.upper else "")
    val ours = words match {
      case Seq("CREATE", "BLOOM" | "BLOOMFILTER", _*) | Seq("REFRESH", "BLOOM", _*) | Seq("ALTER", "BLOOM", _*) |
          Seq("DROP", "BLOOM" | "BLOOMFILTER", _*) | Seq("SHOW", "BLOOM", _*) |
          Seq("EXPLAIN", "BLOOM", _*) | Seq("RECOMMEND", "BLOOM", _*) => true
      // Spark's own statements on a table named `bloom` (DESCRIBE bloom, DESC bloom.t; Delta's
      // VACUUM bloom and OPTIMIZE bloom) stay Spark's: ours only where INDEX follows.
      case Seq("OPTIMIZE" | "VACUUM" | "DESCRIBE" | "DESC", "BLOOM", "INDEX") => true
      case _ => false
    }
    if (ours) Some(new StatementParser(sql, tokens).statement()) else None
  }

  private final class StatementParser(sql: String, tokens: IndexedSeq[Lexer.Token]) {
    private var pos = 0

    private def peek: Lexer.Token = tokens(pos)
    private def next(): Lexer.Token = { val t = tokens(pos); if (t.kind != Lexer.End) pos += 1; t }

    private def error(message: String): Nothing = {
      val t = peek
      throw BloomIndexErrors.parse(sql, t.start, if (t.kind == Lexer.End) "end of input" else t.text, message)
    }

    private def isWord(w: String): Boolean = peek.kind == Lexer.Word && peek.upper == w
    private def acceptWord(w: String): Boolean = if (isWord(w)) { next(); true } else false
    private def expectWord(w: String*): String =
      if (peek.kind == Lexer.Word && w.contains(peek.upper)) next().upper
      else error(s"expected ${w.mkString(" or ")}")
    private def isSymbol(s: String): Boolean = peek.kind == Lexer.Symbol && peek.text == s
    private def acceptSymbol(s: String): Boolean = if (isSymbol(s)) { next(); true } else false
    private def expectSymbol(s: String): Unit = if (!acceptSymbol(s)) error(s"expected '$s'")

    private def identifier(what: String): String = peek.kind match {
      case Lexer.Word | Lexer.Quoted => next().text
      case _ => error(s"expected $what")
    }

    private def multipart(what: String): Seq[String] = {
      val parts = ArrayBuffer(identifier(what))
      while (acceptSymbol(".")) parts += identifier(what)
      parts.toSeq
    }

    private def end(): Unit = {
      while (acceptSymbol(";")) ()
      if (peek.kind != Lexer.End) error("expected the end of the statement")
    }

    def statement(): LogicalPlan = {
      if (acceptWord("EXPLAIN")) return explain()
      if (acceptWord("RECOMMEND")) return recommend()
      val plan = expectWord("CREATE", "REFRESH", "ALTER", "OPTIMIZE", "VACUUM", "DROP", "SHOW", "DESCRIBE", "DESC") match {
        case "CREATE" => if (acceptWord("BLOOMFILTER")) createDatabricks() else { next(); create() }
        case "REFRESH" => next(); refresh()
        case "ALTER" => next(); alter()
        case "OPTIMIZE" => next(); expectWord("INDEX"); OptimizeBloomIndexCommand(identifier("an index name"))
        case "VACUUM" => next(); vacuum()
        case "DROP" => if (acceptWord("BLOOMFILTER")) dropDatabricks() else { next(); drop() }
        case "SHOW" => next(); show()
        case _ => next(); describe()
      }
      end()
      plan
    }

    private def create(): LogicalPlan = {
      expectWord("INDEX")
      val ifNotExists = if (acceptWord("IF")) { expectWord("NOT"); expectWord("EXISTS"); true } else false
      val name = identifier("an index name")
      expectWord("ON")
      // ON VIEW v: the files view v reads (as Python's create() on a DataFrame); a table named
      // `view` is still ON view FOR COLUMNS.
      val view = isWord("VIEW") && (tokens(pos + 1).kind == Lexer.Quoted ||
        (tokens(pos + 1).kind == Lexer.Word && tokens(pos + 1).upper != "FOR")) && { next(); true }
      // ON LOCATION 'path' USING format: the path as Python's create(path, source_format=) takes it.
      val location = !view && isWord("LOCATION") && tokens(pos + 1).kind == Lexer.Str && { next(); true }
      val (source, format) =
        if (location) {
          val path = next().text
          expectWord("USING")
          (SourceRef(Seq(path)), Some(identifier("a file format")))
        } else (SourceRef(multipart(if (view) "a view name" else "a table name or format.`path`")), None)
      val columns = forColumns(withOptions = true, withText = true)
      val options = if (acceptWord("OPTIONS")) optionList() else Map.empty[String, String]
      CreateBloomIndexCommand(name, source, columns, options, ifNotExists, view, format)
    }

    private def createDatabricks(): LogicalPlan = {
      expectWord("INDEX")
      expectWord("ON")
      acceptWord("TABLE")
      val source = SourceRef(multipart("a table name"))
      val columns = forColumns(withOptions = true)
      val options = if (acceptWord("OPTIONS")) optionList() else Map.empty[String, String]
      CreateBloomFilterIndexCommand(source, columns, options)
    }

    private def refresh(): LogicalPlan = {
      expectWord("INDEX")
      val name = identifier("an index name")
      val full = if (acceptWord("FULL")) true else { acceptWord("INCREMENTAL"); false }
      RefreshBloomIndexCommand(name, full)
    }

    private def alter(): LogicalPlan = {
      expectWord("INDEX")
      val name = identifier("an index name")
      expectWord("SET")
      expectWord("OPTIONS")
      AlterBloomIndexCommand(name, optionList())
    }

    private def vacuum(): LogicalPlan = {
      expectWord("INDEX")
      val name = identifier("an index name")
      val hours = if (!acceptWord("RETAIN")) None else {
        val t = peek
        val n = if (t.kind == Lexer.Number) scala.util.Try(BigDecimal(t.text)).toOption.filter(_ >= 0) else None
        if (n.isEmpty) error("expected a number of hours (0 or more)")
        next()
        expectWord("HOURS", "HOUR")
        n.map(_.toDouble)
      }
      VacuumBloomIndexCommand(name, hours)
    }

    private def drop(): LogicalPlan = {
      expectWord("INDEX")
      val ifExists = if (acceptWord("IF")) { expectWord("EXISTS"); true } else false
      DropBloomIndexCommand(identifier("an index name"), ifExists)
    }

    private def dropDatabricks(): LogicalPlan = {
      expectWord("INDEX")
      expectWord("ON")
      acceptWord("TABLE")
      val source = SourceRef(multipart("a table name"))
      val columns = if (isWord("FOR")) Some(forColumns(withOptions = false).map(_.name)) else None
      DropBloomFilterIndexCommand(source, columns)
    }

    private def show(): LogicalPlan = {
      expectWord("INDEXES", "INDICES")
      val source = if (acceptWord("ON")) Some(SourceRef(multipart("a table name or format.`path`"))) else None
      ShowBloomIndexesCommand(source)
    }

    /** EXPLAIN BLOOM INDEX FOR query: the query's text, parsed by Spark when the command runs. */
    private def explain(): LogicalPlan = {
      expectWord("BLOOM")
      expectWord("INDEX")
      if (acceptWord("WHATIF")) return whatIf()
      expectWord("FOR")
      ExplainBloomIndexCommand(rest())
    }

    /** The rest of the statement: a query's text, parsed by Spark when the command runs. */
    private def rest(): String = {
      if (peek.kind == Lexer.End || isSymbol(";")) error("expected a query")
      sql.substring(peek.start).trim.stripSuffix(";").trim
    }

    /** EXPLAIN BLOOM INDEX WHATIF (col, ...) [OPTIONS (fpp = x)] FOR query. */
    private def whatIf(): LogicalPlan = {
      expectSymbol("(")
      val cols = ArrayBuffer[String]()
      do cols += multipart("a column name").mkString(".") while (acceptSymbol(","))
      expectSymbol(")")
      val options = if (acceptWord("OPTIONS")) optionList() else Map.empty[String, String]
      expectWord("FOR")
      ExplainBloomIndexWhatIfCommand(cols.toSeq, options, rest())
    }

    /** RECOMMEND BLOOM INDEXES [ON source] [BUDGET size] [FOR query | FROM HISTORY [BUDGET size]]. */
    private def recommend(): LogicalPlan = {
      expectWord("BLOOM")
      expectWord("INDEXES", "INDICES")
      val source = if (acceptWord("ON")) Some(SourceRef(multipart("a table name or format.`path`"))) else None
      var budget = if (acceptWord("BUDGET")) Some(budgetValue()) else None
      val plan = if (acceptWord("FOR")) RecommendBloomIndexesCommand(source, Some(rest()), budget)
        else {
          if (acceptWord("FROM")) expectWord("HISTORY")
          if (budget.isEmpty && acceptWord("BUDGET")) budget = Some(budgetValue())
          end()
          RecommendBloomIndexesCommand(source, None, budget)
        }
      plan
    }

    /** A size: `'512m'`, `512m`, `1048576`. */
    private def budgetValue(): String = {
      val t = peek
      val text = t.kind match {
        case Lexer.Str | Lexer.Word => next().text
        case Lexer.Number =>
          next()
          // `512m` lexes as a number and a word when they touch.
          if (peek.kind == Lexer.Word && peek.start == t.start + t.text.length) t.text + next().text else t.text
        case _ => error("expected a storage budget, a size such as '512m'")
      }
      text
    }

    /** DESCRIBE BLOOM INDEX [EXTENDED] name (an index named `extended` is DESCRIBE BLOOM INDEX extended). */
    private def describe(): LogicalPlan = {
      expectWord("INDEX")
      val extended = isWord("EXTENDED") && (tokens(pos + 1).kind == Lexer.Word || tokens(pos + 1).kind == Lexer.Quoted) &&
        { next(); true }
      DescribeBloomIndexCommand(identifier("an index name"), extended)
    }

    private def forColumns(withOptions: Boolean, withText: Boolean = false): Seq[ColumnRequest] = {
      expectWord("FOR")
      expectWord("COLUMNS")
      expectSymbol("(")
      val cols = ArrayBuffer[ColumnRequest]()
      do {
        val name = multipart("a column name").mkString(".")
        val using = if (withText && acceptWord("USING")) Some(textKind()) else None
        val opts = if (withOptions && acceptWord("OPTIONS")) optionList() else Map.empty[String, String]
        cols += ColumnRequest(name, opts, using)
      } while (acceptSymbol(","))
      expectSymbol(")")
      cols.toSeq
    }

    /** `TOKENS` or `NGRAMS (n)`, after a column's USING: "tokens" or "ngrams(n)" (n checked at CREATE). */
    private def textKind(): String =
      if (acceptWord("TOKENS")) "tokens"
      else if (acceptWord("NGRAMS")) {
        expectSymbol("(")
        if (peek.kind != Lexer.Number) error("expected the n of NGRAMS (n), a whole number")
        val n = next().text
        expectSymbol(")")
        s"ngrams($n)"
      } else error("expected TOKENS or NGRAMS (n) after USING")

    private def optionList(): Map[String, String] = {
      expectSymbol("(")
      val opts = ArrayBuffer[(String, String)]()
      do {
        val key = peek.kind match {
          case Lexer.Str => next().text
          case _ => multipart("an option name").mkString(".")
        }
        acceptSymbol("=")
        val value = peek.kind match {
          case Lexer.Str | Lexer.Number | Lexer.Word => next().text
          case _ if isSymbol("-") => next(); if (peek.kind == Lexer.Number) "-" + next().text else error("expected a number")
          case _ => error(s"expected a value for option '$key'")
        }
        opts += key -> value
      } while (acceptSymbol(","))
      expectSymbol(")")
      val dup = opts.groupBy(_._1.toLowerCase(Locale.ROOT)).collectFirst { case (k, v) if v.size > 1 => k }
      dup.foreach(k => error(s"option '$k' is given twice"))
      opts.toMap
    }
  }
}
