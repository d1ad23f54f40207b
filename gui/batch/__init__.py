"""Batches (see README: Batches)."""
