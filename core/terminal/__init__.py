"""The ``baton`` command: one module per sub-command (``commands``) and what the
terminal shows — run output, approval prompts, budget questions. The entry point is
:mod:`core.cli`; the window is the other front end over the same packages below.
"""
