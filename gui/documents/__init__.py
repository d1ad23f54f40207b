"""Documents (see README: Development)."""
