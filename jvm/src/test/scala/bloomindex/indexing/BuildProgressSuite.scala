package bloomindex.indexing

import org.scalatest.funsuite.AnyFunSuite

class BuildProgressSuite extends AnyFunSuite {

  test("each file counts once, in the last task that reads it (a split file in several tasks)") {
    val tasks = Array(Array("a", "b"), Array("b", "c"), Array("c"), Array.empty[String], Array("d", "b"))
    assert(BuildProgress.filesCountedBy(tasks).toSeq == Seq(1, 0, 1, 0, 2))
    assert(BuildProgress.filesCountedBy(tasks).sum == 4)
  }
}
