package bloomindex.crypto

import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import bloomindex.errors.BloomIndexErrors
import bloomindex.log.IndexSpec
import bloomindex.source.{FileSurvey, SourceFile}

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.crypto.{EncryptionPropertiesFactory, ParquetCryptoRuntimeException}
import org.apache.parquet.crypto.keytools.PropertiesDrivenCryptoFactory
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils

/**
 * Indexes of columns encrypted with Parquet modular encryption. A filter says which values a
 * file holds, so the index of an encrypted source column is written encrypted with that
 * column's master key: each index Parquet file then holds one column's rows (writes
 * partitioned by `column`), and [[IndexCryptoFactory]] encrypts their `filter`, `ndv` and
 * `null_count` fields (and the global filters' `filter` and `ndv`) with the source column's
 * key and the footer with the session's footer key. Reading it back needs the same session
 * settings as reading the source; without them the index is skipped, with a warning.
 *
 * A source column counts as encrypted when the session's `parquet.encryption.column.keys`
 * (or `parquet.encryption.uniform.key`) names it, when a sample of the source's Parquet
 * footers shows encrypted chunks of it (their key metadata gives the master key id), when the
 * version the build starts from encrypted it, or when the footer of any file the build reads
 * shows an encrypted chunk of it ([[unplanned]]: checked before anything is written, so a
 * file encrypted among plaintext ones the sample missed cannot leave its filter unencrypted).
 * With encrypted columns and no crypto factory in the session, the build is refused unless
 * the index says `allow_unencrypted_index = true`.
 *
 * The plan of a version is written next to its data (`_encryption`, hidden from readers).
 */
object IndexEncryption extends Logging {

  val AllowOption = "allow_unencrypted_index"
  val FactoryClass: String = EncryptionPropertiesFactory.CRYPTO_FACTORY_CLASS_PROPERTY_NAME
  val ColumnKeys: String = PropertiesDrivenCryptoFactory.COLUMN_KEYS_PROPERTY_NAME
  val FooterKey: String = PropertiesDrivenCryptoFactory.FOOTER_KEY_PROPERTY_NAME
  val UniformKey: String = PropertiesDrivenCryptoFactory.UNIFORM_KEY_PROPERTY_NAME
  private val MarkerName = "_encryption"
  /** Source footers read to find encrypted columns (evenly spread over the files). */
  private val FooterSample = 16

  /** An encrypted index version: indexed column -> master key id, the footer key, the session's factory. */
  case class Plan(columnKeys: Map[String, String], footerKey: String, factory: String)

  /** Indexed column -> its master key id when known, for the columns the source encrypts. */
  def sourceEncryption(conf: Configuration, spec: IndexSpec, files: Seq[SourceFile]): Map[String, Option[String]] = {
    // By source column; each of its index columns (an equality and text filters) takes its key.
    val names = sourceNames(spec)
    def indexed(c: String): Option[String] = names.find(_.equalsIgnoreCase(c.trim.takeWhile(_ != '.')))
    val uniform = Option(conf.getTrimmed(UniformKey)).filter(_.nonEmpty)
    val fromConf: Map[String, Option[String]] = uniform match {
      case Some(k) => names.map(_ -> Some(k)).toMap
      case None =>
        Option(conf.getTrimmed(ColumnKeys)).toSeq.flatMap(_.split(";")).map(_.trim).filter(_.contains(":")).flatMap { e =>
          val Array(key, cols) = e.split(":", 2)
          cols.split(",").flatMap(indexed).map(_ -> Option(key.trim))
        }.toMap
    }
    val fromFooters = if (spec.source.format != "parquet") Map.empty[String, Option[String]]
      else footerEncryption(conf, names, files)
    // A key named by the files wins: that is the key their data is encrypted with.
    val bySource = (fromConf.keySet ++ fromFooters.keySet).map(c => c -> fromFooters.get(c).flatten.orElse(fromConf.get(c).flatten)).toMap
    byIndexColumn(spec, bySource)
  }

