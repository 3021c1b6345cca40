"""Local HTTP servers answering as the live sources do, for the sync's tests and bench.

:class:`FootballDataServer` serves files by path with an ``ETag`` and ``Last-Modified`` and
answers a conditional request for an unchanged file with 304, as football-data.co.uk's web
server does. :class:`OddsApiServer` answers ``/v4/sports/{sport}/odds`` and ``…/scores`` in The
Odds API's documented JSON, charging markets × regions credits per odds call (2 per scores call
with ``daysFrom``) and saying so in ``x-requests-remaining``, ``x-requests-used`` and
``x-requests-last``; a call past the account's credits is answered 401 as that API does.

Either may be told to answer a path's next requests otherwise (``script``): a 429 with a
``Retry-After``, an HTML error page, a cut body. The Odds API's may also be given the raw body of
a sport's odds answer (``bodies``: any bytes, charged as a good answer) and headers it adds to
every answer it charges (``headers``: a hostile credits count, say).
"""

import hashlib
import json
import threading
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from services.feeds.formats.oddsapi import DEFAULT_SPORTS
from tests.helpers import Serving

#: The Odds API's keys of our bookmakers (the reverse of
#: services.feeds.formats.oddsapi.BOOKMAKERS, and more).
ODDS_API_BOOKS = {"pinnacle": "pinnacle", "william-hill": "williamhill", "bet365": "bet365"}


class _Server(ThreadingHTTPServer):
    daemon_threads = True


class SourceServer(Serving):
    """A server on a free loopback port; ``requests`` logs (method, path, headers) of each."""

    def __init__(self):
        self.requests = []
        self.script = {}  # path → list of (status, headers, body) answered first, in order
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                owner._handle(self)

            def log_message(self, *args):
                pass

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._serve(self.httpd)

    def _handle(self, handler):
        path = urlsplit(handler.path).path
        with self.lock:
            self.requests.append(("GET", handler.path, dict(handler.headers)))
            scripted = self.script.get(path)
            answer = scripted.pop(0) if scripted else None
        if answer is None:
            answer = self.answer(handler)
        status, headers, body = answer
        handler.send_response(status)
        cut = headers.pop("X-Cut-To", None)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body if cut is None else body[: int(cut)])
        handler.wfile.flush()

    def answer(self, handler):
        raise NotImplementedError

    def paths(self) -> list[str]:
        """The paths asked for, in order."""
        return [urlsplit(path).path for _, path, _ in self.requests]


class FootballDataServer(SourceServer):
    """football-data.co.uk's files: ``files`` maps a path (``/fixtures.csv``) to its bytes."""

    def __init__(self):
        super().__init__()
        self.files = {}
        self.modified = {}  # path → Last-Modified text

    def put(self, path: str, body: bytes, modified: str) -> None:
        """Replace a file (as the site overwrites its fixture file)."""
        with self.lock:
            self.files[path] = body
            self.modified[path] = modified

    def answer(self, handler):
        path = urlsplit(handler.path).path
        with self.lock:
            body = self.files.get(path)
            modified = self.modified.get(path)
        if body is None:
            return 404, {"Content-Type": "text/html"}, b"<html><body>Not Found</body></html>"
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        validators = {"ETag": etag, "Last-Modified": modified}
        if handler.headers.get("If-None-Match") == etag:
            return 304, validators, b""
        return 200, {"Content-Type": "text/csv", **validators}, body


class OddsApiServer(SourceServer):
    """The Odds API v4: ``events[sport]`` are its events (documented JSON), ``credits`` the
    account's for the month."""

    def __init__(self, credits: int = 500, key: str = "k" * 32):
        super().__init__()
        self.events = {}
        self.scores = {}
        self.bodies = {}  # sport → the odds answer's raw bytes, instead of its events
        self.headers = {}  # added to (and overriding) every charged answer's headers
        self.credits = credits
        self.used = 0
        self.key = key

    def answer(self, handler):
        parts = urlsplit(handler.path)
        query = parse_qs(parts.query)
        if query.get("apiKey") != [self.key]:
            return 401, {"Content-Type": "application/json"}, b'{"message": "API key invalid"}'
        segments = parts.path.strip("/").split("/")
        if len(segments) != 4 or segments[:2] != ["v4", "sports"]:
            return 404, {"Content-Type": "application/json"}, b'{"message": "Not found"}'
        sport, kind = segments[2], segments[3]
        if kind == "odds":
            markets = query.get("markets", [""])[0].split(",")
            regions = query.get("regions", [""])[0].split(",")
            cost = len(markets) * len(regions)
            payload = self.events.get(sport, [])
        elif kind == "scores":
            cost = 2 if "daysFrom" in query else 1
            payload = self.scores.get(sport, [])
        else:
            return 404, {"Content-Type": "application/json"}, b'{"message": "Not found"}'
        with self.lock:
            if self.used + cost > self.credits:
                body = json.dumps(
                    {
                        "message": "Usage quota has been reached",
                        "error_code": "OUT_OF_USAGE_CREDITS",
                    }
                ).encode()
                return 401, {"Content-Type": "application/json"}, body
            self.used += cost
            headers = {
                "Content-Type": "application/json",
                "x-requests-remaining": str(self.credits - self.used),
                "x-requests-used": str(self.used),
                "x-requests-last": str(cost),
                **self.headers,
            }
        if kind == "odds" and sport in self.bodies:
            return 200, headers, self.bodies[sport]
        return 200, headers, json.dumps(payload).encode()


def odds_api_event(match, names=None) -> dict:
    """One fixture (a match record with pre-match odds) as an odds answer's event, with its
    teams named as ``names`` maps them."""
    names = names or {}
    home, away = (
        names.get(match.home_team, match.home_team),
        names.get(match.away_team, match.away_team),
    )
    books = {}
    for quote in match.odds:
        key = ODDS_API_BOOKS.get(quote.bookmaker)
        if key is None or quote.is_closing:
            continue
        market = "h2h" if quote.market == "1x2" else "totals"
        outcome = {
            "home": home,
            "away": away,
            "draw": "Draw",
            "over": "Over",
            "under": "Under",
        }[quote.selection]
        entry = {"name": outcome, "price": quote.price}
        if market == "totals":
            entry["point"] = 2.5
        books.setdefault(key, {}).setdefault(market, []).append(entry)
    return {
        "id": hashlib.md5(f"{home}{away}{match.kickoff_at}".encode()).hexdigest(),
        "sport_key": next(s for s, d in DEFAULT_SPORTS.items() if d == match.league.code),
        "sport_title": match.league.name,
        "commence_time": match.kickoff_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "home_team": home,
        "away_team": away,
        "bookmakers": [
            {
                "key": key,
                "title": key,
                "last_update": match.kickoff_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "markets": [
                    {"key": market, "outcomes": outcomes} for market, outcomes in markets.items()
                ],
            }
            for key, markets in books.items()
        ],
    }


def http_date(moment) -> str:
    """An HTTP date of an aware datetime."""
    return formatdate(moment.timestamp(), usegmt=True)
