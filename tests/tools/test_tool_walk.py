"""The ``.gitignore`` dialect and glob matching shared by ``grep`` (without ripgrep) and
``find``, checked rule by rule against what Git does."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.tools.walk import compile_glob, is_ignored, iter_files, parse_gitignore


@pytest.mark.parametrize(
    ("gitignore", "path", "is_dir", "ignored"),
    [
        ("*.log", "a.log", False, True),
        ("*.log", "deep/er/a.log", False, True),
        ("*.log", "a.log.txt", False, False),
        ("/build", "build", True, True),
        ("/build", "src/build", True, False),
        ("build/", "build", True, True),
        ("build/", "build", False, False),
        ("build/", "src/build", True, True),
        ("doc/*.txt", "doc/a.txt", False, True),
        ("doc/*.txt", "doc/x/a.txt", False, False),
        ("doc/*.txt", "src/doc/a.txt", False, False),
        ("**/foo", "foo", False, True),
        ("**/foo", "a/b/foo", True, True),
        ("a/**/b", "a/b", False, True),
        ("a/**/b", "a/x/y/b", False, True),
        ("logs/**", "logs/x/y.txt", False, True),
        ("logs/**", "logs", True, False),
        ("*.log\n!keep.log", "keep.log", False, False),
        ("*.log\n!keep.log", "other.log", False, True),
        ("!keep.log\n*.log", "keep.log", False, True),
        ("\\#hash", "#hash", False, True),
        ("# just a comment\n\n", "# just a comment", False, False),
        ("[ab].txt", "a.txt", False, True),
        ("[ab].txt", "c.txt", False, False),
        ("[!ab].txt", "c.txt", False, True),
        ("file?.md", "file1.md", False, True),
        ("file?.md", "file10.md", False, False),
        ("trailing.txt   ", "trailing.txt", False, True),
    ],
)
def test_gitignore_rule(gitignore: str, path: str, is_dir: bool, ignored: bool) -> None:
    assert is_ignored(parse_gitignore(gitignore, ""), path, is_dir) is ignored


def test_nested_rules_apply_only_below_their_folder_and_win() -> None:
    rules = parse_gitignore("*.tmp\n", "") + parse_gitignore("!keep.tmp\n/local\n", "sub")
    assert is_ignored(rules, "x.tmp", False)
    assert is_ignored(rules, "sub/x.tmp", False)
    assert not is_ignored(rules, "sub/keep.tmp", False)
    assert is_ignored(rules, "keep.tmp", False)
    assert is_ignored(rules, "sub/local", True)
    assert not is_ignored(rules, "local", True)
    assert not is_ignored(rules, "subway/local", True)


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("*.py", "a.py", True),
        ("*.py", "deep/a.py", True),
        ("*.py", "a.pyc", False),
        ("**/*.py", "a.py", True),
        ("**/*.py", "x/y/a.py", True),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/x/a.py", False),
        ("src/**/*.py", "src/x/a.py", True),
        ("*.{ts,tsx}", "ui/app.tsx", True),
        ("*.{ts,tsx}", "ui/app.js", False),
        ("{src,lib}/**/*.rs", "lib/a/b.rs", True),
        ("./src/*.py", "src/a.py", True),
        ("test_[0-9].py", "test_7.py", True),
        ("!*.py", "x/a.py", False),
        ("!*.py", "x/a.md", True),
    ],
)
def test_search_glob(glob: str, path: str, matches: bool) -> None:
    assert compile_glob(glob)(path) is matches


def test_walk_is_sorted_skips_git_symlinks_and_ignored(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for name in ("b/z.txt", "a.txt", "c/d/e.txt", ".hidden", ".git/config", "out/x.txt"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    (root / ".gitignore").write_text("out/\n")
    (root / "link").symlink_to(root / "b", target_is_directory=True)
    found = [p.relative_to(root).as_posix() for p in iter_files(root, root)]
    assert found == [".gitignore", ".hidden", "a.txt", "b/z.txt", "c/d/e.txt"]


def test_walk_from_a_subfolder_keeps_the_parent_rules(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "pkg").mkdir(parents=True)
    (root / ".gitignore").write_text("*.pyc\n")
    (root / "pkg" / "m.py").write_text("")
    (root / "pkg" / "m.pyc").write_text("")
    found = [p.name for p in iter_files(root / "pkg", root)]
    assert found == ["m.py"]


def test_enclosing_checkout_rules_apply_above_the_working_folder(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".gitignore").write_text("*.log\n")
    work = repo / "sub"
    work.mkdir()
    (work / "a.log").write_text("")
    (work / "a.txt").write_text("")
    assert [p.name for p in iter_files(work, work)] == ["a.txt"]
