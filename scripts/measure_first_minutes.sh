#!/usr/bin/env bash
# A new user's first minutes, timed: clone this repository's HEAD into a fresh
# folder, point pip's cache at an empty folder, then `make demo` and `make test`
# there. Prints each set-up step's time (scripts/setup.sh's "setup: ... in N s"
# lines), both totals and the machine's load; the README's opening figures come
# from here. Usage: bash scripts/measure_first_minutes.sh [WORKDIR] (default: a
# new temporary folder, kept for inspection). Needs the package index.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d -t agree-first-minutes-XXXX)}
mkdir -p "$work"
git clone -q "$repo" "$work/clone"
# tests find the real data at ../shared/data beside the clone (skipped when absent)
[ -e "$work/shared" ] || [ ! -d "$repo/../shared" ] || ln -s "$(cd "$repo/../shared" && pwd)" "$work/shared"
export PIP_CACHE_DIR="$work/pip-cache"
mkdir -p "$PIP_CACHE_DIR"
cd "$work/clone"
# make TARGET into $work/TARGET.log, its set-up steps' lines shown; its seconds in $took
timed() {
  local start=$SECONDS
  make "$1" >"$work/$1.log" 2>&1 || { tail -20 "$work/$1.log"; exit 1; }
  took=$((SECONDS - start))
  grep -E "^setup: .* in [0-9]+ s$" "$work/$1.log" || true
}
echo "load before: $(uptime)"
timed demo
demo=$took
if .venv/bin/python -c "import llama_cpp" 2>/dev/null; then echo "make demo installed llama_cpp (it should not)"; exit 1; fi
echo "llama.cpp: not built by make demo"
echo "load after make demo: $(uptime)"
timed test
tests=$took
echo "pytest: $(tail -1 "$work/test.log")"
echo "load after make test: $(uptime)"
echo "first minutes: make demo ${demo} s, make test ${tests} s (logs in $work)"
