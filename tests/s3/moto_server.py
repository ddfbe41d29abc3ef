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

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        with self.lock:
            body = self.app(environ, start_response)
            try:
                return [b"".join(body)]
            finally:
                close = getattr(body, "close", None)
                if close is not None:
                    close()


def main() -> None:
    port_file = sys.argv[1]
    app = Serialized(DomainDispatcherApplication(create_backend_app))
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=MotoRequestHandler)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
