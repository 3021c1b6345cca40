"""The data version's watch: noticing, as a transaction commits, that it wrote rows of a watched
table, and writing the next version in it just before.

Every cursor of the store's connections reports each statement it ran to the database's
:class:`Versioning`; one writing rows of a watched table marks its transaction as a change, and
the database (:class:`VersionedDatabase`, built on :class:`TransactionEnds`) writes the next
version as that transaction commits and tells the version's copy, if one is kept, as it ends.
Which tables, which statement writes the next version and who keeps a copy are said when the
watch is switched on (:meth:`Versioning.watch`); until then a database watches nothing.
"""

import functools
import re
import sqlite3

import psycopg2.extensions

#: A statement writing rows, and the table it writes (an unquoted or double-quoted name): an
#: INSERT (``OR IGNORE``…), REPLACE, UPDATE or DELETE, as Peewee and :mod:`store.bulk` write them.
WRITES = re.compile(
    r"\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)"
    r'\s+"?(\w+)',
    re.IGNORECASE,
)


def written_table(sql) -> str | None:
    """The table the statement ``sql`` (text, or the bytes psycopg2's ``execute_values`` sends)
    writes rows of, or None for one that writes none."""
    if isinstance(sql, bytes):
        sql = sql[:200].decode("latin-1")
    found = WRITES.match(sql) if isinstance(sql, str) else None
    return found and found.group(1)


class TransactionChange:
    """What a connection's open transaction did to the data version: whether it wrote rows of
    the tables the version follows since the version was last written, and whether the copy
    was told a change is pending (with its token)."""

    __slots__ = ("token", "told", "written")

    def __init__(self):
        self.written = self.told = False
        self.token = None


class Versioning:
    """The data version a database keeps: a counter that moves whenever a transaction that wrote
    rows of the tables it follows commits, without a call to remember. What the tables and the
    counter are is said by :meth:`watch`, given their names and the statement when the watch is
    switched on; until then a database follows nothing.

    Every cursor of the database's connections (:class:`VersionedSqliteCursor`,
    :class:`VersionedPostgresCursor`) reports each statement that ran: one writing rows of a
    followed table (INSERT, REPLACE, UPDATE or DELETE) marks its transaction as a change, and the
    transaction's commit writes the next version just before it commits (see
    :class:`VersionedDatabase`). A statement outside any transaction is a change of its own,
    whose next version is written right after it. A statement that matched no row counts too:
    the version may move for nothing, never stay for a change.

    ``copy`` (the copy the web keeps on Redis, or None) is told before and after each change:
    ``copy.changing()`` before the next version is written, giving a token, and
    ``copy.changed(token)`` once its transaction has ended, committed or rolled back; so no reader
    of the copy ever reads a version older than what it reads of the data. Neither may raise.
    """

    def __init__(self):
        self.tables = frozenset()
        self.statement = None  # (sql, params) writing the next version
        self.copy = None

    def watch(self, tables, statement, copy) -> None:
        """Follow ``tables`` (names), writing the next version with ``statement`` (``(sql,
        params)``), and tell ``copy`` of each change (None: nobody)."""
        self.tables, self.statement, self.copy = frozenset(tables), statement, copy

    def ran(self, cursor, sql) -> None:
        """``sql`` ran on ``cursor``: note a change if it wrote rows of a followed table."""
        if self.tables and written_table(sql) in self.tables:
            connection = cursor.connection
            if connection.in_transaction:
                connection.change.written = True
            else:
                self.advance(connection)

    def advance(self, connection) -> None:
        """Write the next version on ``connection`` now: in its open transaction, told to the
        copy as pending until the transaction ends; else as a change of its own, told at once."""
        if self.statement is None:
            raise RuntimeError("this database keeps no data version: nothing watches it")
        if not connection.in_transaction:
            token = self.copy.changing() if self.copy is not None else None
            try:
                connection.cursor().execute(*self.statement)
            finally:
                if self.copy is not None:
                    self.copy.changed(token)
            return
        change = connection.change
        if not change.told:
            change.token = self.copy.changing() if self.copy is not None else None
            change.told = True
        connection.cursor().execute(*self.statement)
        change.written = False

    def committing(self, connection) -> None:
        """Before ``connection``'s transaction commits: write the next version if it wrote rows
        of a followed table since the version was last written."""
        if connection.change.written:
            self.advance(connection)

    def ended(self, connection) -> None:
        """``connection``'s transaction has ended (committed or rolled back): tell the copy the
        change it marked pending is no longer pending, and start afresh."""
        change = connection.change
        if not (change.told or change.written):
            return
        connection.change = TransactionChange()
        if change.told and self.copy is not None:
            self.copy.changed(change.token)


