#!/usr/bin/env bash
# Build KenLM's lmplz and build_binary from the kenlm source distribution on PyPI
# into $VENV/bin. Needs cmake, a C++ compiler, Boost and zlib (Debian packages,
# installed here with apt-get when we are root and they are missing).
set -euo pipefail
VENV=${1:-.venv}
BIN="$VENV/bin"
if [ -x "$BIN/lmplz" ] && [ -x "$BIN/build_binary" ]; then exit 0; fi
pkgs="cmake g++ libboost-program-options-dev libboost-system-dev libboost-thread-dev libboost-test-dev zlib1g-dev libbz2-dev liblzma-dev"
missing=$(for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup: apt-get install $missing" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing) >/dev/null
  elif command -v sudo >/dev/null; then
    (sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing) >/dev/null
  else
    echo "setup: please install: $missing (then re-run)" >&2; exit 1
  fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ver=$("$VENV/bin/python" -c "import importlib.metadata as m; print(m.version('kenlm'))")
echo "setup: building lmplz and build_binary from the kenlm $ver source distribution" >&2
"$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: --no-build-isolation "kenlm==$ver" -d "$work" 2>&1 | grep -v "^WARNING: Location" || true
tar xzf "$work"/kenlm-*.tar.gz -C "$work"
src=$(find "$work" -maxdepth 1 -type d -name 'kenlm-*' | head -n1)
log="$work/build.log"
{ cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release &&
  cmake --build "$src/build" -j"$(nproc)" --target lmplz build_binary; } >"$log" 2>&1 ||
  { tail -n 30 "$log" >&2; echo "setup: building KenLM failed" >&2; exit 1; }
cp "$src/build/bin/lmplz" "$src/build/bin/build_binary" "$BIN/"
echo "setup: installed $BIN/lmplz and $BIN/build_binary" >&2
