#!/usr/bin/env bash
# Installs the third-party S3 servers the conformance suite starts (crates/core/tests/it/conformance*):
#   - PyPI `moto[server]` (moto's S3/IAM/STS server; SigV4 checked after `POST /moto-api/reset-auth`)
#     into .tools/moto-venv, under the default python3
#   - PyPI `localstack-core` (LocalStack without Docker) into .tools/localstack-venv, under the
#     pyenv Python 3.13 (LocalStack needs >= 3.13 here), with the pins that make it start
#     (cbor2<6, pyopenssl 24.3.0, service-identity 24.2.0, cryptography 44.0.3).
# Idempotent: a stamp file per tool and version skips work already done. Project-local only:
# nothing is installed globally. The tests find the interpreters under .tools/ (or through
# VENDED_STORAGE_MOTO_PYTHON / VENDED_STORAGE_LOCALSTACK_PYTHON).
# LocalStack is optional: when no Python 3.13 is found it is left out, the reason is written to
# .tools/localstack-unavailable, and the LocalStack conformance test reports "not provable here:
# <reason>" instead of failing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
MOTO_VERSION=5.2.5
LOCALSTACK_VERSION=2026.3.0
LOCALSTACK_PINS=("cbor2<6" "pyopenssl==24.3.0" "service-identity==24.2.0" "cryptography==44.0.3")
mkdir -p "$TOOLS"

command -v python3 >/dev/null 2>&1 || { echo "error: python3 is required to install moto" >&2; exit 1; }

moto_venv="$TOOLS/moto-venv"
moto_stamp="$moto_venv/.installed-$MOTO_VERSION"
if [ ! -f "$moto_stamp" ]; then
  echo "installing moto[server] $MOTO_VERSION into $moto_venv"
  rm -rf "$moto_venv"
  python3 -m venv "$moto_venv"
  "$moto_venv/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"
  touch "$moto_stamp"
fi
"$moto_venv/bin/python" -c 'import moto.server' >/dev/null

# Python 3.13: VENDED_STORAGE_PYTHON313, else pyenv's newest 3.13.x, else python3.13 on PATH.
py313="${VENDED_STORAGE_PYTHON313:-}"
if [ -z "$py313" ]; then
  for candidate in $(ls -d "$HOME"/.pyenv/versions/3.13.* 2>/dev/null | sort -V -r); do
    if [ -x "$candidate/bin/python3" ]; then py313="$candidate/bin/python3"; break; fi
  done
fi
if [ -z "$py313" ] && command -v python3.13 >/dev/null 2>&1; then py313="$(command -v python3.13)"; fi

ls_venv="$TOOLS/localstack-venv"
ls_stamp="$ls_venv/.installed-runtime-$LOCALSTACK_VERSION"
unavailable="$TOOLS/localstack-unavailable"
rm -f "$unavailable"
if [ -z "$py313" ]; then
  echo "no Python 3.13 found (pyenv ~/.pyenv/versions/3.13.*, python3.13 on PATH or VENDED_STORAGE_PYTHON313); localstack-core $LOCALSTACK_VERSION needs it" >"$unavailable"
  echo "note: $(cat "$unavailable"); its conformance test reports not provable"
elif [ ! -f "$ls_stamp" ]; then
  echo "installing localstack-core $LOCALSTACK_VERSION into $ls_venv (python: $py313)"
  rm -rf "$ls_venv"
  "$py313" -m venv "$ls_venv"
  "$ls_venv/bin/pip" install --quiet --disable-pip-version-check \
    "localstack-core[runtime]==$LOCALSTACK_VERSION" "${LOCALSTACK_PINS[@]}"
  touch "$ls_stamp"
fi
if [ -f "$ls_stamp" ]; then
  "$ls_venv/bin/python" -c 'import localstack.runtime.main, localstack.runtime.runtime' >/dev/null
  echo "s3 servers ready: $moto_venv/bin/python (moto $MOTO_VERSION), $ls_venv/bin/python (localstack $LOCALSTACK_VERSION)"
else
  echo "s3 servers ready: $moto_venv/bin/python (moto $MOTO_VERSION)"
fi