class TransactionEnds:
    """A Peewee database that runs callbacks when its transaction rolls back too: peewee's
    ``after_commit`` has no counterpart. Kept on the connection, whose transaction it is."""

    def after_rollback(self, fn):
        """Call ``fn`` should the current transaction roll back (nothing outside one; a
        savepoint rolled back is not the transaction)."""
        if self.in_transaction():
            self.connection().rollback_callbacks.append(fn)
        return fn

    def commit(self):
        result = super().commit()
        self.connection().rollback_callbacks.clear()
        return result

    def rollback(self):
        if self.is_closed():
            return super().rollback()  # which refuses
        connection = self.connection()
        todo, connection.rollback_callbacks = connection.rollback_callbacks, []
        try:
            return super().rollback()
        finally:
            for fn in todo:
                fn()


class VersionedDatabase(TransactionEnds):
    """A Peewee database keeping the data version (:class:`Versioning`, the attribute
    ``versioning`` set by :func:`open_database`): its transactions write the next version as
    they commit, when they changed the tables it follows, and tell the copy as they end."""

    versioning: Versioning

    def begin(self, *args, **kwargs):
        connection = self.connection()
        # A transaction its connection ended without this database (a pool's rollback at
        # check-in) has ended all the same.
        self.versioning.ended(connection)
        return super().begin(*args, **kwargs)

    def commit(self):
        if self.is_closed():
            return super().commit()  # which refuses
        connection = self.connection()
        self.versioning.committing(connection)
        result = super().commit()
        self.versioning.ended(connection)
        return result

    def rollback(self):
        if self.is_closed():
            return super().rollback()  # which refuses
        connection = self.connection()
        try:
            return super().rollback()
        finally:
            self.versioning.ended(connection)

    def data_changed(self) -> None:
        """Say the data changed where no statement showed it: the next version is written at
        once, in the open transaction (its readers see it from now on) or on its own."""
        self.versioning.advance(self.connection())


@functools.cache
def add_versioning(database_class):
    """``database_class`` with :class:`VersionedDatabase` (made once per class)."""
    return type(database_class.__name__, (VersionedDatabase, database_class), {})


class VersionedSqliteCursor(sqlite3.Cursor):
    """An SQLite cursor reporting each statement to its connection's :class:`Versioning`."""

    def execute(self, sql, parameters=()):
        result = super().execute(sql, parameters)
        self.connection.versioning.ran(self, sql)
        return result

    def executemany(self, sql, seq_of_parameters):
        result = super().executemany(sql, seq_of_parameters)
        self.connection.versioning.ran(self, sql)
        return result


class VersionedSqliteConnection(sqlite3.Connection):
    """An SQLite connection whose cursors report to ``versioning`` (set per database), holding
    what its open transaction did to the data version (``change``) and what to run should it
    roll back."""

    versioning: Versioning

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.change = TransactionChange()
        self.rollback_callbacks = []  # see VersionedDatabase.after_rollback

    def cursor(self, factory=VersionedSqliteCursor):
        return super().cursor(factory)


class VersionedPostgresCursor(psycopg2.extensions.cursor):
    """A psycopg2 cursor reporting each statement to its connection's :class:`Versioning`."""

    def execute(self, query, vars=None):
        result = super().execute(query, vars)
        self.connection.versioning.ran(self, query)
        return result

    def executemany(self, query, vars_list):
        result = super().executemany(query, vars_list)
        self.connection.versioning.ran(self, query)
        return result


#: libpq's transaction states of a connection inside a transaction (a failed one included).
_IN_TRANSACTION = frozenset(
    {psycopg2.extensions.TRANSACTION_STATUS_INTRANS, psycopg2.extensions.TRANSACTION_STATUS_INERROR}
)


class VersionedPostgresConnection(psycopg2.extensions.connection):
    """A psycopg2 connection whose cursors report to ``versioning`` (set per database), holding
    what its open transaction did to the data version (``change``) and what to run should it
    roll back."""

    versioning: Versioning

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cursor_factory = VersionedPostgresCursor
        self.change = TransactionChange()
        self.rollback_callbacks = []  # see VersionedDatabase.after_rollback

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open on the connection (as sqlite3's connections say)."""
        return self.get_transaction_status() in _IN_TRANSACTION
