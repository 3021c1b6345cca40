"""``python -m config``: :func:`config.main`."""

from config import main

main()
