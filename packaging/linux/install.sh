#!/usr/bin/env bash
# Put the built app (dist/Baton) in the user's applications menu: the bundle goes to
# ~/.local/opt/Baton, a launcher to ~/.local/bin/baton, the icon into the hicolor theme and
# the .desktop entry into ~/.local/share/applications. Run again to update; --uninstall removes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
opt=$HOME/.local/opt/Baton
icons=$root/build/icons

if [ "${1:-}" = "--uninstall" ]; then
    rm -rf "$opt" "$HOME/.local/bin/baton" "$data/applications/baton.desktop"
    for size in 16 32 48 64 128 256 512; do rm -f "$data/icons/hicolor/${size}x${size}/apps/baton.png"; done
    echo "Baton removed."
    exit 0
fi

[ -x "$root/dist/Baton/baton" ] || { echo "Build first: bash packaging/build.sh" >&2; exit 1; }
[ -f "$icons/baton-256.png" ] || { echo "Icons missing: bash packaging/build.sh" >&2; exit 1; }
mkdir -p "$opt" "$HOME/.local/bin" "$data/applications"
rm -rf "$opt" && cp -a "$root/dist/Baton" "$opt"
ln -sf "$opt/baton" "$HOME/.local/bin/baton"
for size in 16 32 48 64 128 256 512; do
    install -Dm644 "$icons/baton-$size.png" "$data/icons/hicolor/${size}x${size}/apps/baton.png"
done
sed "s|@EXEC@|$opt/baton|" "$here/baton.desktop" > "$data/applications/baton.desktop"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$data/applications" || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q "$data/icons/hicolor" || true
echo "Baton installed: find it in your applications menu, or run 'baton'."
