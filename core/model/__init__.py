"""The vocabulary every other package shares: the typed events a run emits, the
errors a person is shown, and budgets (caps and usage). It imports no other part of Baton.
"""
