"""Run (see README: Development)."""
