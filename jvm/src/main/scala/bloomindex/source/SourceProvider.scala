package bloomindex.source

import bloomindex.errors.BloomIndexErrors
import bloomindex.log.{ColumnDecoding, ColumnSpec, Decoding, IndexSpec, LogEntry, SourceSpec}

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructField

/**
 * One kind of source (plain files, a table format): everything that differs between them, so
 * that nothing outside its folder under `source/` needs to know the format. The catalog, the
 * actions, the build and the pruning rules ask the provider of a source ([[SourceProviders]]).
 *
 * A provider answers for
 *  - resolving what a user names: `format.`path`` ([[readsPaths]], [[resolvePath]]), a catalog
 *    table or a DataFrame ([[resolveFrame]]);
 *  - the current snapshot of a source: a relation the build reads with, the files (path, size,
 *    modification time), the table's version or snapshot id ([[snapshot]], [[currentFiles]]);
 *  - how a scan of it is seen by the catalog ([[claims]], [[describe]], [[scanOf]]), with each
 *    column's physical identity and decoding context ([[decoding]]);
 *  - how the build reads the files ([[buildScope]], [[readable]], [[checkColumn]],
 *    [[footerFilters]]);
 *  - whether an index's source is a given scan's or named source ([[sameSource]]: the one matcher);
 *  - pruning this format's scans: a provider that prunes also implements
 *    `bloomindex.pruning.ScanPruner`, which the pruning rules ask;
 *  - the writes of its format that committed new files ([[writtenBy]], [[writtenBySink]]), for
 *    keeping indexes current.
 *
 * Providers are listed in `META-INF/services/bloomindex.source.SourceProvider` (one line each,
 * in the order they are asked: the plain-file provider, which takes any file relation, last).
 */
trait SourceProvider {

  /** The provider's name, as explain output and errors show it. */
  def name: String

  /** Whether an index whose source was recorded with `format` ([[SourceSpec.format]]) is over this provider's kind of source. */
  def records(format: String): Boolean

  /**
   * The provider's own classes its Spark jobs send through `spark.serializer` (task results,
   * broadcast values): `bloomindex.BloomIndexKryoRegistrator` registers them with Kryo.
   */
  def kryoClasses: Seq[Class[_]] = Nil

  // ---------------------------------------------------------------- resolving what a user names

  /** The `format` prefixes of `format.`path`` this provider reads. */
  def pathFormats: Set[String]

  /** Whether `format.`path`` names this provider's source even when a catalog table has that name. */
  def pathsBeforeTables: Boolean = false

  /** `format.`path``: the source and a DataFrame over it (`format` is one of [[pathFormats]]). */
  def resolvePath(spark: SparkSession, format: String, path: String): (SourceSpec, DataFrame)

  /**
   * The source `df` reads, if it is this provider's kind: `table` its catalog name when it has
   * one, `what` how errors name it, `named` whether the user named a table (not a DataFrame).
   */
  def resolveFrame(df: DataFrame, table: Option[String], what: String, named: Boolean): Option[SourceSpec]

  /** Why `df`, what a name that is not a catalog table reads, cannot be indexed (throws), if this provider knows. */
  def refuse(df: DataFrame, what: String): Unit = ()

  // ---------------------------------------------------------------- the current snapshot

  /** A fresh DataFrame over the source (new listing: files added since are seen). */
  def dataFrame(spark: SparkSession, s: SourceSpec): DataFrame

  /** The DataFrame a new query of `s` makes in this session (no cache dropped). */
  def queryFrame(spark: SparkSession, s: SourceSpec): DataFrame = dataFrame(spark, s)

  /**
   * The source's relation as a build reads it, its current files (each once), and the table's
   * version or snapshot id where it has one; `frame`: a DataFrame over the source just resolved.
   */
  def snapshot(spark: SparkSession, s: SourceSpec, frame: Option[DataFrame]): Snapshot

