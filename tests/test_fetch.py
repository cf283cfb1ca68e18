"""Tests of common.fetch against a real HTTP server on 127.0.0.1, and of the mirror path."""

import hashlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from common import fetch
from common.errors import ConfigError, FetchError, OfflineError

GOOD = b"trial data\n" * 1000
DIGEST = hashlib.sha256(GOOD).hexdigest()


class Handler(BaseHTTPRequestHandler):
    """Serve ``server.routes[path] = (behaviour, body)``: ok, status code, or drop mid-body."""

    def do_GET(self):
        self.server.hits.append(self.path)
        behaviour, body = self.server.routes.get(self.path, (404, b"not found"))
        if behaviour == "drop":  # promise the whole body, send half, hang up
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.send_response(200 if behaviour == "ok" else behaviour)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.routes, httpd.hits = {}, []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def make_source(base_url):
    return fetch.DataSource(
        name="demo",
        url=base_url,
        mirror="demo",
        dest="data/demo",
        checksums="demo.sha256",
        groups={"all": [""]},
    )


def url_of(httpd):
    return f"http://127.0.0.1:{httpd.server_address[1]}/rel"


def leftovers(tmp_path):
    dest = tmp_path / "data" / "demo" / "sub"
    return sorted(p.name for p in dest.iterdir()) if dest.exists() else []


def test_download_verifies_and_writes(server, tmp_path):
    server.routes["/rel/sub/a.jsonl"] = ("ok", GOOD)
    [path] = fetch.fetch(make_source(url_of(server)), {"sub/a.jsonl": DIGEST}, mirror="", root=tmp_path)
    assert path.read_bytes() == GOOD
    # a second call finds the verified file and makes no request
    fetch.fetch(make_source(url_of(server)), {"sub/a.jsonl": DIGEST}, mirror="", root=tmp_path)
    assert server.hits == ["/rel/sub/a.jsonl"]


def test_404_names_file_url_and_remedy(server, tmp_path):
    with pytest.raises(FetchError) as err:
        fetch.fetch(make_source(url_of(server)), {"sub/a.jsonl": DIGEST}, mirror="", root=tmp_path)
    message = str(err.value)
    assert "a.jsonl" in message and "HTTP 404" in message and "/rel/sub/a.jsonl" in message
    assert "DATA_MIRROR" in message
    assert leftovers(tmp_path) == []
    assert server.hits == ["/rel/sub/a.jsonl"]  # 404 is not retried


def test_hash_mismatch_leaves_nothing_on_disk(server, tmp_path):
    server.routes["/rel/sub/a.jsonl"] = ("ok", GOOD + b"tampered")
    with pytest.raises(FetchError, match=r"SHA-256 mismatch for a\.jsonl .*pinned " + DIGEST):
        fetch.fetch(make_source(url_of(server)), {"sub/a.jsonl": DIGEST}, mirror="", root=tmp_path)
    assert leftovers(tmp_path) == []


def test_connection_dropped_mid_body_leaves_no_partial_file(server, tmp_path):
    server.routes["/rel/sub/a.jsonl"] = ("drop", GOOD)
    message = r"could not download a\.jsonl from http://127\.0\.0\.1:\d+/rel/sub/a\.jsonl"
    with pytest.raises(FetchError, match=message) as caught:
        fetch.fetch(make_source(url_of(server)), {"sub/a.jsonl": DIGEST}, mirror="", retries=1, root=tmp_path)
    assert not isinstance(caught.value, OfflineError)  # the host answered: not an offline machine
    assert leftovers(tmp_path) == []


def test_server_errors_are_retried_then_reported(server, tmp_path):
    server.routes["/rel/sub/a.jsonl"] = (503, b"busy")
    with pytest.raises(FetchError, match="HTTP 503"):
        fetch.fetch(make_source(url_of(server)), {"sub/a.jsonl": DIGEST}, mirror="", retries=2, root=tmp_path)
    assert len(server.hits) == 3


def test_no_network_says_to_set_data_mirror(tmp_path):
    with socket.socket() as sock:  # find a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    source = make_source(f"http://127.0.0.1:{port}/rel")
    message = r"could not download a\.jsonl: cannot reach .*No network\? Set DATA_MIRROR"
    with pytest.raises(OfflineError, match=message):
        fetch.fetch(source, {"sub/a.jsonl": DIGEST}, mirror="", retries=0, root=tmp_path)
    assert leftovers(tmp_path) == []


def test_mirror_is_used_instead_of_the_network(tmp_path):
    (tmp_path / "mirror" / "demo" / "sub").mkdir(parents=True)
    (tmp_path / "mirror" / "demo" / "sub" / "a.jsonl").write_bytes(GOOD)
    source = make_source("http://127.0.0.1:9/never-used")
    [path] = fetch.fetch(source, {"sub/a.jsonl": DIGEST}, mirror=str(tmp_path / "mirror"), root=tmp_path)
    assert path.read_bytes() == GOOD


def test_mirror_with_other_content_is_refused(tmp_path):
    (tmp_path / "mirror" / "demo" / "sub").mkdir(parents=True)
    (tmp_path / "mirror" / "demo" / "sub" / "a.jsonl").write_bytes(b"other")
    source = make_source("http://127.0.0.1:9/never-used")
    with pytest.raises(FetchError, match=r"SHA-256 mismatch .*refresh it, or unset DATA_MIRROR"):
        fetch.fetch(source, {"sub/a.jsonl": DIGEST}, mirror=str(tmp_path / "mirror"), root=tmp_path)
    assert leftovers(tmp_path) == []


def test_file_missing_from_mirror_is_downloaded(server, tmp_path):
    server.routes["/rel/sub/a.jsonl"] = ("ok", GOOD)
    (tmp_path / "mirror").mkdir()
    [path] = fetch.fetch(
        make_source(url_of(server)), {"sub/a.jsonl": DIGEST}, mirror=str(tmp_path / "mirror"), root=tmp_path
    )
    assert path.read_bytes() == GOOD


def test_checksum_file_errors_name_the_line(tmp_path):
    sums = tmp_path / "demo.sha256"
    sums.write_text(f"# comment\n{DIGEST}  sub/a.jsonl\nabc  sub/b.jsonl\n")
    with pytest.raises(ConfigError, match=r"demo\.sha256:3: expected '<64 hex digits>  <path>'"):
        fetch.read_checksums(sums)


def test_project_sources_pin_every_mirrored_file():
    """Every file of the offline mirrors' READMEs is pinned by the project's checksum files."""
    for name, count in [("worldsense", 23), ("cogsci22_blocks", 146)]:
        spec, pinned = fetch.load_source(f"configs/data/{name}.yaml")
        assert len(pinned) == count
        assert all(len(h) == 64 for h in pinned.values())
        assert spec.dest == f"data/{name}"
