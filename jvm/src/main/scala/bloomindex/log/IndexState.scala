package bloomindex.log

/** Index states, as in Hyperspace: transient ones while a command runs, stable ones after. */
object IndexState {
  val Creating = "CREATING"
  val Refreshing = "REFRESHING"
  val Active = "ACTIVE"
  val Deleted = "DELETED"
  val all: Set[String] = Set(Creating, Refreshing, Active, Deleted)
  def isStable(s: String): Boolean = s == Active || s == Deleted
}
