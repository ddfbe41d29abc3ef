package bloomindex.sbbf

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, InputStream, OutputStream}

import org.apache.parquet.format.{BloomFilterAlgorithm, BloomFilterCompression, BloomFilterHash,
  BloomFilterHeader, SplitBlockAlgorithm, Uncompressed, Util, XxHash}

/**
 * Parquet's on-disk form of a filter: the Thrift compact `BloomFilterHeader`
 * `{1: numBytes, 2: BLOCK, 3: XXHASH, 4: UNCOMPRESSED}` followed by `numBytes` bytes of
 * bitset. Uses parquet-format's generated Thrift classes (on Spark's classpath) rather than
 * a hand-written encoder.
 */
object SbbfSerde {

  def write(filter: Sbbf, out: OutputStream): Unit = {
    writeHeader(filter.numBytes, out)
    out.write(filter.bitsetBytes)
  }

  private def writeHeader(numBytes: Int, out: OutputStream): Unit = {
    val header = new BloomFilterHeader(
      numBytes,
      BloomFilterAlgorithm.BLOCK(new SplitBlockAlgorithm()),
      BloomFilterHash.XXHASH(new XxHash()),
      BloomFilterCompression.UNCOMPRESSED(new Uncompressed()))
    Util.writeBloomFilterHeader(header, out)
  }

  /** Length of the serialized form (header + bitset) of a filter of `numBytes` bytes. */
  def serializedLength(numBytes: Int): Int = {
    val out = new ByteArrayOutputStream(16)
    writeHeader(numBytes, out)
    out.size() + numBytes
  }

  def write(filter: Sbbf): Array[Byte] = {
    val out = new ByteArrayOutputStream(filter.numBytes + 16)
    write(filter, out)
    out.toByteArray
  }

  /**
   * Reads a header and its bitset. Refuses anything but BLOCK / XXHASH / UNCOMPRESSED, a size
   * that is not a multiple of 32 bytes or over 128 MiB (before allocating it), and a bitset
   * shorter than the header says.
   */
  def read(in: InputStream): Sbbf = {
    val header = try Util.readBloomFilterHeader(in) catch {
      case e: java.io.IOException =>
        throw new IllegalArgumentException(s"bytes: not a Parquet Bloom filter header: ${e.getMessage}", e)
    }
    if (!header.getAlgorithm.isSetBLOCK) throw new IllegalArgumentException(
      s"bytes: unsupported Bloom filter algorithm ${header.getAlgorithm}")
    if (!header.getHash.isSetXXHASH) throw new IllegalArgumentException(
      s"bytes: unsupported Bloom filter hash ${header.getHash}")
    if (!header.getCompression.isSetUNCOMPRESSED) throw new IllegalArgumentException(
      s"bytes: unsupported Bloom filter compression ${header.getCompression}")
    val numBytes = header.getNumBytes
    SbbfSizing.checkNumBytes(numBytes)
    val bitset = in.readNBytes(numBytes)
    if (bitset.length != numBytes) throw new IllegalArgumentException(
      s"bytes: header says $numBytes bytes of bitset, only ${bitset.length} follow")
    Sbbf.fromBitset(bitset)
  }

  def read(bytes: Array[Byte]): Sbbf = read(new ByteArrayInputStream(bytes))
}
