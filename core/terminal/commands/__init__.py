"""One module per ``baton`` sub-command; see :mod:`core.cli`."""
