package bloomindex.execution

import java.util.concurrent.TimeUnit.NANOSECONDS

import scala.util.control.NonFatal

import bloomindex.catalog.IndexCatalog
import bloomindex.join.{BloomMightContain, KeyHash}

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BindReferences, BoundReference, Expression, SortOrder, UnsafeProjection}
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.execution.{ColumnarToRowExec, InputAdapter, SQLExecution, SparkPlan, UnaryExecNode, WholeStageCodegenExec}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.types.{DateType, IntegerType, LongType, TimestampNTZType, TimestampType}
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Drops the rows whose keys a global Bloom filter proves absent: for each batch of rows it
 * hashes every check's key into a `long[]` and tests the whole array with the filter's bulk
 * kernel (the vector one where the JVM has it), then lets through the rows every check
 * passed. A null key, or one no value of the indexed type can equal, never passes: such a
 * row cannot satisfy the equality the check stands for. A join check's key that cannot be
 * computed (an ANSI error) passes: the operator runs below the query's other filters and joins,
 * which may drop that row before its key is ever computed without the index.
 *
 * Input: when the child's rows come from columnar batches (a vectorized scan under its
 * column-to-row conversion), it reads the batches themselves: keys that are columns are
 * hashed straight from the column vectors, and only the rows that pass are converted to
 * rows. Otherwise it buffers up to [[BloomFilterExec.BatchRows]] rows (copies) at a time.
 *
 * Code generation: not supported, on purpose; it is a boundary between stages. The bulk
 * check needs a batch of keys before it can decide about any row of it, which the
 * row-at-a-time produce/consume model of whole-stage code generation cannot express, and
 * reading the scan's batches directly skips the row conversion of every dropped row.
 *
 * Spark builds an operator's RDD once per plan and runs it again for later actions, so whether
 * a join check applies is decided at the plan's first run; a join check applied is recorded in
 * its coverage, and the indexed side, where a later run reads it again, refuses to run on other
 * files than the filter held ([[JoinFilterGuardExec]]).
 */
case class BloomFilterExec(checks: Seq[BloomMightContain], child: SparkPlan) extends UnaryExecNode {

  override def output: Seq[Attribute] = child.output
  override def outputPartitioning: Partitioning = child.outputPartitioning
  override def outputOrdering: Seq[SortOrder] = child.outputOrdering

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numInputRows" -> SQLMetrics.createMetric(sparkContext, "number of input rows"),
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows"),
    "filterTime" -> SQLMetrics.createNanoTimingMetric(sparkContext, "time in Bloom filter checks"))

  override protected def doExecute(): RDD[InternalRow] = {
    val numIn = metrics("numInputRows")
    val numOut = metrics("numOutputRows")
    val time = metrics("filterTime")
    // A join filter is applied only while the indexed side lists the files the filter was
    // found to hold when the plan was optimized: the plan may run long after (a DataFrame kept,
    // explained first) and that side's scan then reads what its file index lists now.
    val now = sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY)
    val applied = checks.filter(c => c.coverage.forall { coverage =>
      coverage.holds(now) || {
        IndexCatalog.warnOnce(s"bloomindex: join filter ${c.global.ref} not applied: the files of its indexed side " +
          s"($coverage) changed after the query was planned; plan the query again to filter its rows")
        false
      }
    })
    applied.foreach(_.coverage.foreach(_.applied(now)))
    if (applied.isEmpty) return child.execute()
    val attrs = child.output
    // The join rule's checks (with a coverage) let a row whose key fails through: the join
    // computes that key again later, if the row gets there. A check written by hand fails as
    // Spark's own filter would.
    val tolerant = applied.map(_.coverage.isDefined).toArray
    val bound = applied.map(c => c.copy(child = BindReferences.bindReference(c.child, attrs), coverage = None))
    BloomFilterExec.columnarInput(child) match {
      case Some(columnar) =>
        columnar.executeColumnar().mapPartitions({ batches =>
          val checker = new BatchChecker(bound, tolerant)
          val toRow = UnsafeProjection.create(attrs, attrs)
          batches.flatMap { batch =>
            val start = System.nanoTime()
            val n = batch.numRows()
            val pass = checker.checkColumnar(batch)
            time += System.nanoTime() - start
            numIn += n
            numOut += BloomFilterExec.count(pass, n)
            new BloomFilterExec.Passed(pass, n, i => toRow(batch.getRow(i)))
          }
        }, preservesPartitioning = true)
      case None =>
        child.execute().mapPartitions({ rows =>
          val checker = new BatchChecker(bound, tolerant)
          val buffer = new Array[InternalRow](BloomFilterExec.BatchRows)
          // Upstream operators reuse their row objects: each buffered row is a copy.
          val groups = new Iterator[Iterator[InternalRow]] {
            override def hasNext: Boolean = rows.hasNext
            override def next(): Iterator[InternalRow] = {
              val start = System.nanoTime()
              var n = 0
              while (n < buffer.length && rows.hasNext) { buffer(n) = rows.next().copy(); n += 1 }
              val pass = checker.checkRows(buffer, n)
              time += System.nanoTime() - start
              numIn += n
              numOut += BloomFilterExec.count(pass, n)
              new BloomFilterExec.Passed(pass, n, buffer(_))
            }
          }
          groups.flatten
        }, preservesPartitioning = true)
    }
  }

  override def simpleString(maxFields: Int): String =
    s"BloomFilter [${checks.map(c => s"${c.global.ref} on ${c.child}").mkString(", ")}]"

  override protected def withNewChildInternal(newChild: SparkPlan): BloomFilterExec = copy(child = newChild)
}

