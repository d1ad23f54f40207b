"""Approvals (see README: Development)."""
