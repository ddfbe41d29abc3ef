package bloomindex.catalog

import java.lang.reflect.Method

import scala.util.control.NonFatal

import org.apache.hadoop.fs.{FileSystem, Path}

/**
 * The current size and time of known objects on S3, listed with many requests at once.
 *
 * Hadoop's `listStatus` of a folder of 100,000 objects is 100 ListObjectsV2 requests one after
 * the other (a page names the key to continue after), a round of the store's latency each. When
 * the keys wanted are known, as they are when a listing is checked ([[FreshFiles]]), the pages
 * need not wait for each other: the sorted keys are cut into runs of [[PageKeys]], and each run
 * is listed from the key before it (ListObjectsV2's `start-after`) up to its own last key,
 * many runs at once ([[runs]], [[Lister.statuses]]). A run of a folder holding only the wanted keys takes
 * one request; objects between the wanted ones (new files, `_SUCCESS`, a subfolder's objects)
 * make a run take more, and are listed once, by the run whose keys surround them.
 *
 * The requests go through S3A's own S3 client (`S3AFileSystem.getS3AInternals.getAmazonS3Client`,
 * AWS SDK v2), with S3A's credentials, endpoint, region, retries and connection pool; reached by
 * reflection, as the SDK is not on bloomindex's class path where hadoop-aws is not. The statuses
 * are those S3A's listing gives (the object's size and its time in milliseconds). Where the
 * listing cannot be this one, [[lister]] gives None and the caller lists as Hadoop does: S3A
 * without that method, a store listed with ListObjects v1 (`fs.s3a.list.version` = 1),
 * client-side encryption (S3A corrects listed sizes), requester-pays buckets and access points
 * (S3A adds to each request), and S3 Express directory buckets (their listings are not in key
 * order). A run that fails (a request refused, the SDK changed) fails the whole listing, and
 * the caller falls back to Hadoop's.
 */
