package bloomindex.filter;

/**
 * The inner loops of the classic Bloom filter: {@code words.length * 64} bits, {@code k} bit
 * positions per hash (Kirsch and Mitzenmacher: two 32-bit halves of one 64-bit hash).
 *
 * <p>For hash {@code h}, with {@code h1 = (int) h} and {@code h2 = (int) (h >>> 32)}, position
 * {@code i} (1 to k) is {@code c % m} where {@code c = h1 + i * h2} in 32-bit wrapping
 * arithmetic, complemented when negative, and {@code m} the number of bits; bit {@code p} is
 * bit {@code p & 63} of word {@code p >>> 6}. Every implementation sets and tests the same
 * bits; they differ only in speed.
 */
public interface ClassicKernel {

  /** "scalar" or "vector". */
  String name();

  void insertAll(long[] words, int numHashes, long[] hashes, int from, int to);

  void checkAll(long[] words, int numHashes, long[] hashes, int from, int to, boolean[] out, int outOffset);

  /** Position {@code i} (1-based) of hash halves {@code h1}, {@code h2} in a filter of {@code numBits}. */
  static int position(int h1, int h2, int i, int numBits) {
    int c = h1 + i * h2;
    return (c ^ (c >> 31)) % numBits; // c ^ (c >> 31) is ~c for a negative c, else c
  }

  /**
   * {@code p % m} for {@code 0 <= p < 2^31} without a division: {@code q = (p * M) >>> s} with
   * {@code s = 31 + ceil(log2 m)} and {@code M = floor(2^s / m) + 1} is exactly {@code p / m}
   * for every 31-bit {@code p} (Granlund and Montgomery), and {@code p * M < 2^63}.
   */
  final class Reciprocal {
    final long multiplier;
    final int shift;
    final int divisor;

    Reciprocal(int m) {
      int l = 32 - Integer.numberOfLeadingZeros(m - 1); // ceil(log2 m)
      shift = 31 + l;
      multiplier = (1L << shift) / m + 1;
      divisor = m;
    }

    int remainder(int p) {
      return p - (int) ((p * multiplier) >>> shift) * divisor;
    }
  }

  static void insert(long[] words, int numHashes, long hash) {
    int numBits = words.length << 6;
    int h1 = (int) hash;
    int h2 = (int) (hash >>> 32);
    for (int i = 1; i <= numHashes; i++) {
      int p = position(h1, h2, i, numBits);
      words[p >>> 6] |= 1L << p;
    }
  }

  static boolean check(long[] words, int numHashes, long hash) {
    int numBits = words.length << 6;
    int h1 = (int) hash;
    int h2 = (int) (hash >>> 32);
    for (int i = 1; i <= numHashes; i++) {
      int p = position(h1, h2, i, numBits);
      // Stop at the first missing bit: an absent value costs about two probes on average.
      if ((words[p >>> 6] & (1L << p)) == 0) {
        return false;
      }
    }
    return true;
  }
}
