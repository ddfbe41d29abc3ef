package bloomindex.filter;

import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The classic filter on the JDK Vector API, eight hashes at a time, one per 64-bit lane:
 * each round {@code i} computes the eight positions {@code (h1 + i h2) % m} in one register
 * (the 32-bit wrap by a shift pair, the remainder by a multiply with the bit count's
 * reciprocal, {@link ClassicKernel.Reciprocal}), then the bits are set or tested with scalar
 * accesses on the extracted lanes: lanes may share a word (a scatter would lose bits), and
 * the Vector API's gather, and storing the positions to an array to read them back, both
 * measured slower. Checks stop once every lane has missed a bit.
 *
 * <p>It needs 512-bit vectors (eight longs per register, 64-bit multiplies), so it is only
 * picked where the CPU has them. Whether it beats the scalar kernel is measured by
 * {@code make bench-algorithms}: the bit positions are spread over the whole bit set, so
 * the memory accesses, not the arithmetic, dominate.
 */
public final class ClassicVectorKernel implements ClassicKernel {

  public static final ClassicVectorKernel INSTANCE = new ClassicVectorKernel();

  private static final VectorSpecies<Long> L = LongVector.SPECIES_512;

  private ClassicVectorKernel() {}

  /** True when the hardware has 512-bit vectors, so the API is not emulated. */
  public static boolean hardwareSupported() {
    return LongVector.SPECIES_PREFERRED.vectorBitSize() >= 512;
  }

  @Override
  public String name() {
    return "vector";
  }

  private static LongVector remainder(LongVector p, ClassicKernel.Reciprocal r) {
    LongVector q = p.mul(r.multiplier).lanewise(VectorOperators.LSHR, r.shift);
    return p.sub(q.mul(r.divisor));
  }

  /** The low 32 bits of each lane, sign-extended: {@code (int) h}. */
  private static LongVector low(LongVector h) {
    return h.lanewise(VectorOperators.LSHL, 32).lanewise(VectorOperators.ASHR, 32);
  }

  /** Positions of round {@code c} (= h1 + i h2, unwrapped) : wrap to 32 bits, fold the sign, reduce. */
  private static LongVector positions(LongVector c, ClassicKernel.Reciprocal r) {
    LongVector w = low(c);
    return remainder(w.lanewise(VectorOperators.XOR, w.lanewise(VectorOperators.ASHR, 63)), r);
  }

  private static void set(long[] words, int p) {
    words[p >>> 6] |= 1L << p;
  }

  private static int miss(long[] words, int p) {
    return (int) (~words[p >>> 6] >>> p) & 1;
  }

  @Override
  public void insertAll(long[] words, int numHashes, long[] hashes, int from, int to) {
    ClassicKernel.Reciprocal r = new ClassicKernel.Reciprocal(words.length << 6);
    int k = from;
    for (; k + 8 <= to; k += 8) {
      LongVector h = LongVector.fromArray(L, hashes, k);
      LongVector h2 = h.lanewise(VectorOperators.ASHR, 32);
      LongVector c = low(h);
      for (int i = 1; i <= numHashes; i++) {
        c = c.add(h2);
        LongVector v = positions(c, r);
        set(words, (int) v.lane(0));
        set(words, (int) v.lane(1));
        set(words, (int) v.lane(2));
        set(words, (int) v.lane(3));
        set(words, (int) v.lane(4));
        set(words, (int) v.lane(5));
        set(words, (int) v.lane(6));
        set(words, (int) v.lane(7));
      }
    }
    for (; k < to; k++) {
      ClassicKernel.insert(words, numHashes, hashes[k]);
    }
  }

  @Override
  public void checkAll(long[] words, int numHashes, long[] hashes, int from, int to, boolean[] out, int outOffset) {
    ClassicKernel.Reciprocal r = new ClassicKernel.Reciprocal(words.length << 6);
    int k = from;
    for (; k + 8 <= to; k += 8) {
      LongVector h = LongVector.fromArray(L, hashes, k);
      LongVector h2 = h.lanewise(VectorOperators.ASHR, 32);
      LongVector c = low(h);
      int alive = 0xFF;
      for (int i = 1; i <= numHashes && alive != 0; i++) {
        c = c.add(h2);
        LongVector v = positions(c, r);
        // Bit `lane` of `missing` is set when that lane's bit is absent; a missed lane stays missed.
        int missing = miss(words, (int) v.lane(0))
            | miss(words, (int) v.lane(1)) << 1
            | miss(words, (int) v.lane(2)) << 2
            | miss(words, (int) v.lane(3)) << 3
            | miss(words, (int) v.lane(4)) << 4
            | miss(words, (int) v.lane(5)) << 5
            | miss(words, (int) v.lane(6)) << 6
            | miss(words, (int) v.lane(7)) << 7;
        alive &= ~missing;
      }
      int o = outOffset + k - from;
      for (int lane = 0; lane < 8; lane++) {
        out[o + lane] = ((alive >>> lane) & 1) != 0;
      }
    }
    for (; k < to; k++) {
      out[outOffset + k - from] = ClassicKernel.check(words, numHashes, hashes[k]);
    }
  }
}
