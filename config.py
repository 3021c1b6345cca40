"""Configuration from the environment, read each time the application factory runs."""

import base64
import binascii
import hashlib
import os
import secrets
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlparse

from cryptography.fernet import Fernet

from engine.ledger import notes
from enums import MARGIN_METHODS, MARKETS
from services.feeds.formats import footballdata, oddsapi

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off", ""})

#: What ``APP_ENV`` may say (in any letter case); anything else stops the service at startup,
#: so a typo such as ``prod`` never runs production with a generated key.
APP_ENVS = ("development", "test", "production")

#: The shortest signing key production accepts: HS256 wants at least its hash's 32 bytes.
MIN_SECRET_BYTES = 32

#: The shortest token lifetime accepted, seconds (0 would mean tokens that never expire).
MIN_TOKEN_SECONDS = 60

#: How ``SMTP_URL`` may reach its server: in the clear, upgraded by STARTTLS, or over TLS.
SMTP_SCHEMES = ("smtp", "smtp+starttls", "smtps")

#: The command that makes each secret production needs, said when one is missing or refused.
SECRET_COMMANDS = {
    "JWT_SECRET_KEY": 'python -c "import secrets; print(secrets.token_urlsafe(48))"',
    "LEDGER_SIGNING_KEY": "flask --app app ledger new-key {name}",
    "WEBHOOK_SECRETS_KEY": (
        'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
    ),
}


class ConfigError(RuntimeError):
    """A configuration the service refuses to start with. Its message is one line: each setting
    that is wrong, why, and for a secret the command that makes one. The entry points say it as
    that one line on stderr, with exit status 1, never a traceback."""


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


def as_bool(value) -> bool:
    """Read a boolean the way people write one in an environment variable."""
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ValueError(f"not a boolean: {value!r}")


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


def check_secrets(settings, production: bool) -> None:
    """Refuse the secrets production lacks or cannot trust, all of them in one message naming
    each variable and the command that makes it: ``JWT_SECRET_KEY`` (set, and at least
    ``MIN_SECRET_BYTES`` long), ``LEDGER_SIGNING_KEY`` (set, and a signing key) and
    ``WEBHOOK_SECRETS_KEY`` (set, and Fernet keys). Outside production a missing one is made
    into the instance folder instead."""
    problems = []
    secret = settings["JWT_SECRET_KEY"]
    if production and not secret:
        problems.append(
            f"JWT_SECRET_KEY must be set when APP_ENV=production ({_making('JWT_SECRET_KEY')})"
        )
    elif production and len(secret.encode()) < MIN_SECRET_BYTES:
        problems.append(
            f"JWT_SECRET_KEY must be at least {MIN_SECRET_BYTES} bytes when APP_ENV=production "
            f"(it has {len(secret.encode())}; {_making('JWT_SECRET_KEY')})"
        )
    key, making = settings["LEDGER_SIGNING_KEY"], _making("LEDGER_SIGNING_KEY", settings)
    if key and (refused := signing_key_problem(key)):
        problems.append(f"{refused} ({making})")
    elif production and not key:
        problems.append(f"LEDGER_SIGNING_KEY must be set when APP_ENV=production ({making})")
    keys, making = settings["WEBHOOK_SECRETS_KEY"], _making("WEBHOOK_SECRETS_KEY")
    if keys and (refused := secrets_key_problem(keys)):
        problems.append(f"{refused} ({making})")
    elif production and not keys:
        problems.append(f"WEBHOOK_SECRETS_KEY must be set when APP_ENV=production ({making})")
    if problems:
        raise ConfigError("; ".join(problems))


def signing_key_problem(key: str) -> str | None:
    """Why ``key`` cannot be ``LEDGER_SIGNING_KEY``, or None when it can."""
    try:
        notes.parse_signing_key(key)
    except notes.NoteError as error:
        return f"LEDGER_SIGNING_KEY is not a signing key: {error}"
    return None


def secrets_keys(value) -> tuple[str, ...]:
    """``WEBHOOK_SECRETS_KEY`` (comma-separated, or a list) as its keys, newest first."""
    names = value.split(",") if isinstance(value, str) else value
    return tuple(key.strip() for key in names if key.strip())