object BloomFilterExec {

  /** Rows per bulk check when the input is rows. */
  val BatchRows = 4096

  /**
   * The columnar plan under `child`'s column-to-row conversion, when its rows are exactly
   * those batches' rows (the transitions and code generation Spark puts above a vectorized
   * scan), so the batches can be read instead.
   */
  def columnarInput(child: SparkPlan): Option[SparkPlan] = child match {
    case w: WholeStageCodegenExec => w.child match {
      case c: ColumnarToRowExec => Some(unwrap(c.child))
      case _ => None
    }
    case c: ColumnarToRowExec => Some(unwrap(c.child))
    case p if p.supportsColumnar => Some(p)
    case _ => None
  }

  private def unwrap(p: SparkPlan): SparkPlan = p match {
    case i: InputAdapter => i.child
    case other => other
  }

  private def count(pass: Array[Boolean], n: Int): Long = {
    var c = 0L
    var i = 0
    while (i < n) { if (pass(i)) c += 1; i += 1 }
    c
  }

  /** The rows `[0, n)` of a batch whose `pass` is true, as `row(i)` makes them. */
  private final class Passed(pass: Array[Boolean], n: Int, row: Int => InternalRow) extends Iterator[InternalRow] {
    private var i = skip(0)
    private def skip(from: Int): Int = {
      var j = from
      while (j < n && !pass(j)) j += 1
      j
    }
    override def hasNext: Boolean = i < n
    override def next(): InternalRow = {
      val r = row(i)
      i = skip(i + 1)
      r
    }
  }
}

/**
 * The checks of one task: key hashes and results for up to one batch, reused batch after
 * batch. `checkColumnar`/`checkRows` return `pass`, true for the rows every check lets through.
 */