  /**
   * A fresh DataFrame over the source (new listing) that reads it with `schema` instead of
   * inferring one: after a write of this session whose schema (`schema`, the written columns)
   * covers every indexed column under its name at the index's type, an on-write refresh lists
   * the source with it ([[bloomindex.actions.RefreshAction]]). None where the provider does not
   * infer schemas from files or cannot take one (the refresh then uses [[dataFrame]]).
   */
  def writtenFrame(spark: SparkSession, s: SourceSpec, schema: org.apache.spark.sql.types.StructType): Option[DataFrame] = None

  /**
   * [[snapshot]] of `frame`, which [[dataFrame]] or [[writtenFrame]] made a moment ago: where its
   * listing is the current one already, it is not listed again.
   */
  def snapshotOfFresh(spark: SparkSession, s: SourceSpec, frame: DataFrame): Snapshot = snapshot(spark, s, Some(frame))

  /** The source's current files and version, as [[snapshot]] lists them (maybe more cheaply). */
  def currentFiles(spark: SparkSession, s: SourceSpec): (Seq[SourceFile], Option[Long]) = {
    val snap = snapshot(spark, s, None)
    (snap.files, snap.version)
  }

  /** The source's relation as a query would read it now (for a refresh's decoding check). */
  def currentRelation(spark: SparkSession, s: SourceSpec, frame: Option[DataFrame]): HadoopFsRelation =
    SourceResolver.relation(frame.getOrElse(dataFrame(spark, s)), s.display)

  /**
   * Whether the source still exists: its catalog table, or its folders (an index whose source is
   * gone is ORPHANED: nothing to refresh, DROP BLOOM INDEX removes it).
   */
  def exists(spark: SparkSession, s: SourceSpec): Boolean =
    s.table match {
      case Some(_) => Relocation.nameResolves(spark, s)
      case None => s.paths.exists { p =>
        val path = new org.apache.hadoop.fs.Path(p)
        scala.util.Try(path.getFileSystem(spark.sessionState.newHadoopConf()).exists(path)).getOrElse(true)
      }
    }

  /** Whether an incremental REFRESH may reuse a DataFrame it made for its checks to build (false: the build lists anew). */
  def refreshReusesFrame: Boolean = true

  // ---------------------------------------------------------------- scans

  /** Whether a logical leaf reads this provider's kind of source. */
  def claims(plan: LogicalPlan): Boolean

  /** The source a logical leaf reads (one this provider [[claims]]). */
  def describe(plan: LogicalPlan): Option[ScanSource]

  /** How the catalog describes a scan of `rel`, a relation over source `s` as [[snapshot]] made it. */
  def scanOf(spark: SparkSession, s: SourceSpec, rel: HadoopFsRelation): ScanSource

  /** How `scan` decodes `field` under `conf`: format, settings, reader options, physical identity. */
  def decoding(conf: SQLConf, scan: ScanSource, field: StructField): ColumnDecoding

  /**
   * Whether the format matches a file's columns to the table's by a physical identity that a
   * rename keeps (Iceberg's field ids, Delta column mapping's physical names and ids): an index
   * column then answers for the scan's column of the same identity whatever it is called now,
   * and a refresh builds that column ([[DecodingContext.renames]]).
   */
  def followsRenames: Boolean = false

  /**
   * Whether the scan's listing may be older than the files it names (a file index of plain
   * files keeps the listing it took; a table format lists a snapshot of immutable files).
   */
  def listingMayBeStale: Boolean

  /**
   * Whether an index over `index` answers for `target` (a scan, or a source a statement names):
   * the one matcher of sources, used by pruning, join filters, SHOW and DROP ... ON alike.
   */
  def sameSource(index: SourceSpec, target: SourceIdentity): Boolean

  /**
   * Whether [[sameSource]] matches `target` only as a read inside the index's source (a
   * partition's folder of an indexed folder read by path): queries and writes take the index
   * there; statements that name a source (DROP ... ON) and the advisor take an index's own only.
   */
  def readsInside(index: SourceSpec, target: SourceIdentity): Boolean = false

  // ---------------------------------------------------------------- the build

  /** Runs a build of `s`'s files under the session settings its format reads with. */
  def buildScope[T](spark: SparkSession, s: SourceSpec)(body: => T): T = body

