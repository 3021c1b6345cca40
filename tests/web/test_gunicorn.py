"""The real thing: gunicorn serving the app on a loopback port, called over HTTP."""

import contextlib
import http.client
import json
import os
import runpy
import socket
import subprocess
import sys
import threading
from types import SimpleNamespace
from unittest import mock

import pytest

from app import create_app
from tests import helpers
from tests.servers import ROOT, call, flask, gunicorn
from web.gunicorn_worker import DRAINED

pytestmark = pytest.mark.slow  # real gunicorn processes


@pytest.fixture(scope="module")
def served(tmp_path_factory, schema_template):
    """gunicorn on a free loopback port with a database of its own; its environment too.

    Starting one takes seconds, so the tests that need nothing of their own share it: each
    registers the users it calls with, and none changes the server's settings (those that do
    start their own)."""
    folder = tmp_path_factory.mktemp("served")
    if schema_template is not None:
        helpers.copy_sqlite(schema_template, folder / "test.db")
    app = create_app(helpers.settings(folder))
    if schema_template is None:
        with app.app_context():
            helpers.reset_tables()
    with gunicorn(app) as server:
        yield server


def test_register_login_then_pro_through_the_cli(served):
    base, env = served
    status, session = call(
        base, "POST", "/api/auth/register", {"email": "Fan@Example.com", "password": "password-1"}
    )
    assert status == 200 and session["user"]["email"] == "fan@example.com"
    status, session = call(
        base, "POST", "/api/auth/login", {"email": "fan@example.com", "password": "password-1"}
    )
    assert status == 200
    token = session["accessToken"]
    status, problem = call(base, "GET", "/api/v1/data/usage", token=token)
    assert status == 403 and problem["detail"] == "A Pro subscription or admin role is required."
    cli = flask(env, "users", "update", "fan@example.com", "--plan", "pro")
    assert cli.returncode == 0, cli.stderr
    status, usage = call(base, "GET", "/api/v1/data/usage", token=token)
    assert status == 200 and usage["plan"] == "pro" and usage["requests"]["used"] == 0


