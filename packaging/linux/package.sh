#!/usr/bin/env bash
# Package the built app (dist/Baton, from packaging/build.sh) for Linux:
#   dist/baton-VERSION-linux-ARCH.tar.gz  the app folder, to unpack anywhere and run Baton/baton
#   dist/baton_VERSION_ARCH.deb           /opt/baton, /usr/bin/baton, the desktop entry, icons
#                                         at every size and the MIME types of run files and
#                                         transcripts (install: apt-get install ./baton_….deb)
# The .deb has no maintainer scripts: dpkg's triggers of desktop-file-utils, shared-mime-info
# and the icon theme refresh their caches, so removing the package leaves nothing behind.
set -euo pipefail
cd "$(dirname "$0")/../.."
app=dist/Baton
icons=build/icons
[ -x "$app/baton" ] || { echo "Build first: bash packaging/build.sh" >&2; exit 1; }
[ -f "$icons/baton-256.png" ] || { echo "Icons missing: bash packaging/build.sh" >&2; exit 1; }
version=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' core/__init__.py)
arch=$(dpkg --print-architecture 2>/dev/null || uname -m)

tarball="dist/baton-$version-linux-$(uname -m).tar.gz"
tar -C dist -czf "$tarball" Baton
echo "Built $tarball ($(du -h "$tarball" | cut -f1))"

root=build/deb/baton
rm -rf "$root"
mkdir -p "$root/DEBIAN" "$root/opt" "$root/usr/bin" "$root/usr/share/applications" \
    "$root/usr/share/mime/packages" "$root/usr/share/icons/hicolor/scalable/apps"
cp -a "$app" "$root/opt/baton"
# A script, not a symlink: the app finds its libraries next to its real path either way, but
# a script keeps /usr/bin/baton working if /opt/baton is moved by a future version.
cat > "$root/usr/bin/baton" <<'SH'
#!/bin/sh
exec /opt/baton/baton "$@"
SH
chmod 755 "$root/usr/bin/baton"
sed -e 's|@EXEC@|baton|' packaging/linux/baton.desktop > "$root/usr/share/applications/baton.desktop"
echo "MimeType=application/x-baton-run;application/x-pi-session;application/x-claude-code-transcript;" \
    >> "$root/usr/share/applications/baton.desktop"
install -m644 packaging/linux/baton-mime.xml "$root/usr/share/mime/packages/baton.xml"
for png in "$icons"/baton-*.png; do
    size=$(basename "$png" .png | cut -d- -f2)
    install -Dm644 "$png" "$root/usr/share/icons/hicolor/${size}x${size}/apps/baton.png"
done
install -m644 resources/icons/baton.svg "$root/usr/share/icons/hicolor/scalable/apps/baton.svg"

# The glibc the bundle needs: the newest GLIBC_x.y symbol version any of its files asks for.
glibc=$(find "$root/opt/baton" -type f \( -name '*.so*' -o -name baton \) -print0 \
    | xargs -0 objdump -T 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1 | cut -d_ -f2)
size_kb=$(du -sk "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: baton
Version: $version
Architecture: $arch
Maintainer: Baton <baton@localhost>
Installed-Size: $size_kb
Depends: libc6 (>= $glibc), libegl1, libgl1, libfontconfig1, libxkbcommon0, libxkbcommon-x11-0, libxcb-cursor0, libxcb-icccm4, libxcb-keysyms1, libxcb-shape0, libxcb-xinerama0, libxcb-randr0, libxcb-render-util0, libxcb-image0
Recommends: git, bubblewrap, ripgrep
Section: devel
Priority: optional
Description: See and steer chains of LLM agents
 Baton is a desktop app (and a baton command) that runs pipelines of LLM agents —
 its own agent loop, pi or Claude Code — with approvals, rules, a bash sandbox,
 documents, checkpoints and batches.
CONTROL
deb="dist/baton_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "Built $deb ($(du -h "$deb" | cut -f1)), needs glibc >= $glibc"
