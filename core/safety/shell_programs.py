"""What a program on a command line can do besides its name: run other programs, write files.

A prefix rule such as ``Bash(git log:*)`` promises that the line runs ``git log`` and nothing
else. Bash and the programs themselves break that promise in three ways, each answered here:

* **Programs that run programs** (:data:`LAUNCHERS`): ``env rm``, ``xargs rm``, ``bash -c``,
  ``timeout 5 rm``, ``eval``, editors, interpreters — and builtins that change what later
  commands run (``export GIT_EXTERNAL_DIFF=id``). Their arguments *are* a program, so no
  prefix rule can vouch for them; a person may still allow an exact line.
* **Options that write files or run programs** (:data:`OPTIONS`): ``git log --output=x``,
  ``git diff --ext-diff``, ``find -exec``, ``sed -i`` / ``s///e``, ``awk 'BEGIN{system(…)}'``,
  ``tar --to-command``, ``rsync -e``, ``sort -o``, ``less +!cmd``. Long options are matched
  with git's and getopt's abbreviations (``--out=x`` is ``--output=x``) and short ones inside
  clusters (``-sSLo``). An argument bash would still expand (``*``, ``{a,b}``, ``$X``) could
  become such an option (a file named ``--output=x``), so it counts as one.
* **Builtins that evaluate subscripts and arithmetic** (:data:`ARITHMETIC`): ``test -v
  'a[$(rm x)]'`` runs ``rm``; so do ``printf -v``, ``read``, ``declare``, ``unset``, ``let``
  and ``[[ … -eq … ]]`` with a ``[``, ``$`` or backtick anywhere in their words.

For deny and ask rules, :func:`inner_commands` names what a wrapper would run (``env rm`` →
``rm``, ``find -exec rm``, the string of ``bash -c``), and :func:`opaque_reason` says when a
line runs something no rule can see (``$CMD x``, ``eval``, a script fed to ``sh``): such a line
is never allowed past a deny rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

# fmt: off
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "ash"})
#: Programs and builtins whose arguments name a program or are code: never a prefix rule.
LAUNCHERS = SHELLS | frozenset({
    "env", "xargs", "sudo", "su", "doas", "runuser", "pkexec", "eval", "exec", "command",
    "builtin", "source", ".", "nohup", "setsid", "timeout", "nice", "ionice", "chrt", "taskset",
    "stdbuf", "time", "watch", "strace", "ltrace", "gdb", "valgrind", "chroot", "unshare",
    "nsenter", "flock", "script", "parallel", "systemd-run", "busybox", "fakeroot", "firejail",
    "ssh", "ssh-agent", "sshpass", "expect", "at", "batch", "crontab", "xdg-open", "open",
    "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "perl",
    "ruby", "php", "lua", "luajit", "tclsh", "wish", "Rscript", "osascript", "npx", "uvx",
    "pipx", "vim", "vi", "nvim", "view", "ex", "ed", "emacs", "make", "gmake", "man", "patch",
    "docker", "podman", "trap", "alias", "hash", "enable", "fc", "coproc", "compgen",
    "complete", "bind", "dbus-run-session", "sg", "newgrp", "tmux", "screen", "socat",
}) | frozenset({
    # Builtins that change what later commands run: ``export GIT_EXTERNAL_DIFF=id; git diff``.
    "export", "declare", "typeset", "local", "readonly", "set", "shopt", "umask",
})
#: Builtins that evaluate array subscripts or arithmetic in their arguments (``a[$(cmd)]``).
ARITHMETIC = frozenset({
    "test", "[", "[[", "let", "((", "declare", "typeset", "local", "export", "readonly",
    "unset", "read", "mapfile", "readarray", "printf", "wait", "getopts", "ulimit", "shift",
    "return", "exit", "caller", "history", "kill", "jobs", "disown", "pushd", "popd",
})
#: Always arithmetic, whatever the words look like (a bare name's *value* is evaluated).
ALWAYS_ARITHMETIC = frozenset({"let", "(("})
#: Builtins that change what later commands run (a deny rule cannot follow them).
STATE_CHANGERS = frozenset({
    "export", "declare", "typeset", "local", "readonly", "alias", "set", "shopt", "enable",
    "hash",
})
#: Programs that run what their arguments name, with how to find it.
WRAPPERS = LAUNCHERS - SHELLS - frozenset({
    "eval", "source", ".", "export", "declare", "typeset", "local", "readonly", "set", "shopt",
    "umask",
})
# fmt: on

MAX_CANDIDATES = 8
"""Words after a wrapper tried as its program: enough for any option's values, and bounded."""
_EXPANDING = re.compile(r"[$`*?{]|\[.*\]")


