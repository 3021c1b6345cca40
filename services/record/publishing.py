"""Publishing to the ledger as one unit of work: the writes in a transaction that ends by signing a
checkpoint of the ledger as they leave it, then, once that transaction has committed, the
checkpoint's time-stamp asked for and the witnesses told (:func:`services.record.signed_log.stamp`:
a network call, so never inside the transaction, and a failed time-stamp is recorded as such,
never undoing the commit). :func:`publish` is the usual unit, one transaction; a sync, which
signs twice with a settlement between, is :func:`publish_in_steps`.
"""

from contextlib import contextmanager
from datetime import datetime

from services.record import signed_log
from store.database import db


class Publication:
    """A unit of work publishing at ``now``: its transactions (:meth:`transaction`), and the
    latest checkpoint one of them signed (``checkpoint``; None while the ledger has not grown)."""

    def __init__(self, settings, now: datetime):
        self.settings = settings
        self.now = now
        self.checkpoint: dict | None = None

    @contextmanager
    def transaction(self):
        """A transaction of the unit, ending by signing a checkpoint of the ledger if it grew
        (:func:`services.record.signed_log.checkpoint`)."""
        with db.atomic():
            yield self
            self.checkpoint = signed_log.checkpoint(self.now, self.settings) or self.checkpoint


@contextmanager
def publish_in_steps(settings, now: datetime):
    """A :class:`Publication` whose transactions the body opens (each signing a checkpoint at its
    end), with whatever it does between them; once the body is done, the time-stamps asked for
    and the witnesses told. A body that raises leaves them for the next unit or the schedule."""
    publication = Publication(settings, now)
    yield publication
    signed_log.stamp(settings, now)


@contextmanager
def publish(settings, now: datetime):
    """The body's writes in one transaction that ends by signing a checkpoint; once it has
    committed, the time-stamps asked for and the witnesses told. Inside a transaction further
    out (an operation's) the signing is in that one, and whoever commits it stamps after."""
    with publish_in_steps(settings, now) as publication, publication.transaction():
        yield publication
