"""The app gunicorn serves in the month's test: its clock is the file ``MONTH_CLOCK_FILE``
names, which the test advances (``servers.gunicorn(..., target="tests.month_wsgi:app")``)."""

from app import create_app
from tests.month_clock import from_environment

app = create_app({"CLOCK": from_environment()})
