"""The domain mathematics, in wings: the goal model (``model``), prices and picks (``betting``),
the ledger (``ledger``) and the demo world (``demo``), with what they share at the root: the
markets (``markets``) and the records that carry matches in (``records``).

Plain Python and NumPy/SciPy only. Nothing here imports Flask or Peewee: the services feed the
engine plain values and arrays, and store what it returns. A wing imports only the wings below it
(docs/architecture.md) and the root.
"""
