"""Documents agents write and people edit: the SQLite store, its schema, full-text
search and each document's history.
"""
