package bloomindex.errors

/** A failure's chain of causes, as the code that words or classifies failures walks it. */
object Causes {

  /** `e` and its causes, at most `limit` of them (a chain that loops ends there). */
  def of(e: Throwable, limit: Int = 16): Iterator[Throwable] =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(limit)

  /** The last of [[of]]: `e`'s root cause, or `e` itself. */
  def root(e: Throwable): Throwable = of(e).reduceLeft((_, next) => next)
}
