package bloomindex.actions

import java.util.UUID

import scala.util.control.NonFatal

import bloomindex.log.{IndexRoot, IndexState}

import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.catalyst.catalog.{DropTableEvent, ExternalCatalogEvent, ExternalCatalogEventListener, RenameTableEvent}

/**
 * Ties indexes to the life of their catalog table: `DROP TABLE` of a table of the session
 * catalog drops the indexes over it (unless `spark.bloomindex.dropWithTable` is false) (their log says DELETED, their files are removed), in the
 * thread that dropped the table, right after the drop succeeded. The session catalog posts its
 * events to its listeners synchronously; one listener is added per external catalog (a
 * SparkContext's sessions share it), acting for the session that made the change.
 *
 * Tables of other catalogs (Iceberg's) and tables dropped by another cluster are not seen:
 * SHOW shows their indexes as ORPHANED ([[IndexManager.shownState]]).
 */
object TableEvents extends Logging {

  private val registered = java.util.Collections.newSetFromMap(new java.util.WeakHashMap[AnyRef, java.lang.Boolean]())

  /** Adds the listener to `spark`'s external catalog, once per catalog. */
  def register(spark: SparkSession): Unit = {
    val catalog = spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession].sharedState.externalCatalog
    val added = registered.synchronized(registered.add(catalog))
    if (added) catalog.addListener(new Listener(spark))
  }

  private final class Listener(fallback: SparkSession) extends ExternalCatalogEventListener {
    override def onEvent(event: ExternalCatalogEvent): Unit = event match {
      case DropTableEvent(database, table) => dropIndexesOf(SparkSession.getActiveSession.getOrElse(fallback), database, table)
      case RenameTableEvent(database, table, newName) =>
        renameIndexesOf(SparkSession.getActiveSession.getOrElse(fallback), database, table, newName)
      case _ =>
    }
  }

  private def indexesOf(spark: SparkSession, database: String, table: String, what: String) = {
    val names = Set(s"$database.$table", s"spark_catalog.$database.$table")
    val indexes = try new IndexRoot(spark).list() catch {
      case NonFatal(e) =>
        logWarning(s"bloomindex: $what $database.$table: could not list its Bloom indexes: $e")
        Nil
    }
    indexes.filter(_.spec.source.table.exists(t => names.exists(_.equalsIgnoreCase(t))))
  }

  /**
   * `ALTER TABLE ... RENAME TO`: each index of the table gets a log entry naming the new table
   * (and its folder, which a managed table's rename moves), its data as it was. Files that kept
   * their path (an external table's) keep answering; a managed table's moved files are read
   * whole until a REFRESH indexes them at their new paths. Never fails the rename.
   */
  def renameIndexesOf(spark: SparkSession, database: String, table: String, newName: String): Unit = {
    val renamed = try Some(spark.sessionState.catalog.externalCatalog.getTable(database, newName)) catch { case NonFatal(_) => None }
    indexesOf(spark, database, table, "RENAME TABLE").foreach { e =>
      try {
        val log = ActionContext.writing(spark, e.spec.name).log
        log.head().flatMap(h => h.entry.map(h.version -> _)).filter(_._2.state == IndexState.Active).foreach { case (version, entry) =>
          val old = entry.spec.source
          val qualified = old.table.exists(_.toLowerCase(java.util.Locale.ROOT).startsWith("spark_catalog."))
          val source = old.copy(
            table = Some((if (qualified) "spark_catalog." else "") + s"$database.$newName"),
            paths = renamed.flatMap(_.storage.locationUri).map(u => Seq(new org.apache.hadoop.fs.Path(u).toString)).getOrElse(old.paths))
          log.commit(entry.copy(version = version + 1, operation = "RENAME TABLE", operationId = UUID.randomUUID().toString,
            timestamp = System.currentTimeMillis(), spec = entry.spec.copy(source = source)))
          logInfo(s"bloomindex: Bloom index '${e.spec.name}' follows $database.$table renamed to $database.$newName")
        }
      } catch {
        case NonFatal(err) =>
          logWarning(s"bloomindex: RENAME TABLE $database.$table: Bloom index '${e.spec.name}' still names the old table ($err); " +
            s"DROP BLOOM INDEX ${e.spec.name} and create it again on $database.$newName")
      }
    }
  }

  /** Drops the indexes whose source is table `database`.`table` of the session catalog; never fails the DROP TABLE. */
  def dropIndexesOf(spark: SparkSession, database: String, table: String): Unit = {
    if (!spark.sessionState.conf.getConf(BloomIndexSQLConf.DROP_WITH_TABLE)) return
    indexesOf(spark, database, table, "DROP TABLE").foreach { e =>
      try {
        new DropAction(ActionContext.writing(spark, e.spec.name), ifExists = true).run()
        logInfo(s"bloomindex: dropped Bloom index '${e.spec.name}' with its table $database.$table")
      } catch {
        case NonFatal(err) =>
          logWarning(s"bloomindex: DROP TABLE $database.$table: Bloom index '${e.spec.name}' not dropped ($err); " +
            s"it is ORPHANED, DROP BLOOM INDEX ${e.spec.name} removes it")
      }
    }
  }
}