def secrets_key_problem(value) -> str | None:
    """Why ``value`` cannot be ``WEBHOOK_SECRETS_KEY``, or None when it can. A key is never
    said back, only its place in the list."""
    keys = secrets_keys(value)
    if not keys:
        return "WEBHOOK_SECRETS_KEY holds no key"
    for place, key in enumerate(keys, 1):
        try:
            Fernet(key)
        except ValueError:
            return (
                f"WEBHOOK_SECRETS_KEY must be Fernet keys, newest first, comma-separated: its key "
                f"{place} of {len(keys)} is not 32 url-safe base64-encoded bytes"
            )
    return None


def _making(name: str, settings=None) -> str:
    """How to make the secret ``name``; the ledger key is named after the service's host
    (``PUBLIC_BASE_URL``), or after a host to fill in while none is configured."""
    base_url = settings["PUBLIC_BASE_URL"] if settings else None
    host = urlparse(base_url).hostname if base_url else None
    key_name = f"{host or 'your.host'}/ledger"
    return f"make one with: {SECRET_COMMANDS[name].format(name=key_name)}"


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


def app_env(value) -> str:
    """``APP_ENV`` normalised (``Production`` is ``production``); unknown values refused."""
    word = str(value).strip().lower()
    if word not in APP_ENVS:
        raise ConfigError(f"APP_ENV must be one of {', '.join(APP_ENVS)} (got {value!r})")
    return word


def pick_markets(value) -> tuple[str, ...]:
    """``PICK_MARKETS`` (comma-separated, or a list) as a tuple of market names; an unknown
    market stops the service at startup. An empty list (as an override) gives no picks."""
    names = value.split(",") if isinstance(value, str) else value
    markets = tuple(name.strip() for name in names if name.strip())
    if unknown := sorted(set(markets) - set(MARKETS)):
        raise ConfigError(
            f"PICK_MARKETS may name only {', '.join(MARKETS)} (got {', '.join(unknown)})"
        )
    return markets


def host_names(value) -> frozenset[str]:
    """``ALLOWED_HOSTS`` (comma-separated, or a list) as lower-case entries: a bare host name or
    address (``localhost``, ``::1``: the scheme's default port only) or one with its port
    (``localhost:8000``, ``[::1]:8000``: that port only). A port that is not a number from 1 to
    65535 stops the service at startup."""
    names = value.split(",") if isinstance(value, str) else value
    return frozenset(_host_entry(name.strip().lower()) for name in names if name.strip())


