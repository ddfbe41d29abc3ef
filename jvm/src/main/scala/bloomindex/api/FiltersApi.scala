package bloomindex.api

import bloomindex.filter.{BloomFilter, ClassicBloomFilter, ClassicKernels, FilterAlgorithm, Sbbf, SbbfMurmur3}
import bloomindex.sbbf.{SbbfKernels, SbbfSizing}

import org.apache.spark.sql.DataFrame

/**
 * What Python's tests and `bloomindex.filters` call through py4j for the three filter
 * designs (`sbbf`, `sbbf-murmur3`, `classic`). Filters cross as their serialized form
 * (`BloomFilter.toBytes`), hashes as little-endian bytes.
 */
object FiltersApi {

  def algorithms(): Array[String] = FilterAlgorithm.names.toArray

  /** Name of the classic design's default kernel here, and whether its vector kernel can run. */
  def classicKernel(): String = ClassicKernels.default.name

  def classicVectorAvailable(): Boolean = ClassicKernels.vector.isDefined

  def numBytesFor(algorithm: String, ndv: Long, fpp: Double, sizing: String): Int =
    FilterAlgorithm.fromName(algorithm).numBytes(ndv, fpp, SbbfSizing.Sizing.fromName(sizing))

  /** Column `column` of `df` hashed with the design's hash (plain encoding), nulls skipped. */
  def hashColumn(df: DataFrame, column: String, algorithm: String): Array[Long] = {
    val plan = df.select(column).queryExecution
    val dt = plan.analyzed.output.head.dataType
    val rows = plan.toRdd.map(_.copy()).collect()
    val out = new Array[Long](rows.length)
    val n = FilterAlgorithm.fromName(algorithm).hash.hashRows(rows.iterator, 0, dt, out)
    java.util.Arrays.copyOf(out, n)
  }

  /** A filter of `numBytes` (sized for `fpp`) over a column of `df`, serialized. */
  def buildFilter(df: DataFrame, column: String, algorithm: String, numBytes: Int, fpp: Double,
      kernel: String): Array[Byte] = {
    val hashes = hashColumn(df, column, algorithm)
    val f = withKernel(FilterAlgorithm.fromName(algorithm).empty(numBytes, fpp), kernel)
    f.insertAll(hashes, 0, hashes.length)
    f.toBytes
  }

  /** A filter of `numBytes` over hashes given as little-endian bytes, serialized. */
  def filterFromHashes(algorithm: String, hashesLE: Array[Byte], numBytes: Int, fpp: Double,
      kernel: String): Array[Byte] = {
    val hashes = PythonApiBytes.longs(hashesLE)
    val f = withKernel(FilterAlgorithm.fromName(algorithm).empty(numBytes, fpp), kernel)
    f.insertAll(hashes, 0, hashes.length)
    f.toBytes
  }

  /** Checks hashes against a serialized filter with the named kernel; one byte (0/1) per hash. */
  def checkHashes(algorithm: String, filter: Array[Byte], hashesLE: Array[Byte], kernel: String): Array[Byte] = {
    val hashes = PythonApiBytes.longs(hashesLE)
    val f = withKernel(FilterAlgorithm.fromName(algorithm).fromBytes(filter), kernel)
    val out = new Array[Boolean](hashes.length)
    f.checkAll(hashes, 0, hashes.length, out, 0)
    out.map(b => if (b) 1.toByte else 0.toByte)
  }

  /** Reads and writes back a serialized filter (a parity check of both directions). */
  def roundTrip(algorithm: String, bytes: Array[Byte]): Array[Byte] =
    FilterAlgorithm.fromName(algorithm).fromBytes(bytes).toBytes

  /** ORs two serialized filters of one design. */
  def merge(algorithm: String, a: Array[Byte], b: Array[Byte]): Array[Byte] = {
    val alg = FilterAlgorithm.fromName(algorithm)
    alg.fromBytes(a).merge(alg.fromBytes(b)).toBytes
  }

  private def withKernel(f: BloomFilter, kernel: String): BloomFilter = f match {
    case s: Sbbf => s.withKernel(SbbfKernels.byName(kernel))
    case m: SbbfMurmur3 => m.withKernel(SbbfKernels.byName(kernel))
    case c: ClassicBloomFilter => c.withKernel(ClassicKernels.byName(kernel))
  }
}

private[api] object PythonApiBytes {
  def longs(bytes: Array[Byte]): Array[Long] = {
    val buf = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).asLongBuffer()
    val out = new Array[Long](buf.remaining())
    buf.get(out)
    out
  }
}