  /**
   * The decoding context a build records: `decoding`, the source's as the build found it, given
   * `read`, the relation it read its files with ([[readable]]), and `base`, the context of the
   * version whose rows it carries (None: none carried).
   */
  def recordedDecoding(decoding: Decoding, read: HadoopFsRelation, base: Option[Decoding]): Decoding = decoding

  /** What a build of `files` reads, and the relation it reads them with (files it cannot read as the source does are left out). */
  def readable(spark: SparkSession, spec: IndexSpec, rel: HadoopFsRelation,
      files: Seq[SourceFile]): (HadoopFsRelation, Seq[SourceFile]) = (rel, files)

  /**
   * Why the scan's `column` (its exact name) may not be answered for by any index column, however
   * it was built (a value the format supplies that no data file holds); None where it may.
   */
  def unusable(scan: ScanSource, column: String): Option[String] = None

  /** Refuses an indexed column the build cannot read as the source does (`field`: as the build's relation has it). */
  def checkColumn(field: StructField, column: ColumnSpec, spec: IndexSpec): Unit = ()

  /** Whether the build may take a file's filters from its Parquet footer (the file is read as Parquet by name or field id). */
  def footerFilters(s: SourceSpec): Boolean

  // ---------------------------------------------------------------- writes

  /**
   * The source a committed write wrote, when `command` (an executed write command's plan) is
   * one of this provider's writes: what keeps indexes current asks it.
   */
  def writtenBy(command: LogicalPlan): Option[SourceIdentity] = None

  /**
   * [[writtenBy]] where telling the source needs the session that ran `command` (a procedure's
   * table argument named relative to its catalog and the current namespace, ...). What keeps
   * indexes current calls this one; by default it is [[writtenBy]].
   */
  def writtenBy(spark: SparkSession, command: LogicalPlan): Option[SourceIdentity] = writtenBy(command)

  /**
   * The source a Structured Streaming sink of this provider's format writes, from the sink's
   * description in a query's progress (`FileSink[<path>]`, ...): what keeps indexes current
   * after each micro-batch asks it.
   */
  def writtenBySink(description: String): Option[SourceIdentity] = None

  /**
   * [[writtenBySink]] where telling the source needs the session (a sink described by a
   * catalog table's name); what keeps indexes current calls this one, by default [[writtenBySink]].
   */
  def writtenBySink(spark: SparkSession, description: String): Option[SourceIdentity] = writtenBySink(description)

  // ---------------------------------------------------------------- the table's life

  /**
   * When `command` (a logical plan being planned: Spark's `RenameTable`) renames a table of this
   * provider's kind that no session catalog event reports (a table of a catalog of the
   * provider's own), the rename: the table's name before, and how to find its source after the
   * rename committed. What keeps indexes attached to their table asks it.
   */
  def renamedBy(spark: SparkSession, command: LogicalPlan): Option[TableRename] = None

  /**
   * Where the catalog table index `entry` (ACTIVE, over a table by name) recorded is now, for a
   * table renamed where no event of this session reports it (another engine or cluster): the
   * recorded name's table when it is still the recorded one ([[Relocation.Here]]), else the one
   * table found by the identity the index recorded (the table's UUID, its location, ...), else
   * none or several. Asked by SHOW, DESCRIBE and REFRESH of the index, and at query time when
   * [[mayBeRenamed]]; searches one namespace at most ([[Relocation.MaxTables]]). By default a
   * provider cannot follow a table: the name's table, or gone.
   */
  def relocate(spark: SparkSession, entry: LogEntry): Relocation =
    if (exists(spark, entry.spec.source)) Relocation.Here
    else Relocation.Gone(s"no table ${entry.spec.source.display}")

  /**
   * Whether `target`, a scan that index `index` does not match ([[sameSource]]), may be the
   * index's table renamed (then [[relocate]] is asked, and the index answers for the scan only
   * when it finds exactly that table): decided without any catalog call, as it is asked while
   * queries are planned. False by default.
   */
  def mayBeRenamed(index: SourceSpec, target: SourceIdentity): Boolean = false
}

/**
 * A table renamed: `oldTable` its name as a [[SourceSpec.table]] records it, `renamed` the
 * table's source under its new name (name and location), looked up once the rename committed
 * (None: it cannot be found as the same table).
 */
