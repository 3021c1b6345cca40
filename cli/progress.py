"""The progress bar the long commands draw on a terminal: click's own, kept off the lines that log
records and the commands' messages print."""

import logging
import sys

import click


class Progress:
    """click's progress bar with counts on ``stream`` (stderr by default) when it is a terminal.

    Elsewhere (logs, CI, pipes) it writes nothing: the commands' plain summary lines say what
    happened. click's bar knows nothing of logging, so while it is drawn every log handler first
    erases it and draws it again after its record, and so does ``echo``: a line never lands on
    the bar's line. Used as a context manager, so the bar's line is ended (and the cursor click
    hides while it draws shown again) however the command ends.
    """

    WIDTH = 30

    def __init__(self, label: str, stream=None, unit: str = ""):
        stream = stream or sys.stderr
        self.shown = stream.isatty()
        self.bar = click.progressbar(
            length=0,
            label=label,
            file=stream,
            hidden=not self.shown,
            width=self.WIDTH,
            fill_char="#",
            empty_char=".",
            bar_template="%(label)s [%(bar)s] %(info)s",
            info_sep=" ",
            show_pos=True,
            show_eta=False,
            item_show_func=lambda _item: unit or None,
        )
        self.drawn = False
        self.wrapped = {}
        if self.shown:
            self._wrap_log_handlers()

    def update(self, done: int, total: int, label: str | None = None) -> None:
        """Redraw the bar at ``done`` of ``total``."""
        if label is not None:
            self.bar.label = label
        # The callers know where they stand, not by how much they moved: the bar is set there.
        self.bar.length, self.bar.pos = total, done
        self.drawn = self.shown
        self.bar.render_progress()

    def clear(self) -> None:
        """Erase the bar's line (the cursor back at its start)."""
        if self.drawn:
            self.bar.file.write("\r" + " " * (self.bar.max_width or 0) + "\r")
            self.bar.file.flush()

    def redraw(self) -> None:
        """Draw the bar again where the cursor is."""
        if self.drawn:
            self.bar.file.write("\r" + self.bar.format_progress_line())
            self.bar.file.flush()

    def echo(self, message: str, err: bool = False) -> None:
        """Print a line above the bar, then redraw it."""
        self.clear()
        click.echo(message, err=err)
        self.redraw()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """End the bar's line and give the log handlers back."""
        for handler, own in self.wrapped.items():
            if own is None:
                del handler.emit  # the class's method again
            else:
                handler.emit = own
        self.wrapped = {}
        if self.drawn:
            self.bar.render_finish()
            self.drawn = False

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
