"""Runs once recorded: reading a run file back into its state, searching and
comparing runs, exporting them as Markdown, importing pi and Claude Code transcripts, what a
run cost per agent and sub-agent, and what a preset's next run is likely to cost.
"""
