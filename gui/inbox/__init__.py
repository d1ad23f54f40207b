"""The attention inbox: everything waiting for the person across all runs."""
