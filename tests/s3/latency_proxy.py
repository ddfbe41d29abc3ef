"""A TCP proxy on 127.0.0.1 that adds a fixed delay to every HTTP request it passes on, and
counts them: between S3A and the local moto server, it makes the local store cost what a real
object store costs per request (tens of milliseconds), for tests and benches (issue 26).

    proxy = LatencyProxy(moto.port, delay_ms=20).start()
    conf = s3a_conf(proxy.endpoint)          # S3A talks to the proxy, the proxy to moto
    ... proxy.reset(); <a query>; proxy.counts() -> {"GET probe": 12, "HEAD summary": 1, ...}
    proxy.stop()

Every request pays the delay, not only a connection's first: S3A keeps its connections alive,
so the proxy parses each request's framing (the request line and headers, then a body of
Content-Length bytes or chunked) on the client's side of each connection, and sleeps once when
a request's headers have arrived, before passing them on. Responses are passed through as they
come. Requests on different connections wait in parallel (as on a real store); moto itself
answers one at a time (tests/s3/moto_server.py).

Bounded: it listens on 127.0.0.1 only, serves at most `max_connections` connections at once
(more wait for a free slot), and a request head longer than 64 KiB closes its connection.
Python's standard library only (asyncio), run on a daemon thread of the calling process.

Counts are by method and kind of object (path-style S3 requests, `/bucket/key?query`): `list`
(a bucket listing), `log` (an index log entry: `_log/`), `summary` (`_summary.json`), `probe`
(a probe file), `global` (`_global/`), `index` (other index data: the key holds `/data/` under
an index root), `source` (anything else), and `bytes` requested by ranged GETs per kind.
"""

from __future__ import annotations

import asyncio
import collections
import sys
import threading
import time
import urllib.parse

HEAD_LIMIT = 64 << 10


def kind_of(target: str, method: str = "GET") -> str:
    """The kind of object a path-style S3 request target names."""
    parsed = urllib.parse.urlsplit(target)
    path = urllib.parse.unquote(parsed.path)
    parts = path.lstrip("/").split("/", 1)
    key = parts[1] if len(parts) > 1 else ""
    if not key:
        return "list" if method == "GET" else "bucket"
    if key.endswith(".probe"):
        return "probe"
    if "/_log/" in key or key.startswith("_log/"):
        return "log"
    if key.endswith("_summary.json"):
        return "summary"
    if "/_global/" in key:
        return "global"
    if "/data/" in key and "/indexes/" in "/" + key:
        return "index"
    return "source"


def range_bytes(headers: dict[str, str]) -> int:
    """The bytes a `Range: bytes=a-b` header asks for (0 when none or open-ended)."""
    r = headers.get("range", "")
    if not r.startswith("bytes="):
        return 0
    try:
        a, b = r[6:].split(",")[0].split("-")
        return int(b) - int(a) + 1 if a and b else 0
    except ValueError:
        return 0


