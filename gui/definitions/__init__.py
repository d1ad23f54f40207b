"""Definitions (see README: Development)."""
