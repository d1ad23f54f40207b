"""The start-up check that names missing system libraries instead of letting Qt abort."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gui import launcher, system_libraries
from gui.system_libraries import missing_libraries, uses_xcb


@pytest.fixture
def library_with_a_missing_dependency(tmp_path: Path) -> Path:
    """A real shared library linked against one that is then deleted, as on a bare machine."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the test libraries")
    (tmp_path / "dep.c").write_text("int dep(void) { return 1; }\n")
    (tmp_path / "top.c").write_text("int dep(void);\nint top(void) { return dep(); }\n")
    dep = tmp_path / "libbatontestdep.so.1"
    top = tmp_path / "libbatontesttop.so"
    build = [compiler, "-shared", "-fPIC"]
    subprocess.run(
        [*build, "-Wl,-soname,libbatontestdep.so.1", "-o", dep, tmp_path / "dep.c"], check=True
    )
    subprocess.run([*build, "-o", top, tmp_path / "top.c", dep], check=True)
    dep.unlink()
    return top


def test_a_missing_dependency_is_named(library_with_a_missing_dependency: Path) -> None:
    assert missing_libraries(library_with_a_missing_dependency) == ["libbatontestdep.so.1"]


def test_a_complete_library_has_nothing_missing() -> None:
    libc = Path("/lib/x86_64-linux-gnu/libc.so.6")
    found = next((p for p in (libc, Path("/lib64/libc.so.6")) if p.exists()), None)
    if found is None:
        pytest.skip("no glibc at a known path")
    assert missing_libraries(found) == []


def test_the_window_refuses_with_the_packages_to_install(
    library_with_a_missing_dependency: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(system_libraries, "xcb_plugin", lambda: library_with_a_missing_dependency)
    monkeypatch.setattr(system_libraries, "DEBIAN_PACKAGES", {"libbatontestdep.so.1": "libdep1"})
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":99")
    assert launcher.Window().open_window([]) == 2
    error = capsys.readouterr().err
    assert error.startswith("baton: the window needs system libraries that are missing")
    assert "libbatontestdep.so.1" in error
    assert "sudo apt install libdep1" in error


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({"DISPLAY": ":0"}, True),
        ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, False),
        ({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"}, False),
        ({"QT_QPA_PLATFORM": "xcb"}, True),
        ({}, False),
    ],
)
def test_only_the_x11_platform_is_checked(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], expected: bool
) -> None:
    monkeypatch.setattr("sys.platform", "linux")
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert uses_xcb() is expected


def test_an_unreachable_display_is_said_before_qt_aborts(monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = system_libraries.xcb_plugin()
    if plugin is None or missing_libraries(plugin):
        pytest.skip("PySide6's X11 plugin or its libraries are not installed here")
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":987")
    problem = system_libraries.missing_libraries_problem()
    assert problem == "cannot connect to the X display ':987'; is the X server running?"
