"""The vocabulary every other package shares: the typed events a run emits, the
errors a person is shown, budgets (caps and usage), and how a cost and a count read
(``cost``, ``words``) wherever they are shown. It imports no other part of Baton.
"""
