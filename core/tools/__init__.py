"""The tools an agent calls (read, write, edit, bash, grep, find, ls, document) and
the processes they start; how an approval describes a call before it runs.
"""
