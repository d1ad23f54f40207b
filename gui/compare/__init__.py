"""Comparing two runs side by side (the data is :mod:`core.history.run_compare`'s)."""
