"""A month on autopilot (``tests/feeds/test_autopilot.py`` plays a few days of it, ``python -m
bench.autopilot`` the whole month): the real processes on one database, the month's two
upstreams (``tests.month``), a clock the harness advances, and the rules a month must keep.

Two gunicorns (``tests.month_wsgi``) and two workers (``tests.month_worker``) share the one
database and one queue (an SQLite file beside it, or Redis), all reading the clock file
(``tests.month_clock``). The harness moves the clock step by step (every ``regular`` step, every
``near`` step within three hours of a kick-off), waits at each for a worker to tick at that
instant and for every run it started to finish, then reads the health report from one of the
web processes, in turn. At the end :meth:`Month.checks` says, per rule, what broke it (an empty
list: the rule held), and :meth:`Month.figures` what the month measured.
"""

import contextlib
import itertools
import secrets
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from models import (
    LedgerCheckpoint,
    LedgerEntry,
    Match,
    Operation,
    Pick,
    PriceSeen,
    SourceState,
    Team,
    WorkerBeat,
)
from store.database import db
from tests import factories, servers
from tests.month import (
    KEY,
    PLAYED_FOR,
    RENAMED,
    SPORT,
    MonthFootballData,
    MonthOddsApi,
    Plan,
)
from tests.month_clock import FileClock

OPERATOR = ("operator@example.com", factories.PASSWORD)


def stored(fixture):
    """The stored match of a planned fixture (its teams, within three days of its kick-off:
    a postponed one moved), or None."""
    home, away = Team.alias(), Team.alias()
    return (
        Match.select()
        .join(home, on=Match.home_team == home.id)
        .switch(Match)
        .join(away, on=Match.away_team == away.id)
        .where(
            (home.name == fixture.home)
            & (away.name == fixture.away)
            & Match.kickoff_at.between(
                fixture.kickoff - timedelta(days=3), fixture.kickoff + timedelta(days=3)
            )
        )
        .first()
    )


@dataclass
class Step:
    """One move of the clock and what it took."""

    at: datetime
    seconds: float
    operations: list  # (id, kind, status)
    health: dict  # source → (status, detail) from a web process
    stuck: bool = False
    ticked: float | None = None  # seconds until a worker ticked at it


