package bloomindex.filter;

/** The classic filter's loops in plain Java: the reference the vector kernel must match. */
public final class ClassicScalarKernel implements ClassicKernel {

  public static final ClassicScalarKernel INSTANCE = new ClassicScalarKernel();

  private ClassicScalarKernel() {}

  @Override
  public String name() {
    return "scalar";
  }

  @Override
  public void insertAll(long[] words, int numHashes, long[] hashes, int from, int to) {
    for (int k = from; k < to; k++) {
      ClassicKernel.insert(words, numHashes, hashes[k]);
    }
  }

  @Override
  public void checkAll(long[] words, int numHashes, long[] hashes, int from, int to, boolean[] out, int outOffset) {
    for (int k = from; k < to; k++) {
      out[outOffset + k - from] = ClassicKernel.check(words, numHashes, hashes[k]);
    }
  }
}