  private def sourceNames(spec: IndexSpec): Seq[String] = spec.columns.map(_.sourceName).distinct

  /** Source column -> key, as index column -> key (each index column of a source column takes its key). */
  private def byIndexColumn(spec: IndexSpec, bySource: Map[String, Option[String]]): Map[String, Option[String]] =
    spec.columns.flatMap(c => bySource.get(c.sourceName).map(c.name -> _)).toMap

  private def footerEncryption(conf: Configuration, names: Seq[String], files: Seq[SourceFile]): Map[String, Option[String]] = {
    val step = math.max(1, files.size / FooterSample)
    val sample = files.indices.by(step).take(FooterSample).map(files(_))
    byName(sample.flatMap(f => encryptedIn(conf, names, f.path)))
  }

  private def byName(found: Seq[(String, Option[String])]): Map[String, Option[String]] =
    found.groupBy(_._1).map { case (c, ks) => c -> ks.flatMap(_._2).headOption }

  /** The columns of `names` that the Parquet file at `path` encrypts, with their master key ids when known. */
  private def encryptedIn(conf: Configuration, names: Seq[String], file: String): Seq[(String, Option[String])] = {
    val path = new Path(file)
    try {
      val reader = ParquetFileReader.open(HadoopInputFile.fromPath(path, conf), HadoopReadOptions.builder(conf, path).build())
      try {
        reader.getRowGroups.asScala.toSeq.flatMap(_.getColumns.asScala).filter(_.isEncrypted).flatMap { c =>
          names.find(_.equalsIgnoreCase(c.getPath.toArray()(0))).map(_ -> masterKeyId(c))
        }
      } finally reader.close()
    } catch {
      // An encrypted footer this session cannot decrypt: any column may be encrypted.
      case e: ParquetCryptoRuntimeException =>
        logWarning(s"Parquet footer of $path is encrypted and cannot be read here: ${e.getMessage}")
        names.map(_ -> None)
      case NonFatal(_) => Nil // unreadable for another reason: the data pass reports it
    }
  }

  /**
   * The index columns that a footer of `files` (those a build is about to read) shows
   * encrypted while `plan` leaves them unencrypted, with their master key ids when known
   * (Parquet sources; every file, not a sample), read by [[FileSurvey]].
   */
  def unplanned(spark: SparkSession, spec: IndexSpec, files: Seq[SourceFile], plan: Option[Plan]): Map[String, Option[String]] = {
    // Without a crypto factory a build cannot read an encrypted column at all (it fails), so
    // nothing of one can be written in the clear: no footers to read.
    if (spec.source.format != "parquet" || files.isEmpty) return Map.empty
    val conf = spark.sessionState.newHadoopConfWithOptions(spec.source.options)
    if (Option(conf.getTrimmed(FactoryClass)).forall(_.isEmpty)) return Map.empty
    val names = sourceNames(spec).filter(n => spec.columns.exists(c => c.sourceName == n && !plan.exists(_.columnKeys.contains(c.name))))
    if (names.isEmpty) return Map.empty
    val found = FileSurvey(spark, conf, files.map(_.path), "encrypted columns in the footers")(
      (p, c) => encryptedIn(c, names, p)).flatten.distinct
    byIndexColumn(spec, byName(found)).filter { case (c, _) => !plan.exists(_.columnKeys.contains(c)) }
  }

  private val json = new ObjectMapper()

  /** The master key id in a column chunk's key metadata (PropertiesDrivenCryptoFactory's JSON), if there. */
  private def masterKeyId(c: ColumnChunkMetaData): Option[String] = try {
    val f = c.getClass.getDeclaredField("columnKeyMetadata")
    f.setAccessible(true)
    Option(f.get(c).asInstanceOf[Array[Byte]]).flatMap { b =>
      Option(json.readTree(new String(b, StandardCharsets.UTF_8)).get("masterKeyID")).map(_.asText)
    }
  } catch { case NonFatal(_) => None }

