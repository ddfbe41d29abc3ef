package bloomindex.actions

import scala.util.control.NonFatal

import bloomindex.log.IndexRoot

import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.catalyst.catalog.{DropTableEvent, ExternalCatalogEvent, ExternalCatalogEventListener}

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
      case _ =>
    }
  }

  /** Drops the indexes whose source is table `database`.`table` of the session catalog; never fails the DROP TABLE. */
  def dropIndexesOf(spark: SparkSession, database: String, table: String): Unit = {
    if (!spark.sessionState.conf.getConf(BloomIndexSQLConf.DROP_WITH_TABLE)) return
    val names = Set(s"$database.$table", s"spark_catalog.$database.$table")
    val indexes = try new IndexRoot(spark).list() catch {
      case NonFatal(e) =>
        logWarning(s"bloomindex: DROP TABLE $database.$table: could not list Bloom indexes to drop with it: $e")
        Nil
    }
    indexes.filter(_.spec.source.table.exists(t => names.exists(_.equalsIgnoreCase(t)))).foreach { e =>
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
