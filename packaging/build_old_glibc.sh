#!/usr/bin/env bash
# Build dist/Baton on Debian 11 (glibc 2.31), so the bundle runs on Debian 11, Ubuntu 20.04 and
# later: a built app needs the glibc of the system it was built on or newer, and Baton's usual
# build host (Debian 12) gives it 2.36. Debian 11 has no Python 3.11, so CPython is compiled in
# the chroot from Debian's own python3.11 source package (bookworm's), shared and without the
# profile-guided optimisation the Debian package does (minutes instead of an hour).
#   sudo bash packaging/build_old_glibc.sh [--check]   # root: debootstrap, chroot, mounts
# --check: then run the bundle's self-test and a chain (tests/bundle/chroot_run.py, with the
# .venv's Python for the scripted model) inside the chroot.
# Each phase prints its time. The chroot is kept in /var/tmp/baton-bullseye for the next build.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
root=${BATON_OLD_ROOT:-/var/tmp/baton-bullseye}
# The Debian mirror this machine's apt uses (DEBIAN_MIRROR overrides it).
mirror=${DEBIAN_MIRROR:-$(grep -hoE '^(URIs:|deb)[[:space:]]+[a-z]+://[^[:space:]]+/debian/?$' \
    /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list \
    2>/dev/null | head -1 | awk '{print $2}' || true)}
[ -n "$mirror" ] || { echo "no Debian mirror found in apt's sources: set DEBIAN_MIRROR" >&2; exit 1; }
phase() { printf '\n== %s (%ss)\n' "$*" "$SECONDS"; }

if [ ! -x "$root/usr/bin/apt-get" ]; then
    phase "debootstrap bullseye (minbase)"
    debootstrap --variant=minbase bullseye "$root" "$mirror" >/dev/null
fi
mkdir -p "$root/src" "$root/proc" "$root/dev"
mounted=()
cleanup() { for m in "${mounted[@]}"; do umount -l "$m" || true; done; }
trap cleanup EXIT
mount --bind "$repo" "$root/src" && mounted+=("$root/src")
mount -t proc proc "$root/proc" && mounted+=("$root/proc")
mount --bind /dev "$root/dev" && mounted+=("$root/dev")
cp /etc/resolv.conf "$root/etc/resolv.conf"
# The host's certificate bundle: the same trust for pip inside as outside.
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/host-ca-certificates.crt"
in_root() { chroot "$root" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive PIP_CERT=/etc/host-ca-certificates.crt \
    PIP_DISABLE_PIP_VERSION_CHECK=1 QT_QPA_PLATFORM=offscreen "$@"; }

phase "build tools and the libraries Qt links (Debian 11's)"
in_root apt-get update -q >/dev/null
in_root apt-get install -y -q --no-install-recommends build-essential binutils ca-certificates \
    libssl-dev zlib1g-dev libbz2-dev liblzma-dev libsqlite3-dev libffi-dev uuid-dev \
    libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libdbus-1-3 libglib2.0-0 \
    libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 libxcb-xinerama0 libxcb-randr0 \
    libxcb-render-util0 libxcb-image0 fonts-dejavu-core git xz-utils dpkg-dev >/dev/null

python=/opt/python3.11/bin/python3.11
if ! in_root test -x "$python"; then
    phase "CPython 3.11 from Debian's source package"
    echo "deb-src $mirror bookworm main" > "$root/etc/apt/sources.list.d/bookworm-src.list"
    in_root apt-get update -q >/dev/null
    in_root sh -c 'mkdir -p /build && cd /build && apt-get source -q --download-only python3.11 >/dev/null \
        && tar xf python3.11_*.orig.tar.* && cd Python-3.11* \
        && ./configure -q --enable-shared --prefix=/opt/python3.11 \
             LDFLAGS=-Wl,-rpath=/opt/python3.11/lib >/dev/null \
        && make -s -j"$(nproc)" >/dev/null 2>&1 && make -s altinstall >/dev/null 2>&1'
fi

phase "a virtual environment with Baton and PyInstaller"
in_root "$python" -m venv /build/venv
in_root /build/venv/bin/pip install -q /src "pyinstaller>=6.6"

phase "PyInstaller, in the chroot, into dist/Baton"
in_root sh -c 'cd /src && VIRTUAL_ENV=/build/venv bash packaging/build.sh'
glibc=$(find dist/Baton -type f \( -name '*.so*' -o -name baton \) -print0 \
    | xargs -0 objdump -T 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
phase "built: needs $glibc"

if [ "${1:-}" = "--check" ]; then
    phase "self-test inside Debian 11"
    in_root /src/dist/Baton/baton --self-test
    phase "a chain inside Debian 11"
    PYTHONPATH="$repo" "${CHECK_PYTHON:-$repo/.venv/bin/python}" -m tests.bundle.chroot_run "$root"
fi
