"""Configuration from the environment, read each time the application factory runs: every setting
with its default (:data:`DEFAULTS`), read and checked by :func:`config_from_env`. How a value is
parsed lives in :mod:`config.values`, the secrets and keys in :mod:`config.keys`;
``python -m config`` checks an environment's configuration (:func:`main`)."""

import os
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlparse

from cryptography.fernet import Fernet

from config.keys import (
    check_secrets,
    ledger_key_name,
    secrets_key_problem,
    secrets_keys,
    shared_secret,
    signing_key_problem,
)
from config.values import (
    ConfigError,
    app_env,
    as_bool,
    cors_origins,
    host_names,
    ledger_witnesses,
    pick_markets,
    pro_url,
    webhook_ports,
)
from engine.ledger import notes
from enums import MARGIN_METHODS
from services.feeds.formats import footballdata, oddsapi

#: The shortest token lifetime accepted, seconds (0 would mean tokens that never expire).
MIN_TOKEN_SECONDS = 60


#: How ``SMTP_URL`` may reach its server: in the clear, upgraded by STARTTLS, or over TLS.
SMTP_SCHEMES = ("smtp", "smtp+starttls", "smtps")


#: Every setting the environment may give, with its default (None: none, or derived).
DEFAULTS: dict[str, object] = {
    "APP_ENV": "development",
    "DATABASE_URL": None,  # an SQLite file in the instance folder
    "JWT_SECRET_KEY": None,  # generated once into the instance folder outside production
    "ACCESS_TOKEN_EXPIRES": 3600,
    "PUBLIC_BASE_URL": None,
    "PRO_URL": None,  # where the pages send a reader for Pro (the application's own page)
    "LOG_LEVEL": "INFO",
    "PASSWORD_HASH_METHOD": "scrypt:32768:8:1",
    "CORS_ORIGINS": "",  # browser origins allowed to call the API; none by default
    "PROXY_FIX_HOPS": 0,  # 1 behind a PaaS router; never more than the proxies really there
    # hosts a link may name without PUBLIC_BASE_URL: bare, the default port only; or host:port
    "ALLOWED_HOSTS": "localhost,127.0.0.1,::1",
    "DATABASE_CONNECT_TIMEOUT": 3.0,
    "DATABASE_STATEMENT_TIMEOUT": 10.0,  # 0: none (long one-off commands)
    "READINESS_CACHE_SECONDS": 1.0,  # how long /readyz keeps its verdict (one probe connection)
    "PASSWORD_HASH_CONCURRENCY": 2,
    # sign-ins and registrations that may wait for a hashing turn; more are a 503 at once
    "PASSWORD_HASH_QUEUE": 2,
    "RATELIMIT_ENABLED": True,
    "RATELIMIT_STORAGE_URI": "memory://",
    "RATELIMIT_STORAGE_TIMEOUT": 1.0,
    "RATELIMIT_STRATEGY": "sliding-window-counter",
    "RATELIMIT_PUBLIC": "120 per minute",
    "RATELIMIT_AUTH": "20 per minute",
    "RATELIMIT_REGISTER": "5 per hour",
    "RATELIMIT_DATA": "600 per minute",  # the Data API, per user: paging and exports
    # The ledger's tiles and bulk answers, per client address: an audit reads some 1,000 at once
    "RATELIMIT_TILES": "3000 per minute",
    "RATELIMIT_LOGIN_FAILURES": "5 per minute",
    "RATELIMIT_IPV6_PREFIX": 64,  # an IPv6 client counts by its network of this many bits
    "QUOTA_PRO_REQUESTS": 50_000,
    "QUOTA_PRO_EXPORTS": 500,
    "QUOTA_PRO_EXPORT_ROWS": 2_000_000,
    "QUOTA_WARNING_RATIO": 0.8,
    "SETTLEMENT_MAX_AGE_HOURS": 26,
    "CALIBRATION_MAX_AGE_HOURS": 24 * 8,
    # The worker runs the schedule every minute: three missed minutes and health says so.
    "WORKER_MAX_SILENCE_SECONDS": 180,
    # The pick and rating rule (engine.betting.picks, engine.betting.trust), chosen by
    # bench/ratings.py on the Premier League and La Liga 2017/18-2021/22 and confirmed on the
    # Bundesliga, Ligue 1 and the Championship (every season) and on the two choice leagues'
    # 2022/23-2023/24: docs/method.md, Ratings.
    "PICK_MIN_EDGE": 0.02,
    "PICK_MIN_GROWTH": 0.0,  # expected log growth of a Kelly stake, nats per bet
    # The markets that get picks: those whose picks on the choice leagues have a positive fair
    # closing EV under power and Shin (bench/ratings.py); btts has no closing price to show it,
    # and ou (over/under at lines but 2.5) no price at all in football-data files.
    "PICK_MARKETS": "1x2,ou25,ah",
    "RATING_A_GROWTH": 0.0008,
    "RATING_A_QUALITY": 0.8,
    "RATING_B_GROWTH": 0.0004,
    "RATING_B_QUALITY": 0.6,
    # How much of a pick's edge the rating trusts (engine.betting.trust): the share of earlier
    # settled picks' edges that held at the close at its price band (prior share and its
    # spread) and league (spread), less TRUST_CAUTION standard errors. Chosen with the growth
    # thresholds above by bench/ratings.py: docs/method.md, Ratings.
    "TRUST_PRIOR": 0.75,
    "TRUST_PRIOR_SPREAD": 0.25,
    "TRUST_LEAGUE_SPREAD": 0.0,
    "TRUST_CAUTION": 0.0,
    # Results of a league in the goal model's window before it pools with the market, rates or
    # picks there (engine.model.walkforward.MIN_LEAGUE_MATCHES): docs/method.md, Pooling.
    "MODEL_MIN_LEAGUE_MATCHES": 100,
    "VOID_AFTER_HOURS": 48,
    # Suggested stakes (engine.betting.stakes): a share of Kelly, capped, and the settled picks
    # of a rating and price band before its picks get one (docs/method.md, Stakes).
    "STAKE_KELLY_FRACTION": 0.25,
    "STAKE_CAP": 0.02,
    "STAKE_MIN_SETTLED": 30,
    "OPERATION_STALE_SECONDS": 900,
    "EXPORT_STREAMS_PER_USER": 2,
    "EXPORT_STREAMS_PER_PROCESS": 4,  # below GUNICORN_THREADS: the rest serve everything else
    "EXPORT_SEND_TIMEOUT": 30.0,  # seconds a reader may leave one chunk (64 KiB) unread
    # Bytes a second a reader must take, on average over the time the stream waits on it, once
    # it has waited EXPORT_SEND_TIMEOUT in all (0: no minimum).
    "EXPORT_MIN_RATE": 16384,
    "ANSWER_CACHE_BYTES": 32 * 1024 * 1024,
    "ANSWER_CACHE_ENTRIES": 20_000,
    "PUBLIC_MAX_AGE": 30,
    # The best calibrated on Pinnacle's closing lines (bench/margins.py): docs/method.md.
    "MARGIN_METHOD": "power",
    # The worker: its queue (an SQLite file beside the database unless a redis:// URL is given),
    # its threads and the schedule of the jobs it runs (cron syntax, UTC).
    "WORKER_QUEUE_URL": None,
    "WORKER_THREADS": 3,
    "SCHEDULE_SETTLEMENT": "0 * * * *",
    "SCHEDULE_CALIBRATION": "30 3 * * *",
    "SCHEDULE_LEDGER_CHECKPOINT": "*/10 * * * *",
    "SCHEDULE_SETTLEMENT_LAST_DAYS": 7,
    "SCHEDULE_CALIBRATION_WINDOW_DAYS": 90,
    # The live sources (docs/operations.md, Live data) and the worker's syncs of them.
    "FOOTBALL_DATA_URL": None,  # the site, a mirror or a local folder; the source is off if unset
    # The top divisions football-data.co.uk serves a season file of every season (its "main"
    # leagues) and ODDS_API_SPORTS's default covers: a mirror serving fewer is given those
    # (`flask data bootstrap` names the files a source does not serve).
    "FOOTBALL_DATA_LEAGUES": "E0,E1,SP1,D1,I1,F1",
    "FOOTBALL_DATA_NEW_LEAGUES": "",  # codes such as USA,BRA: new_league_fixtures.csv's rows
    "FOOTBALL_DATA_SEASONS": "",  # folders such as 2324; the current season's when empty
    "ODDS_API_KEY": None,  # The Odds API's key; the source is off without one
    "ODDS_API_URL": "https://api.the-odds-api.com",
    "ODDS_API_SPORTS": "",  # sport:Div pairs; the top leagues' when empty
    "ODDS_API_REGIONS": "uk,eu",
    "ODDS_API_MARKETS": "h2h,totals",
    "ODDS_API_MONTHLY_CREDITS": 500,
    "ODDS_API_HORIZON_HOURS": 48,
    "SOURCE_TIMEOUT": 20.0,
    "SOURCE_RETRIES": 3,
    "SOURCE_BACKOFF": 1.0,
    "SOURCE_MAX_WAIT": 60.0,
    "SOURCE_DEADLINE": 45.0,  # seconds one fetch may take in all, its tries and waits included
    "SOURCE_MAX_AGE_HOURS": 6,
    "SCHEDULE_DATA_SYNC": "*/30 * * * *",
    "SCHEDULE_DATA_SYNC_NEAR": "*/5 * * * *",
    "DATA_SYNC_NEAR_HOURS": 3,
    # Webhooks.
    "WEBHOOK_MAX_ENDPOINTS": 5,
    "WEBHOOK_ALLOW_PRIVATE": False,  # development and tests only; refused in production
    "WEBHOOK_ALLOWED_PORTS": "443,80",  # the ports a webhook URL may name
    "WEBHOOK_RETRY_SCHEDULE": "0,5,300,1800,7200,18000,36000,50400,72000,86400",
    "WEBHOOK_TIMEOUT": 15.0,
    "WEBHOOK_SECRET_OVERLAP_HOURS": 24.0,
    "WEBHOOK_POLL_SECONDS": 1.0,
    "WEBHOOK_LEASE_SECONDS": 60.0,
    "WEBHOOK_CONCURRENCY": 4,
    # Fernet keys, newest first, encrypting the endpoints' signing secrets in the database;
    # generated once into the instance folder outside production.
    "WEBHOOK_SECRETS_KEY": None,
    # Pick alerts (docs/configuration.md, Alerts): email over SMTP, Telegram's Bot API.
    "SMTP_URL": None,  # smtp://, smtp+starttls:// or smtps://[user:password@]host[:port]
    "SMTP_FROM": None,  # the alerts' From address; email alerts are off without both
    "TELEGRAM_BOT_TOKEN": None,  # Telegram alerts are off without one
    "TELEGRAM_API_BASE": "https://api.telegram.org",
    "ALERT_RETRY_SCHEDULE": "0,30,120,600,1800,3600",
    "ALERT_TIMEOUT": 15.0,
    "LEDGER_SIGNING_KEY": None,  # generated once into the instance folder outside production
    "LEDGER_TSA_URL": None,  # an RFC 3161 time-stamping authority for the checkpoints
    "LEDGER_TSA_TIMEOUT": 10.0,
    # Witnesses cosigning each checkpoint (C2SP tlog-witness): "vkey@url", comma-separated.
    "LEDGER_WITNESSES": "",
    "LEDGER_WITNESS_TIMEOUT": 10.0,
}


