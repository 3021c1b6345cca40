"""Events: what the outbox costs the settlement of 100,000 live picks (its events written in the
same transaction), and how fast one worker delivers events to a local receiver.

    python -m bench.events [--database-url URL] [--picks 100000] [--events 3000] [--rounds 3]
        [--smoke]

Prints each figure beside its baseline measured in the same run: the settlement without any
endpoint subscribed (so no events are written), and plain HTTP POSTs to the same receiver.
``--smoke``: 1,000 picks, 500 events, one round.
"""

import argparse
import http.client
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from app import create_app
from bench.common import ROOT, commit, free_port, machine, parse_arguments, stop_on_sigterm, timed
from clock import utcnow
from engine.markets import MARKETS
from models import Delivery, Event, League, Match, OddsQuote, Pick, Team, User, WebhookEndpoint
from models.schema import create_tables, drop_tables
from services.record import settling, signed_log
from services.webhooks import deliveries, encryption, events
from services.webhooks.endpoints import new_secret
from store.bulk import insert_rows
from store.database import db

RECEIVER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass

ThreadingHTTPServer.request_queue_size = 128  # a web server's backlog, not http.server's 5
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def world(picks: int, settings):
    """``picks`` pending live picks on finished matches with closing odds, and a Pro user: made
    a day before kick-off, published in the ledger and signed then, so settlement counts them
    live (the live rule sets apart a live pick without a signed entry from before kick-off)."""
    league = League.create(code="BENCH", name="Bench", country="Benchland", competition_type="cup")
    teams = [Team.create(name=f"Team {n}", country="Benchland") for n in range(2)]
    kickoff = utcnow() - timedelta(days=1)
    count = picks // len(MARKETS) + 1
    with db.atomic():
        insert_rows(
            Match,
            [
                "league",
                "season",
                "home_team",
                "away_team",
                "kickoff_at",
                "status",
                "home_goals",
                "away_goals",
                "slug",
                "updated_at",
            ],
            [
                (
                    league.id,
                    "x",
                    teams[0].id,
                    teams[1].id,
                    kickoff,
                    "finished",
                    n % 3,
                    n % 2,
                    f"bench-{n}",
                    kickoff,
                )
                for n in range(count)
            ],
        )
        match_ids = [m for (m,) in Match.select(Match.id).tuples()]
        insert_rows(
            Pick,
            [
                "match",
                "market",
                "selection",
                "bookmaker",
                "odds",
                "probability",
                "edge",
                "rating",
                "data_quality",
                "is_live",
                "created_at",
                "stake",
                "status",
            ],
            [
                (
                    m,
                    market,
                    names[0],
                    "bench",
                    2.0,
                    0.55,
                    0.1,
                    "B",
                    0.9,
                    True,
                    kickoff - timedelta(days=1),
                    1.0,
                    "pending",
                )
                for m in match_ids
                for market, names in MARKETS.items()
            ][:picks],
        )
        insert_rows(
            OddsQuote,
            ["match", "market", "selection", "bookmaker", "price", "is_closing"],
            [
                (m, market, name, "pinnacle", 1.9, True)
                for m in match_ids
                for market, names in MARKETS.items()
                for name in names
            ],
        )
        made = kickoff - timedelta(days=1)
        signed_log.publish_new(match_ids, made, "bench")
        signed_log.checkpoint(made, settings)
    return User.create(email="bench@example.com", password_hash="x", plan="pro")


def reset():
    with db.atomic():
        Pick.update(
            status="pending", profit=None, settled_at=None, is_live=True, not_live_reason=None
        ).execute()
        Event.delete().execute()


def bench_settlement(settings, picks: int, rounds: int):
    """Settle ``picks`` live picks with and without an endpoint subscribed, alternately."""
    user = world(picks, settings)
    endpoint = WebhookEndpoint.create(
        user=user,
        url="http://127.0.0.1:9/",
        events=["pick.settled"],
        secret=encryption.encrypt(new_secret(), settings["WEBHOOK_SECRETS_KEY"]),
    )
    without, with_events = [], []
    for _ in range(rounds):
        for subscribed, times in ((False, without), (True, with_events)):
            reset()
            WebhookEndpoint.update(enabled=subscribed).execute()

            def settle():
                with db.atomic():
                    return settling.settle_pending(settings)

            counts, seconds = timed(settle)
            times.append(seconds)
            written = sum(len(event.subjects or ()) for event in Event.select(Event.subjects))
            assert written == (counts["won"] + counts["lost"] + counts["void"] if subscribed else 0)
    base, full = statistics.median(without), statistics.median(with_events)
    print(
        f"settlement of {picks:,} live picks, median of {rounds}: {full:.2f} s with their "
        f"{written:,} pick.settled events in the same transaction (one outbox row); "
        f"{base:.2f} s with no endpoint subscribed (no events); {full - base:+.2f} s, ratio "
        f"{full / base:.2f}; goal < 1 s more"
    )
    ids = [pick_id for (pick_id,) in Pick.select(Pick.id).tuples()]
    with db.atomic() as transaction:
        _, alone = timed(lambda: events.emit_subjects("pick.settled", ids))
        transaction.rollback()  # the settled picks' events are already written
    print(
        f"writing those {len(ids):,} events alone (the subscription check and the outbox "
        f"row): {alone * 1000:.1f} ms"
    )
    _, fanned = timed(lambda: [None for _ in iter(lambda: events.dispatch(), 0)])
    print(
        f"fan-out of those events to one endpoint by the worker (not in the settling "
        f"transaction): {fanned:.2f} s, {written / fanned:,.0f} events/s"
    )
    # Their events go with the endpoint, so the deliveries measured next are only their own.
    with db.atomic():
        endpoint.delete_instance()
        Event.delete().execute()


