package bloomindex.filter

import bloomindex.sbbf.SbbfSizing

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

  /** The header this serde writes for a filter of `numBytes` bytes. */
  def header(numBytes: Int): Array[Byte] = {
    val out = new ByteArrayOutputStream(16)
    writeHeader(numBytes, out)
    out.toByteArray
  }

  /** Length of the serialized form (header + bitset) of a filter of `numBytes` bytes. */
  def serializedLength(numBytes: Int): Int = header(numBytes).length + numBytes

  /**
   * Where the bitset starts in a serialized filter `bytes` (any valid header, as [[read]]
   * checks it) and how long it is: (offset, numBytes). The bitset is not copied.
   */
  def locateBitset(bytes: Array[Byte]): (Int, Int) = {
    val in = new ByteArrayInputStream(bytes)
    val numBytes = readHeader(in)
    val offset = bytes.length - in.available()
    if (bytes.length - offset < numBytes) throw new IllegalArgumentException(
      s"bytes: header says $numBytes bytes of bitset, only ${bytes.length - offset} follow")
    (offset, numBytes)
  }

  def write(filter: Sbbf): Array[Byte] = {
    val h = header(filter.numBytes)
    val out = java.util.Arrays.copyOf(h, h.length + filter.numBytes)
    filter.copyBitsetInto(out, h.length)
    out
  }

  /** The serialized form of a bitset given in Parquet's layout (`bytes(offset until offset + numBytes)`). */
  def write(bitset: Array[Byte], offset: Int, numBytes: Int): Array[Byte] = {
    SbbfSizing.checkNumBytes(numBytes)
    val h = header(numBytes)
    val out = java.util.Arrays.copyOf(h, h.length + numBytes)
    System.arraycopy(bitset, offset, out, h.length, numBytes)
    out
  }

  /**
   * Reads a header and its bitset. Refuses anything but BLOCK / XXHASH / UNCOMPRESSED, a size
   * that is not a multiple of 32 bytes or over 128 MiB (before allocating it), and a bitset
   * shorter than the header says.
   */
  def read(in: InputStream): Sbbf = {
    val numBytes = readHeader(in)
    val bitset = in.readNBytes(numBytes)
    if (bitset.length != numBytes) throw new IllegalArgumentException(
      s"bytes: header says $numBytes bytes of bitset, only ${bitset.length} follow")
    Sbbf.fromBitset(bitset)
  }

  /** Reads and checks a header; returns its bitset size. */
  private def readHeader(in: InputStream): Int = {
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
    numBytes
  }

  def read(bytes: Array[Byte]): Sbbf = read(new ByteArrayInputStream(bytes))
}