class Month:
    """The month played by the real processes: ``run()`` then ``checks()`` and ``figures()``.

    ``app`` is the harness's own app (its database is the processes', its clock ``clock``);
    ``regular`` and ``near`` the clock's steps; ``credits`` the Odds API account's month;
    ``tick`` the workers' pace (wall seconds); ``queue_url`` their shared queue (an SQLite file
    in ``folder`` by default); ``verbose`` says each step as it ends."""

    def __init__(
        self,
        app,
        clock: FileClock,
        folder,
        plan: Plan,
        regular,
        near,
        say=print,
        credits=20000,
        tick=0.5,
        queue_url=None,
        verbose=False,
    ):
        self.app, self.clock, self.folder, self.plan = app, clock, folder, plan
        self.regular, self.near, self.say = regular, near, say
        self.credits, self.tick, self.verbose = credits, tick, verbose
        self.timeout = 1.0
        self.queue_url = queue_url or f"sqlite:///{folder / 'queue.db'}"
        self.steps: list[Step] = []
        self.outputs = []
        self.webs = []
        self.token = None
        self.mapped_at = None
        self.verifier = None
        self.contradictions = None

    @staticmethod
    def settings(football_data, odds, clock, queue_url, tick, timeout, credits) -> dict:
        """The processes' settings (environment variables)."""
        return {
            "MONTH_CLOCK_FILE": str(clock.path),
            "MONTH_TICK_SECONDS": str(tick),
            # a queue of its own on a Redis other tests may share
            "MONTH_QUEUE_NAME": f"month-{secrets.token_hex(4)}",
            "FOOTBALL_DATA_URL": football_data.base,
            "FOOTBALL_DATA_LEAGUES": "E0",
            "FOOTBALL_DATA_SEASONS": "2324",
            "ODDS_API_URL": odds.base,
            "ODDS_API_KEY": KEY,
            "ODDS_API_SPORTS": f"{SPORT}:E0",
            "ODDS_API_REGIONS": "uk",
            "ODDS_API_MONTHLY_CREDITS": str(credits),
            "SOURCE_TIMEOUT": str(timeout),
            "SOURCE_RETRIES": "1",
            "SOURCE_BACKOFF": "0.05",
            "SOURCE_MAX_WAIT": "5",
            "WORKER_QUEUE_URL": queue_url,
            "WEB_CONCURRENCY": "1",
            "LOG_LEVEL": "WARNING",
        }

    def run(self) -> None:
        """Start the upstreams, two web processes and two workers, and play every step."""
        self.clock.set(self.plan.start)
        queue = self.queue_url
        with contextlib.ExitStack() as stack:
            self.football_data = stack.enter_context(MonthFootballData(self.plan, self.clock))
            self.odds = stack.enter_context(
                MonthOddsApi(self.plan, self.clock, self.credits, self.timeout)
            )
            env = self.settings(
                self.football_data,
                self.odds,
                self.clock,
                queue,
                self.tick,
                self.timeout,
                self.credits,
            )
            for _ in range(2):
                base, served = stack.enter_context(
                    servers.gunicorn(
                        self.app, target="tests.month_wsgi:app", output=self.outputs, **env
                    )
                )
                self.webs.append(base)
            workers = [self._worker(served) for _ in range(2)]
            stack.callback(self._stop, workers)
            with self.app.app_context():
                factories.user(OPERATOR[0], role="operator")
            status, body = servers.call(
                self.webs[0],
                "POST",
                "/api/auth/login",
                {"email": OPERATOR[0], "password": OPERATOR[1]},
            )
            assert status == 200, body
            self.token = body["accessToken"]
            started = time.monotonic()
            for number, moment in enumerate(self.plan.steps(self.regular, self.near)):
                self.steps.append(self._step(moment, number))
                if self.verbose:
                    last = self.steps[-1]
                    self.say(
                        f"    {moment:%d %b %H:%M} {last.seconds:.1f} s (ticked after "
                        f"{last.ticked or 0:.1f} s) {last.operations}"
                    )
                if self.mapped_at is None:
                    self._map_renamed(moment)
                day = (moment - self.plan.start).days
                if number and day != (self.steps[-2].at - self.plan.start).days:
                    self.say(f"  day {day}: {moment:%a %d %b}, {time.monotonic() - started:.0f} s")
            self.verifier = self._verify(served)
            self.contradictions = self._contradictions()

    def _worker(self, env):
        return subprocess.Popen(
            [sys.executable, "-m", "tests.month_worker"],
            cwd=servers.ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )

    def _stop(self, workers):
        for process in workers:
            process.terminate()
        for process in workers:
            try:
                self.outputs.append(process.communicate(timeout=30)[0].decode())
            except subprocess.TimeoutExpired:
                process.kill()
                self.outputs.append(process.communicate()[0].decode())

    def _step(self, moment: datetime, number: int) -> Step:
        """Move the clock to ``moment``; wait for a tick at it and for its runs to finish."""
        began = time.monotonic()
        self.clock.set(moment)
        deadline = began + 120
        stuck, ticked = False, None
        with self.app.app_context():
            while True:
                with db.connection_context():
                    beat = WorkerBeat.select(WorkerBeat.beat_at).scalar()
                    busy = (
                        Operation.select()
                        .where(Operation.status.in_(("queued", "running")))
                        .exists()
                    )
                if beat is not None and beat >= moment and ticked is None:
                    ticked = time.monotonic() - began
                if ticked is not None and not busy:
                    break
                if time.monotonic() > deadline:
                    stuck = True
                    break
                time.sleep(0.05)
            with db.connection_context():
                operations = [
                    (o.id, o.kind, o.status)
                    for o in Operation.select().where(Operation.created_at == moment)
                ]
        health = self._health(self.webs[number % 2])
        return Step(moment, time.monotonic() - began, operations, health, stuck, ticked)

    def _health(self, base) -> dict:
        status, body = servers.call(base, "GET", "/api/v1/ops/health/services", token=self.token)
        if status != 200:
            return {"error": (status, body)}
        return {s["name"]: (s["status"], s["detail"]) for s in body["services"]}

    def _map_renamed(self, moment) -> None:
        """The operator maps The Odds API's spelling once health lists it (``flask data teams
        map``, run as the operator would, against the one database)."""
        entry = self.steps[-1].health.get("the-odds-api")
        if not entry or "unmatched" not in entry[1]:
            return
        with self.app.app_context():
            team = Team.get(Team.name == "Nott'm Forest").id
        result = self.app.test_cli_runner().invoke(
            args=[
                "data",
                "teams",
                "map",
                "the-odds-api",
                "England",
                RENAMED["Nott'm Forest"],
                "--team",
                str(team),
            ]
        )
        assert result.exit_code == 0, result.output
        self.mapped_at = moment

    def _verify(self, env) -> subprocess.CompletedProcess:
        command = [
            sys.executable,
            "tools/verify_ledger.py",
            self.webs[1],
            "--checkpoints",
            str(self.folder / "checkpoints.json"),
        ]
        return subprocess.run(
            command, cwd=servers.ROOT, capture_output=True, text=True, timeout=300, env=env
        )

    # What the month shows

    def _operations(self):
        return list(Operation.select().where(Operation.kind == "data-sync").order_by(Operation.id))

    def _contradictions(self) -> list[dict] | None:
        """The Operations API's contradictions (None: no such endpoint)."""
        status, body = servers.call(
            self.webs[0], "GET", "/api/v1/ops/contradictions", token=self.token
        )
        if status == 404 or body is None:
            return None
        items = body.get("items", body.get("data")) if isinstance(body, dict) else body
        return list(items or [])

    def checks(self) -> dict[str, list[str]]:
        """Each end-of-month rule and what broke it (empty: held)."""
        with self.app.app_context(), db.connection_context():
            return {
                "every step ticked and its runs finished": [
                    f"{s.at:%d %b %H:%M}: still busy after 120 s" for s in self.steps if s.stuck
                ],
                "every finished match settled or held for a named reason": self._settled(),
                "every sync succeeded (a source's failure fails its own part only)": [
                    f"operation {o.id} at {o.scheduled_for}: {o.error}"
                    for o in self._operations()
                    if o.status != "succeeded"
                ],
                "every failure recorded in its sync's operation": self._failures_recorded(),
                "every failure failing in health within one cycle": self._failures_in_health(),
                "credits counted = credits charged": self._credits(),
                "no operation, fetch, pick or checkpoint twice": self._twice(),
                "no price-history row without a price change": self._history(),
                "the verifier green": []
                if self.verifier.returncode == 0
                else [
                    line
                    for line in self.verifier.stdout.splitlines()
                    if not line.startswith("PASS")
                ]
                or [self.verifier.stderr[-2000:]],
                "no traceback in any process": [
                    servers.traceback_in(text)
                    for text in self.outputs
                    if servers.traceback_in(text)
                ],
            }

    def _settled(self) -> list[str]:
        contradictions = self.contradictions
        held = set()
        for item in contradictions or []:
            if isinstance(item, dict) and item.get("status", "open") in ("open", "unresolved"):
                held.add(
                    item.get("matchId")
                    or item.get("match_id")
                    or (item.get("match") or {}).get("id")
                )
        problems = []
        end = self.steps[-1].at if self.steps else self.plan.end
        for fixture in self.plan.inside:
            if fixture.kickoff + PLAYED_FOR > end:
                continue
            match = stored(fixture)
            if match is None:
                if fixture.fate != "cancelled":
                    problems.append(f"{fixture.home} v {fixture.away}: never stored")
                continue
            pending = (
                Pick.select().where((Pick.match == match.id) & (Pick.status == "pending")).count()
            )
            label = f"{fixture.home} v {fixture.away} ({fixture.fate})"
            if fixture.fate == "cancelled":
                if match.status == "finished":
                    problems.append(f"{label}: finished, but no source reported a result")
                continue
            if match.status != "finished":
                problems.append(f"{label}: {match.status} at the month's end, no result taken")
            elif pending and match.id not in held:
                problems.append(f"{label}: {pending} pick(s) pending and no contradiction holds it")
            elif (match.home_goals, match.away_goals) not in self._scores(fixture, end) and (
                match.id not in held
            ):
                problems.append(
                    f"{label}: settled on {match.home_goals}-{match.away_goals}, the real score is "
                    f"{fixture.score[0]}-{fixture.score[1]}"
                )
        for fixture, why in (
            (self.plan.contradicted, "the sources' scores differ"),
            (self.plan.corrected, "football-data corrected the score"),
        ):
            if fixture is self.plan.corrected and (
                not self.steps or self.steps[-1].at < self.plan.corrected_at
            ):
                continue
            if fixture is self.plan.contradicted and self.plan.results_published(fixture) > end:
                continue  # one source has spoken yet: nothing to contradict
            match = stored(fixture)
            if contradictions is None:
                problems.append(
                    f"{fixture.home} v {fixture.away} ({why}): no contradiction "
                    "listed (GET /api/v1/ops/contradictions answers 404)"
                )
            elif match is None or not any(
                (c.get("matchId") or c.get("match_id")) == match.id
                for c in contradictions
                if isinstance(c, dict)
            ):
                problems.append(
                    f"{fixture.home} v {fixture.away} ({why}): no contradiction recorded"
                )
        return problems

    def _scores(self, fixture, end) -> set[tuple[int, int]]:
        """The scores a stored result of ``fixture`` may show at ``end``: the real one, or The
        Odds API's while football-data has not published it (nothing contradicts it yet)."""
        scores = {fixture.score}
        if self.plan.results_published(fixture) > end:
            scores.add(self.plan.reported_score(fixture, "the-odds-api"))
        return scores

    def _source_reports(self, step: Step, source: str) -> list[dict]:
        ids = [i for i, kind, _ in step.operations if kind == "data-sync"]
        found = []
        for operation in Operation.select().where(Operation.id.in_(ids)):
            for report in (operation.result or {}).get("sources", []):
                if report.get("source") == source:
                    found.append(report)
        return found

    def _incident_steps(self):
        """(incident, the step whose sync met it) for each incident met."""
        for incident in self.plan.incidents:
            if not incident.hit_at:
                continue
            first = incident.hit_at[0]
            step = next((s for s in self.steps if s.at == first), None)
            if step is not None:
                yield incident, step

    def _failures_recorded(self) -> list[str]:
        problems = []
        for incident, step in self._incident_steps():
            reports = self._source_reports(step, incident.source)
            if not any(report.get("errors") for report in reports):
                problems.append(
                    f"{incident.source} {incident.kind} at {step.at:%d %b %H:%M}: no error in the "
                    f"sync's operation ({len(reports)} report(s))"
                )
        return problems

    def _failures_in_health(self) -> list[str]:
        problems = []
        for incident, step in self._incident_steps():
            status, detail = step.health.get(incident.source, ("missing", ""))
            if status != "failing" or "last error" not in detail:
                problems.append(
                    f"{incident.source} {incident.kind} at {step.at:%d %b %H:%M}: health says "
                    f"{status!r} ({detail[:160]})"
                )
        return problems

    def _credits(self) -> list[str]:
        state = SourceState.get_or_none(SourceState.source == "the-odds-api")
        counted = state.credits_spent if state else 0
        charged = self.odds.charged()
        problems = []
        if counted != charged:
            problems.append(f"the service counted {counted}, The Odds API charged {charged}")
        if (
            state is not None
            and state.credits_used is not None
            and state.credits_used != self.odds.used
        ):
            problems.append(
                f"x-requests-used last read {state.credits_used}, the account used {self.odds.used}"
            )
        return problems

    def _twice(self) -> list[str]:
        problems = []
        slots = Counter(
            (o.kind, o.scheduled_for) for o in Operation.select() if o.scheduled_for is not None
        )
        problems += [
            f"{kind} for {slot} recorded {n} times" for (kind, slot), n in slots.items() if n > 1
        ]
        per_step = Counter(
            (at, path)
            for at, path, status, credits in self.odds.log
            if status == 200 and path.endswith("/odds")
        )
        problems += [
            f"{path} fetched {n} times at {at:%d %b %H:%M}"
            for (at, path), n in per_step.items()
            if n > 1
        ]
        entries = Counter(
            (e.kind, e.pick_id) for e in LedgerEntry.select(LedgerEntry.kind, LedgerEntry.pick_id)
        )
        problems += [
            f"ledger {kind} of pick {pick} appended {n} times"
            for (kind, pick), n in entries.items()
            if n > 1
        ]
        roots = Counter(c.root_hash for c in LedgerCheckpoint.select(LedgerCheckpoint.root_hash))
        problems += [
            f"checkpoint {root[:12]}… signed {n} times" for root, n in roots.items() if n > 1
        ]
        return problems

    def _history(self) -> list[str]:
        runs = defaultdict(list)
        query = PriceSeen.select().order_by(PriceSeen.first_seen_at)
        for row in query:
            key = (row.match_id, row.market, row.line, row.bookmaker, row.selection, row.source)
            runs[key].append(row.price)
        problems = []
        for key, prices in runs.items():
            same = sum(1 for a, b in itertools.pairwise(prices) if a == b)
            if same:
                problems.append(f"{key}: {same} row(s) repeating the price before")
        return problems[:20] + ([f"… {len(problems) - 20} more"] if len(problems) > 20 else [])

    def figures(self) -> dict:
        """What the month measured."""
        with self.app.app_context(), db.connection_context():
            syncs = self._operations()
            errors = Counter()
            for operation in syncs:
                for report in (operation.result or {}).get("sources", []):
                    errors[report.get("source")] += len(report.get("errors") or [])
            per_day = defaultdict(float)
            for step in self.steps:
                per_day[(step.at - self.plan.start).days] += step.seconds
            state = SourceState.get_or_none(SourceState.source == "the-odds-api")
            return {
                "days": len(per_day),
                "steps": len(self.steps),
                "matches": Match.select()
                .where(Match.kickoff_at.between(self.plan.start, self.plan.end))
                .count(),
                "finished": Match.select()
                .where(
                    Match.kickoff_at.between(self.plan.start, self.plan.end)
                    & (Match.status == "finished")
                )
                .count(),
                "picks": Pick.select().count(),
                "live_picks": Pick.select().where(Pick.is_live).count(),
                "settled": Pick.select().where(Pick.status != "pending").count(),
                "syncs": len(syncs),
                "syncs_failed": sum(1 for o in syncs if o.status != "succeeded"),
                "operations": Operation.select().count(),
                "incidents": sum(1 for i in self.plan.incidents if i.hit_at),
                "source_errors": dict(errors),
                "odds_calls": len(self.odds.log),
                "credits_charged": self.odds.charged(),
                "credits_counted": state.credits_spent if state else 0,
                "price_rows": PriceSeen.select().count(),
                "checkpoints": LedgerCheckpoint.select().count(),
                "seconds_per_day": {day: round(s, 1) for day, s in sorted(per_day.items())},
                "verifier": self.verifier.returncode if self.verifier else None,
            }


