"""Where Baton keeps its files and how it writes them (paths, atomic writes,
bundled resources), the settings in ``config.yaml``, providers, models and their prices.
"""