def _typed(name, raw):
    default = DEFAULTS[name]
    try:
        if isinstance(default, bool):
            return as_bool(raw)
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
    except ValueError:
        kind = "a boolean" if isinstance(default, bool) else "a number"
        raise ConfigError(f"{name} must be {kind} (got {raw!r})") from None
    return raw


def config_from_env(environ, instance_path, overrides=None) -> dict:
    """Configuration from ``environ``, then ``overrides``; files go in ``instance_path``.
    A setting refused raises ``ConfigError``."""
    settings = {
        name: _typed(name, environ[name]) if environ.get(name) not in (None, "") else default
        for name, default in DEFAULTS.items()
    }
    settings.update(overrides or {})
    settings["APP_ENV"] = app_env(settings["APP_ENV"])
    production = settings["APP_ENV"] == "production"
    if not settings["DATABASE_URL"]:
        settings["DATABASE_URL"] = f"sqlite:///{Path(instance_path) / 'app.db'}"
    check_secrets(settings, production)
    if not settings["JWT_SECRET_KEY"]:
        settings["JWT_SECRET_KEY"] = shared_secret(Path(instance_path) / "jwt-secret")
    if not settings["LEDGER_SIGNING_KEY"]:
        key_file = Path(instance_path) / "ledger-signing-key"
        settings["LEDGER_SIGNING_KEY"] = shared_secret(
            key_file,
            lambda: notes.generate(ledger_key_name(settings["PUBLIC_BASE_URL"])).encode(),
        )
        if refused := signing_key_problem(settings["LEDGER_SIGNING_KEY"]):
            raise ConfigError(f"{refused} (read from {key_file}: remove it to make a new one)")
    if not settings["WEBHOOK_SECRETS_KEY"]:
        key_file = Path(instance_path) / "webhook-secrets-key"
        settings["WEBHOOK_SECRETS_KEY"] = shared_secret(
            key_file, lambda: Fernet.generate_key().decode()
        )
        if refused := secrets_key_problem(settings["WEBHOOK_SECRETS_KEY"]):
            raise ConfigError(f"{refused} (read from {key_file})")
    settings["WEBHOOK_SECRETS_KEY"] = secrets_keys(settings["WEBHOOK_SECRETS_KEY"])
    if settings["ACCESS_TOKEN_EXPIRES"] < MIN_TOKEN_SECONDS:
        raise ConfigError(f"ACCESS_TOKEN_EXPIRES must be at least {MIN_TOKEN_SECONDS} seconds")
    if settings["PASSWORD_HASH_CONCURRENCY"] < 1:
        raise ConfigError("PASSWORD_HASH_CONCURRENCY must be at least 1")
    if settings["PASSWORD_HASH_QUEUE"] < 0:
        raise ConfigError("PASSWORD_HASH_QUEUE must be at least 0")
    if not 1 <= settings["RATELIMIT_IPV6_PREFIX"] <= 128:
        raise ConfigError("RATELIMIT_IPV6_PREFIX must be a prefix length from 1 to 128")
    settings["PICK_MARKETS"] = pick_markets(settings["PICK_MARKETS"])
    if not (0 < settings["STAKE_KELLY_FRACTION"] <= 1 and 0 < settings["STAKE_CAP"] <= 1):
        raise ConfigError("STAKE_KELLY_FRACTION and STAKE_CAP must be above 0 and at most 1")
    if settings["MARGIN_METHOD"] not in MARGIN_METHODS:
        raise ConfigError(
            f"MARGIN_METHOD must be one of {', '.join(MARGIN_METHODS)} "
            f"(got {settings['MARGIN_METHOD']!r})"
        )
    settings["ALLOWED_HOSTS"] = host_names(settings["ALLOWED_HOSTS"])
    settings["CORS_ORIGINS"] = cors_origins(settings["CORS_ORIGINS"])
    settings["PRO_URL"] = pro_url(settings["PRO_URL"])
    settings["WEBHOOK_ALLOWED_PORTS"] = webhook_ports(settings["WEBHOOK_ALLOWED_PORTS"])
    settings["LEDGER_WITNESSES"] = ledger_witnesses(settings["LEDGER_WITNESSES"])
    check_worker(settings, production)
    check_exports(settings)
    check_sources(settings)
    settings["RATELIMIT_KEY_PREFIX"] = "picks"
    settings["JWT_ACCESS_TOKEN_EXPIRES"] = settings["ACCESS_TOKEN_EXPIRES"]
    settings["MAX_CONTENT_LENGTH"] = 1024 * 1024
    return settings


