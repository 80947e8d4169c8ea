"""A page served on the host's loopback, for the sandbox's network tests (proxy, SDK, TUI)."""

import http.server
import threading
from collections.abc import Iterator

import pytest

PAGE = b"served on the host's loopback\n"


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def page_port() -> Iterator[int]:
    """The port of a loopback HTTP server answering every GET with PAGE."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()
