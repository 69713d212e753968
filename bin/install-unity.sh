#!/usr/bin/env bash
# Installs the Unity Catalog server the Unity tests start (crates/core/tests/it/catalog_unity_server.rs):
#   - crates.io `olai-uc-server` (binary `uc-server`: a Unity Catalog REST server with pluggable
#     storage that vends temporary credentials) into .tools/unity/bin
# Built from source with `cargo install --locked --features bin --debug` (about 4 minutes on two
# idle cores the first time). Idempotent: a stamp file per version skips work already done; the build directory is
# removed after a successful install. Project-local only: nothing is installed globally. The
# tests find it at .tools/unity/bin/uc-server (or through VENDED_STORAGE_UC_SERVER).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
UC_SERVER_VERSION=0.0.11
dir="$TOOLS/unity"
stamp="$dir/.installed-$UC_SERVER_VERSION"

if [ ! -f "$stamp" ] || [ ! -x "$dir/bin/uc-server" ]; then
  command -v cargo >/dev/null 2>&1 || { echo "error: cargo is required to build olai-uc-server" >&2; exit 1; }
  echo "installing olai-uc-server $UC_SERVER_VERSION into $dir (cargo install; several minutes the first time)"
  mkdir -p "$dir"
  rm -f "$dir"/.installed-*
  # A build directory of its own, kept if the build is interrupted, so a rerun resumes it.
  # --debug: a test server needs no optimisation, and the dev profile (without debug info) builds
  # in about a third of the release build's CPU time (400 s against 1,260 s measured here).
  CARGO_TARGET_DIR="$dir/build" CARGO_PROFILE_DEV_DEBUG=0 cargo install olai-uc-server \
    --version "$UC_SERVER_VERSION" --features bin --locked --debug --root "$dir"
  rm -rf "$dir/build"
  touch "$stamp"
fi
test -x "$dir/bin/uc-server"
echo "Unity Catalog server ready: $dir/bin/uc-server"
