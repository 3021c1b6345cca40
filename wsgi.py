"""The WSGI entry point gunicorn serves: ``gunicorn wsgi:app``.

A configuration the app refuses (a secret missing in production…) is said in one line on
stderr, never a traceback. gunicorn's master checks it before it starts (gunicorn.conf.py) and
exits with status 1, so a worker meets a refused one only when its environment differs (values
given with ``-e``, a ``.env`` changed before a reload): the worker then exits with gunicorn's
"app failed to load" status, which stops the master; any other status would have the master
start the worker again, and again.

Once made, the app records where it keeps the data version's copy (its home, see
``web/versions.py``), which a worker or a command that writes must share to start; a database
not migrated yet, or unavailable, is logged and fails nothing.
"""

import sys

from dotenv import load_dotenv

from app import create_app
from config import ConfigError
from web import versions

#: gunicorn's exit status for a worker whose app cannot load (``Arbiter.APP_LOAD_ERROR``).
APP_LOAD_ERROR = 4

load_dotenv()  # a .env file in development; on a PaaS the environment is already set
try:
    app = create_app()
except ConfigError as error:
    print(f"Error: {error}", file=sys.stderr, flush=True)
    sys.exit(APP_LOAD_ERROR)
versions.record_home(app)