@dataclass(frozen=True)
class Options:
    """The options of one program that write files or run programs."""

    long: frozenset[str] = frozenset()
    """Names without dashes, also risky when abbreviated or extended (``--out``, ``--output-x``)."""
    short: str = ""
    """Letters risky anywhere in a ``-abc`` cluster."""
    words: frozenset[str] = frozenset()
    """Whole words that are risky as written (``find``'s ``-exec``)."""
    subcommands: frozenset[str] = frozenset()
    """Subcommands that run programs by design (hooks, editors, tools): exact lines only."""
    single_dash_long: bool = False
    """``-toolexec=x`` is a long option too (Go, find)."""
    plus: bool = False
    """A ``+cmd`` word runs a command (``less +!id``)."""
    first_bundle: bool = False
    """The first argument may be a dash-less cluster of short options (``tar xIf``)."""
    script: Callable[[list[str]], str | None] | None = None
    """A check of the program text the command carries (sed and awk scripts)."""


def _sed_script(args: list[str]) -> str | None:
    scripts = [a.split("=", 1)[1] for a in args if a.startswith("--expression=")]
    scripts += [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-e"]
    if not scripts:
        scripts = [next((a for a in args if not a.startswith("-")), "")]
    if any(re.search(r"[ewW]", s) for s in scripts):
        return "a sed script that may run commands or write files (e, w, W)"
    return None


def _tar_archive(args: list[str]) -> str | None:
    if "--force-local" not in args and any(":" in a and not a.startswith("-") for a in args):
        return "a tar archive name with a colon, which tar reaches through rsh"
    return None


def _awk_program(args: list[str]) -> str | None:
    rest = list(args)
    while rest and rest[0].startswith("-") and rest[0] != "--":
        option = rest.pop(0)
        if option in ("-F", "-v"):
            rest = rest[1:]
        elif not option.startswith(("-F", "-v", "--field-separator=", "--assign=")):
            return f"an awk option ({option}) that may load code or write files"
    if rest and rest[0] == "--":
        rest = rest[1:]
    program = rest[0] if rest else ""
    if re.search(r"system|getline|[|>@]", program):
        return "an awk program that may run commands or write files"
    return None


_GIT_SAFE_GLOBALS = frozenset({"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs"})

# fmt: off
OPTIONS: dict[str, Options] = {
    "git": Options(
        long=frozenset({
            "output", "output-directory", "ext-diff", "textconv", "filters", "exec",
            "exec-path", "upload-pack", "receive-pack", "config", "config-env",
            "open-files-in-pager", "extcmd", "tool", "template", "remote", "run",
            "git-dir", "work-tree",
        }),
        short="Ox",
        subcommands=frozenset({
            "config", "difftool", "mergetool", "bisect", "submodule", "filter-branch",
            "send-email", "daemon", "instaweb", "web--browse", "credential", "hook", "help",
            "commit", "merge", "rebase", "am", "pull", "push", "fetch", "clone", "checkout",
            "switch", "cherry-pick", "revert", "gc", "archive", "ls-remote", "remote",
            "worktree", "tag", "format-patch", "apply", "stash", "notes", "maintenance",
            "fsmonitor--daemon", "upload-pack", "receive-pack", "shell", "p4", "svn",
            "cvsimport", "cvsserver", "request-pull", "imap-send", "replace", "sparse-checkout",
            "reset", "restore", "add", "update-index", "filter-repo",
        }),
    ),
    "find": Options(
        words=frozenset({
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0",
            "-fprintf", "-fls",
        }),
    ),
    "sed": Options(long=frozenset({"in-place", "file"}), short="if", script=_sed_script),
    "awk": Options(script=_awk_program),
    "tar": Options(
        long=frozenset({
            "to-command", "checkpoint-action", "use-compress-program", "rsh-command",
            "info-script", "new-volume-script", "rmt-command", "gzip", "gunzip", "ungzip",
            "bzip2", "xz", "lzma", "lzip", "lzop", "zstd", "compress", "uncompress",
            "auto-compress",
        }),
        short="IFzjJZa",
        first_bundle=True,
        script=_tar_archive,
    ),
    "rsync": Options(long=frozenset({"rsh", "rsync-path"}), short="e"),
    "scp": Options(short="SoF"),
    "sort": Options(long=frozenset({"output", "compress-program"}), short="o"),
    "less": Options(
        long=frozenset({"log-file", "LOG-FILE", "lesskey-file", "lesskey-src", "lesskey"}),
        short="oOk",
        plus=True,
    ),
    "more": Options(plus=True),
    "curl": Options(
        long=frozenset({
            "output", "output-dir", "remote-name", "remote-name-all", "config", "dump-header",
            "trace", "trace-ascii", "cookie-jar", "libcurl", "stderr", "etag-save", "hsts",
            "alt-svc",
        }),
        short="oOKDc",
    ),
    "wget": Options(
        long=frozenset({
            "output-document", "output-file", "append-output", "execute", "use-askpass",
            "config", "directory-prefix",
        }),
        short="OoaeP",
    ),
    "zip": Options(long=frozenset({"unzip-command"}), short="T"),
    "rg": Options(long=frozenset({"pre", "pre-glob", "search-zip", "hostname-bin"}), short="z"),
    "install": Options(long=frozenset({"strip-program", "strip"}), short="s"),
    "nc": Options(long=frozenset({"exec", "sh-exec", "lua-exec"}), short="ec"),
    "gpg": Options(long=frozenset({"photo-viewer", "exec-path", "output"}), short="o"),
    "go": Options(long=frozenset({"toolexec", "exec", "overlay"}), single_dash_long=True),
    "cargo": Options(long=frozenset({"config"})),
    "npm": Options(
        long=frozenset({"script-shell", "node-options", "userconfig", "globalconfig"}),
        subcommands=frozenset({"exec", "x", "explore", "rebuild", "install", "i", "ci"}),
    ),
    "pytest": Options(
        long=frozenset({
            "override-ini", "config-file", "basetemp", "junitxml", "junit-xml", "debug",
            "result-log", "rootdir", "confcutdir",
        }),
        short="pco",
    ),
}
for _alias, _name in {
    "gawk": "awk", "mawk": "awk", "nawk": "awk", "gsed": "sed", "gtar": "tar", "bsdtar": "tar",
    "ncat": "nc", "netcat": "nc", "gpg2": "gpg", "most": "less", "pnpm": "npm", "yarn": "npm",
    "py.test": "pytest",
}.items():
    OPTIONS[_alias] = OPTIONS[_name]
# fmt: on


def program_name(word: str) -> str:
    """``/usr/bin/git`` → ``git``: the program a path names, for matching and tables."""
    return PurePosixPath(word).name if "/" in word else word


def expands(raw: str) -> bool:
    """Whether bash would still expand part of a word as written (``*``, ``{a,b}``, ``$X``,
    backticks) — then the words the program sees are not the ones Baton read."""
    return bool(_EXPANDING.search(_unquoted(raw)))


def _unquoted(raw: str) -> str:
    """The characters of ``raw`` bash treats specially: single-quoted and escaped ones dropped,
    double-quoted ones kept only where ``$`` and backticks still work."""
    out: list[str] = []
    i, quote = 0, ""
    while i < len(raw):
        char = raw[i]
        if quote == "'":
            quote = "" if char == "'" else quote
        elif char == "\\":
            i += 1
        elif quote == '"':
            if char == '"':
                quote = ""
            elif char in "$`":
                out.append(char)
        elif char in "'\"":
            quote = char
        else:
            out.append(char)
        i += 1
    return "".join(out)


def prefix_risk(words: list[str], raw: list[str] | None = None) -> str | None:
    """Why no prefix rule may allow this simple command, or None when one may.

    ``raw``: the words as written (quotes kept); without them every word counts as written.
    """
    name = program_name(words[0])
    args = words[1:]
    if name in LAUNCHERS:
        return f"{name} runs other programs or code, or changes what later commands run"
    if name in ARITHMETIC:
        if name in ALWAYS_ARITHMETIC:
            return f"{name} evaluates arithmetic"
        if any(ch in word for word in args for ch in "[$`"):
            return f"{name} evaluates array subscripts in its arguments"
    table = OPTIONS.get(name)
    if table is None:
        return None
    written = raw[1 : raw.index("--")] if raw is not None and "--" in raw else (raw or [])[1:]
    if any(expands(word) for word in written):
        return f"an argument of {name} expands to words Baton cannot see"
    return _option_risk(name, table, args)


def _option_risk(name: str, table: Options, args: list[str]) -> str | None:
    if name == "git":
        if args and args[0].startswith("-") and args[0] not in _GIT_SAFE_GLOBALS:
            return f"git option {args[0]} before the subcommand"
        subcommand = next((a for a in args if not a.startswith("-")), "")
        if subcommand in table.subcommands:
            return f"git {subcommand} runs hooks, editors or other programs"
    elif table.subcommands:
        subcommand = next((a for a in args if not a.startswith("-")), "")
        if subcommand in table.subcommands:
            return f"{name} {subcommand} runs other programs"
    bundle = args[0] if table.first_bundle and args and not args[0].startswith("-") else ""
    if set(bundle) & set(table.short):
        return f"{name} option cluster {bundle} runs programs"
    for arg in args:
        if arg == "--":
            break
        reason = _argument_risk(name, table, arg)
        if reason:
            return reason
    return table.script(args) if table.script else None


def _argument_risk(name: str, table: Options, arg: str) -> str | None:
    risky = f"{name} {arg}: an option that writes files or runs programs"
    if arg in table.words:
        return risky
    if arg.startswith("+") and table.plus:
        return risky
    if arg.startswith("--") or (table.single_dash_long and arg.startswith("-")):
        option = arg.lstrip("-").split("=", 1)[0]
        if option and any(d.startswith(option) or option.startswith(d) for d in table.long):
            return risky
        if arg.startswith("--"):
            return None
    if arg.startswith("-") and len(arg) > 1 and set(arg[1:]) & set(table.short):
        return risky
    return None


def inner_commands(words: list[str]) -> list[list[str]]:
    """The commands a wrapper would start, found without running anything (for deny rules).

    ``env FOO=1 rm x`` → ``[["rm", "x"]]``; option values are not understood, so every word
    after the wrapper that could be a program is tried (``timeout 5 rm`` tries ``5 rm`` and
    ``rm``): a deny rule errs on matching. ``find … -exec rm {} ;`` → ``rm {}``. Shell
    strings (``bash -c``, ``eval``) are left to the caller, which parses them.
    """
    name = program_name(words[0])
    found: list[list[str]] = []
    if name in WRAPPERS:
        for i in range(1, len(words)):
            word = words[i]
            if not word.startswith("-") and not re.match(r"^[A-Za-z_]\w*=", word):
                found.append(words[i:])
                if len(found) == MAX_CANDIDATES:
                    break
    if name in ("find", "gfind"):
        for i, word in enumerate(words):
            if word in ("-exec", "-execdir", "-ok", "-okdir") and i + 1 < len(words):
                tail = words[i + 1 :]
                end = next((j for j, w in enumerate(tail) if w in (";", "+")), len(tail))
                if end:
                    found.append(tail[:end])
    return found


def shell_strings(words: list[str]) -> list[str] | None:
    """The shell code a command runs as strings (``bash -c CODE``, ``eval A B``, ``su -c``,
    ``trap CODE EXIT``, ``env -S 'rm x'``), or None when it runs code Baton cannot read
    (``bash script.sh``, ``sh`` reading stdin, ``source file``). An empty list: no shell code.
    Which word is the code is not worked out: every candidate is read, erring on matching."""
    name = program_name(words[0])
    if name == "eval":
        return [" ".join(words[1:])]
    if name in ("source", "."):
        return None
    if name == "trap":
        return [w for w in words[1:2] if not w.startswith("-")]
    strings = [w for w in words[1:] if not w.startswith("-")]
    if name in SHELLS:
        has_c = any(w.startswith("-") and not w.startswith("--") and "c" in w for w in words)
        return strings if has_c and strings else None
    if name in ("su", "runuser", "flock", "script", "watch", "ssh"):
        return strings
    if name in WRAPPERS:
        return [w for w in strings if any(c.isspace() for c in w)]
    return []
