"""History (see README: Development)."""