final case class TableRename(oldTable: String, renamed: () => Option[SourceSpec])

/** The relation a build reads a source's snapshot with, its files, and the table version they are of. */
final case class Snapshot(relation: HadoopFsRelation, files: Seq[SourceFile], version: Option[Long])

/**
 * Who a source is, as [[SourceProvider.sameSource]] compares them: its provider, its catalog
 * table name (if any) and its root folders ([[SourceProviders.normalizeRoot]]ed); `stored`: the
 * same roots with the store each lies on (scheme and authority: `s3a://bucket/t`,
 * [[SourceProviders.qualifiedRoot]]), empty where some root does not name its store (a path
 * recorded without it, as an older bloomindex did). Two sources are compared on their stores
 * wherever both name them ([[SourceProviders.comparableRoots]]): `s3a://prod/t` and
 * `s3a://staging/t` are two sources.
 */
final case class SourceIdentity(provider: String, table: Option[String], roots: Set[String], stored: Set[String] = Set.empty) {
  /** Its roots as one side of a comparison: with their stores where it names them, else the paths ([[SourceProviders.comparableRoots]]). */
  def comparable: Set[String] = if (stored.nonEmpty) stored else roots
}

object SourceIdentity {
  /** The identity of a source of `provider` named `table` (if any) over the root paths `paths`, as given. */
  def of(provider: String, table: Option[String], paths: Iterable[String]): SourceIdentity =
    SourceIdentity(provider, table, paths.map(SourceProviders.normalizeRoot).toSet, SourceProviders.qualifiedRoots(paths))
}

/**
 * The providers, loaded once from `META-INF/services/bloomindex.source.SourceProvider` with
 * this class's loader, in the order listed there. Nothing names a provider's class: a format's
 * own classes are touched only once a plan or a statement holds its source.
 */
object SourceProviders {

  lazy val all: Seq[SourceProvider] = {
    val loader = java.util.ServiceLoader.load(classOf[SourceProvider], classOf[SourceProvider].getClassLoader)
    val found = scala.jdk.CollectionConverters.IteratorHasAsScala(loader.iterator()).asScala.toSeq
    require(found.nonEmpty, "bloomindex: no source providers found (META-INF/services/bloomindex.source.SourceProvider)")
    found
  }

  /** The provider of an index's source (the last provider, plain files, takes any format not claimed). */
  def of(s: SourceSpec): SourceProvider = all.find(_.records(s.format)).getOrElse(all.last)

  /** The provider of a logical leaf's source, if any. */
  def owner(plan: LogicalPlan): Option[SourceProvider] = all.find(_.claims(plan))

  /** The source a logical leaf reads, if a provider knows it. */
  def describe(plan: LogicalPlan): Option[ScanSource] = owner(plan).flatMap(_.describe(plan))

  /** The provider that reads `format.`path``, if any. */
  def forPath(format: String): Option[SourceProvider] = all.find(_.pathFormats.contains(format))

  /** Every `format` of `format.`path`` some provider reads. */
  def pathFormats: Seq[String] = all.flatMap(_.pathFormats.toSeq.sorted)

  /** The root folder `p` as sources are compared by: its path, without scheme, authority or trailing slash. */
  def normalizeRoot(p: String): String = new org.apache.hadoop.fs.Path(p).toUri.getPath.stripSuffix("/")

