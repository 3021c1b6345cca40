"""The progress bar the long commands draw on a terminal."""

import logging
import sys
import time

import click


class Progress:
    """A one-line progress bar with counts and elapsed time on ``stream`` when it is a terminal.

    Elsewhere (logs, CI, pipes) it writes nothing: the commands' plain summary lines say what
    happened. While the bar is drawn, every log handler first erases it and draws it again after
    its record, so a log line never lands on the bar's line.
    """

    WIDTH = 30

    def __init__(self, label: str, stream=None, unit: str = ""):
        self.stream = stream or sys.stderr
        self.shown = self.stream.isatty()
        self.label = label
        self.unit = unit
        self.started = time.monotonic()
        self.last = ""
        self.wrapped = {}
        if self.shown:
            self._wrap_log_handlers()

    def update(self, done: int, total: int, label: str | None = None) -> None:
        """Redraw the bar at ``done`` of ``total``."""
        if label is not None:
            self.label = label
        if not self.shown:
            return
        filled = self.WIDTH * min(done, total) // max(total, 1)
        bar = "#" * filled + "." * (self.WIDTH - filled)
        elapsed = time.monotonic() - self.started
        unit = f" {self.unit}" if self.unit else ""
        self.clear()
        self.last = f"{self.label} [{bar}] {done}/{total}{unit} {elapsed:6.1f} s"
        self.redraw()

    def clear(self) -> None:
        """Erase the bar's line (the cursor back at its start)."""
        if self.shown and self.last:
            self.stream.write("\r" + " " * len(self.last) + "\r")
            self.stream.flush()

    def redraw(self) -> None:
        """Draw the bar again where the cursor is."""
        if self.shown and self.last:
            self.stream.write("\r" + self.last)
            self.stream.flush()

    def echo(self, message: str, err: bool = False) -> None:
        """Print a line above the bar, then redraw it."""
        self.clear()
        click.echo(message, err=err)
        self.redraw()

    def close(self) -> None:
        """End the bar's line and give the log handlers back."""
        for handler, own in self.wrapped.items():
            if own is None:
                del handler.emit  # the class's method again
            else:
                handler.emit = own
        self.wrapped = {}
        if self.shown and self.last:
            self.stream.write("\n")
            self.stream.flush()
            self.last = ""

    def _wrap_log_handlers(self) -> None:
        handlers = set(logging.getLogger().handlers)
        for logger in logging.Logger.manager.loggerDict.values():
            if isinstance(logger, logging.Logger):
                handlers.update(logger.handlers)
        if logging.lastResort is not None:
            handlers.add(logging.lastResort)
        for handler in handlers:
            self.wrapped[handler] = vars(handler).get("emit")

            def emit(record, emit=handler.emit):
                self.clear()
                emit(record)
                self.redraw()

            handler.emit = emit
