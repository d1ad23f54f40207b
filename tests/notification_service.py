"""A real D-Bus notification server for tests: a private ``dbus-daemon`` and, on it, a small
``org.freedesktop.Notifications`` service that records every ``Notify`` (with its actions) and
emits ``ActionInvoked`` when a test presses a button — what GNOME Shell or dunst do, minus the
drawing. It speaks the freedesktop Desktop Notifications protocol (1.2) as those servers do:
``GetCapabilities`` lists ``actions``, ids count up from 1, ``CloseNotification`` answers with
``NotificationClosed`` (reason 3, closed by a call).

The service runs on its own asyncio loop in a thread, so it answers while the test's loop (the
qasync one) waits on conditions.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from dbus_fast import Variant
from dbus_fast.aio import MessageBus
from dbus_fast.annotations import DBusSignature, DBusStr, DBusUInt32
from dbus_fast.service import ServiceInterface, dbus_method, dbus_signal

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
START_TIMEOUT_S = 30.0


@dataclass
class Shown:
    id: int
    app_name: str
    summary: str
    body: str
    actions: list[str]
    """Key, label, key, label… as the protocol sends them."""

    @property
    def buttons(self) -> dict[str, str]:
        return dict(zip(self.actions[::2], self.actions[1::2], strict=True))


class _Service(ServiceInterface):
    def __init__(self, record: FakeNotificationServer) -> None:
        super().__init__(NAME)
        self._record = record

    @dbus_method()
    def Notify(
        self,
        app_name: DBusStr,
        replaces_id: DBusUInt32,
        app_icon: DBusStr,
        summary: DBusStr,
        body: DBusStr,
        actions: Annotated[list[str], DBusSignature("as")],
        hints: Annotated[dict[str, Variant], DBusSignature("a{sv}")],
        expire_timeout: Annotated[int, DBusSignature("i")],
    ) -> DBusUInt32:
        return self._record.add(app_name, summary, body, list(actions))

    # No return annotation: dbus-fast reads ``-> None`` as no signature at all.
    @dbus_method()
    def CloseNotification(self, id: DBusUInt32):
        self._record.closed.append(id)
        self.NotificationClosed(id, 3)

    @dbus_method()
    def GetCapabilities(self) -> Annotated[list[str], DBusSignature("as")]:
        return ["actions", "body"]

    @dbus_method()
    def GetServerInformation(
        self,
    ) -> Annotated[tuple[str, str, str, str], DBusSignature("ssss")]:
        return ("fake-notifications", "baton-tests", "1.0", "1.2")

    @dbus_signal()
    def ActionInvoked(
        self,
        id: int,
        key: str,
    ) -> Annotated[tuple[int, str], DBusSignature("us")]:
        return (id, key)

    @dbus_signal()
    def NotificationClosed(
        self,
        id: int,
        reason: int,
    ) -> Annotated[tuple[int, int], DBusSignature("uu")]:
        return (id, reason)


@dataclass
class FakeNotificationServer:
    address: str
    shown: list[Shown] = field(default_factory=list)
    closed: list[int] = field(default_factory=list)
    _loop: asyncio.AbstractEventLoop | None = None
    _service: _Service | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, app_name: str, summary: str, body: str, actions: list[str]) -> int:
        with self._lock:
            shown = Shown(len(self.shown) + 1, app_name, summary, body, actions)
            self.shown.append(shown)
            return shown.id

    def press(self, shown: Shown, key: str) -> None:
        """The person clicks the button ``key`` on ``shown``."""
        assert self._loop is not None and self._service is not None
        service = self._service
        self._loop.call_soon_threadsafe(service.ActionInvoked, shown.id, key)


def _private_bus(folder: Path) -> tuple[subprocess.Popen[str], str]:
    config = folder / "bus.conf"
    config.write_text(
        "<!DOCTYPE busconfig PUBLIC '-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN'"
        " 'http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd'>\n"
        f"<busconfig><type>session</type><listen>unix:dir={folder}</listen>"
        "<auth>EXTERNAL</auth><policy context='default'><allow send_destination='*'/>"
        "<allow eavesdrop='true'/><allow own='*'/></policy></busconfig>\n"
    )
    daemon = shutil.which("dbus-daemon")
    assert daemon is not None
    process = subprocess.Popen(
        [daemon, f"--config-file={config}", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    address = process.stdout.readline().strip()
    return process, address


@contextmanager
def notification_server(folder: Path) -> Iterator[FakeNotificationServer]:
    """A private bus with the fake server on it; ``DBUS_SESSION_BUS_ADDRESS`` is the test's
    to set to :attr:`FakeNotificationServer.address`."""
    process, address = _private_bus(folder)
    server = FakeNotificationServer(address)
    ready = threading.Event()
    stop: list[asyncio.Event] = []
    failure: list[BaseException] = []

    async def serve() -> None:
        try:
            bus = await MessageBus(bus_address=address).connect()
            service = _Service(server)
            bus.export(PATH, service)
            await bus.request_name(NAME)
            server._loop, server._service = asyncio.get_running_loop(), service
            stop.append(asyncio.Event())
        except BaseException as error:  # the test says why instead of hanging
            failure.append(error)
            ready.set()
            raise
        ready.set()
        await stop[0].wait()
        bus.disconnect()
        await bus.wait_for_disconnect()

    thread = threading.Thread(target=lambda: asyncio.run(serve()), name="fake-notifications")
    thread.start()
    try:
        assert ready.wait(START_TIMEOUT_S), "the fake notification server did not start"
        assert not failure, failure
        yield server
    finally:
        if stop and server._loop is not None:
            server._loop.call_soon_threadsafe(stop[0].set)
        thread.join(START_TIMEOUT_S)
        process.terminate()
        process.wait(START_TIMEOUT_S)
        if process.stdout is not None:
            process.stdout.close()


def dbus_available() -> bool:
    return shutil.which("dbus-daemon") is not None and os.name == "posix"
