"""Configuration from the environment: defaults, types, the JWT secret's rules."""

import pytest

from config import ConfigError, as_bool, config_from_env
from engine.ledger import notes
from tests.helpers import LEDGER_KEY, WEBHOOK_KEY


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
        {"ACCESS_TOKEN_EXPIRES": "90", "RATELIMIT_ENABLED": "off", "RATING_A_GROWTH": "0.002"},
        tmp_path,
    )
    assert settings["JWT_ACCESS_TOKEN_EXPIRES"] == 90
    assert settings["RATELIMIT_ENABLED"] is False and settings["RATING_A_GROWTH"] == 0.002


def test_production_needs_a_jwt_secret(tmp_path):
    with pytest.raises(RuntimeError, match="JWT_SECRET_KEY"):
        config_from_env({"APP_ENV": "production"}, tmp_path)
    given = config_from_env(
        {
            "APP_ENV": "production",
            "JWT_SECRET_KEY": "s" * 40,
            "LEDGER_SIGNING_KEY": LEDGER_KEY,
            "WEBHOOK_SECRETS_KEY": WEBHOOK_KEY,
        },
        tmp_path,
    )
    assert given["JWT_SECRET_KEY"] == "s" * 40
    assert not (tmp_path / "jwt-secret").exists()


def test_production_needs_a_ledger_signing_key(tmp_path):
    with pytest.raises(RuntimeError, match="LEDGER_SIGNING_KEY must be set"):
        config_from_env({"APP_ENV": "production", "JWT_SECRET_KEY": "s" * 40}, tmp_path)
    assert not (tmp_path / "ledger-signing-key").exists()


@pytest.mark.parametrize("key", ["s" * 40, LEDGER_KEY.replace("cbd80a5f", "cbd80a5e")])
def test_a_ledger_signing_key_that_is_not_one_stops_the_service(tmp_path, key):
    with pytest.raises(RuntimeError, match="LEDGER_SIGNING_KEY is not a signing key"):
        config_from_env({"LEDGER_SIGNING_KEY": key}, tmp_path)


def test_outside_production_the_secret_is_made_once_and_shared(tmp_path):
    first = config_from_env({}, tmp_path)["JWT_SECRET_KEY"]
    second = config_from_env({}, tmp_path)["JWT_SECRET_KEY"]
    assert first == second and len(first) >= 48
    assert (tmp_path / "jwt-secret").stat().st_mode & 0o077 == 0
    made = ["jwt-secret", "ledger-signing-key", "webhook-secrets-key"]
    assert sorted(tmp_path.iterdir()) == [tmp_path / name for name in made]


def test_outside_production_the_ledger_key_is_made_once_private_and_named_for_the_host(tmp_path):
    environ = {"PUBLIC_BASE_URL": "https://picks.example"}
    first = config_from_env(environ, tmp_path)["LEDGER_SIGNING_KEY"]
    assert config_from_env({}, tmp_path)["LEDGER_SIGNING_KEY"] == first
    assert notes.parse_signing_key(first).name == "picks.example/ledger"
    assert (tmp_path / "ledger-signing-key").stat().st_mode & 0o777 == 0o600


def test_production_needs_a_webhook_secrets_key(tmp_path):
    secrets = {
        "APP_ENV": "production",
        "JWT_SECRET_KEY": "s" * 40,
        "LEDGER_SIGNING_KEY": LEDGER_KEY,
    }
    with pytest.raises(RuntimeError, match="WEBHOOK_SECRETS_KEY must be set") as refused:
        config_from_env(secrets, tmp_path)
    assert "Fernet.generate_key()" in str(refused.value)  # the command that makes one
    assert not (tmp_path / "webhook-secrets-key").exists()


@pytest.mark.parametrize(
    "given",
    [
        "not-a-key",
        f"{WEBHOOK_KEY},{WEBHOOK_KEY[:-2]}",  # the second cut short
        " , ",
    ],
)
def test_a_webhook_secrets_key_that_is_not_fernet_keys_stops_the_service(tmp_path, given):
    with pytest.raises(RuntimeError, match="WEBHOOK_SECRETS_KEY") as refused:
        config_from_env({"WEBHOOK_SECRETS_KEY": given}, tmp_path)
    assert WEBHOOK_KEY not in str(refused.value)  # a key is never said back