private[catalog] object S3Listing {

  /** Keys wanted per run: S3's most keys a page, so a run of a folder holding only them is one request. */
  val PageKeys = 1000

  /** The current size and modification time (ms) of an object. */
  final case class Now(size: Long, modified: Long)

  /** Keys in S3's order: by their UTF-8 bytes, which is by code point (not `String.compareTo`'s UTF-16 units). */
  val KeyOrder: Ordering[String] = new Ordering[String] {
    def compare(a: String, b: String): Int = {
      val n = math.min(a.length, b.length)
      var i = 0
      while (i < n) {
        val x = a.charAt(i)
        val y = b.charAt(i)
        if (x != y) {
          // Only where a surrogate meets a char above it do the two orders differ.
          return if (Character.isSurrogate(x) || Character.isSurrogate(y)) {
            Integer.compare(a.codePointAt(i), b.codePointAt(i))
          } else Character.compare(x, y)
        }
        i += 1
      }
      Integer.compare(a.length, b.length)
    }
  }

  /**
   * The objects under `prefix` after `after` (null: from the first) up to and with `last`: one
   * run's listing; `delimited`: those directly under `prefix` only (a subfolder's objects are
   * not listed, S3 names the subfolder once).
   */
  final case class Run(prefix: String, after: String, last: String, delimited: Boolean)

  /** `keys` in [[KeyOrder]], each once. */
  def sortedDistinct(keys: Seq[String]): IndexedSeq[String] = {
    val sorted = keys.toArray
    java.util.Arrays.sort(sorted, KeyOrder)
    var n = 0
    var i = 0
    while (i < sorted.length) {
      if (n == 0 || sorted(i) != sorted(n - 1)) { sorted(n) = sorted(i); n += 1 }
      i += 1
    }
    scala.collection.immutable.ArraySeq.unsafeWrapArray(java.util.Arrays.copyOf(sorted, n))
  }

  /** The folder part of `key`: up to and with its last '/' ("" for a key at the bucket's root). */
  def folderOf(key: String): String = key.substring(0, key.lastIndexOf('/') + 1)

  /**
   * The runs that list `keys` (distinct, sorted in [[KeyOrder]]), `perRun` keys a run. By folder
   * (`byFolder`): each folder's keys (a folder's keys are together in that order) under the
   * folder's own prefix, so no other folder's objects are listed. Else all under `prefix`, from
   * the first key's folder: the objects between wanted folders are listed too, in return for
   * runs of `perRun` keys however few each folder has. By folder the runs list only the objects
   * directly in it (ListObjectsV2's delimiter '/'); over the common folder, all below it.
   */
  def runs(keys: IndexedSeq[String], prefix: String, byFolder: Boolean, perRun: Int): IndexedSeq[Run] = {
    require(perRun > 0, "perRun must be positive")
    val out = IndexedSeq.newBuilder[Run]
    def group(from: Int, until: Int, groupPrefix: String, firstAfter: String, delimited: Boolean): Unit = {
      var r = from
      while (r < until) {
        val end = math.min(until, r + perRun)
        out += Run(groupPrefix, if (r == from) firstAfter else keys(r - 1), keys(end - 1), delimited)
        r = end
      }
    }
    if (keys.nonEmpty) {
      if (byFolder) {
        var from = 0
        while (from < keys.size) {
          val folder = folderOf(keys(from))
          var until = from + 1
          while (until < keys.size && folderOf(keys(until)) == folder) until += 1
          group(from, until, folder, null, delimited = true)
          from = until
        }
      } else {
        val first = folderOf(keys(0))
        group(0, keys.size, prefix, if (first.length > prefix.length) first else null, delimited = false)
      }
    }
    out.result()
  }

  /**
   * The runs that list `keys` (distinct, sorted in [[KeyOrder]], at least one): by folder where
   * they lie in at most `folderLimit` folders, else over their common folder ([[runs]]). The
   * folders are counted from the keys (a folder's keys lie together), the common folder is the
   * first and last keys' common prefix up to its last '/'.
   */
  def runsFor(keys: IndexedSeq[String], folderLimit: Int, perRun: Int): IndexedSeq[Run] = {
    var folders = 0
    var previous: String = null
    var i = 0
    while (i < keys.size && folders <= folderLimit) {
      val folder = folderOf(keys(i))
      if (folder != previous) { folders += 1; previous = folder }
      i += 1
    }
    val (a, b) = (keys.head, keys.last)
    var n = 0
    while (n < a.length && n < b.length && a.charAt(n) == b.charAt(n)) n += 1
    runs(keys, a.substring(0, a.lastIndexOf('/', n - 1) + 1), byFolder = folders <= folderLimit, perRun)
  }

  /** Lists through one S3A file system's client; see [[lister]]. */
  final class Lister private[S3Listing] (client: AnyRef, bucket: String, sdk: Sdk) {

    /**
     * The current status of every object `runs` cover (the keys they were made of among them;
     * a key gone from storage is absent), `requests` runs at once.
     */
    def statuses(runs: IndexedSeq[Run], requests: Int): java.util.HashMap[String, Now] = {
      val found = Array.fill(runs.size)(new java.util.ArrayList[(String, Now)]())
      bloomindex.layout.IndexStore.inParallel(requests, runs.indices.map { r => () =>
        run(runs(r), found(r))
      })
      val out = new java.util.HashMap[String, Now](found.map(_.size).sum * 4 / 3 + 1)
      found.foreach(_.forEach(e => out.put(e._1, e._2)))
      out
    }

    /** The objects of `run`, page by page. */
    private def run(run: Run, into: java.util.ArrayList[(String, Now)]): Unit = {
      val last = run.last
      var token: String = null
      var done = false
      while (!done) {
        var b = sdk.builder.invoke(null)
        b = sdk.bucket.invoke(b, bucket)
        b = sdk.prefix.invoke(b, run.prefix)
        if (run.delimited) b = sdk.delimiter.invoke(b, "/")
        b = sdk.maxKeys.invoke(b, Integer.valueOf(PageKeys))
        if (token != null) b = sdk.continuationToken.invoke(b, token)
        else if (run.after != null) b = sdk.startAfter.invoke(b, run.after)
        val response = sdk.list.invoke(client, sdk.build.invoke(b))
        val it = sdk.contents.invoke(response).asInstanceOf[java.util.List[AnyRef]].iterator()
        while (!done && it.hasNext) {
          val o = it.next()
          val key = sdk.key.invoke(o).asInstanceOf[String]
          val order = KeyOrder.compare(key, last)
          if (order > 0) done = true
          else {
            val size = sdk.size.invoke(o).asInstanceOf[java.lang.Long]
            val time = sdk.lastModified.invoke(o).asInstanceOf[java.time.Instant]
            if (size != null && time != null) into.add(key -> Now(size.longValue, time.toEpochMilli))
            if (order == 0) done = true
          }
        }
        if (!done) {
          token = if (java.lang.Boolean.TRUE == sdk.truncated.invoke(response)) sdk.next.invoke(response).asInstanceOf[String] else null
          if (token == null) done = true
        }
      }
    }
  }

  /** The SDK's classes and methods, from S3A's class loader. */
  private[S3Listing] final class Sdk(loader: ClassLoader) {
    private def cls(name: String): Class[_] = Class.forName(name, false, loader)
    private val model = "software.amazon.awssdk.services.s3.model."
    private val request = cls(model + "ListObjectsV2Request")
    private val requestBuilder = cls(model + "ListObjectsV2Request$Builder")
    private val response = cls(model + "ListObjectsV2Response")
    private val s3Object = cls(model + "S3Object")
    val builder: Method = request.getMethod("builder")
    val bucket: Method = requestBuilder.getMethod("bucket", classOf[String])
    val prefix: Method = requestBuilder.getMethod("prefix", classOf[String])
    val startAfter: Method = requestBuilder.getMethod("startAfter", classOf[String])
    val delimiter: Method = requestBuilder.getMethod("delimiter", classOf[String])
    val continuationToken: Method = requestBuilder.getMethod("continuationToken", classOf[String])
    val maxKeys: Method = requestBuilder.getMethod("maxKeys", classOf[Integer])
    val build: Method = requestBuilder.getMethod("build")
    val list: Method = cls("software.amazon.awssdk.services.s3.S3Client").getMethod("listObjectsV2", request)
    val contents: Method = response.getMethod("contents")
    val truncated: Method = response.getMethod("isTruncated")
    val next: Method = response.getMethod("nextContinuationToken")
    val key: Method = s3Object.getMethod("key")
    val size: Method = s3Object.getMethod("size")
    val lastModified: Method = s3Object.getMethod("lastModified")
  }

  /** S3A settings under which its listing is not a plain ListObjectsV2 of the bucket: see the object's doc. */
  private def plainListing(fs: FileSystem, bucket: String): Boolean = {
    val conf = fs.getConf // S3A's own: the bucket's options (fs.s3a.bucket.<b>.*) applied
    def set(key: String): Boolean = Option(conf.getTrimmed(key)).exists(_.nonEmpty)
    def encryption(key: String): String = Option(conf.getTrimmed(key)).getOrElse("").toUpperCase(java.util.Locale.ROOT)
    conf.getInt("fs.s3a.list.version", 2) == 2 &&
      !encryption("fs.s3a.encryption.algorithm").startsWith("CSE") &&
      !encryption("fs.s3a.server-side-encryption-algorithm").startsWith("CSE") &&
      !conf.getBoolean("fs.s3a.requester.pays.enabled", false) &&
      !set("fs.s3a.accesspoint.arn") &&
      !bucket.endsWith("--x-s3")
  }

  /** A [[Lister]] for `fs` where it is S3A and lists as the object's doc says; None otherwise. */
  def lister(fs: FileSystem): Option[Lister] =
    if (fs.getUri.getScheme != "s3a") None
    else try {
      val loader = fs.getClass.getClassLoader
      val internals = Class.forName("org.apache.hadoop.fs.s3a.S3AInternals", false, loader)
      val bucket = fs.getClass.getMethod("getBucket").invoke(fs).asInstanceOf[String]
      if (bucket == null || !plainListing(fs, bucket)) None
      else {
        val sdk = new Sdk(loader)
        val handle = fs.getClass.getMethod("getS3AInternals").invoke(fs)
        val client = internals.getMethod("getAmazonS3Client", classOf[String]).invoke(handle, "bloomindex: checking a listing")
        Some(new Lister(client, bucket, sdk))
      }
    } catch {
      case NonFatal(_) | _: LinkageError => None
    }

  /** The object key of `path` (absolute, on the file system's bucket): its path without the leading '/'. */
  def key(path: Path): String = path.toUri.getPath.stripPrefix("/")
}
