"""The WSGI entry point gunicorn serves: ``gunicorn wsgi:app``.

A configuration the app refuses (a secret missing in production…) is said in one line on
stderr, never a traceback. gunicorn's master checks it before it starts (gunicorn.conf.py) and
exits with status 1, so a worker meets a refused one only when its environment differs (values
given with ``-e``, a ``.env`` changed before a reload): the worker then exits with gunicorn's
"app failed to load" status, which stops the master; any other status would have the master
start the worker again, and again.
"""

import sys

from dotenv import load_dotenv

from app import create_app
from config import ConfigError

#: gunicorn's exit status for a worker whose app cannot load (``Arbiter.APP_LOAD_ERROR``).
APP_LOAD_ERROR = 4

load_dotenv()  # a .env file in development; on a PaaS the environment is already set
try:
    app = create_app()
except ConfigError as error:
    print(f"Error: {error}", file=sys.stderr, flush=True)
    sys.exit(APP_LOAD_ERROR)
