#!/usr/bin/env bash
# Build the double-clickable app into dist/Baton/ with the current Python environment.
# Installs PyInstaller (and Baton itself) into that environment if they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
[ -n "${VIRTUAL_ENV:-}" ] && python="$VIRTUAL_ENV/bin/python"
[ -x .venv/bin/python ] && [ -z "${VIRTUAL_ENV:-}" ] && [ -z "${PYTHON:-}" ] && python=.venv/bin/python

start=$SECONDS
"$python" -c "import core, PySide6" 2>/dev/null || "$python" -m pip install -q -e .
"$python" -c "import PyInstaller" 2>/dev/null || "$python" -m pip install -q "pyinstaller>=6.6"
QT_QPA_PLATFORM=offscreen "$python" packaging/make_icons.py build/icons
"$python" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath dist --workpath build/pyinstaller packaging/baton.spec
size=$(du -sh dist/Baton | cut -f1)
echo "Built dist/Baton ($size) in $((SECONDS - start)) s"