def _host_entry(entry: str) -> str:
    """One ``ALLOWED_HOSTS`` entry as :func:`web.links.base_url` looks it up: ``name`` or
    ``name:port``, an IPv6 address bracketed only when a port follows it."""
    if entry.startswith("["):
        name, _, rest = entry[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else None
        if rest and port is None:
            raise ConfigError(f"ALLOWED_HOSTS has a malformed entry {entry!r}")
    elif entry.count(":") == 1:
        name, _, port = entry.partition(":")
    else:
        name, port = entry, None  # a host name, or an IPv6 address without brackets
    if port is None:
        return name
    if not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise ConfigError(f"ALLOWED_HOSTS has an entry whose port is not a port: {entry!r}")
    return f"[{name}]:{int(port)}" if ":" in name else f"{name}:{int(port)}"


def webhook_ports(value) -> frozenset[int]:
    """``WEBHOOK_ALLOWED_PORTS`` (comma-separated, or a list) as port numbers; none, or one that
    is not a number from 1 to 65535, stops the service at startup."""
    items = value.split(",") if isinstance(value, str) else value
    ports = set()
    for item in items:
        text = str(item).strip()
        if not (text.isascii() and text.isdigit() and 1 <= int(text) <= 65535):
            raise ConfigError(
                f"WEBHOOK_ALLOWED_PORTS must list ports from 1 to 65535 (got {item!r})"
            )
        ports.add(int(text))
    if not ports:
        raise ConfigError("WEBHOOK_ALLOWED_PORTS must list at least one port")
    return frozenset(ports)


def cors_origins(value) -> tuple[str, ...]:
    """``CORS_ORIGINS`` (comma-separated, or a list) as origins (``https://app.example``,
    ``http://localhost:5173``) or ``*``; an origin with a path, or without a scheme, stops the
    service at startup (a browser sends none such, so it would silently allow nothing)."""
    names = value.split(",") if isinstance(value, str) else value
    origins = tuple(name.strip().rstrip("/") for name in names if name.strip())
    for origin in origins:
        if origin == "*":
            continue
        parsed = urlparse(origin)
        if parsed.scheme not in ("http", "https") or not parsed.netloc or parsed.path:
            raise ConfigError(
                f"CORS_ORIGINS must list origins such as https://app.example or * (got {origin!r})"
            )
    return origins


def ledger_witnesses(value) -> tuple[tuple[str, str], ...]:
    """``LEDGER_WITNESSES`` (comma-separated ``vkey@url``, or a list of them) as ``(vkey, url)``
    pairs: each vkey a witness's Ed25519 cosignature key, ``name+hash+base64(0x04 ‖ key)``
    (C2SP tlog-cosignature), each url its submission prefix (http or https)."""
    entries = value.split(",") if isinstance(value, str) else value
    found = []
    for entry in (item.strip() for item in entries):
        if not entry:
            continue
        vkey, _, url = entry.rpartition("@")
        if refused := _witness_problem(vkey, url):
            raise ConfigError(f"LEDGER_WITNESSES: {refused} (got {entry!r})")
        found.append((vkey, url.rstrip("/")))
    if len({vkey for vkey, _ in found}) != len(found):
        raise ConfigError("LEDGER_WITNESSES names a witness twice")
    return tuple(found)


def _witness_problem(vkey: str, url: str) -> str | None:
    """Why ``vkey@url`` names no witness, or None when it does."""
    if urlparse(url).scheme not in ("http", "https") or not urlparse(url).hostname:
        return "each entry is vkey@url, the url http or https"
    parts = vkey.split("+", 2)
    if len(parts) != 3 or not parts[0] or any(char.isspace() for char in parts[0]):
        return "a witness's vkey is name+hash+base64"
    if len(vkey) > 255:  # the width of ledger_cosignature.witness
        return "a witness's vkey is at most 255 characters"
    name, hash_hex, material = parts
    try:
        raw = base64.b64decode(material, validate=True)
    except binascii.Error:
        return "a witness's vkey ends in base64"
    if len(raw) != 33 or raw[0] != 4:
        return "a witness's vkey is an Ed25519 cosignature key (type 0x04, tlog-cosignature)"
    if hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4].hex() != hash_hex.lower():
        return "a witness's vkey hash does not match its name and key"
    return None


def pro_url(value) -> str | None:
    """``PRO_URL``: an ``https://`` or ``http://`` address, or a path on this site (``/pro``);
    None when unset. Anything else (``javascript:``, a bare host) stops the service at startup,
    as it would be a link that leads nowhere, or somewhere no page should send a reader."""
    if not value:
        return None
    value = value.strip()
    parsed = urlparse(value)
    absolute = parsed.scheme in ("http", "https") and bool(parsed.netloc)
    on_site = not parsed.scheme and not parsed.netloc and value.startswith("/")
    if not (absolute or on_site) or any(char.isspace() for char in value):
        raise ConfigError(
            f"PRO_URL must be an http(s) address such as https://app.example/pro, or a path "
            f"on this site such as /pro (got {value!r})"
        )
    return value


def ledger_key_name(public_base_url) -> str:
    """The name a generated ledger key signs under: the service's host and ``/ledger``."""
    host = urlparse(public_base_url).hostname if public_base_url else None
    return f"{host or 'localhost'}/ledger"


def shared_secret(path: Path, make=lambda: secrets.token_urlsafe(48)) -> str:
    """A secret kept in ``path``: made once by ``make()``, then read by every worker and every
    restart."""
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    # Created readable by its owner only from its first instant (a chmod afterwards would leave
    # a moment where others may read it); O_EXCL refuses a file planted under the draft's name.
    descriptor = os.open(draft, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    try:
        with os.fdopen(descriptor, "w") as file:
            file.write(make())
        # link() refuses to replace an existing file, so when workers race exactly one secret wins
        os.link(draft, path)
    except FileExistsError:
        pass
    finally:
        draft.unlink()
    return path.read_text().strip()


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


if __name__ == "__main__":
    main()
