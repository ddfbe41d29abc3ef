package bloomindex.source

import java.util.Locale

import scala.util.control.NonFatal

import bloomindex.log.{LogEntry, SourceSpec}

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.{CatalogTable, CatalogTableType}

/**
 * Where the catalog table an index recorded is now ([[SourceProvider.relocate]]), for an index
 * whose table may have been renamed by another engine or cluster (a rename no event of this
 * session reports): found again by the table's identity, never by its name alone.
 */
sealed trait Relocation

object Relocation {

  /** The recorded name still names the recorded table (or the provider cannot tell otherwise). */
  case object Here extends Relocation

  /** No table is the recorded one (`why`, as a warning or DESCRIBE says it). */
  final case class Gone(why: String) extends Relocation

  /** Exactly one table has the recorded identity: `source`, the index's source under its new name. */
  final case class Moved(source: SourceSpec, identity: String) extends Relocation

  /** Several tables have the recorded identity (`tables`): none is followed. */
  final case class Ambiguous(tables: Seq[String], identity: String) extends Relocation

  /**
   * The most tables of one namespace (database) a search loads to find a renamed table: a
   * namespace with more is not searched (the index stays ORPHANED, and a warning says why), so
   * that a SHOW or a query never loads an unbounded number of tables.
   */
  val MaxTables = 1000

  /** Why a namespace `where` of `tables` tables is not searched (more than [[MaxTables]]), or None. */
  def tooManyTables(where: String, tables: Int): Option[Relocation] =
    if (tables <= MaxTables) None
    else Some(Gone(s"$where holds $tables tables, more than the $MaxTables searched for a renamed table"))

  /**
   * Whether catalog table name `s.table` still names a table (true when there is no name, or the
   * catalog cannot tell: the index is not moved on a failed lookup).
   */
  def nameResolves(spark: SparkSession, s: SourceSpec): Boolean =
    s.table.forall(t => scala.util.Try(spark.catalog.tableExists(t)).getOrElse(true))

  /** What index `entry`'s columns recorded under `key` in their physical identity (the same for every column: a table's). */
  def recorded(entry: LogEntry, key: String): Option[String] =
    entry.data.flatMap(_.decoding).toSeq.flatMap(_.columns).flatMap(_.physical.get(key)).headOption
}

/**
 * Renamed tables of the session catalog (a Hive metastore other clusters share), found by
 * identity: in the database of the name the index recorded, the one table at the recorded
 * location whose provider is the index's format (and, where the index recorded it, created at the
 * same time: a rename keeps a table's creation time, a table created again at the same
 * location has another).
 */
object SessionTables {

  /** (catalog prefix as recorded, database, table) of a session catalog table name as a [[SourceSpec]] records it. */
  def parse(spark: SparkSession, name: String): Option[(String, String, String)] =
    scala.util.Try(spark.sessionState.sqlParser.parseMultipartIdentifier(name)).toOption.flatMap {
      case Seq(db, t) => Some(("", db, t))
      case Seq(c, db, t) if c.equalsIgnoreCase(SessionCatalogName) => Some((c + ".", db, t))
      case _ => None
    }

  private val SessionCatalogName = "spark_catalog"

  /**
   * The table of the session catalog that index `entry`'s table (no longer under its recorded
   * name) is now: in the same database, at the same location (one root folder recorded),
   * `accepted` (its provider), created when the recorded one was where the index recorded that
   * ([[DecodingContext.TableCreated]]). `whatIdentity` names the identity in messages.
   */
  def relocate(spark: SparkSession, entry: LogEntry, accepted: CatalogTable => Boolean, whatIdentity: String,
      createTime: Boolean): Relocation = {
    val s = entry.spec.source
    val parsed = s.table.flatMap(parse(spark, _))
    val location = s.paths match {
      case Seq(p) => Some(p)
      case _ => None
    }
    (parsed, location) match {
      case (Some((prefix, db, old)), Some(loc)) =>
        val created = if (createTime) Relocation.recorded(entry, DecodingContext.TableCreated) else None
        val identity = s"location $loc, $whatIdentity" + created.map(c => s", created at $c ms").getOrElse("")
        val external = spark.sessionState.catalog.externalCatalog
        val names = try external.listTables(db) catch {
          case NonFatal(e) => return Relocation.Gone(s"database $db cannot be listed (${e.getMessage})")
        }
        Relocation.tooManyTables(s"database $db", names.size).foreach(r => return r)
        val others = names.filterNot(_.equalsIgnoreCase(old))
        val tables = try external.getTablesByName(db, others) catch {
          case NonFatal(e) => return Relocation.Gone(s"the tables of database $db cannot be read (${e.getMessage})")
        }
        val matching = tables.filter { t =>
          t.tableType != CatalogTableType.VIEW &&
            t.storage.locationUri.exists(u => SourceProviders.sameRoot(new org.apache.hadoop.fs.Path(u).toString, loc)) &&
            accepted(t) && created.forall(_ == t.createTime.toString)
        }
        matching match {
          case Seq(t) =>
            Relocation.Moved(s.copy(table = Some(s"$prefix$db.${t.identifier.table}")), identity)
          case Seq() => Relocation.Gone(s"no table of database $db has its identity ($identity)")
          case many => Relocation.Ambiguous(many.map(t => s"$db.${t.identifier.table}").sorted, identity)
        }
      case _ => Relocation.Gone("the table is not named in the session catalog or has no one location")
    }
  }

  /** Whether catalog table `t` is of provider `format` (`parquet`, `delta`, ...). */
  def provides(t: CatalogTable, format: String): Boolean =
    t.provider.exists(_.toLowerCase(Locale.ROOT) == format.toLowerCase(Locale.ROOT))
}
