"""The real thing: gunicorn serving the app on a loopback port, called over HTTP."""

import threading

import pytest

from tests.servers import call, flask, gunicorn

pytestmark = pytest.mark.slow  # real gunicorn processes


@pytest.fixture
def served(app):
    """gunicorn on a free loopback port, sharing the test database; its environment too."""
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
