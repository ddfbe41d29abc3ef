"""moto's S3 server on 127.0.0.1, on a free port, for the tests of tests/s3.

Usage: python moto_server.py PORT_FILE. Binds port 0, writes the port to PORT_FILE, then
serves until killed.

Requests are handled one at a time (a lock around the application): moto checks a PUT's
`If-None-Match: *` and stores the object in two steps of Python, so two concurrent PUTs of one
key on threads could both pass the check; S3 makes the check and the write one step, and the
lock gives moto that same behaviour. Connections are still served on threads (S3A keeps them
alive), so a request waits only while another is being handled.
"""

from __future__ import annotations

import os
import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import make_server


class Serialized:
    """Runs the WSGI application for one request at a time, its whole response included."""

    def __init__(self, app, reads_in_parallel: bool = False):
        self.app = app
        self.lock = threading.Lock()
        self.reads_in_parallel = reads_in_parallel

    def __call__(self, environ, start_response):
        if self.reads_in_parallel and environ.get("REQUEST_METHOD") in ("GET", "HEAD"):
            # Benches only (BLOOMINDEX_MOTO_SEED=1): reads change nothing, so they need no turn.
            body = self.app(environ, start_response)
            try:
                return [b"".join(body)]
            finally:
                close = getattr(body, "close", None)
                if close is not None:
                    close()
        with self.lock:
            body = self.app(environ, start_response)
            try:
                return [b"".join(body)]
            finally:
                close = getattr(body, "close", None)
                if close is not None:
                    close()


