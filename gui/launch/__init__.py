"""Launch (see README: Development)."""
