"""Agents and presets: their files (Markdown with YAML frontmatter), catalogs,
parameters, structured output shapes, and the checks made before a launch.
"""