def check_worker(settings, production: bool) -> None:
    """Refuse worker, webhook and alert settings that cannot work, or that open a hole in
    production; the retry schedules become tuples of seconds."""
    if production and settings["WEBHOOK_ALLOW_PRIVATE"]:
        raise ConfigError("WEBHOOK_ALLOW_PRIVATE must not be set when APP_ENV=production")
    for name in ("WEBHOOK_RETRY_SCHEDULE", "ALERT_RETRY_SCHEDULE"):
        schedule = settings[name]
        if isinstance(schedule, str):
            try:
                schedule = tuple(float(step) for step in schedule.split(","))
            except ValueError as exc:
                raise ConfigError(f"{name} is not a list of seconds: {exc}") from exc
        if not schedule or any(step < 0 for step in schedule):
            raise ConfigError(f"{name} needs at least one delay, none negative")
        settings[name] = tuple(schedule)
    if settings["SMTP_URL"] and urlparse(settings["SMTP_URL"]).scheme not in SMTP_SCHEMES:
        raise ConfigError(f"SMTP_URL must start with one of {', '.join(SMTP_SCHEMES)}://")
    if settings["WEBHOOK_LEASE_SECONDS"] <= settings["WEBHOOK_TIMEOUT"]:
        raise ConfigError("WEBHOOK_LEASE_SECONDS must be longer than WEBHOOK_TIMEOUT")
    for name in ("WORKER_THREADS", "WEBHOOK_MAX_ENDPOINTS", "WEBHOOK_CONCURRENCY"):
        if settings[name] < 1:
            raise ConfigError(f"{name} must be at least 1")
    if settings["WORKER_MAX_SILENCE_SECONDS"] < 60:  # the schedule runs once a minute
        raise ConfigError("WORKER_MAX_SILENCE_SECONDS must be at least 60")