  /**
   * Decides how the data of a version written to `dir` is encrypted and records it there.
   * Refuses (an AnalysisException) when source columns are encrypted and the session cannot
   * encrypt the index, unless the index allows an unencrypted index.
   */
  def prepare(spark: SparkSession, spec: IndexSpec, files: Seq[SourceFile], dir: String,
      known: Map[String, Option[String]] = Map.empty): Option[Plan] = {
    val conf = spark.sessionState.newHadoopConfWithOptions(spec.source.options)
    val sampled = sourceEncryption(conf, spec, files)
    // Columns known encrypted otherwise (the base version's plan, footers of the files to read):
    // a key found in the files wins.
    val encrypted = sampled ++ known.collect { case (c, k) if spec.columns.exists(_.name == c) =>
      c -> sampled.get(c).flatten.orElse(k) }
    if (encrypted.isEmpty) return None
    val factory = Option(conf.getTrimmed(FactoryClass)).filter(_.nonEmpty)
    val footer = Option(conf.getTrimmed(FooterKey)).filter(_.nonEmpty)
    val keys = encrypted.map { case (c, k) => c -> k.orElse(footer) }
    val cols = encrypted.keys.toSeq.sorted.mkString(", ")
    val problem =
      if (factory.isEmpty) Some(s"this session has no Parquet crypto factory ($FactoryClass) to encrypt the index with")
      else if (keys.exists(_._2.isEmpty)) Some(s"the master key of ${keys.filter(_._2.isEmpty).keys.toSeq.sorted.mkString(", ")} " +
        s"is unknown (not in $ColumnKeys, not in the files' key metadata, and no $FooterKey)")
      else None
    problem match {
      case Some(why) if spec.allowUnencrypted =>
        logWarning(s"Bloom index '${spec.name}': columns $cols are encrypted in the source but the index is written " +
          s"unencrypted ($AllowOption = true): $why")
        None
      case Some(why) =>
        throw BloomIndexErrors.encryptedColumns(spec.name, cols, spec.source.display, why, AllowOption)
      case None =>
        val plan = Plan(keys.map { case (c, k) => c -> k.get }, footer.getOrElse(keys.toSeq.minBy(_._1)._2.get), factory.get)
        writePlan(conf, dir, plan)
        logInfo(s"Bloom index '${spec.name}': encrypting the index data of ${plan.columnKeys.toSeq.sorted.map { case (c, k) => s"$c (key $k)" }.mkString(", ")}")
        Some(plan)
    }
  }

  /** Removes the plan recorded in `dir` (before [[prepare]] decides again, nothing written there yet). */
  def dropPlan(conf: Configuration, dir: String): Unit = {
    val p = new Path(dir, MarkerName)
    p.getFileSystem(conf).delete(p, false)
  }

  private def writePlan(conf: Configuration, dir: String, plan: Plan): Unit = {
    val p = new Path(dir, MarkerName)
    val props = new java.util.Properties()
    props.setProperty("footer.key", plan.footerKey)
    props.setProperty("factory", plan.factory)
    plan.columnKeys.foreach { case (c, k) => props.setProperty(s"column.$c", k) }
    val out = p.getFileSystem(conf).create(p, false)
    try props.store(out, "bloomindex: how this index data is encrypted") finally out.close()
  }

  /** The plan recorded in a data folder, if its data is encrypted. */
  def plan(conf: Configuration, dir: String): Option[Plan] = {
    val p = new Path(dir, MarkerName)
    val fs = p.getFileSystem(conf)
    if (!fs.exists(p)) return None
    val props = new java.util.Properties()
    val in = fs.open(p)
    try props.load(in) finally in.close()
    val cols = props.stringPropertyNames().asScala.filter(_.startsWith("column.")).map(k => k.stripPrefix("column.") -> props.getProperty(k)).toMap
    Some(Plan(cols, props.getProperty("footer.key"), props.getProperty("factory")))
  }

