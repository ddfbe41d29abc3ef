package bloomindex.sbbf;

/**
 * The inner loops of a split block Bloom filter over its words: {@code words.length / 8}
 * blocks of eight 32-bit words each, laid out block after block.
 *
 * <p>Every implementation sets and tests exactly the same bits (Parquet's SBBF spec): block
 * {@code ((h >>> 32) * z) >>> 32}, and in word {@code i} of it the bit
 * {@code ((int) h * SALT[i]) >>> 27}. They differ only in speed. Bulk methods work on a range
 * of a caller's {@code long[]} and write into a caller's array: nothing is allocated per call.
 */
public interface SbbfKernel {

  /** The eight odd constants of the spec, one per word of a block. */
  int[] SALT = {
    0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d,
    0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31
  };

  /** Index of the first word of the block that hash {@code h} selects among {@code numBlocks}. */
  static int wordOffset(long h, int numBlocks) {
    return (int) (((h >>> 32) * numBlocks) >>> 32) << 3;
  }

  /** A short name for logs and benchmarks: "vector" or "scalar". */
  String name();

  void insert(int[] words, long hash);

  boolean check(int[] words, long hash);

  /** Inserts {@code hashes[from until to]}. */
  void insertAll(int[] words, long[] hashes, int from, int to);

  /** {@code out[outOffset + k] = check(hashes[from + k])} for {@code k < to - from}. */
  void checkAll(int[] words, long[] hashes, int from, int to, boolean[] out, int outOffset);

  /**
   * Sets bit {@code k} of {@code bitmap} (bit {@code k & 63} of word {@code k >>> 6}) to
   * {@code check(hashes[from + k])}, clearing the others, and returns how many were set.
   */
  int checkAllBitmap(int[] words, long[] hashes, int from, int to, long[] bitmap);
}
