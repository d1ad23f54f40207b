"""Tests of the agents' tools."""
