"""Starting and driving a run: the request (mode, steps, options), its preparation
(agents, models, trust, worktrees), the runner that takes it step by step with budgets,
approvals and steering, the follow-ups a finished run offers (continue, re-run, review), and
what of the runs in progress waits for the person.
"""
