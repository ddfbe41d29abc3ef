package bloomindex.sbbf;

/** Packing of bulk check results into a bitmap, shared by the kernels. */
final class Bitmaps {

  private Bitmaps() {}

  static int fill(SbbfKernel kernel, int[] words, long[] hashes, int from, int to, long[] bitmap) {
    int n = to - from;
    int needed = (n + 63) >>> 6;
    if (bitmap.length < needed) {
      throw new IllegalArgumentException(
          "bitmap: " + bitmap.length + " words cannot hold " + n + " results");
    }
    int count = 0;
    for (int w = 0; w < needed; w++) {
      long bits = 0L;
      int start = from + (w << 6);
      int end = Math.min(to, start + 64);
      for (int k = start; k < end; k++) {
        if (kernel.check(words, hashes[k])) {
          bits |= 1L << (k - start);
        }
      }
      bitmap[w] = bits;
      count += Long.bitCount(bits);
    }
    return count;
  }
}
