package bloomindex.api

import bloomindex.filter.{ClassicKernels, Sbbf}
import bloomindex.hash.ParquetHash
import bloomindex.sbbf.{SbbfKernels, SbbfSizing}

import org.apache.spark.SparkEnv
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.DataType

/**
 * What the Python package calls through py4j. Arguments and results are plain JVM values
 * (strings, byte and long arrays) so that py4j moves them in one piece.
 */
object PythonApi {

  /** Name of the kernel filters use in this JVM: "vector" or "scalar". */
  def defaultKernel(): String = SbbfKernels.default.name

  /** True when this JVM can run the vector kernel. */
  def vectorAvailable(): Boolean = SbbfKernels.vector.isDefined

  /**
   * What the JVMs running a job's tasks use: a job of `numTasks` tasks, each reporting
   * "executor id, process id, SBBF kernel, classic kernel" (tab-separated) of the JVM it ran
   * in. On a cluster these are the executors', which may differ from the driver's
   * [[defaultKernel]] when the executors lack `--add-modules jdk.incubator.vector`.
   */
  def taskKernels(spark: SparkSession, numTasks: Int): Array[String] =
    spark.sparkContext.parallelize(0 until numTasks, numTasks).map { _ =>
      Seq(SparkEnv.get.executorId, ProcessHandle.current().pid().toString,
        SbbfKernels.default.name, ClassicKernels.default.name).mkString("\t")
    }.collect()

  def numBytesFor(ndv: Long, fpp: Double, sizing: String): Int =
    SbbfSizing.numBytes(ndv, fpp, SbbfSizing.Sizing.fromName(sizing))

  /**
   * Hashes column `column` of `df` (collected to the driver: for tests and small data) as
   * ParquetHash does, nulls skipped, in row order.
   */
  def hashColumn(df: DataFrame, column: String): Array[Long] = {
    val plan = df.select(column).queryExecution
    val dt = plan.analyzed.output.head.dataType
    val rows = plan.toRdd.map(_.copy()).collect()
    val out = new Array[Long](rows.length)
    val n = ParquetHash.hashRows(rows.iterator, 0, dt, out)
    java.util.Arrays.copyOf(out, n)
  }

  /** Builds a filter of `numBytes` bytes over column `column` of `df` with the named kernel. */
  def buildFilter(df: DataFrame, column: String, numBytes: Int, kernel: String): Array[Byte] = {
    val hashes = hashColumn(df, column)
    val f = Sbbf(numBytes, SbbfKernels.byName(kernel))
    f.insertAll(hashes, 0, hashes.length)
    f.bitsetBytes
  }

  /** Builds a filter from hashes (as little-endian bytes from NumPy) with the named kernel. */
  def filterFromHashes(hashesLE: Array[Byte], numBytes: Int, kernel: String): Array[Byte] = {
    val hashes = longsFromLE(hashesLE)
    val f = Sbbf(numBytes, SbbfKernels.byName(kernel))
    f.insertAll(hashes, 0, hashes.length)
    f.bitsetBytes
  }

  /** Checks hashes against a bitset with the named kernel; one byte (0/1) per hash. */
  def checkHashes(bitset: Array[Byte], hashesLE: Array[Byte], kernel: String): Array[Byte] = {
    val hashes = longsFromLE(hashesLE)
    val f = Sbbf.fromBitset(bitset).withKernel(SbbfKernels.byName(kernel))
    val out = new Array[Boolean](hashes.length)
    f.checkAll(hashes, 0, hashes.length, out, 0)
    out.map(b => if (b) 1.toByte else 0.toByte)
  }

  def toParquetBytes(bitset: Array[Byte]): Array[Byte] = Sbbf.fromBitset(bitset).toParquetBytes

  def fromParquetBytes(bytes: Array[Byte]): Array[Byte] = Sbbf.fromParquetBytes(bytes).bitsetBytes

  /** The Spark type a DDL string names, for error messages and checks from Python. */
  def checkIndexable(typeName: String): Unit = ParquetHash.checkIndexable(DataType.fromDDL(typeName))

  private def longsFromLE(bytes: Array[Byte]): Array[Long] = {
    val buf = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).asLongBuffer()
    val out = new Array[Long](buf.remaining())
    buf.get(out)
    out
  }
}
