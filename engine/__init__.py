"""The domain mathematics: odds, model, picks, settlement, metrics, backtest, calibration, demo.

Plain Python and NumPy/SciPy only. Nothing here imports Flask or Peewee: the services feed the
engine plain values and arrays, and store what it returns.
"""
