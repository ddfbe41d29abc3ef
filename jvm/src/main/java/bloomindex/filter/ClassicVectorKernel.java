package bloomindex.filter;

import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The classic filter on the JDK Vector API, eight hashes at a time, one per lane: each round
 * {@code i} computes the eight positions {@code (h1 + i h2) % m} in vector registers (the
 * remainder through a double multiply by {@code 1 / m} and one correction, exact for
 * {@code m <= 2^30}), gathers the eight words and tests the eight bits. Checks stop once
 * every lane has missed a bit; inserts compute positions the same way and set the bits with
 * scalar stores (lanes may hit one word: a scatter would lose bits).
 *
 * <p>It needs 512-bit vectors (eight longs and eight doubles per register), so it is only
 * picked where the CPU has them. Whether it beats the scalar kernel is measured by
 * {@code make bench-algorithms}: bit positions are spread over the whole bit set, so the
 * loads, not the arithmetic, dominate.
 */
public final class ClassicVectorKernel implements ClassicKernel {

  public static final ClassicVectorKernel INSTANCE = new ClassicVectorKernel();

  private static final VectorSpecies<Integer> I = IntVector.SPECIES_256;
  private static final VectorSpecies<Long> L = LongVector.SPECIES_512;
  private static final VectorSpecies<Double> D = DoubleVector.SPECIES_512;
  private static final LongVector ONE = LongVector.broadcast(L, 1L);

  private ClassicVectorKernel() {}

  /** True when the hardware has 512-bit vectors, so the API is not emulated. */
  public static boolean hardwareSupported() {
    return LongVector.SPECIES_PREFERRED.vectorBitSize() >= 512;
  }

  @Override
  public String name() {
    return "vector";
  }

  /** {@code c ^ (c >> 31)} then the remainder by {@code numBits}, lane by lane. */
  private static IntVector positions(IntVector c, int numBits, double inverse) {
    IntVector p = c.lanewise(VectorOperators.XOR, c.lanewise(VectorOperators.ASHR, 31));
    DoubleVector pd = (DoubleVector) p.convertShape(VectorOperators.I2D, D, 0);
    IntVector q = (IntVector) pd.mul(inverse).convertShape(VectorOperators.D2I, I, 0);
    // q is floor(p / m) or one off either way: correct the remainder once.
    IntVector r = p.sub(q.mul(numBits));
    r = r.add(numBits, r.lt(0));
    return r.sub(numBits, r.compare(VectorOperators.GE, numBits));
  }

  private static IntVector low(LongVector h) {
    return (IntVector) h.convertShape(VectorOperators.L2I, I, 0);
  }

  private static IntVector high(LongVector h) {
    return (IntVector) h.lanewise(VectorOperators.LSHR, 32).convertShape(VectorOperators.L2I, I, 0);
  }

  @Override
  public void insertAll(long[] words, int numHashes, long[] hashes, int from, int to) {
    int numBits = words.length << 6;
    double inverse = 1.0 / numBits;
    int[] pos = new int[8];
    int k = from;
    for (; k + 8 <= to; k += 8) {
      LongVector h = LongVector.fromArray(L, hashes, k);
      IntVector h1 = low(h);
      IntVector h2 = high(h);
      IntVector c = h1;
      for (int i = 1; i <= numHashes; i++) {
        c = c.add(h2);
        positions(c, numBits, inverse).intoArray(pos, 0);
        for (int lane = 0; lane < 8; lane++) {
          int p = pos[lane];
          words[p >>> 6] |= 1L << p;
        }
      }
    }
    for (; k < to; k++) {
      ClassicKernel.insert(words, numHashes, hashes[k]);
    }
  }

  @Override
  public void checkAll(long[] words, int numHashes, long[] hashes, int from, int to, boolean[] out, int outOffset) {
    int numBits = words.length << 6;
    double inverse = 1.0 / numBits;
    int[] wordIndex = new int[8];
    int k = from;
    for (; k + 8 <= to; k += 8) {
      LongVector h = LongVector.fromArray(L, hashes, k);
      IntVector h1 = low(h);
      IntVector h2 = high(h);
      IntVector c = h1;
      VectorMask<Long> alive = L.maskAll(true);
      for (int i = 1; i <= numHashes; i++) {
        c = c.add(h2);
        IntVector p = positions(c, numBits, inverse);
        p.lanewise(VectorOperators.LSHR, 6).intoArray(wordIndex, 0);
        LongVector w = LongVector.fromArray(L, words, 0, wordIndex, 0);
        LongVector bit = ONE.lanewise(VectorOperators.LSHL,
            (LongVector) p.convertShape(VectorOperators.I2L, L, 0));
        alive = alive.and(w.and(bit).compare(VectorOperators.NE, 0L));
        if (!alive.anyTrue()) {
          break;
        }
      }
      long bits = alive.toLong();
      int o = outOffset + k - from;
      for (int lane = 0; lane < 8; lane++) {
        out[o + lane] = ((bits >>> lane) & 1L) != 0;
      }
    }
    for (; k < to; k++) {
      out[outOffset + k - from] = ClassicKernel.check(words, numHashes, hashes[k]);
    }
  }
}