def bench_delivery(settings, count: int):
    """One worker's deliveries to a receiver in another process, against plain POSTs to it."""
    port = free_port()
    receiver = subprocess.Popen([sys.executable, "-c", RECEIVER, str(port)])
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                post(port, b"{}")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        body = b'{"type":"pick.settled","data":{"id":1}}' + b" " * 200
        _, plain = timed(lambda: [post(port, body) for _ in range(count)])
        user = User.get(User.email == "bench@example.com")
        WebhookEndpoint.create(
            user=user,
            url=f"http://127.0.0.1:{port}/hooks",
            events=["pick.settled"],
            secret=encryption.encrypt(new_secret(), settings["WEBHOOK_SECRETS_KEY"]),
        )
        with db.atomic():
            events.emit(
                "pick.settled",
                [
                    {
                        "id": n,
                        "path": f"/api/matches/{n}",
                        "match_id": n,
                        "market": "1x2",
                        "selection": "home",
                        "status": "won",
                        "odds": 2.0,
                        "profit": 1.0,
                        "closing_odds": 1.9,
                        "clv": 0.05,
                    }
                    for n in range(count)
                ],
            )

        def deliver_all():
            totals = deliveries.pump(settings, seconds=0)
            while Delivery.select().where(Delivery.status == "pending").exists():
                totals = deliveries.pump(settings, seconds=0)
            return totals

        _, seconds = timed(deliver_all)
        delivered = Delivery.select().where(Delivery.status == "succeeded").count()
        assert delivered == count, delivered
        rate, floor = delivered / seconds, count / plain
        print(
            f"the worker's delivery round, in this process: {delivered:,} signed events "
            f"(fan-out, address check, signing, POST, recording) in {seconds:.2f} s: "
            f"{rate:,.0f} events/s; plain sequential POSTs of the same size to the same "
            f"receiver: {floor:,.0f}/s, ratio {rate / floor:.2f}; goal >= 200 events/s"
        )
        with db.atomic():
            Delivery.delete().execute()
            Event.update(dispatched_at=None).execute()
        rate = worker_process(settings, count)
        print(
            f"a worker process (python -m worker) delivering the same {count:,} events again: "
            f"{rate:,.0f} events/s from its first delivery to its last; ratio to plain POSTs "
            f"{rate / floor:.2f}; goal >= 200 events/s"
        )
    finally:
        stop(receiver)


def worker_process(settings, count: int) -> float:
    """Deliveries a second by a real worker process, from its first recorded one to its last."""
    env = {
        **os.environ,
        "DATABASE_URL": settings["DATABASE_URL"],
        "JWT_SECRET_KEY": settings["JWT_SECRET_KEY"],
        "WEBHOOK_SECRETS_KEY": ",".join(settings["WEBHOOK_SECRETS_KEY"]),  # encrypted with it
        "WORKER_QUEUE_URL": settings["WORKER_QUEUE_URL"],
        "WEBHOOK_ALLOW_PRIVATE": "true",
        "LOG_LEVEL": "WARNING",
    }
    process = subprocess.Popen([sys.executable, "-m", "worker"], cwd=ROOT, env=env)
    succeeded = Delivery.select().where(Delivery.status == "succeeded")
    try:
        first = None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            done = succeeded.count()
            if done and first is None:
                first = (time.monotonic(), done)
            if done == count:
                break
            time.sleep(0.05)
        last = time.monotonic()
    finally:
        stop(process)
    assert done == count, f"{done} of {count} delivered"
    return (count - first[1]) / max(last - first[0], 1e-9)


def stop(process) -> None:
    """Stop a process this benchmark started, killing it when it does not stop in time."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def post(port: int, body: bytes) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("POST", "/", body=body, headers={"Content-Type": "application/json"})
        connection.getresponse().read()
    finally:
        connection.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url")
    parser.add_argument("--picks", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parse_arguments(parser, picks=1_000, events=500, rounds=1)
    signal.signal(signal.SIGTERM, stop_on_sigterm)  # the receiver and the worker stop too
    print(f"commit {commit()}; {machine()}")
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'bench.db'}"
        app = create_app(
            {
                "DATABASE_URL": url,
                "JWT_SECRET_KEY": "bench-" + "k" * 40,
                "LOG_LEVEL": "WARNING",
                "WEBHOOK_ALLOW_PRIVATE": True,
                "WORKER_QUEUE_URL": f"sqlite:///{Path(folder) / 'queue.db'}",
            }
        )
        with app.app_context():
            print(f"database: {db.obj.__class__.__name__}")
            drop_tables()
            create_tables()
            bench_settlement(app.config, args.picks, args.rounds)
            bench_delivery(app.config, args.events)


if __name__ == "__main__":
    main()