def check_sources(settings) -> None:
    """Refuse live-source settings that cannot work: an unknown league or sport pairing, a
    market The Odds API sync does not read, a negative budget or retry count."""
    unknown = [
        code.strip()
        for code in settings["FOOTBALL_DATA_LEAGUES"].split(",")
        if code.strip() and code.strip() not in footballdata.DIVISIONS
    ]
    if unknown:
        raise ConfigError(f"FOOTBALL_DATA_LEAGUES names unknown divisions: {', '.join(unknown)}")
    known_new = set(footballdata.NEW_LEAGUE_CODES.values())
    unknown = [
        code.strip()
        for code in settings["FOOTBALL_DATA_NEW_LEAGUES"].split(",")
        if code.strip() and code.strip() not in known_new
    ]
    if unknown:
        raise ConfigError(
            f"FOOTBALL_DATA_NEW_LEAGUES names unknown leagues: {', '.join(unknown)} "
            f"(one of {', '.join(sorted(known_new))})"
        )
    try:
        oddsapi.sports(settings["ODDS_API_SPORTS"])
    except ValueError as exc:
        raise ConfigError(f"ODDS_API_SPORTS: {exc}") from None
    markets = {m.strip() for m in settings["ODDS_API_MARKETS"].split(",") if m.strip()}
    if not markets or not markets <= set(oddsapi.MARKETS):
        raise ConfigError(f"ODDS_API_MARKETS must name some of {', '.join(oddsapi.MARKETS)}")
    for name in ("ODDS_API_MONTHLY_CREDITS", "SOURCE_RETRIES", "ODDS_API_HORIZON_HOURS"):
        if settings[name] < 0:
            raise ConfigError(f"{name} must not be negative")
    if settings["SOURCE_TIMEOUT"] <= 0:
        raise ConfigError("SOURCE_TIMEOUT must be positive")
    if settings["SOURCE_DEADLINE"] <= 0:
        raise ConfigError("SOURCE_DEADLINE must be positive")


def check_exports(settings) -> None:
    """Refuse export stream bounds that would allow no export, or never cut a stalled one."""
    for name in ("EXPORT_STREAMS_PER_USER", "EXPORT_STREAMS_PER_PROCESS"):
        if settings[name] < 1:
            raise ConfigError(f"{name} must be at least 1")
    if settings["EXPORT_SEND_TIMEOUT"] <= 0:
        raise ConfigError("EXPORT_SEND_TIMEOUT must be a positive number of seconds")
    if settings["EXPORT_MIN_RATE"] < 0:
        raise ConfigError("EXPORT_MIN_RATE must be a number of bytes a second, 0 or more")


def main() -> None:
    """``python -m config``: check the configuration this environment (and a ``.env`` file)
    gives, by the rules the app starts with: one line saying so, or one line saying what is
    refused and exit status 1. Nothing is written: secrets a development setup would make go
    to a scratch folder."""
    from dotenv import load_dotenv

    load_dotenv()
    with tempfile.TemporaryDirectory() as scratch:
        try:
            settings = config_from_env(os.environ, scratch)
        except ConfigError as error:
            sys.exit(f"Error: {error}")
    print(f"configuration accepted (APP_ENV={settings['APP_ENV']})")