  /** Options of an index write (they go to the write's Hadoop conf) under `plan`. */
  def writerOptions(plan: Plan): Map[String, String] = Map(
    FactoryClass -> classOf[IndexCryptoFactory].getName,
    BloomIndexSQLConf.ENCRYPTION_FACTORY_CLASS.key -> plan.factory,
    BloomIndexSQLConf.ENCRYPTION_FOOTER_KEY.key -> plan.footerKey,
    BloomIndexSQLConf.ENCRYPTION_COLUMN_KEYS.key -> IndexCryptoFactory.encodeKeys(plan.columnKeys))

  /**
   * For writers of index files other than Spark's (parquet-java in the build's tasks): the
   * folder of one column's rows under a data folder (the file itself leaves `column` out), ...
   */
  def columnFolder(dir: Path, column: String): Path =
    new Path(dir, "column=" + ExternalCatalogUtils.escapePathName(column))

  /** ... and the Hadoop conf under which a `ParquetWriter` encrypts the files there as planned. */
  def writerConf(conf: Configuration, plan: Plan): Configuration = {
    val c = new Configuration(conf)
    writerOptions(plan).foreach { case (k, v) => c.set(k, v) }
    c
  }

  /**
   * What decides whether a session may read encrypted index data: its Parquet crypto settings.
   * Loaded encrypted indexes are shared only between sessions with the same settings.
   */
  def keyAccess(conf: Configuration): String =
    conf.iterator().asScala.map(e => e.getKey -> e.getValue)
      .filter { case (k, _) => k.startsWith("parquet.crypto.") || k.startsWith("parquet.encryption.") }
      .toSeq.sorted.map { case (k, v) => s"$k=$v" }.mkString("\n").hashCode.toHexString

  /**
   * Whether this session can decrypt the data in `dir` under `plan`: the first row group of one
   * file of an encrypted column, read with the session's settings. The index's reader skips files it
   * cannot read (damage), so a session without the keys would otherwise only see rows missing.
   */
  def probe(conf: Configuration, dir: Path, plan: Plan): Option[Throwable] = try {
    val fs = dir.getFileSystem(conf)
    plan.columnKeys.keys.toSeq.sorted.iterator.map(c => columnFolder(dir, c)).filter(fs.exists)
      .flatMap(d => fs.listStatus(d).iterator.map(_.getPath).filter(_.getName.endsWith(".parquet")))
      .take(1).foreach { f =>
        // A plaintext footer opens without keys; its encrypted chunks do not.
        val reader = ParquetFileReader.open(HadoopInputFile.fromPath(f, conf), HadoopReadOptions.builder(conf, f).build())
        try reader.readNextRowGroup() finally reader.close()
      }
    None
  } catch { case NonFatal(e) => Some(e) }

  /**
   * Explains a failure to read encrypted index data: this session's keys, or (`forNow`: the
   * store's error or timeout, [[bloomindex.layout.IndexLayout.passing]]) the store.
   */
  def unreadable(name: String, plan: Plan, e: Throwable, forNow: Boolean = false): Exception = {
    val root = bloomindex.errors.Causes.root(e)
    if (forNow) new IllegalStateException(s"the encrypted data of Bloom index '$name' could not be read for now: the " +
      s"store failed the read (${root.getClass.getSimpleName}: ${root.getMessage}), not the keys. Queries run without " +
      "this index until a read succeeds; the next query tries again.", e)
    else new IllegalStateException(s"the data of Bloom index '$name' is encrypted (Parquet modular encryption; columns " +
      s"${plan.columnKeys.keys.toSeq.sorted.mkString(", ")}) and this session cannot decrypt it " +
      s"(${root.getClass.getSimpleName}: ${root.getMessage}); configure $FactoryClass and the KMS as for reading " +
      s"the source files. Queries run without this index.", e)
  }
}
