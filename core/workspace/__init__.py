"""The folder a run works in: git, checkpoints of the working tree before and
after each step, restoring them, worktrees, patches, and what the editor remembers about a file
on disk.
"""