def test_concurrent_data_requests_are_each_counted_once(served):
    base, _ = served
    _, session = call(
        base, "POST", "/api/auth/register", {"email": "many@example.com", "password": "password-1"}
    )
    token = session["accessToken"]
    assert flask(served[1], "users", "update", "many@example.com", "--plan", "pro").returncode == 0
    threads_count = 24
    start = threading.Barrier(threads_count)
    statuses = []

    def one_request():
        start.wait()
        statuses.append(call(base, "GET", "/api/v1/data/catalog", token=token)[0])

    threads = [threading.Thread(target=one_request) for _ in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert statuses == [200] * threads_count
    status, usage = call(base, "GET", "/api/v1/data/usage", token=token)
    assert status == 200 and usage["requests"]["used"] == threads_count


@pytest.mark.parametrize(
    "chunks",
    [
        b"zz\r\n{}\r\n0\r\n\r\n",
        b"-2\r\n{}\r\n0\r\n\r\n",
        b"2\r\n{}XX0\r\n\r\n",
        b"z" * 5000 + b"\r\n{}\r\n0\r\n\r\n",  # quoted in the detail, shortened
    ],
)
def test_a_malformed_chunked_body_is_a_malformed_request(served, chunks):
    """gunicorn finds a bad chunk only when the app reads the body: a 400, not a 500."""
    base, _ = served
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(
            b"POST /api/auth/login HTTP/1.1\r\nHost: localhost\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks
        )
        answer = http.client.HTTPResponse(connection)
        answer.begin()
        body = json.loads(answer.read())
    assert answer.status == 400 and answer.getheader("Content-Type") == "application/problem+json"
    assert body["type"].endswith("/problems/malformed-request"), body
    assert body["detail"].startswith("The body could not be read as sent"), body
    assert len(body["detail"]) < 200


def test_a_body_shorter_than_its_content_length_is_a_malformed_request(served):
    """A client that closes its side early: gunicorn hands over what came, as if complete."""
    base, _ = served
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(
            b"POST /api/auth/register HTTP/1.1\r\nHost: localhost\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
            b'{"email": "half@example.com", "password": "password-1"}'
        )
        connection.shutdown(socket.SHUT_WR)
        answer = http.client.HTTPResponse(connection)
        answer.begin()
        body = json.loads(answer.read())
    assert answer.status == 400 and body["type"].endswith("/problems/malformed-request"), body
    assert body["detail"] == (
        "The body ended after 55 of the 100 bytes its Content-Length announced."
    ), body
    status, _ = call(
        base, "POST", "/api/auth/login", {"email": "half@example.com", "password": "password-1"}
    )
    assert status == 401  # nothing was registered


def _raw(base, data: bytes) -> tuple[http.client.HTTPResponse, bytes]:
    """The answer to ``data`` sent as it is on a new connection."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(data)
        answer = http.client.HTTPResponse(connection)
        answer.begin()
        return answer, answer.read()


@pytest.mark.parametrize(
    ("sent", "status", "problem_type", "quoted"),
    [
        (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "about:blank", "9014"),
        (
            b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n",
            431,
            "about:blank",
            "",
        ),
        (
            b"GET / HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n",
            400,
            "/problems/malformed-request",
            "Bad Name",
        ),
        (b"get / HTTP/1.1\r\nHost: x\r\n\r\n", 400, "/problems/malformed-request", "get"),
        (
            b"GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
            400,
            "/problems/malformed-request",
            "HOST",
        ),
        (b"GET / HTTP/1.1\r\nHost: x\r\nExpect: magic\r\n\r\n", 417, "about:blank", "magic"),
        (
            b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: foo\r\n\r\n",
            501,
            "about:blank",
            "foo",
        ),
    ],
)
def test_what_the_server_refuses_itself_is_a_problem(served, sent, status, problem_type, quoted):
    """gunicorn refuses these before the app sees them: a problem with a request id, not its
    HTML page (PUBLIC_BASE_URL is unset and the host unread, so the type is relative)."""
    answer, payload = _raw(served[0], sent)
    assert answer.status == status
    assert answer.getheader("Content-Type") == "application/problem+json"
    body = json.loads(payload)
    assert body["type"] == problem_type and body["status"] == status, body
    assert body["requestId"] == answer.getheader("X-Request-ID") and len(body["requestId"]) == 32
    assert quoted in body["detail"] and len(body["detail"]) < 200, body
    assert answer.getheader("X-Content-Type-Options") == "nosniff"
    assert answer.getheader("Referrer-Policy") == "strict-origin-when-cross-origin"


@pytest.mark.parametrize(
    ("path", "size", "status"),
    [
        ("/api/auth/login", 1024 * 1024 + 1, 413),  # over the limit: refused unread
        ("/api/v1/data/webhooks", 300 * 1024, 401),  # refused before the body is read
    ],
)
def test_a_body_left_unread_ends_a_connection_that_says_so(served, path, size, status):
    """gunicorn drains at most 64 KiB of a body the app left unread, then closes the
    connection: the answer says so rather than "keep-alive"; a small body keeps it alive."""
    # Only the head is sent: the app answers before reading a byte of the body, and a body left
    # unread on the server's side would make its close a reset that may beat this read.
    answer, _ = _raw(
        served[0],
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n".encode()
        + f"Content-Length: {size}\r\n\r\n".encode(),
    )
    assert answer.status == status and answer.getheader("Connection") == "close"
    kept, _ = _raw(
        served[0],
        b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 2\r\n\r\n{}",
    )
    assert kept.status == 401 and kept.getheader("Connection") != "close"


def _chunked(size: int) -> bytes:
    """A chunked body of ``size`` bytes (64 KiB chunks) and its last chunk."""
    chunks, left = bytearray(), size
    while left:
        part = min(left, 64 * 1024)
        chunks += f"{part:x}\r\n".encode() + b"{" * part + b"\r\n"
        left -= part
    return bytes(chunks) + b"0\r\n\r\n"


@pytest.mark.parametrize(
    ("path", "size", "status"),
    [
        ("/api/auth/login", 1024 * 1024 + 300 * 1024, 413),  # over the limit: read in part
        ("/api/v1/data/webhooks", 300 * 1024, 401),  # refused before the body is read
        ("/api/v1/data/webhooks", 10, 401),  # even a short one, left unread
    ],
)
def test_a_refused_chunked_body_ends_a_connection_that_says_so(served, path, size, status):
    """A chunked body has no length to judge in advance: when the app answers without having
    read it to its end, the answer says "Connection: close", so the request pipelined behind
    it is sent again by the client rather than lost on a connection that said "keep-alive"."""
    base, _ = served
    host, port = base.removeprefix("http://").split(":")
    head = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    pipelined = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        sender = threading.Thread(
            target=_send_quietly, args=(connection, head + _chunked(size) + pipelined)
        )
        sender.start()
        reader = connection.makefile("rb")
        answered, headers = _answer(reader)
        said_close = headers["connection"] == "close"
        if not said_close:  # the next answer must come on this connection then
            assert _answer(reader)[0] == 200
        sender.join(10)
    # A short body may be drained and the connection kept (its next answer came, above); one
    # longer than gunicorn drains never is.
    assert answered == status and (said_close or size <= DRAINED)


def test_a_chunked_body_read_whole_keeps_its_connection(served):
    """A chunked body the app read to its end leaves the connection as it was: alive, and the
    request pipelined behind it answered."""
    base, _ = served
    host, port = base.removeprefix("http://").split(":")
    body = b'{"email": "nobody@example.com", "password": "password-1"}'
    sent = (
        b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
        + f"{len(body):x}\r\n".encode()
        + body
        + b"\r\n0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(sent)
        reader = connection.makefile("rb")
        answers = [_answer(reader) for _ in range(2)]
    answers = [(status, headers["connection"]) for status, headers in answers]
    assert answers == [(401, "keep-alive"), (200, "keep-alive")]


def _send_quietly(connection, data: bytes) -> None:
    """Send ``data``; a server that closed the connection before reading it all is no error."""
    with contextlib.suppress(OSError):
        connection.sendall(data)


def _answer(reader) -> tuple[int, dict]:
    """The status and headers of the next answer on ``reader`` (its body read past)."""
    line = reader.readline()
    assert line, "the connection closed without an answer"
    status = int(line.split(b" ", 2)[1])
    headers = {}
    while (line := reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    reader.read(int(headers.get("content-length", 0)))
    return status, headers


def test_a_failure_outside_flask_is_a_problem_under_the_requests_own_id(app):
    """The app failing before its answer began: gunicorn's 500 is a problem carrying the
    request's X-Request-ID, and the log has the traceback under that id."""
    output = []
    with gunicorn(app, target="tests.failing_wsgi:app", output=output) as (base, _):
        answer, payload = _raw(
            base,
            b"GET /fails-outside-flask HTTP/1.1\r\nHost: x\r\nX-Request-ID: trace-me-7\r\n\r\n",
        )
        assert call(base, "GET", "/healthz")[0] == 200  # the worker serves on
    body = json.loads(payload)
    assert answer.status == 500 and answer.getheader("X-Request-ID") == "trace-me-7"
    assert body["type"].endswith("/problems/internal-error") and body["requestId"] == "trace-me-7"
    assert "failed outside Flask" not in payload.decode()
    assert "unhandled error request_id=trace-me-7" in output[0]
    assert "RuntimeError: failed outside Flask" in output[0]


def test_forwarded_headers_count_only_through_proxy_fix_hops(served):
    """With PROXY_FIX_HOPS=0 no client names the scheme, not even one on the same host."""
    base, _ = served
    headers = {"X-Forwarded-Proto": "https", "X-Forwarded-Ssl": "on"}
    status, problem = call(base, "GET", "/nowhere", headers=headers)
    assert status == 404 and problem["type"].startswith("http://"), problem


def _listening(port=0, reuse_port=True) -> socket.socket:
    """A socket listening on a loopback port, as a server with SO_REUSEPORT holds one."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen()
    return listener


@pytest.mark.skipif(not hasattr(socket, "SO_REUSEPORT"), reason="SO_REUSEPORT is Linux's")
def test_a_second_server_on_a_port_in_use_fails_to_start(app):
    """With several workers each binds a socket of its own with SO_REUSEPORT, as another server
    on the port may have: gunicorn would start beside it and share its connections. It stops at
    once instead, saying why."""
    with _listening() as first:
        port = first.getsockname()[1]
        env = {
            **os.environ,
            "HOST": "127.0.0.1",
            "PORT": str(port),
            "WEB_CONCURRENCY": "2",
            # several workers need shared limits; the server stops before any worker uses them
            "RATELIMIT_STORAGE_URI": "redis://127.0.0.1:6379/0",
            "DATABASE_URL": app.config["DATABASE_URL"],
        }
        second = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--config", "gunicorn.conf.py", "wsgi:app"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            output = second.communicate(timeout=60)[0]
        except subprocess.TimeoutExpired:
            second.kill()
            output = second.communicate()[0]
            pytest.fail(f"a second server started on port {port}:\n{output}")
    assert second.returncode == 1, output
    assert f"Error: 127.0.0.1:{port} is in use already" in output
    assert "Booting worker" not in output


@pytest.fixture
def settings():
    """gunicorn.conf.py's namespace as gunicorn reads it for several workers."""
    environment = {"RATELIMIT_STORAGE_URI": "redis://127.0.0.1:6379/0", "WEB_CONCURRENCY": "2"}
    with mock.patch.dict(os.environ, environment):
        return runpy.run_path(str(ROOT / "gunicorn.conf.py"))


def test_a_port_a_stopped_server_left_in_time_wait_is_free(settings):
    """Only a listening socket refuses the port: the TIME_WAIT a stopped server's closed
    connections leave behind (it closed first) lets a server start again at once."""
    with _listening(reuse_port=False) as listener:
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)) as client:
            accepted, _ = listener.accept()
            accepted.close()  # the server's side closes first: its port enters TIME_WAIT
            client.recv(1)
    settings["refuse_if_in_use"](("127.0.0.1", port))  # raises nothing
    with _listening(port), pytest.raises(RuntimeError, match="is in use already"):
        settings["refuse_if_in_use"](("127.0.0.1", port))


