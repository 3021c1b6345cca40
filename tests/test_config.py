"""Configuration from the environment: defaults, types, the JWT secret's rules."""

import pytest

from config import as_bool, config_from_env


def test_defaults_are_the_contract(tmp_path):
    settings = config_from_env({}, tmp_path)
    assert settings["DATABASE_URL"] == f"sqlite:///{tmp_path / 'app.db'}"
    assert (
        settings["RATELIMIT_PUBLIC"],
        settings["RATELIMIT_AUTH"],
        settings["RATELIMIT_REGISTER"],
    ) == ("120 per minute", "20 per minute", "5 per hour")
    assert settings["RATELIMIT_STRATEGY"] == "sliding-window-counter"
    assert settings["RATELIMIT_STORAGE_URI"] == "memory://"
    assert settings["JWT_ACCESS_TOKEN_EXPIRES"] == 3600
    assert settings["QUOTA_PRO_REQUESTS"] == 50_000


def test_values_are_typed(tmp_path):
    settings = config_from_env(
        {"ACCESS_TOKEN_EXPIRES": "90", "RATELIMIT_ENABLED": "off", "RATING_A_EDGE": "0.1"},
        tmp_path,
    )
    assert settings["JWT_ACCESS_TOKEN_EXPIRES"] == 90
    assert settings["RATELIMIT_ENABLED"] is False and settings["RATING_A_EDGE"] == 0.1


def test_production_needs_a_jwt_secret(tmp_path):
    with pytest.raises(RuntimeError, match="JWT_SECRET_KEY"):
        config_from_env({"APP_ENV": "production"}, tmp_path)
    given = config_from_env({"APP_ENV": "production", "JWT_SECRET_KEY": "s" * 40}, tmp_path)
    assert given["JWT_SECRET_KEY"] == "s" * 40
    assert not (tmp_path / "jwt-secret").exists()


def test_outside_production_the_secret_is_made_once_and_shared(tmp_path):
    first = config_from_env({}, tmp_path)["JWT_SECRET_KEY"]
    second = config_from_env({}, tmp_path)["JWT_SECRET_KEY"]
    assert first == second and len(first) >= 48
    assert (tmp_path / "jwt-secret").stat().st_mode & 0o077 == 0
    assert list(tmp_path.iterdir()) == [tmp_path / "jwt-secret"]


@pytest.mark.parametrize(
    ("word", "value"), [("1", True), ("Yes", True), ("off", False), ("", False)]
)
def test_as_bool(word, value):
    assert as_bool(word) is value


def test_as_bool_refuses_nonsense():
    with pytest.raises(ValueError, match="not a boolean"):
        as_bool("maybe")