class ListingCache:
    """Benches only (BLOOMINDEX_MOTO_SEED=1): ListObjectsV2 answered at the cost S3's is, with
    moto's answer. moto answers each page by listing, filtering and sorting the whole bucket
    again, then builds the XML through its generic serializer (about 0.5 s of Python for a page
    of 1,000 keys at 100,000 keys, against S3's tens of milliseconds), and pages at whatever
    MaxKeys asks (S3A asks 5,000). Here: moto's own sorted answer for a (bucket, prefix,
    delimiter) is kept and each page of it served by bisection (the same keys, folders, order,
    truncation and continuation tokens as moto's), at most 1,000 keys a page as S3 does, and the
    page's XML written directly. A page once answered is kept as bytes and served again for the
    same request (path, query and host name: the same bucket, prefix, delimiter, start and token),
    without moto's request handling: S3 answers a listing in tens of milliseconds of its own
    machines, not of the driver's cores, where moto's Python would take the driver's. A request
    that may write (not GET or HEAD) drops, before it runs, the kept answers and pages of the
    listings it may change ([[forget]]); one written while a listing was read keeps it from being
    kept."""

    MAX_KEYS = 1000  # S3's most keys a page

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()
        self.generation = 0
        self.answers: dict = {}
        self.pages: dict = {}  # (host, path, query) -> (status, headers, body) of a ListObjectsV2 page
        from moto.s3.models import S3Backend
        from moto.s3.responses import S3Response

        original = S3Backend.list_objects_v2
        original_serialized = S3Response.serialized
        cache = self

        def list_objects_v2(backend, bucket, prefix, delimiter, continuation_token, start_after, max_keys):
            import bisect

            limit = (backend._pagination_tokens.get(continuation_token) if continuation_token else start_after)
            with cache.lock:
                key = (id(backend), bucket.name, prefix or "", delimiter)
                generation = cache.generation
                answer = cache.answers.get(key)
            if answer is None:
                # moto's whole sorted answer: every key and folder, from the first.
                entries, _, _ = original(backend, bucket, prefix, delimiter, None, None, 0x7FFFFFFF)
                answer = (entries, [e.name if hasattr(e, "name") else e for e in entries])
                with cache.lock:
                    if generation == cache.generation:  # no write since it was listed
                        cache.answers[key] = answer
            entries, names = answer
            start = bisect.bisect_right(names, limit) if limit else 0
            max_keys = min(max_keys, ListingCache.MAX_KEYS)
            return backend._truncate_result(entries[start:start + max_keys + 1], max_keys)

        def serialized(response, action_result):
            if response.data.get("Action") != "ListObjectsV2":
                return original_serialized(response, action_result)
            return 200, {"Content-Type": "application/xml"}, ListingCache.xml(action_result.result)

        S3Backend.list_objects_v2 = list_objects_v2
        S3Response.serialized = serialized

    @staticmethod
    def xml(result: dict) -> str:
        """The ListBucketResult document of moto's ListObjectsV2 result (the fields S3 sends)."""
        from xml.sax.saxutils import escape

        def tag(name, value):
            if isinstance(value, bool):
                value = "true" if value else "false"
            return f"<{name}>{escape(str(value))}</{name}>"

        out = ['<?xml version="1.0" encoding="UTF-8"?>',
               '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">']
        for name in ("Name", "Prefix", "MaxKeys", "KeyCount", "IsTruncated", "Delimiter", "EncodingType",
                     "NextContinuationToken", "StartAfter"):
            if name in result:
                out.append(tag(name, result[name]))
        for c in result.get("Contents", []):
            out.append("<Contents>" + "".join(tag(n, c[n]) for n in ("Key", "LastModified", "ETag", "Size", "StorageClass"))
                       + "</Contents>")
        for p in result.get("CommonPrefixes", []):
            out.append("<CommonPrefixes>" + tag("Prefix", p["Prefix"]) + "</CommonPrefixes>")
        out.append("</ListBucketResult>")
        return "".join(out)

    def forget(self, environ) -> None:
        """Drops what a write may change: the kept answers and pages of listings whose prefix the
        written key starts with, in its bucket; everything where the request names no single key
        (a multi-object delete) or the bucket is not in the path."""
        import urllib.parse

        host = (environ.get("HTTP_HOST") or "").rsplit(":", 1)[0]
        parts = (environ.get("PATH_INFO") or "").lstrip("/").split("/", 1)
        query = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        single = (host in ("127.0.0.1", "localhost") and len(parts) == 2 and parts[1] and parts[1].isascii()
                  and "delete" not in query)
        with self.lock:
            self.generation += 1
            if not single:
                self.answers.clear()
                self.pages.clear()
                return
            bucket, written = parts

            def listed(page_key) -> bool:
                _, path, q = page_key
                prefix = urllib.parse.parse_qs(q, keep_blank_values=True).get("prefix", [""])[0]
                # A page whose path names no bucket (virtual-host style) may be any bucket's.
                return path.strip("/") in (bucket, "") and written.startswith(prefix)

            self.answers = {k: v for k, v in self.answers.items() if not (k[1] == bucket and written.startswith(k[2]))}
            self.pages = {k: v for k, v in self.pages.items() if not listed(k)}

    def __call__(self, environ, start_response):
        method = environ.get("REQUEST_METHOD")
        if method not in ("GET", "HEAD"):
            # Before the write and again once it is done: a listing read while it ran is not kept.
            self.forget(environ)
            try:
                return self.app(environ, start_response)
            finally:
                self.forget(environ)
        query = environ.get("QUERY_STRING", "")
        if method != "GET" or "list-type=2" not in query:
            return self.app(environ, start_response)
        # The host without its port: a bench's drivers reach moto through proxies of their own ports.
        key = ((environ.get("HTTP_HOST") or "").rsplit(":", 1)[0], environ.get("PATH_INFO"), query)
        with self.lock:
            generation = self.generation
            page = self.pages.get(key)
        if os.environ.get("BLOOMINDEX_MOTO_DEBUG"):
            print("LISTPAGE", "hit" if page is not None else "miss", key, file=sys.stderr, flush=True)
        if page is not None:
            status, headers, body = page
            start_response(status, headers)
            return [body]
        kept = {}

        def keep(status, headers, exc_info=None):
            kept["status"], kept["headers"] = status, list(headers)
            return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)

        body = b"".join(self.app(environ, keep))
        if kept.get("status", "").startswith("200"):
            with self.lock:
                if generation == self.generation:
                    self.pages[key] = (kept["status"], kept["headers"], body)
        return [body]


class Seeding:
    """Benches only (BLOOMINDEX_MOTO_SEED=1): `POST /__seed__` with a JSON body {"bucket",
    "prefix", "names", "body" (base64)} stores one object per name, `prefix/name`, straight into
    moto's backend (no request per object: 100,000 objects in seconds, where 100,000 PUTs take
    tens of minutes on a loaded machine). Everything else goes to moto."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") != "/__seed__" or environ.get("REQUEST_METHOD") != "POST":
            return self.app(environ, start_response)
        import base64
        import json

        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.s3.models import s3_backends

        n = int(environ.get("CONTENT_LENGTH") or 0)
        req = json.loads(environ["wsgi.input"].read(n))
        body = base64.b64decode(req["body"])
        backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
        with self.app.lock:
            for name in req["names"]:
                backend.put_object(req["bucket"], f"{req['prefix']}/{name}", body)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [str(len(req["names"])).encode()]


def main() -> None:
    port_file = sys.argv[1]
    bench = os.environ.get("BLOOMINDEX_MOTO_SEED") == "1"
    app = Serialized(DomainDispatcherApplication(create_backend_app), reads_in_parallel=bench)
    if bench:
        app = ListingCache(Seeding(app))
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=MotoRequestHandler)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
