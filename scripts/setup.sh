#!/usr/bin/env bash
# Create the project's virtual environment, install the package with the exact
# versions of constraints.txt (torch 2.13.0 CPU, the test extra's optional stacks),
# and build KenLM's lmplz/build_binary into it (`agree setup kenlm`, once).
# Fast when nothing changed: a hash of setup.cfg, pyproject.toml and
# constraints.txt, stored in the venv, skips pip entirely.
set -euo pipefail
VENV=${1:-.venv}
PY=${PY:-python3.11}
command -v "$PY" >/dev/null || PY=python3
cd "$(dirname "$0")/.."
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV with $PY" >&2
  "$PY" -m venv "$VENV"
fi
stamp="$VENV/.agree-deps"
want=$(cat setup.cfg pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && "$VENV/bin/python" -c "import agreement, torch, kenlm, conllu" 2>/dev/null; then
  echo "setup: packages up to date ($VENV)" >&2
else
  pip=("$VENV/bin/python" -m pip install -q --disable-pip-version-check -c constraints.txt)
  # torch first, alone: with the pin it resolves to the 2.13.0 CPU build instead of
  # a CUDA build plus gigabytes of nvidia packages pulled in by another requirement.
  "${pip[@]}" torch 2>&1 | grep -v "^WARNING: Location" || true
  # llama-cpp-python (test extra) has no wheel on PyPI: pip builds it from source
  # (cmake, C++) the first time, several minutes, then reuses pip's wheel cache.
  "${pip[@]}" -e '.[test]' 2>&1 | grep -v "^WARNING: Location" || true
  "$VENV/bin/python" -c "import agreement, torch, kenlm, conllu" || { echo "setup: installation failed" >&2; exit 1; }
  echo "$want" > "$stamp"
fi
bash scripts/build_kenlm.sh "$VENV"
echo "setup: done ($VENV)" >&2
