"""What the model may do and see: approvals and the rules that ask for them, the
projects a person trusts, the bash sandbox, secrets kept out of tool environments, redaction
of what is recorded, and the limit on runs started from inside a step.
"""