private final class BatchChecker(checks: Seq[BloomMightContain], tolerant: Array[Boolean]) {
  private var hashes = new Array[Long](BloomFilterExec.BatchRows)
  private var valid = new Array[Boolean](BloomFilterExec.BatchRows)
  private var maybe = new Array[Boolean](BloomFilterExec.BatchRows)
  private var pass = new Array[Boolean](BloomFilterExec.BatchRows)
  // Rows whose key could not be computed (an ANSI error: a division by zero, a bad cast): the
  // check lets them through. Without it the key is computed only on the rows that reach the
  // join, after the query's other filters (which the check runs below) and joins: the row
  // is dropped there or the error is raised there, as Spark raises it without the index.
  private var failed = new Array[Boolean](BloomFilterExec.BatchRows)
  private var anyFailed = false

  // A key that is a column is read from its vector; anything else is computed per row.
  private val ordinals: Array[Int] = checks.map {
    case BloomMightContain(b: BoundReference, _, _, _) => b.ordinal
    case _ => -1
  }.toArray
  private val keyProjections: Array[UnsafeProjection] = checks.map { c =>
    UnsafeProjection.create(Seq[Expression](c.child))
  }.toArray

  private def ensure(n: Int): Unit = if (hashes.length < n) {
    hashes = new Array[Long](n); valid = new Array[Boolean](n)
    maybe = new Array[Boolean](n); pass = new Array[Boolean](n); failed = new Array[Boolean](n)
  }

  def checkColumnar(batch: ColumnarBatch): Array[Boolean] = {
    val n = batch.numRows()
    ensure(n)
    java.util.Arrays.fill(pass, 0, n, true)
    var k = 0
    while (k < checks.length) {
      val kh = checks(k).keyHash
      if (ordinals(k) >= 0) {
        val v = batch.column(ordinals(k))
        kh match {
          // The common join keys get loops of their own: one monomorphic call per value.
          case KeyHash.Exact(LongType | TimestampType | TimestampNTZType, h) =>
            var i = 0
            while (i < n) {
              if (v.isNullAt(i)) valid(i) = false
              else { hashes(i) = h.hashLong(v.getLong(i)); valid(i) = true }
              i += 1
            }
          case KeyHash.Exact(IntegerType | DateType, h) =>
            var i = 0
            while (i < n) {
              if (v.isNullAt(i)) valid(i) = false
              else { hashes(i) = h.hashInt(v.getInt(i)); valid(i) = true }
              i += 1
            }
          case _ =>
            var i = 0
            while (i < n) {
              valid(i) = !v.isNullAt(i) && kh.hashVector(v, i, hashes, i)
              i += 1
            }
        }
      } else {
        var i = 0
        while (i < n) {
          valid(i) = hashKey(k, batch.getRow(i), i)
          i += 1
        }
      }
      apply(k, n)
      k += 1
    }
    pass
  }

  def checkRows(rows: Array[InternalRow], n: Int): Array[Boolean] = {
    ensure(n)
    java.util.Arrays.fill(pass, 0, n, true)
    var k = 0
    while (k < checks.length) {
      var i = 0
      while (i < n) {
        valid(i) = hashKey(k, rows(i), i)
        i += 1
      }
      apply(k, n)
      k += 1
    }
    pass
  }

  private def hashKey(k: Int, row: InternalRow, i: Int): Boolean = {
    val key = try keyProjections(k)(row) catch {
      case NonFatal(_) if tolerant(k) =>
        failed(i) = true
        anyFailed = true
        return false
    }
    !key.isNullAt(0) && checks(k).keyHash.hashRow(key, 0, hashes, i)
  }

  // Invalid keys (null, out of range) hash as whatever was left in `hashes`: masked below.
  private def apply(k: Int, n: Int): Unit = {
    checks(k).global.filter.checkAll(hashes, 0, n, maybe, 0)
    var i = 0
    if (!anyFailed) {
      while (i < n) {
        pass(i) = pass(i) && valid(i) && maybe(i)
        i += 1
      }
    } else {
      // A row whose key failed passes this check (another check may still drop it).
      while (i < n) {
        pass(i) = pass(i) && (failed(i) || valid(i) && maybe(i))
        failed(i) = false
        i += 1
      }
      anyFailed = false
    }
  }
}
