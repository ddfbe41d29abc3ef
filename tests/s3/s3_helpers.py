"""Helpers of the S3 tests: the moto S3 server on 127.0.0.1, S3A's settings for it, the S3 jars.

The sessions of tests/s3 need hadoop-aws and the AWS SDK on their class path. `make test-s3`
copies them into the git-ignored `.tools/s3` (Maven, tests/s3/pom.xml):
the same jars `spark.jars.packages=org.apache.hadoop:hadoop-aws:3.5.0` resolves for a user
(README, "On a cluster"), here also on the class path of the race's plain JVM processes.
"""

from __future__ import annotations

import glob
import os
import pathlib
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEST_JAR = ROOT / "target" / "bloomindex-tests.jar"
S3_JARS = ROOT / ".tools" / "s3"
BUCKET = "bloomindex-tests"
ACCESS_KEY = "testing"
SECRET_KEY = "testing"


class MotoServer:
    def __init__(self, tmp: pathlib.Path):
        port_file = tmp / "moto.port"
        self.proc = subprocess.Popen([sys.executable, str(pathlib.Path(__file__).with_name("moto_server.py")),
                                      str(port_file)], stdout=subprocess.DEVNULL, stderr=open(tmp / "moto.log", "w"))
        deadline = time.time() + 60
        while not port_file.exists():
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                pytest.fail(f"moto server did not start: {(tmp / 'moto.log').read_text()[-2000:]}")
            time.sleep(0.1)
        self.port = int(port_file.read_text())
        self.endpoint = f"http://127.0.0.1:{self.port}"

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY)

    def seed(self, bucket: str, prefix: str, names: list[str], body: bytes) -> None:
        """Benches only (a server started with BLOOMINDEX_MOTO_SEED=1): stores `prefix/name` for
        each name, all with `body`, straight into moto's backend (moto_server.py, Seeding), 20,000
        a request: 100,000 PUTs through boto3 take tens of minutes on a loaded machine."""
        import base64
        import json
        import urllib.request

        encoded = base64.b64encode(body).decode()
        for lo in range(0, len(names), 20000):
            req = json.dumps({"bucket": bucket, "prefix": prefix, "names": names[lo:lo + 20000], "body": encoded}).encode()
            urllib.request.urlopen(urllib.request.Request(self.endpoint + "/__seed__", data=req, method="POST")).read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def s3a_conf(endpoint: str) -> dict[str, str]:
    """The Hadoop settings of S3A against the test server (without the `spark.hadoop.` prefix)."""
    return {
        "fs.s3a.endpoint": endpoint,
        "fs.s3a.endpoint.region": "us-east-1",
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.access.key": ACCESS_KEY,
        "fs.s3a.secret.key": SECRET_KEY,
        "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        # Fail fast instead of retrying for minutes if the server goes away.
        "fs.s3a.attempts.maximum": "3",
        "fs.s3a.retry.limit": "3",
        "fs.s3a.connection.establish.timeout": "5s",
        "fs.s3a.connection.timeout": "30s",
    }


def s3_jars() -> list[str]:
    """hadoop-aws and its runtime dependencies (tests/s3/pom.xml)."""
    jars = sorted(glob.glob(str(S3_JARS / "*.jar")))
    if not any(os.path.basename(j).startswith("hadoop-aws-") for j in jars):
        pytest.fail(f"hadoop-aws is missing from {S3_JARS}: run `make test-s3` (it copies the S3 client jars)")
    return jars