def test_webhook_secrets_keys_are_read_newest_first(tmp_path):
    older = "zSduAblD2TfW0krHqoj9seuDzjs3bfDg88GXzt7NV5s="
    settings = config_from_env({"WEBHOOK_SECRETS_KEY": f" {WEBHOOK_KEY} ,{older}"}, tmp_path)
    assert settings["WEBHOOK_SECRETS_KEY"] == (WEBHOOK_KEY, older)
    assert not (tmp_path / "webhook-secrets-key").exists()


def test_outside_production_the_webhook_secrets_key_is_made_once_and_private(tmp_path):
    first = config_from_env({}, tmp_path)["WEBHOOK_SECRETS_KEY"]
    assert config_from_env({}, tmp_path)["WEBHOOK_SECRETS_KEY"] == first
    (key,) = first
    assert (tmp_path / "webhook-secrets-key").read_text() == key
    assert (tmp_path / "webhook-secrets-key").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("word", "value"), [("1", True), ("Yes", True), ("off", False), ("", False)]
)
def test_as_bool(word, value):
    assert as_bool(word) is value


def test_as_bool_refuses_nonsense():
    with pytest.raises(ValueError, match="not a boolean"):
        as_bool("maybe")


@pytest.mark.parametrize(("given", "meant"), [("Production", "production"), (" TEST ", "test")])
def test_app_env_is_read_in_any_letter_case(tmp_path, given, meant):
    secret = {
        "JWT_SECRET_KEY": "s" * 40,
        "LEDGER_SIGNING_KEY": LEDGER_KEY,
        "WEBHOOK_SECRETS_KEY": WEBHOOK_KEY,
    }
    assert config_from_env({"APP_ENV": given, **secret}, tmp_path)["APP_ENV"] == meant


@pytest.mark.parametrize("given", ["prod", "staging", "productoin"])
def test_an_unknown_app_env_stops_the_service(tmp_path, given):
    with pytest.raises(RuntimeError, match="APP_ENV must be one of"):
        config_from_env({"APP_ENV": given}, tmp_path)
    assert not (tmp_path / "jwt-secret").exists()  # never ran on a generated key


def test_the_margin_method_is_one_the_engine_knows(tmp_path):
    assert config_from_env({}, tmp_path)["MARGIN_METHOD"] == "power"
    assert config_from_env({"MARGIN_METHOD": "shin"}, tmp_path)["MARGIN_METHOD"] == "shin"
    with pytest.raises(RuntimeError, match="MARGIN_METHOD must be one of proportional, additive"):
        config_from_env({"MARGIN_METHOD": "Shin's"}, tmp_path)


def test_pick_markets_are_a_list_of_known_markets(tmp_path):
    assert config_from_env({}, tmp_path)["PICK_MARKETS"] == ("1x2", "ou25", "ah")
    given = config_from_env({"PICK_MARKETS": " btts, 1x2 "}, tmp_path)
    assert given["PICK_MARKETS"] == ("btts", "1x2")
    with pytest.raises(RuntimeError, match="PICK_MARKETS may name only 1x2, ou25, btts"):
        config_from_env({"PICK_MARKETS": "1x2,corners"}, tmp_path)


@pytest.mark.parametrize("seconds", ["59", "0", "-1"])
def test_the_worker_may_not_be_called_silent_within_a_minute(tmp_path, seconds):
    with pytest.raises(RuntimeError, match="WORKER_MAX_SILENCE_SECONDS must be at least 60"):
        config_from_env({"WORKER_MAX_SILENCE_SECONDS": seconds}, tmp_path)


def test_production_with_a_capital_p_still_needs_the_secret(tmp_path):
    with pytest.raises(RuntimeError, match="JWT_SECRET_KEY must be set"):
        config_from_env({"APP_ENV": "Production"}, tmp_path)


