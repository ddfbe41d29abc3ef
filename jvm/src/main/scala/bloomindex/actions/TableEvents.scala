package bloomindex.actions

import java.util.UUID

import scala.util.control.NonFatal

import bloomindex.errors.ConcurrentBloomIndexUpdateException
import bloomindex.log.{IndexRoot, IndexState, SourceSpec}
import bloomindex.source.{SourceProviders, TableRename}

import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.catalog.{DropTableEvent, ExternalCatalogEvent, ExternalCatalogEventListener, RenameTableEvent}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, RenameTable}
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy, UnaryExecNode}
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2Strategy, V2CommandExec}

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
      follow(spark, e.spec.name, s"$database.$table", s"$database.$newName") { old =>
        val qualified = old.table.exists(_.toLowerCase(java.util.Locale.ROOT).startsWith("spark_catalog."))
        old.copy(
          table = Some((if (qualified) "spark_catalog." else "") + s"$database.$newName"),
          paths = renamed.flatMap(_.storage.locationUri).map(u => Seq(new org.apache.hadoop.fs.Path(u).toString)).getOrElse(old.paths))
      }
    }
  }

  /**
   * Commits a log entry of index `name` whose source is `source(old source)`, its data as it
   * was, when its newest entry is ACTIVE (a RENAME TABLE entry: one commit, so the index names
   * either the old table or the new one). Where a REFRESH or OPTIMIZE is in progress, or stopped
   * before its commit (its REFRESHING entry newest), the entry is its last ACTIVE one's: the
   * command, if still running, then loses its commit (another command took over, as a REFRESH
   * taking over would) instead of committing the old table's name after the rename, which would
   * leave the index ORPHANED. A CREATE in progress has nothing to follow yet: a warning. Never
   * throws: a failure leaves a warning.
   */
  private def follow(spark: SparkSession, name: String, from: String, to: String)(source: SourceSpec => SourceSpec): Unit =
    try {
      // A command committing between the read of the newest entry and this commit: once more on
      // the entry it committed (its REFRESH's ACTIVE one, say).
      try followOnce(spark, name, from, to)(source) catch {
        case _: ConcurrentBloomIndexUpdateException => followOnce(spark, name, from, to)(source)
      }
    } catch {
      case NonFatal(err) =>
        logWarning(s"bloomindex: RENAME TABLE $from: Bloom index '$name' still names the old table ($err); " +
          s"DROP BLOOM INDEX $name and create it again on $to")
    }

  private def followOnce(spark: SparkSession, name: String, from: String, to: String)(source: SourceSpec => SourceSpec): Unit = {
      val log = ActionContext.writing(spark, name).log
      log.head().flatMap(h => h.entry.map(h.version -> _)).foreach { case (version, head) =>
        val stable = head.state match {
          case IndexState.Active => Some(head)
          case IndexState.Refreshing => log.lastActive()
          case _ => None
        }
        stable match {
          case Some(entry) =>
            log.commit(entry.copy(version = version + 1, state = IndexState.Active, operation = "RENAME TABLE",
              operationId = UUID.randomUUID().toString, timestamp = System.currentTimeMillis(),
              spec = entry.spec.copy(source = source(entry.spec.source))))
            logInfo(s"bloomindex: Bloom index '$name' follows $from renamed to $to")
          case None if head.state != IndexState.Deleted =>
            logWarning(s"bloomindex: RENAME TABLE $from: Bloom index '$name' is in ${head.operation} (log version $version), " +
              s"with no ACTIVE version to follow $to with; DROP BLOOM INDEX $name and create it again on $to")
          case None =>
        }
      }
  }

  /**
   * A rename no session catalog event reports ([[SourceProvider.renamedBy]]: an Iceberg table's),
   * once it committed: each index over the table by its old name names the table under its new
   * name and location. An index over the table's folder (`iceberg.`path``) names no table and
   * answers for the table's folder as before.
   */
  def followRename(spark: SparkSession, rename: TableRename): Unit = {
    val indexes = try new IndexRoot(spark).list() catch {
      case NonFatal(e) =>
        logWarning(s"bloomindex: RENAME TABLE ${rename.oldTable}: could not list its Bloom indexes: $e")
        Nil
    }
    val over = indexes.filter(_.spec.source.table.exists(_.equalsIgnoreCase(rename.oldTable)))
    if (over.isEmpty) return
    val renamed = try rename.renamed() catch { case NonFatal(_) => None }
    renamed match {
      case None =>
        logWarning(s"bloomindex: RENAME TABLE ${rename.oldTable}: the renamed table was not found; its Bloom indexes " +
          s"(${over.map(_.spec.name).mkString(", ")}) still name the old table")
      case Some(now) =>
        over.foreach { e =>
          follow(spark, e.spec.name, rename.oldTable, now.table.getOrElse(now.display)) { old =>
            old.copy(table = now.table, paths = now.paths)
          }
        }
    }
  }

  /**
   * Plans Spark's V2 `RenameTable` of a table whose provider reports the rename
   * ([[SourceProvider.renamedBy]]) as Spark plans it, followed by [[followRename]]: in the
   * thread that runs the ALTER TABLE, right after the catalog renamed the table.
   */
  final class Planning(spark: SparkSession) extends SparkStrategy {
    override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
      case r: RenameTable =>
        SourceProviders.all.iterator.flatMap(_.renamedBy(spark, r)).take(1).toSeq.headOption match {
          case Some(rename) =>
            new DataSourceV2Strategy(spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession]).apply(r)
              .map(exec => RenameThenFollow(exec, rename))
          case None => Nil
        }
      case _ => Nil
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

/** Spark's rename of a table (`rename`, as Spark planned it), then its indexes follow it ([[TableEvents.followRename]]). */
case class RenameThenFollow(child: SparkPlan, rename: TableRename) extends V2CommandExec with UnaryExecNode {
  override def output: Seq[Attribute] = child.output

  override protected def run(): Seq[InternalRow] = {
    val rows = child.executeCollect().toSeq
    TableEvents.followRename(session, rename)
    rows
  }

  override protected def withNewChildInternal(newChild: SparkPlan): RenameThenFollow = copy(child = newChild)
}
