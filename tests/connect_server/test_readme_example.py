"""End to end on Spark Connect: a real Connect server started by hand as its own process
(`spark-submit --class org.apache.spark.sql.connect.service.SparkConnectServer` with the jar and
the extension, on 127.0.0.1), and docs/connect.md's Connect example run by a second virtual
environment holding only `pyspark-client` and the built package (`.venv-client`, made by
`make test-connect-server`): create, a pruned query, explain, the join filter, drop."""

from __future__ import annotations

import ast
import os
import pathlib
import re
import socket
import subprocess
import tempfile
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLIENT = ROOT / ".venv-client" / "bin" / "python"
README_URL, README_DIR = "sc://localhost:15002", "/tmp/bloomindex-connect"


def _readme_example() -> str:
    text = (ROOT / "docs" / "connect.md").read_text()
    m = re.search(r"<!-- connect-example[^>]*-->\s*```python\n(.*?)```", text, re.S)
    assert m, "docs/connect.md: the Spark Connect example block is missing"
    return m.group(1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _client(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``code`` run as a script file by the client environment's Python (as a user runs it:
    PySpark's Connect client takes a ``python -c`` program for a doctest run)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_HOME", "PYSPARK_SUBMIT_ARGS", "SPARK_REMOTE")}
    with tempfile.TemporaryDirectory() as d:
        script = pathlib.Path(d) / "example.py"
        script.write_text(code)
        return subprocess.run([str(CLIENT), str(script)], capture_output=True, text=True, timeout=timeout,
                              env=env, cwd=d)


@pytest.fixture(scope="module")
def client():
    if not CLIENT.is_file():
        pytest.fail(f"{CLIENT} is missing: run `make test-connect-server` (it creates the client environment)")
    return CLIENT


def test_the_client_environment_has_no_jvm_side(client):
    r = _client("import importlib.metadata as m, importlib.util as u, os, pyspark, bloomindex\n"
                "dists = {d.metadata['Name'].lower() for d in m.distributions()}\n"
                "print('pyspark-client' in dists, 'pyspark' in dists, u.find_spec('py4j') is None,\n"
                "      os.path.isdir(os.path.join(os.path.dirname(pyspark.__file__), 'jars')), pyspark.__version__)\n"
                "f = bloomindex.Sbbf.for_ndv(100, 0.01); f.insert([1, 2], 'bigint')\n"
                "print(f.might_contain(2, 'bigint'), len(bloomindex.hash_values([1, None], 'int')))\n"
                "from bloomindex.parquet import read_bloom_filter\n"
                "p = os.path.join(os.getcwd(), 'f.bin'); open(p, 'wb').write(f.serialize())\n"
                "print(read_bloom_filter(p) == f)\n")
    assert r.returncode == 0, r.stderr
    import pyspark
    assert r.stdout.split("\n")[:3] == [f"True False True False {pyspark.__version__}", "True 1", "True"], r.stdout


def test_the_readme_example_on_a_connect_server(client, tmp_path):
    import bloomindex
    import pyspark

    port = _free_port()
    submit = pathlib.Path(pyspark.__file__).parent / "bin" / "spark-submit"
    log = open(tmp_path / "server.log", "w")
    server = subprocess.Popen(
        [str(submit), "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
         "--master", "local[2]", "--driver-memory", "1g",
         "--jars", ",".join(bloomindex.jar_paths()),
         "--conf", "spark.sql.extensions=bloomindex.BloomIndexExtensions",
         "--driver-java-options", "--add-modules jdk.incubator.vector",
         "--conf", "spark.executor.extraJavaOptions=--add-modules jdk.incubator.vector",
         "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
         "--conf", f"spark.connect.grpc.binding.port={port}",
         "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2",
         "--conf", f"spark.sql.warehouse.dir={tmp_path / 'warehouse'}",
         "--conf", f"spark.bloomindex.root={tmp_path / 'indexes'}"],
        stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path, start_new_session=True,
        env={k: v for k, v in os.environ.items() if k not in ("PYSPARK_SUBMIT_ARGS", "SPARK_REMOTE")})
    try:
        deadline = time.time() + 180
        while True:
            assert server.poll() is None, (tmp_path / "server.log").read_text()[-3000:]
            assert time.time() < deadline, "the Connect server did not listen within 180 s"
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(1)
        code = _readme_example().replace(README_URL, f"sc://127.0.0.1:{port}").replace(README_DIR, str(tmp_path / "data"))
        r = _client(code, timeout=300)
        assert r.returncode == 0, r.stderr[-5000:]
        out = r.stdout
        assert "Row(name='events_uid'" in out and "Row(name='users_uid'" in out, out
        assert "[Row(user_id=4242, amount=42)] files read: 1" in out, out
        assert "index events_uid (log version 1) kept 1/20 files, skipped 19 files" in out, out
        assert "\n100\n" in out, out
        assert "join filter: index users_uid (log version 1) global filter of user_id" in out, out
        [metrics] = [ast.literal_eval(line) for line in out.splitlines() if line.startswith("[{")]
        [m] = metrics
        assert set(m) == {"numInputRows", "numOutputRows", "filterTimeMs"}, out
        assert m["numInputRows"] == 200_000 and 100 <= m["numOutputRows"] < 20_000, out
        assert out.rstrip().endswith("True True"), out
    finally:
        os.killpg(server.pid, 15)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
            server.wait()
        log.close()
