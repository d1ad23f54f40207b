"""Where Baton keeps its files and how it reads and writes them (paths, one look at a
checkout's files, atomic writes, bundled resources), the settings in ``config.yaml``,
providers, models and their prices.
"""
