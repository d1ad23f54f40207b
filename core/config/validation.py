"""Turning pydantic's validation errors into sentences a person can act on."""

from __future__ import annotations

from pydantic import ValidationError


def format_validation_error(error: ValidationError) -> str:
    """One clause per problem, named by its field path, joined with ``; ``."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg'].removeprefix('Value error, ')}"
        for e in error.errors()
    )
