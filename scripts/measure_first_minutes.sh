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
echo "load before: $(uptime)"
start=$SECONDS
make demo >"$work/demo.log" 2>&1 || { tail -20 "$work/demo.log"; exit 1; }
demo=$((SECONDS - start))
grep -E "^setup: .* in [0-9]+ s$" "$work/demo.log" || true
if .venv/bin/python -c "import llama_cpp" 2>/dev/null; then echo "make demo installed llama_cpp (it should not)"; exit 1; fi
echo "llama.cpp: not built by make demo"
echo "load after make demo: $(uptime)"
start=$SECONDS
make test >"$work/test.log" 2>&1 || { tail -20 "$work/test.log"; exit 1; }
tests=$((SECONDS - start))
grep -E "^setup: .* in [0-9]+ s$" "$work/test.log" || true
echo "pytest: $(tail -1 "$work/test.log")"
echo "load after make test: $(uptime)"
echo "first minutes: make demo ${demo} s, make test ${tests} s (logs in $work)"
