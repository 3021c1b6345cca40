"""Assertions the tests share: a problem response, a bare 401."""


def problem(response, status, name):
    """``response`` is a problem+json of ``status`` and type ``name``; returns its body."""
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    assert body["type"].endswith(f"/problems/{name}"), body
    assert body["status"] == status
    assert body["title"] and body["detail"]
    return body


def unauthorized(response, invalid_token=False):
    """``response`` is the bare 401 with a Bearer challenge."""
    assert response.status_code == 401
    assert response.get_data() == b"" and "Content-Type" not in response.headers
    expected = 'Bearer error="invalid_token"' if invalid_token else "Bearer"
    assert response.headers["WWW-Authenticate"] == expected
