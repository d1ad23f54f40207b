"""Settings (see README: Development)."""
