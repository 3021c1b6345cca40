"""Lighthouse on the public pages: builds a small world (tests/world.py) in a temporary SQLite
database, serves it with gunicorn on a loopback port, runs the npm package ``lighthouse``
against Debian's Chromium on the landing page, a prediction page with a settled pick, one with
a locked pick, one open (no pick), the track-record page, the results page and the 404 page,
prints the four category scores of each, and exits 1 when any is below 100.

    python .ci/lighthouse.py [--lighthouse PATH] [--chromium PATH] [--out DIR]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app import create_app  # noqa: E402
from clock import utcnow  # noqa: E402
from models.schema import create_tables, drop_tables  # noqa: E402
from tests import world  # noqa: E402
from tests.conftest import settings  # noqa: E402
from tests.servers import gunicorn  # noqa: E402

CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
NOT_FOUND = "/no-such-page"
#: Lighthouse refuses to audit a page answered 404 unless told to go on; and two audits can
#: only fail on a 404 page that answers 404, as it must: "page has a successful HTTP status
#: code" (SEO) and "no browser errors in the console" (Chromium logs the 404 itself). They are
#: left out there, and said so; every other audit counts.
STATUS_FLAGS = ("--ignore-status-code", "--skip-audits=http-status-code,errors-in-console")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lighthouse", default=str(ROOT / ".ci/node/node_modules/.bin/lighthouse"))
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--out", default=str(ROOT / "screenshots/lighthouse"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.pop("TEST_DATABASE_URL", None)  # always a fresh SQLite file of its own
        app = create_app(settings(Path(tmp), RATELIMIT_STORAGE_URI="memory://"))
        with app.app_context():
            drop_tables()
            create_tables()
            slugs = world.build(utcnow().replace(minute=0, second=0, microsecond=0))
        pages = {
            "landing": "/",
            "prediction, settled pick": f"/api/v1/seo/predictions/{slugs['settled']}",
            "prediction, locked pick": f"/api/v1/seo/predictions/{slugs['locked']}",
            "prediction, open": f"/api/v1/seo/predictions/{slugs['later']}",
            "track record": "/track-record",
            "results": "/results",
            "404": NOT_FOUND,
        }
        failed = False
        with gunicorn(app, RATELIMIT_PUBLIC="1000 per minute") as (base, _):
            for index, (name, path) in enumerate(pages.items()):
                report = out / f"page-{index}.json"
                subprocess.run(
                    [
                        args.lighthouse,
                        f"{base}{path}",
                        "--quiet",
                        "--output=json",
                        f"--output-path={report}",
                        "--chrome-flags=--headless=new --no-sandbox --disable-gpu",
                        "--only-categories=" + ",".join(CATEGORIES),
                        *(STATUS_FLAGS if path == NOT_FOUND else ()),
                    ],
                    check=True,
                    timeout=300,
                    env={**os.environ, "CHROME_PATH": args.chromium},
                )
                found = json.loads(report.read_text())
                scores = {c: found["categories"][c]["score"] for c in CATEGORIES}
                line = "  ".join(
                    f"{c} {'n/a' if s is None else round(s * 100)}" for c, s in scores.items()
                )
                skipped = (
                    " (skipped: http-status-code, errors-in-console)" if path == NOT_FOUND else ""
                )
                print(f"lighthouse {name:<26} {line}{skipped}", flush=True)
                for category in CATEGORIES:
                    if scores[category] is None or scores[category] < 1:
                        failed = True
                        for ref in found["categories"][category]["auditRefs"]:
                            audit = found["audits"][ref["id"]]
                            if ref["weight"] and audit["score"] is not None and audit["score"] < 1:
                                print(f"    {category}: {audit['id']}: {audit['title']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
