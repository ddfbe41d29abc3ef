package bloomindex.sbbf;

import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The SBBF loops on the JDK Vector API: a block is exactly one 256-bit vector of eight ints,
 * so the mask of a hash is one multiply by the salt vector, one shift right by 27 and one
 * variable shift left of a vector of ones; insert is an OR into the block, check a test that
 * no bit of the mask is missing from it.
 *
 * <p>Written in Java rather than Scala on purpose: the species and the constant vectors must
 * be {@code static final} fields for C2 to treat them as constants and intrinsify the
 * operations; a Scala {@code object}'s vals are instance fields of its singleton.
 *
 * <p>Load this class only when the {@code jdk.incubator.vector} module is in the boot layer
 * ({@code --add-modules jdk.incubator.vector}); {@link SbbfKernels} does that check.
 */
public final class VectorKernel implements SbbfKernel {

  public static final VectorKernel INSTANCE = new VectorKernel();

  private static final VectorSpecies<Integer> SPECIES = IntVector.SPECIES_256;
  private static final IntVector SALT_V = IntVector.fromArray(SPECIES, SALT, 0);
  private static final IntVector ONES = IntVector.broadcast(SPECIES, 1);

  private VectorKernel() {}

  /** True when the hardware has 256-bit integer vectors, so the API is not emulated. */
  public static boolean hardwareSupported() {
    return IntVector.SPECIES_PREFERRED.vectorBitSize() >= 256;
  }

  @Override
  public String name() {
    return "vector";
  }

  private static IntVector mask(long hash) {
    IntVector shifts = IntVector.broadcast(SPECIES, (int) hash)
        .mul(SALT_V)
        .lanewise(VectorOperators.LSHR, 27);
    return ONES.lanewise(VectorOperators.LSHL, shifts);
  }

  @Override
  public void insert(int[] words, long hash) {
    int base = SbbfKernel.wordOffset(hash, words.length >>> 3);
    IntVector.fromArray(SPECIES, words, base).or(mask(hash)).intoArray(words, base);
  }

  @Override
  public boolean check(int[] words, long hash) {
    int base = SbbfKernel.wordOffset(hash, words.length >>> 3);
    return contains(words, base, hash);
  }

  @Override
  public void insertAll(int[] words, long[] hashes, int from, int to) {
    int numBlocks = words.length >>> 3;
    for (int k = from; k < to; k++) {
      long h = hashes[k];
      int base = SbbfKernel.wordOffset(h, numBlocks);
      IntVector.fromArray(SPECIES, words, base).or(mask(h)).intoArray(words, base);
    }
  }

  @Override
  public void checkAll(int[] words, long[] hashes, int from, int to, boolean[] out, int outOffset) {
    int numBlocks = words.length >>> 3;
    int k = from;
    // Four hashes per round, block offsets first, so the four loads issue together. (Touching
    // each block with a scalar load before testing, as a prefetch, measured slower.)
    for (; k + 4 <= to; k += 4) {
      long h0 = hashes[k], h1 = hashes[k + 1], h2 = hashes[k + 2], h3 = hashes[k + 3];
      int b0 = SbbfKernel.wordOffset(h0, numBlocks);
      int b1 = SbbfKernel.wordOffset(h1, numBlocks);
      int b2 = SbbfKernel.wordOffset(h2, numBlocks);
      int b3 = SbbfKernel.wordOffset(h3, numBlocks);
      int o = outOffset + k - from;
      out[o] = contains(words, b0, h0);
      out[o + 1] = contains(words, b1, h1);
      out[o + 2] = contains(words, b2, h2);
      out[o + 3] = contains(words, b3, h3);
    }
    for (; k < to; k++) {
      out[outOffset + k - from] =
          contains(words, SbbfKernel.wordOffset(hashes[k], numBlocks), hashes[k]);
    }
  }

  private static boolean contains(int[] words, int base, long hash) {
    IntVector m = mask(hash);
    IntVector block = IntVector.fromArray(SPECIES, words, base);
    // Bits of the mask that the block lacks: none in any lane means "may contain". (Measured
    // against eq().allTrue(), reduceLanes(OR) == 0 and toLong() == 0xFF: this is the fastest.)
    return m.lanewise(VectorOperators.AND_NOT, block).test(VectorOperators.IS_DEFAULT).allTrue();
  }

  @Override
  public int checkAllBitmap(int[] words, long[] hashes, int from, int to, long[] bitmap) {
    return Bitmaps.fill(this, words, hashes, from, to, bitmap);
  }
}