def summary(figures: dict, checks: dict) -> str:
    """The month's figures and checks as lines to print."""
    days = figures["seconds_per_day"]
    f = figures
    errors = ", ".join(f"{source} {n}" for source, n in f["source_errors"].items()) or "none"
    mean = f" (mean {sum(days.values()) / len(days):.1f} s)" if days else ""
    lines = [
        f"{f['days']} simulated days in {f['steps']} steps; "
        f"{f['matches']} matches ({f['finished']} finished)",
        f"picks: {f['picks']} ({f['live_picks']} live, {f['settled']} settled)",
        f"syncs: {f['syncs']} ({f['syncs_failed']} failed), {f['operations']} operations",
        f"failures: {f['incidents']} incidents met; errors in the syncs' reports: {errors}",
        f"credits: {f['credits_charged']} charged by The Odds API, {f['credits_counted']} "
        f"counted by the service ({f['odds_calls']} calls)",
        f"price history rows: {f['price_rows']}; checkpoints: {f['checkpoints']}",
        "wall time per simulated day: " + ", ".join(f"{s:.1f} s" for s in days.values()) + mean,
    ]
    for rule, problems in checks.items():
        lines.append(f"{'PASS' if not problems else 'FAIL'} {rule}")
        lines += [f"    {problem}" for problem in problems[:8]]
        if len(problems) > 8:
            lines.append(f"    … {len(problems) - 8} more")
    return "\n".join(lines)