  /**
   * The root folder `p` with its store, where `p` names it: `scheme://host/path`, no trailing
   * slash; a local folder is `file:///path`. The store is told coarsely, so that two spellings of
   * one store stay one: the scheme in lower case, S3's clients' schemes as one (`s3`, `s3a`,
   * `s3n`: `s3://b/t` is `s3a://b/t`), Azure's with and without TLS as one; the host in lower
   * case, without user or port (`hdfs://NN:8020/t` is `hdfs://nn/t`). None for a path without a
   * scheme, or one whose scheme names no host (`hdfs:///t`: the default file system's): the
   * store is not named.
   */
  def qualifiedRoot(p: String): Option[String] = {
    val u = new org.apache.hadoop.fs.Path(p).toUri
    Option(u.getScheme).map(_.toLowerCase(java.util.Locale.ROOT)).flatMap { scheme =>
      val path = u.getPath.stripSuffix("/")
      if (scheme == "file") Some("file://" + path)
      else {
        val authority = Option(u.getRawAuthority).getOrElse("")
        val hostPort = authority.substring(authority.lastIndexOf('@') + 1)
        val colon = hostPort.lastIndexOf(':')
        val host = (if (colon >= 0 && hostPort.substring(colon + 1).forall(_.isDigit)) hostPort.substring(0, colon) else hostPort)
          .toLowerCase(java.util.Locale.ROOT)
        val family = scheme match {
          case "s3a" | "s3n" => "s3"
          case "abfss" => "abfs"
          case "wasbs" => "wasb"
          case other => other
        }
        if (host.isEmpty) None else Some(s"$family://$host$path")
      }
    }
  }

  /** Every one of `paths` [[qualifiedRoot]]ed; empty where one of them names no store. */
  def qualifiedRoots(paths: Iterable[String]): Set[String] = {
    val q = paths.map(qualifiedRoot)
    if (q.forall(_.isDefined)) q.flatten.toSet else Set.empty
  }

  /**
   * The roots of `a` and `b` to compare: with their stores where both name them, else their
   * paths alone (an index or record of an older bloomindex, a sink named by a bare path).
   */
  def comparableRoots(a: SourceIdentity, b: SourceIdentity): (Set[String], Set[String]) =
    if (a.stored.nonEmpty && b.stored.nonEmpty) (a.stored, b.stored) else (a.roots, b.roots)

  /** Whether the root folders `a` and `b` are one: the same path, on the same store where both name theirs. */
  def sameRoot(a: String, b: String): Boolean = (qualifiedRoot(a), qualifiedRoot(b)) match {
    case (Some(x), Some(y)) => x == y
    case _ => normalizeRoot(a) == normalizeRoot(b)
  }

  /** Who the source `s` is (an index's, or one a statement names). */
  def identity(s: SourceSpec): SourceIdentity = SourceIdentity.of(of(s).name, s.table, s.paths)

  /** Whether an index over `index` answers for `target` ([[SourceProvider.sameSource]] of the index's provider). */
  def sameSource(index: SourceSpec, target: SourceIdentity): Boolean = of(index).sameSource(index, target)

  /** [[sameSource]] without the reads inside an index's source ([[SourceProvider.readsInside]]). */
  def ownSource(index: SourceSpec, target: SourceIdentity): Boolean =
    sameSource(index, target) && !of(index).readsInside(index, target)

  /** Whether `o`'s class or a superclass is named `className` (a format's classes recognised without loading them). */
  def isA(o: AnyRef, className: String): Boolean = {
    var c: Class[_] = if (o == null) null else o.getClass
    while (c != null) {
      if (c.getName == className) return true
      c = c.getSuperclass
    }
    false
  }

  /** Whether `index` is over exactly the folders of `target`, a source of provider `provider` (a table format's table is its folder). */
  def sameFolders(provider: SourceProvider, index: SourceSpec, target: SourceIdentity): Boolean =
    target.provider == provider.name && sameRoots(index, target)

  /** Whether `index`'s folders are exactly `target`'s roots, on the same stores where both name theirs ([[comparableRoots]]). */
  def sameRoots(index: SourceSpec, target: SourceIdentity): Boolean = {
    val (mine, theirs) = comparableRoots(identity(index), target)
    mine == theirs
  }

  /** Refuses `path` when it does not exist (`BLOOM_INDEX_PATH_NOT_FOUND`); returns its file system. */
  def requireExists(spark: SparkSession, path: org.apache.hadoop.fs.Path): org.apache.hadoop.fs.FileSystem = {
    val fs = path.getFileSystem(spark.sessionState.newHadoopConf())
    if (!fs.exists(path)) throw BloomIndexErrors.pathNotFound(path.toString)
    fs
  }

  /** Refuses a source no provider can read (for errors that need the list). */
  def unsupportedFormat(format: String): Nothing = throw BloomIndexErrors.unsupportedFormat(format, pathFormats)
}
