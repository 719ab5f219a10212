#!/usr/bin/env bash
# Create the project's virtual environment, install the package with its pinned
# dependencies, and build KenLM's lmplz/build_binary into it (once).
set -euo pipefail
VENV=${1:-.venv}
PY=${PY:-python3.11}
command -v "$PY" >/dev/null || PY=python3
cd "$(dirname "$0")/.."
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV with $PY" >&2
  "$PY" -m venv "$VENV"
fi
# torch is pinned to 2.13.0 in setup.cfg; installing it first with the pin keeps
# pip from resolving a newer build (and gigabytes of CUDA packages).
"$VENV/bin/python" -m pip install -q --disable-pip-version-check torch==2.13.0 2>&1 | grep -v "^WARNING: Location" || true
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -e '.[test]' 2>&1 | grep -v "^WARNING: Location" || true
"$VENV/bin/python" -c "import agreement, torch, kenlm, conllu" || { echo "setup: installation failed" >&2; exit 1; }
bash scripts/build_kenlm.sh "$VENV"
echo "setup: done ($VENV)" >&2