class LatencyProxy:
    """The proxy: `start()` binds 127.0.0.1 on a free port (`port`, `endpoint`) and serves on a
    daemon thread until `stop()`."""

    def __init__(self, upstream_port: int, delay_ms: float = 20.0, max_connections: int = 64,
                 upstream_host: str = "127.0.0.1"):
        if upstream_host not in ("127.0.0.1", "localhost"):
            raise ValueError("the proxy only forwards to a local server")
        self.upstream = (upstream_host, upstream_port)
        self.delay = delay_ms / 1000.0
        self.max_connections = max_connections
        self._lock = threading.Lock()
        self._counts: collections.Counter[str] = collections.Counter()
        self._bytes: collections.Counter[str] = collections.Counter()
        self._log: list[tuple[float, str, str, str]] = []
        self.keep_log = False
        self.connections = 0
        self.max_open = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ------------------------------------------------------------------ counters

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()
            self._bytes.clear()
            self._log.clear()

    def counts(self) -> dict[str, int]:
        """Requests since the last reset, by "METHOD kind"."""
        with self._lock:
            return dict(self._counts)

    def requested_bytes(self) -> dict[str, int]:
        """Bytes asked for by ranged GETs since the last reset, by kind."""
        with self._lock:
            return dict(self._bytes)

    def total(self) -> int:
        with self._lock:
            return sum(self._counts.values())

    def log(self) -> list[tuple[float, str, str, str]]:
        """(time, method, kind, target) of each request since the last reset, with `keep_log`."""
        with self._lock:
            return list(self._log)

    def _count(self, method: str, target: str, headers: dict[str, str]) -> None:
        kind = kind_of(target, method)
        with self._lock:
            self._counts[f"{method} {kind}"] += 1
            if method == "GET":
                self._bytes[kind] += range_bytes(headers)
            if self.keep_log:
                self._log.append((time.time(), method, kind, target))

    # ------------------------------------------------------------------ serving

    def start(self) -> "LatencyProxy":
        started = threading.Event()
        failure: list[BaseException] = []

        def run():
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                self._slots = asyncio.Semaphore(self.max_connections)
                self._server = loop.run_until_complete(
                    asyncio.start_server(self._serve, "127.0.0.1", 0, limit=HEAD_LIMIT, backlog=128))
                self.port = self._server.sockets[0].getsockname()[1]
            except BaseException as e:  # noqa: BLE001 - reported to start()
                failure.append(e)
                started.set()
                return
            started.set()
            try:
                loop.run_forever()
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="latency-proxy", daemon=True)
        self._thread.start()
        started.wait(30)
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        loop = self._loop
        if loop is None or not loop.is_running():
            return

        async def close():
            self._server.close()
            await self._server.wait_closed()

        try:
            asyncio.run_coroutine_threadsafe(close(), loop).result(10)
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(10)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        async with self._slots:
            self.connections += 1
            self.max_open = max(self.max_open, self.connections)
            try:
                up_r, up_w = await asyncio.open_connection(*self.upstream, limit=HEAD_LIMIT)
            except OSError:
                self.connections -= 1
                client_w.close()
                return
            back = asyncio.ensure_future(self._pipe(up_r, client_w))
            try:
                await self._requests(client_r, up_w)
            except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
                pass
            finally:
                for w in (up_w, client_w):
                    try:
                        w.close()
                    except Exception:  # noqa: BLE001
                        pass
                back.cancel()
                self.connections -= 1

    async def _requests(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        """Passes the client's requests on one by one, each after the delay."""
        while True:
            try:
                head = await r.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                return  # the client closed the connection between requests
            await asyncio.sleep(self.delay)
            lines = head.decode("latin-1").split("\r\n")
            method, target = (lines[0].split(" ") + ["", ""])[:2]
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    k, v = line.split(":", 1)
                    headers[k.strip().lower()] = v.strip()
            self._count(method, target, headers)
            w.write(head)
            await w.drain()
            if "chunked" in headers.get("transfer-encoding", "").lower():
                await self._chunked(r, w)
            else:
                n = int(headers.get("content-length", "0") or 0)
                while n > 0:
                    data = await r.read(min(n, 1 << 16))
                    if not data:
                        return
                    w.write(data)
                    await w.drain()
                    n -= len(data)

    @staticmethod
    async def _chunked(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        while True:
            line = await r.readuntil(b"\r\n")
            w.write(line)
            size = int(line.split(b";")[0].strip(), 16)
            if size == 0:
                # Trailers, up to the empty line.
                while True:
                    t = await r.readuntil(b"\r\n")
                    w.write(t)
                    if t == b"\r\n":
                        await w.drain()
                        return
            w.write(await r.readexactly(size + 2))
            await w.drain()

    @staticmethod
    async def _pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        try:
            while True:
                data = await r.read(1 << 16)
                if not data:
                    break
                w.write(data)
                await w.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            try:
                w.close()
            except Exception:  # noqa: BLE001
                pass


def main() -> None:
    """`python latency_proxy.py UPSTREAM_PORT [DELAY_MS]`: serves until interrupted, prints its port."""
    proxy = LatencyProxy(int(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 20.0).start()
    print(proxy.port, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        proxy.stop()


if __name__ == "__main__":
    main()
