"""The agent loops Baton drives: its own OpenAI-compatible loop and the pi and
Claude Code CLIs, each turning its stream into Baton's events; the registry names them, and
the steering inbox carries a person's messages to a running step.
"""
