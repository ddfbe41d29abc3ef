package bloomindex.sbbf;

/** The spec's loops in plain Java: the reference every other kernel must match bit for bit. */
public final class ScalarKernel implements SbbfKernel {

  public static final ScalarKernel INSTANCE = new ScalarKernel();

  private ScalarKernel() {}

  @Override
  public String name() {
    return "scalar";
  }

  @Override
  public void insert(int[] words, long hash) {
    int base = SbbfKernel.wordOffset(hash, words.length >>> 3);
    int x = (int) hash;
    for (int i = 0; i < 8; i++) {
      words[base + i] |= 1 << ((x * SALT[i]) >>> 27);
    }
  }

  @Override
  public boolean check(int[] words, long hash) {
    int base = SbbfKernel.wordOffset(hash, words.length >>> 3);
    int x = (int) hash;
    // No early exit: a branch per word costs more than the four extra ANDs.
    int missing = 0;
    for (int i = 0; i < 8; i++) {
      int bit = 1 << ((x * SALT[i]) >>> 27);
      missing |= ~words[base + i] & bit;
    }
    return missing == 0;
  }

  @Override
  public void insertAll(int[] words, long[] hashes, int from, int to) {
    for (int k = from; k < to; k++) {
      insert(words, hashes[k]);
    }
  }

  @Override
  public void checkAll(int[] words, long[] hashes, int from, int to, boolean[] out, int outOffset) {
    for (int k = from; k < to; k++) {
      out[outOffset + k - from] = check(words, hashes[k]);
    }
  }

  @Override
  public int checkAllBitmap(int[] words, long[] hashes, int from, int to, long[] bitmap) {
    return Bitmaps.fill(this, words, hashes, from, to, bitmap);
  }
}
