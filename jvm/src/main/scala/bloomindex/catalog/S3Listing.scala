package bloomindex.catalog

import java.lang.reflect.{InvocationHandler, Method}

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
 * reflection, as the SDK is not on bloomindex's class path where hadoop-aws is not. Each page's
 * bytes are read by [[S3ListPage]] (key, size, time only) where the SDK lets a request carry a
 * plugin ([[PageReader]]), by the SDK's own reader otherwise or where [[S3ListPage]] refuses
 * them. The statuses are those S3A's listing gives (the object's size and its time in milliseconds). Where the
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
  final class Lister private[S3Listing] (client: AnyRef, bucket: String, sdk: Sdk, readPages: Boolean) {

    private val pagesRead = new java.util.concurrent.atomic.AtomicLong()
    private val pagesBySdk = new java.util.concurrent.atomic.AtomicLong()

    /** Pages read so far: by [[S3ListPage]], by the SDK. */
    def pages: (Long, Long) = (pagesRead.get, pagesBySdk.get)

    /**
     * The current size and modification time of each of `keys` (distinct, in [[KeyOrder]]), as
     * `runs` made of them ([[runsFor]]) list them, `requests` runs at once ([[S3Listing.statuses]]).
     */
    def statuses(keys: IndexedSeq[String], runs: IndexedSeq[Run], requests: Int): (Array[Long], Array[Long]) =
      S3Listing.statuses(keys, runs, requests, page)

    /** One page of `run`'s listing: its first (`token` null) or the one `token` continues with. */
    private def page(run: Run, token: String): S3ListPage.Page = {
      var b = sdk.builder.invoke(null)
      b = sdk.bucket.invoke(b, bucket)
      b = sdk.prefix.invoke(b, run.prefix)
      if (run.delimited) b = sdk.delimiter.invoke(b, "/")
      b = sdk.maxKeys.invoke(b, Integer.valueOf(PageKeys))
      if (token != null) b = sdk.continuationToken.invoke(b, token)
      else if (run.after != null) b = sdk.startAfter.invoke(b, run.after)
      val reader = if (readPages) sdk.pageReader.map(_.attachTo(b)) else None
      val response = sdk.list.invoke(client, sdk.build.invoke(b))
      reader.flatMap(r => Option(r.page)) match {
        case Some(p) => pagesRead.incrementAndGet(); p
        case None => pagesBySdk.incrementAndGet(); sdk.page(response)
      }
    }
  }

  /**
   * The current size and modification time of each of `keys` (distinct, in [[KeyOrder]]), as
   * `runs` made of them ([[runsFor]]) list them, `requests` runs at once, each page of a run from
   * `fetch(run, token)` (token null: its first): at a key's position, its object's size (-1
   * where it is gone) and time. A run's objects come in key order, as its wanted keys lie in
   * `keys`: each run walks the two side by side, writing its own keys' positions only (no map of
   * the listed objects). ([[Lister]] fetches from S3; the warm-up from made-up pages.)
   */
  def statuses(keys: IndexedSeq[String], runs: IndexedSeq[Run], requests: Int,
      fetch: (Run, String) => S3ListPage.Page): (Array[Long], Array[Long]) = {
    val sizes = Array.fill(keys.size)(-1L)
    val times = new Array[Long](keys.size)
    val from = starts(keys, runs)
    bloomindex.layout.IndexStore.inParallel(requests, runs.indices.map { r => () =>
      run(runs(r), keys, from(r), sizes, times, fetch)
    })
    (sizes, times)
  }

  /**
   * Where each run's own keys start in `keys`: runs made of `keys` ([[runs]]) take them in
   * order, each up to and with its `last`. A run writes from there on only: one whose listing
   * starts before its keys (a folder's second group, after a subfolder's keys) writes no other
   * run's positions, so each position's size and time come from one answer.
   */
  private def starts(keys: IndexedSeq[String], runs: IndexedSeq[Run]): Array[Int] = {
    val out = new Array[Int](runs.size)
    var at = 0
    var r = 0
    while (r < runs.size) {
      out(r) = at
      while (at < keys.size && KeyOrder.compare(keys(at), runs(r).last) <= 0) at += 1
      r += 1
    }
    out
  }

  /** The objects of `run`, page by page, matched with `keys` from position `from` on. */
  private def run(run: Run, keys: IndexedSeq[String], from: Int, sizes: Array[Long], times: Array[Long],
      fetch: (Run, String) => S3ListPage.Page): Unit = {
    val last = run.last
    var at = from
    var token: String = null
    var done = false
    while (!done) {
      val page = fetch(run, token)
      var e = 0
      while (!done && e < page.count) {
        val key = page.keys(e)
        val order = KeyOrder.compare(key, last)
        if (order > 0) done = true
        else {
          // The wanted keys before this object are gone (or not listed: left at -1).
          var c = -1
          while (at < keys.size && { c = KeyOrder.compare(keys(at), key); c < 0 }) { at += 1; c = -1 }
          if (at < keys.size && c == 0) { sizes(at) = page.sizes(e); times(at) = page.modified(e); at += 1 }
          if (order == 0) done = true
        }
        e += 1
      }
      if (!done) {
        token = if (page.truncated) page.next else null
        if (token == null) done = true
      }
    }
  }

  /**
   * Where a page's bytes go to [[S3ListPage]] instead of the SDK's reader: a request plugin
   * (AWS SDK 2.21 and later) that adds, for that one request, an interceptor taking the body of
   * a successful answer. When [[S3ListPage]] reads it, the SDK is given an empty listing to read
   * and the page is kept ([[PageRead.page]]); when it refuses it, the SDK is given the same bytes
   * and the caller uses the SDK's answer. Both reached through `java.lang.reflect.Proxy` over the
   * SDK's own interfaces, from S3A's class loader.
   */
  private[S3Listing] final class PageReader(loader: ClassLoader, requestBuilder: Class[_]) {
    private def cls(name: String): Class[_] = Class.forName(name, false, loader)
    private val interceptorType = cls("software.amazon.awssdk.core.interceptor.ExecutionInterceptor")
    private val pluginType = cls("software.amazon.awssdk.core.SdkPlugin")
    private val configBuilder = cls("software.amazon.awssdk.core.SdkServiceClientConfiguration$Builder")
    private val clientOverride = cls("software.amazon.awssdk.core.client.config.ClientOverrideConfiguration")
    private val clientOverrideBuilder = cls("software.amazon.awssdk.core.client.config.ClientOverrideConfiguration$Builder")
    private val requestOverride = cls("software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration")
    private val requestOverrideBuilder = cls("software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration$Builder")
    private val transmitted = cls("software.amazon.awssdk.core.interceptor.Context$AfterTransmission")
    private val getOverride = configBuilder.getMethod("overrideConfiguration")
    private val setOverride = configBuilder.getMethod("overrideConfiguration", clientOverride)
    private val toBuilder = clientOverride.getMethod("toBuilder")
    private val addInterceptor = clientOverrideBuilder.getMethod("addExecutionInterceptor", interceptorType)
    private val buildClientOverride = clientOverrideBuilder.getMethod("build")
    private val newRequestOverride = requestOverride.getMethod("builder")
    private val addPlugin = requestOverrideBuilder.getMethod("addPlugin", pluginType)
    private val buildRequestOverride = requestOverrideBuilder.getMethod("build")
    private val setRequestOverride = requestBuilder.getMethod("overrideConfiguration", requestOverride)
    private val httpResponse = transmitted.getMethod("httpResponse")
    private val responseBody = transmitted.getMethod("responseBody")
    private val successful = cls("software.amazon.awssdk.http.SdkHttpResponse").getMethod("isSuccessful")
    private val modifyBody = interceptorType.getMethod("modifyHttpResponseContent",
      cls("software.amazon.awssdk.core.interceptor.Context$ModifyHttpResponse"),
      cls("software.amazon.awssdk.core.interceptor.ExecutionAttributes"))
    private val configure = pluginType.getMethod("configureClient", configBuilder)

    /** What the SDK reads in place of a page [[S3ListPage]] has read. */
    private val Empty = "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"></ListBucketResult>"
      .getBytes(java.nio.charset.StandardCharsets.UTF_8)

    /** Sets on request builder `b` the plugin that reads its answer's page into the returned holder. */
    def attachTo(b: AnyRef): PageRead = {
      val read = new PageRead
      val interceptor = proxy(interceptorType) { (self, m, args) =>
        if (m == modifyBody) body(args(0), read) else InvocationHandler.invokeDefault(self, m, args: _*)
      }
      val plugin = proxy(pluginType) { (self, m, args) =>
        if (m == configure) {
          // An SDK whose request configuration cannot take the interceptor reads the page itself.
          try {
            val config = args(0)
            val withReader = addInterceptor.invoke(toBuilder.invoke(getOverride.invoke(config)), interceptor)
            setOverride.invoke(config, buildClientOverride.invoke(withReader))
          } catch { case NonFatal(_) => }
          null
        } else InvocationHandler.invokeDefault(self, m, args: _*)
      }
      val over = buildRequestOverride.invoke(addPlugin.invoke(newRequestOverride.invoke(null), plugin))
      setRequestOverride.invoke(b, over)
      read
    }

    /** The body the SDK reads instead of `context`'s: see the class's doc. */
    private def body(context: AnyRef, read: PageRead): java.util.Optional[java.io.InputStream] = {
      val original = responseBody.invoke(context).asInstanceOf[java.util.Optional[java.io.InputStream]]
      read.page = null
      if (!original.isPresent || !successful.invoke(httpResponse.invoke(context)).asInstanceOf[Boolean]) original
      else {
        val in = original.get
        // An I/O error leaves as the SDK's own reading would raise it (unchecked: retried as such).
        val bytes = try in.readAllBytes() catch { case e: java.io.IOException => throw new java.io.UncheckedIOException(e) }
          finally try in.close() catch { case _: java.io.IOException => }
        read.page = try S3ListPage.parse(bytes) catch { case _: S3ListPage.Malformed => null }
        java.util.Optional.of(new java.io.ByteArrayInputStream(if (read.page != null) Empty else bytes))
      }
    }

    /** An instance of `iface` (from the SDK's loader) whose own methods are `handler`'s, Object's answered here. */
    private def proxy(iface: Class[_])(handler: (AnyRef, Method, Array[AnyRef]) => AnyRef): AnyRef =
      java.lang.reflect.Proxy.newProxyInstance(loader, Array(iface), new InvocationHandler {
        def invoke(self: AnyRef, m: Method, args: Array[AnyRef]): AnyRef = m.getName match {
          case "hashCode" if m.getParameterCount == 0 => Integer.valueOf(System.identityHashCode(self))
          case "equals" if m.getParameterCount == 1 => java.lang.Boolean.valueOf(self eq args(0))
          case "toString" if m.getParameterCount == 0 => "bloomindex S3 list page reader"
          case _ => handler(self, m, if (args == null) Array.empty[AnyRef] else args)
        }
      })
  }

  /** The page a request's answer held, where [[S3ListPage]] read it (null: the SDK did). */
  private[S3Listing] final class PageRead {
    @volatile var page: S3ListPage.Page = null
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

    /** The reader of pages' bytes, where this SDK has request plugins (2.21 and later). */
    val pageReader: Option[PageReader] =
      try Some(new PageReader(loader, requestBuilder)) catch { case NonFatal(_) | _: LinkageError => None }

    /** `response`'s page as the SDK read it: its objects with a size and a time. */
    def page(response: AnyRef): S3ListPage.Page = {
      val contents = this.contents.invoke(response).asInstanceOf[java.util.List[AnyRef]]
      val (keys, sizes, times) = (new Array[String](contents.size), new Array[Long](contents.size), new Array[Long](contents.size))
      var count = 0
      contents.forEach { o =>
        val size = this.size.invoke(o).asInstanceOf[java.lang.Long]
        val time = lastModified.invoke(o).asInstanceOf[java.time.Instant]
        if (size != null && time != null) {
          keys(count) = key.invoke(o).asInstanceOf[String]; sizes(count) = size.longValue; times(count) = time.toEpochMilli
          count += 1
        }
      }
      val truncated = java.lang.Boolean.TRUE == this.truncated.invoke(response)
      new S3ListPage.Page(keys, sizes, times, count, truncated, if (truncated) next.invoke(response).asInstanceOf[String] else null)
    }
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
  def lister(fs: FileSystem): Option[Lister] = lister(fs, readPages = true)

  /**
   * As [[lister]]; `readPages`: each page's bytes read by [[S3ListPage]] where the SDK lets them
   * be (false: by the SDK's own reader; tests compare the two).
   */
  def lister(fs: FileSystem, readPages: Boolean): Option[Lister] =
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
        Some(new Lister(client, bucket, sdk, readPages))
      }
    } catch {
      case NonFatal(_) | _: LinkageError => None
    }

  /** The object key of `path` (absolute, on the file system's bucket): its path without the leading '/'. */
  def key(path: Path): String = path.toUri.getPath.stripPrefix("/")
}
