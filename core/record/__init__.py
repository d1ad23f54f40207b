"""A run as it is recorded: the events folded into its state, the publisher that
sends each event to the run file, the index and the listeners, the run files and the
``runs.sqlite`` index, and the lock that says whether a run is still alive.
"""
