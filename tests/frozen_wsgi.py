"""The app gunicorn serves in tests whose clock stands still: ``FROZEN_NOW`` (ISO 8601, with its
offset) is what the app clock answers (``servers.gunicorn(..., target="tests.frozen_wsgi:app")``).
"""

import os
from datetime import datetime

from app import create_app

NOW = datetime.fromisoformat(os.environ["FROZEN_NOW"])
app = create_app({"CLOCK": lambda: NOW})
