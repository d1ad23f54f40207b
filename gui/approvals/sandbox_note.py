"""One sentence on whether ``bash`` runs confined here, for the approval and trust dialogs.

The person deciding must know what a yes means: a sandboxed command can only write in the
working folder; an unconfined one can do anything their account can. The state comes from
:func:`core.safety.sandbox.sandbox_status` and the Settings switch.
"""

from __future__ import annotations

from core.config.settings import SettingsError, load_settings
from core.safety.sandbox import SandboxStatus, sandbox_status


def bash_sandbox() -> SandboxStatus:
    """The sandbox bash gets with the saved settings (on, if they cannot be read)."""
    try:
        enabled = load_settings().sandbox.enabled
    except SettingsError:
        enabled = True
    return sandbox_status(enabled)


def bash_sandbox_text(status: SandboxStatus) -> str:
    if status.active:
        return (
            f"bash is sandboxed ({status.kind}): it writes only in the working folder and "
            "nothing it starts outlives it."
        )
    return (
        f"bash is not sandboxed ({status.reason}): a command can do anything your user account can."
    )
