#!/usr/bin/env python3
"""Each mutated module's mutation score after ``mutmut run`` (``make mutate``).

    python tools/mutation_score.py [--fail-under PERCENT]

Reads the verdicts mutmut left in ``mutants/`` for the modules pyproject.toml's
``[tool.mutmut] only_mutate`` names and prints, per module, how many mutants were killed (a test
failed), timed out (their tests ran past the time limit, or were stopped at its CPU limit, which
mutmut calls a segfault: killed too, as mutmut counts timeouts), survived, or had no test calling
their function, then the score, killed ÷ mutants, and the name of every mutant that was not
killed (``mutmut show NAME`` prints its change). The exit status is 1 when a module scores under
``--fail-under`` (90 by default) or has mutants not yet run.
"""

import argparse
import json
import sys
import tomllib
from collections import Counter
from pathlib import Path

from mutmut.stats import status_by_exit_code

ROOT = Path(__file__).resolve().parents[1]
TIMED_OUT = ("timeout", "segfault")
KILLED = ("killed", "caught by type check", *TIMED_OUT)


def modules(root: Path) -> list[str]:
    """The paths of the mutated modules, as pyproject.toml lists them."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["mutmut"]["only_mutate"]


def verdicts(root: Path, module: str) -> dict[str, str]:
    """``{mutant name: status}`` of one module's mutants (empty before a run)."""
    meta = root / "mutants" / f"{module}.meta"
    if not meta.is_file():
        return {}
    codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
    return {name: status_by_exit_code[code] for name, code in codes.items()}


def numbered(name: str) -> tuple[str, int]:
    """A mutant's sort key: its function, then its number (``…__mutmut_9`` before ``_10``)."""
    function, _, number = name.rpartition("_")
    return function, int(number) if number.isdigit() else 0


def main(argv=None) -> int:
    """Print the table and the mutants left alive; 1 when a module falls short."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fail-under", type=float, default=90.0, metavar="PERCENT")
    args = parser.parse_args(argv)
    header = ("module", "mutants", "killed", "timeout", "survived", "no tests", "score")
    print(f"{header[0]:<28}" + "".join(f"{name:>10}" for name in header[1:]))
    alive, short = {}, []
    for module in modules(ROOT):
        found = verdicts(ROOT, module)
        counts = Counter(found.values())
        killed = sum(counts[status] for status in KILLED)
        score = 100.0 * killed / len(found) if found else 0.0
        timed_out = sum(counts[status] for status in TIMED_OUT)
        cells = (len(found), killed - timed_out, timed_out, counts["survived"], counts["no tests"])
        print(f"{module:<28}" + "".join(f"{cell:>10}" for cell in cells) + f"{score:>9.1f}%")
        alive[module] = sorted(
            ((name, status) for name, status in found.items() if status not in KILLED),
            key=lambda item: numbered(item[0]),
        )
        if not found or score < args.fail_under or counts["not checked"]:
            short.append(module)
    for module, names in alive.items():
        if names:
            print(f"\n{module}: not killed")
            for name, status in names:
                print(f"  {name} ({status})")
    if short:
        print(f"\nunder {args.fail_under:g} %, or not run: {', '.join(short)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