@pytest.mark.parametrize("secret", ["k", "k" * 31, "é" * 15])
def test_production_needs_a_secret_of_32_bytes(tmp_path, secret):
    keys = {
        "APP_ENV": "production",
        "LEDGER_SIGNING_KEY": LEDGER_KEY,
        "WEBHOOK_SECRETS_KEY": WEBHOOK_KEY,
    }
    with pytest.raises(RuntimeError, match="at least 32 bytes"):
        config_from_env({**keys, "JWT_SECRET_KEY": secret}, tmp_path)
    assert config_from_env({**keys, "JWT_SECRET_KEY": "é" * 16}, tmp_path)


@pytest.mark.parametrize("seconds", ["0", "-1", "59"])
def test_token_lifetimes_under_a_minute_are_refused(tmp_path, seconds):
    with pytest.raises(RuntimeError, match="ACCESS_TOKEN_EXPIRES"):
        config_from_env({"ACCESS_TOKEN_EXPIRES": seconds}, tmp_path)


def test_the_generated_secret_is_created_private_not_made_private_later(tmp_path, monkeypatch):
    """The key file is owner-only from the instant it exists: created with mode 0600 (whatever
    the umask), never written world-readable and chmod-ed after."""
    import os
    from pathlib import Path

    def refuse(*_args, **_kwargs):
        raise AssertionError("the secret must not need a chmod")

    monkeypatch.setattr(Path, "chmod", refuse)
    monkeypatch.setattr(os, "chmod", refuse)
    previous = os.umask(0)
    try:
        secret = config_from_env({}, tmp_path)["JWT_SECRET_KEY"]
    finally:
        os.umask(previous)
    assert (tmp_path / "jwt-secret").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "ledger-signing-key").stat().st_mode & 0o777 == 0o600
    assert len(secret) >= 48


def test_new_settings_have_safe_defaults(tmp_path):
    settings = config_from_env({}, tmp_path)
    assert settings["PROXY_FIX_HOPS"] == 0  # no forwarded header is believed without a proxy
    assert settings["ALLOWED_HOSTS"] == frozenset({"localhost", "127.0.0.1", "::1"})
    assert 0 < settings["DATABASE_CONNECT_TIMEOUT"] <= 5
    assert 0 < settings["DATABASE_STATEMENT_TIMEOUT"] <= 15
    assert 0 < settings["RATELIMIT_STORAGE_TIMEOUT"] <= 2
    assert settings["RATELIMIT_LOGIN_FAILURES"] == "5 per minute"
    assert settings["PASSWORD_HASH_CONCURRENCY"] == 2


@pytest.mark.parametrize("prefix", ["0", "129"])
def test_an_ipv6_prefix_out_of_range_is_refused(tmp_path, prefix):
    with pytest.raises(ConfigError, match="RATELIMIT_IPV6_PREFIX"):
        config_from_env({"RATELIMIT_IPV6_PREFIX": prefix}, tmp_path)


@pytest.mark.parametrize(
    ("environ", "refused"),
    [
        ({"SMTP_URL": "http://mail.example.com"}, "SMTP_URL must start with one of"),
        ({"SMTP_URL": "mail.example.com:25"}, "SMTP_URL must start with one of"),
        ({"ALERT_RETRY_SCHEDULE": "0,soon"}, "ALERT_RETRY_SCHEDULE is not a list of seconds"),
        ({"ALERT_RETRY_SCHEDULE": "0,-5"}, "ALERT_RETRY_SCHEDULE needs at least one delay"),
    ],
)
def test_alert_settings_that_cannot_work_stop_the_service(tmp_path, environ, refused):
    with pytest.raises(ConfigError, match=refused):
        config_from_env(environ, tmp_path)


def test_the_alert_settings_are_read(tmp_path):
    settings = config_from_env(
        {"SMTP_URL": "smtps://user:p%40ss@mail.example.com", "ALERT_RETRY_SCHEDULE": "0,60"},
        tmp_path,
    )
    assert settings["SMTP_URL"] == "smtps://user:p%40ss@mail.example.com"
    assert settings["ALERT_RETRY_SCHEDULE"] == (0.0, 60.0)
    assert settings["TELEGRAM_API_BASE"] == "https://api.telegram.org"
    assert settings["TELEGRAM_BOT_TOKEN"] is None
