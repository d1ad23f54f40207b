"""Batches: one preset over many inputs, each item an ordinary run grouped under a batch id."""
