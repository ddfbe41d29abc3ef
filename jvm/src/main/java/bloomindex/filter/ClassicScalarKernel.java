package bloomindex.filter;

/**
 * The classic filter's loops in plain Java. Bulk calls replace the remainder's division by a
 * multiply with the bit count's reciprocal ({@link ClassicKernel.Reciprocal}): same bits, a
 * few cycles instead of a 32-bit division per position.
 */
public final class ClassicScalarKernel implements ClassicKernel {

  public static final ClassicScalarKernel INSTANCE = new ClassicScalarKernel();

  private ClassicScalarKernel() {}

  @Override
  public String name() {
    return "scalar";
  }

  @Override
  public void insertAll(long[] words, int numHashes, long[] hashes, int from, int to) {
    ClassicKernel.Reciprocal r = new ClassicKernel.Reciprocal(words.length << 6);
    for (int k = from; k < to; k++) {
      long hash = hashes[k];
      int h1 = (int) hash;
      int h2 = (int) (hash >>> 32);
      for (int i = 1; i <= numHashes; i++) {
        int c = h1 + i * h2;
        int p = r.remainder(c ^ (c >> 31));
        words[p >>> 6] |= 1L << p;
      }
    }
  }

  @Override
  public void checkAll(long[] words, int numHashes, long[] hashes, int from, int to, boolean[] out, int outOffset) {
    ClassicKernel.Reciprocal r = new ClassicKernel.Reciprocal(words.length << 6);
    for (int k = from; k < to; k++) {
      out[outOffset + k - from] = check(words, numHashes, hashes[k], r);
    }
  }

  private static boolean check(long[] words, int numHashes, long hash, ClassicKernel.Reciprocal r) {
    int h1 = (int) hash;
    int h2 = (int) (hash >>> 32);
    for (int i = 1; i <= numHashes; i++) {
      int c = h1 + i * h2;
      int p = r.remainder(c ^ (c >> 31));
      if ((words[p >>> 6] & (1L << p)) == 0) {
        return false;
      }
    }
    return true;
  }
}
