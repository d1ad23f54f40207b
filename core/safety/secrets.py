"""API keys: read from an environment variable or the system keyring, never from a file.

A provider in ``config.yaml`` only *names* where its key lives
(:class:`core.config.settings.Provider`
``api_key_env`` / ``api_key_in_keyring``), so the settings file can be shared or committed
without leaking anything. Keys live in the keyring under service ``baton``, user = provider
name.

Reading never fails: a machine without a usable keyring (a headless Linux box, a locked
keychain, a broken D-Bus session) simply has no stored key, and the backend then explains that
the provider needs one. Writing and deleting raise :class:`SecretsError` with a sentence the
settings dialog can show as it is.
"""

from __future__ import annotations

import os

from core.config.settings import TELEMETRY_HEADERS_KEY, Provider, Settings

SERVICE = "baton"


class SecretsError(Exception):
    """The keyring cannot store or delete a key; the message says why and what to do."""


def api_key_for(provider: Provider) -> str | None:
    """The provider's API key, or None when it has none (local servers often need none).

    The environment wins over the keyring, so a key can be overridden for one shell.
    """
    if provider.api_key_env:
        value = os.environ.get(provider.api_key_env, "").strip()
        if value:
            return value
    if provider.api_key_in_keyring:
        return _keyring_get(provider.name)
    return None


def telemetry_headers(settings: Settings) -> str | None:
    """The OTLP exporter's headers as stored from Settings ▸ Telemetry (``name=value,...``),
    or None. ``OTEL_EXPORTER_OTLP_HEADERS`` is read by the exporter itself."""
    if not settings.telemetry.headers_in_keyring:
        return None
    return stored_telemetry_headers()


def stored_telemetry_headers() -> str | None:
    """The OTLP headers in the keyring, whatever the settings say (Send a test trace)."""
    return _keyring_get(TELEMETRY_HEADERS_KEY)


def store_telemetry_headers(headers: str) -> None:
    """Keep the OTLP headers (``name=value,...``) in the keyring; raises :class:`SecretsError`."""
    store_api_key(TELEMETRY_HEADERS_KEY, headers)


def delete_telemetry_headers() -> None:
    delete_api_key(TELEMETRY_HEADERS_KEY)


def store_api_key(provider_name: str, key: str) -> None:
    """Store (or replace) a provider's key in the system keyring."""
    import keyring
    from keyring.errors import KeyringError, NoKeyringError

    if not keyring_available():
        raise SecretsError(_NO_KEYRING)
    try:
        keyring.set_password(SERVICE, provider_name, key)
    except NoKeyringError:
        raise SecretsError(_NO_KEYRING) from None
    except KeyringError as error:
        raise SecretsError(f"The system keyring refused to store the key: {error}") from None


def delete_api_key(provider_name: str) -> None:
    """Forget a stored key; deleting a key that is not stored is not an error."""
    import keyring
    from keyring.errors import KeyringError, NoKeyringError, PasswordDeleteError

    try:
        keyring.delete_password(SERVICE, provider_name)
    except NoKeyringError:
        raise SecretsError(_NO_KEYRING) from None
    except PasswordDeleteError:
        return
    except KeyringError as error:
        raise SecretsError(f"The system keyring refused to delete the key: {error}") from None


def keyring_available() -> bool:
    """Whether a real keyring backend exists (the settings dialog greys out "store" if not).

    keyring's stand-ins — the failing backend, the ``null`` one that silently forgets, an
    empty chain — all have a priority of zero or less.
    """
    import keyring

    try:
        return float(keyring.get_keyring().priority) > 0
    except Exception:  # a backend that fails while loading is as good as none
        return False


def _keyring_get(provider_name: str) -> str | None:
    import keyring

    try:
        value = keyring.get_password(SERVICE, provider_name)
    except Exception:
        # NoKeyringError, a locked keychain, D-Bus errors: third-party backends raise all
        # kinds of things, and a missing key must never crash a run.
        return None
    return value or None


_NO_KEYRING = (
    "No system keyring is available on this machine; put the key in an environment variable "
    "and enter that variable's name in the provider settings instead."
)
