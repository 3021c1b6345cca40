"""What a request hands its schemas: the app's clock and the key feed cursors are signed with
(:class:`schemas.common.Wire`), set before the request is handled and taken back after it."""

from flask import current_app, g

from schemas.common import WireContext


def init_app(app):
    """Every request of ``app`` runs with its clock and key in the schemas' context."""
    app.before_request(_enter)
    app.teardown_request(_leave)


def _enter():
    context = WireContext(
        {
            "clock": current_app.extensions["clock"],
            "cursor_key": current_app.config["JWT_SECRET_KEY"],
        }
    )
    context.__enter__()
    g.wire_context = context


def _leave(_error):
    context = g.pop("wire_context", None)
    if context is not None:
        context.__exit__(None, None, None)
