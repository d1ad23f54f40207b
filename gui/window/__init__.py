"""Window (see README: Development)."""