def test_where_the_workers_listen_is_logged_with_reuse_port(settings):
    """gunicorn's master binds nothing with SO_REUSEPORT, so its "Listening at:" says nothing."""
    said = []
    server = SimpleNamespace(
        cfg=SimpleNamespace(
            reuse_port=True, is_ssl=False, address=[("127.0.0.1", 8000), ("::1", 8000)]
        ),
        log=SimpleNamespace(info=lambda text, *args: said.append(text % args)),
    )
    settings["when_ready"](server)
    assert said == [
        "Workers listen at: http://127.0.0.1:8000, http://[::1]:8000, each on a socket of its own"
    ]


def test_a_login_flood_from_one_ipv6_network_is_limited_like_one_client(app):
    """Behind the PaaS router, 200 logins from rotating addresses of one /64 (each guessing
    another account, so no account's failure count stops them) hash as many passwords as one
    client may: the auth policy's 20, whatever address each request comes from."""
    from concurrent.futures import ThreadPoolExecutor

    settings = {"PROXY_FIX_HOPS": 1, "RATELIMIT_AUTH": "20 per hour"}
    with gunicorn(app, **settings) as (base, _):

        def attempt(n):
            address = f"2001:db8:5:6:{n:x}:{n * 7:x}::{n + 1:x}"
            body = {"email": f"guess{n}@example.com", "password": "password-1"}
            headers = {"X-Forwarded-For": address}
            return call(base, "POST", "/api/auth/login", body, headers=headers)[0]

        with ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(attempt, range(200)))
    assert statuses.count(401) == 20  # a password hashed for each, the decoy's for no account
    assert statuses.count(429) == 180
