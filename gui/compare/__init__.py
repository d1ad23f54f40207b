"""Comparing two runs side by side (the data is :mod:`core.run_compare`'s)."""
