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
        app = Seeding(app)
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=MotoRequestHandler)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
