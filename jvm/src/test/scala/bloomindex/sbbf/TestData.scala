package bloomindex.sbbf

import java.nio.file.{Files, Path, Paths}

/** Where the interop files are, and small helpers for the suites. */
object TestData {

  /** `tests/testdata/parquet-testing` (kept in the repository), found from the build's working directory. */
  lazy val parquetTesting: Path = {
    val candidates = Seq("tests/testdata/parquet-testing")
      .map(p => Paths.get(p).toAbsolutePath.normalize)
    candidates.find(Files.isDirectory(_)).getOrElse(
      throw new IllegalStateException(s"parquet-testing files not found at ${candidates.mkString(", ")}"))
  }

  def bytes(name: String): Array[Byte] = Files.readAllBytes(parquetTesting.resolve(name))

  def randomHashes(n: Int, seed: Long): Array[Long] = {
    val r = new scala.util.Random(seed)
    Array.fill(n)(r.nextLong())
  }

  /** Both kernels where the vector one can run here, else just the scalar one. */
  def kernels: Seq[SbbfKernel] = SbbfKernels.scalar +: SbbfKernels.vector.toSeq
}
