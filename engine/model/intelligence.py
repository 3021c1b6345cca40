"""Match intelligence from history: each side's recent form, goals and rest, and head-to-head."""

from collections import deque

import numpy as np

#: Points a result is worth, for form_points.
POINTS = {"W": 3, "D": 1, "L": 0}

SECONDS_PER_DAY = 86_400.0


def compute(
    kickoff,
    home,
    away,
    home_goals,
    away_goals,
    targets=None,
    form_matches: int = 5,
    h2h_matches: int = 5,
) -> list[dict]:
    """Form, goals, rest and head-to-head of each target row, from strictly earlier results.

    ``kickoff`` (epoch seconds), ``home``/``away`` (team ids) and ``home_goals``/``away_goals``
    (NaN when there is no result) describe every match, in any order. For each row of
    ``targets`` (row indices; all rows by default) the answer uses only matches with a result
    that kicked off strictly before that row, so a row never sees itself, a match at the same
    instant or the future. Returns one dict per target::

        {"home": team, "away": team, "head_to_head": h2h}

    where ``team`` is ``{"form": ["W", "D", "L", ...] most recent first (up to form_matches),
    "form_points": int, "goals_for": float, "goals_against": float (averages over those
    matches, None without any), "matches": int, "rest_days": float since its previous match
    with a result (None without one)}`` and ``h2h`` is ``{"matches": [{"kickoff", "home_id",
    "away_id", "home_goals", "away_goals"}, ...] the last h2h_matches meetings (either venue)
    most recent first, "home_wins", "draws", "away_wins"}``, wins counted for the row's home and
    away team whichever side they played on.
    """
    kickoff = np.asarray(kickoff, dtype=np.int64)
    home = np.asarray(home, dtype=np.int64)
    away = np.asarray(away, dtype=np.int64)
    home_goals = np.asarray(home_goals, dtype=float)
    away_goals = np.asarray(away_goals, dtype=float)
    size = len(kickoff)
    if not all(len(column) == size for column in (home, away, home_goals, away_goals)):
        raise ValueError("kickoff, home, away, home_goals and away_goals must have one length.")
    wanted = np.arange(size) if targets is None else np.asarray(targets, dtype=np.int64)
    if wanted.size and (wanted.min() < -size or wanted.max() >= size):
        raise IndexError("A target row is out of range.")
    wanted = wanted % size if size else wanted
    if form_matches < 1 or h2h_matches < 1:
        raise ValueError("form_matches and h2h_matches must be at least 1.")

    needed_mask = np.zeros(size, dtype=bool)
    needed_mask[wanted] = True
    # Plain Python values from here: the loop below runs once per match.
    needed = needed_mask.tolist()
    played = (~(np.isnan(home_goals) | np.isnan(away_goals))).tolist()
    order = np.argsort(kickoff, kind="stable").tolist()
    kickoffs = kickoff.tolist()
    homes, aways = home.tolist(), away.tolist()
    goals_home, goals_away = home_goals.tolist(), away_goals.tolist()

    # Per team: its last form_matches results as (kickoff, scored, conceded); per pair of teams:
    # their last h2h_matches meetings.
    history: dict[int, deque] = {}
    meetings: dict[tuple[int, int], deque] = {}
    answers: dict[int, dict] = {}
    position = 0
    while position < size:
        # All matches at one instant are answered before any of them enters the history.
        instant = kickoffs[order[position]]
        end = position
        while end < size and kickoffs[order[end]] == instant:
            end += 1
        group = order[position:end]
        for row in group:
            if needed[row]:
                answers[row] = _answer(row, kickoffs, homes, aways, history, meetings)
        for row in group:
            if not played[row]:
                continue
            scored, conceded = goals_home[row], goals_away[row]
            team_home, team_away = homes[row], aways[row]
            history.setdefault(team_home, deque(maxlen=form_matches)).append(
                (instant, scored, conceded)
            )
            history.setdefault(team_away, deque(maxlen=form_matches)).append(
                (instant, conceded, scored)
            )
            pair = (min(team_home, team_away), max(team_home, team_away))
            meetings.setdefault(pair, deque(maxlen=h2h_matches)).append(
                (instant, team_home, team_away, int(scored), int(conceded))
            )
        position = end
    return [answers[row] for row in wanted.tolist()]


def _answer(row, kickoffs, homes, aways, history, meetings) -> dict:
    """The intelligence of one row from the history as it stands before its kick-off."""
    team_home, team_away = homes[row], aways[row]
    instant = kickoffs[row]
    pair = (min(team_home, team_away), max(team_home, team_away))
    met = list(reversed(meetings.get(pair, ())))
    home_wins = draws = away_wins = 0
    for _, venue_home, _, scored, conceded in met:
        if scored == conceded:
            draws += 1
        elif (scored > conceded) == (venue_home == team_home):
            home_wins += 1
        else:
            away_wins += 1
    return {
        "home": _team(history.get(team_home, ()), instant),
        "away": _team(history.get(team_away, ()), instant),
        "head_to_head": {
            "matches": [
                {
                    "kickoff": when,
                    "home_id": venue_home,
                    "away_id": venue_away,
                    "home_goals": scored,
                    "away_goals": conceded,
                }
                for when, venue_home, venue_away, scored, conceded in met
            ],
            "home_wins": home_wins,
            "draws": draws,
            "away_wins": away_wins,
        },
    }


def _team(recent, instant: int) -> dict:
    """One side's figures from its recent results (oldest first), as seen at ``instant``."""
    form = [
        "W" if scored > conceded else ("D" if scored == conceded else "L")
        for _, scored, conceded in reversed(recent)
    ]
    count = len(form)
    return {
        "form": form,
        "form_points": sum(POINTS[result] for result in form),
        "goals_for": sum(scored for _, scored, _ in recent) / count if count else None,
        "goals_against": sum(conceded for _, _, conceded in recent) / count if count else None,
        "matches": count,
        "rest_days": (instant - recent[-1][0]) / SECONDS_PER_DAY if count else None,
    }
