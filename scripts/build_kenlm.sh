#!/usr/bin/env bash
# Build KenLM's lmplz and build_binary into $VENV/bin: installs the Debian build
# packages when we are root (or have sudo) and they are missing, then runs
# `agree setup kenlm`, which checks the prerequisites, downloads the kenlm source
# distribution, builds and installs atomically (see lm/kenlm/build.py).
set -euo pipefail
VENV=${1:-.venv}
if [ -x "$VENV/bin/lmplz" ] && [ -x "$VENV/bin/build_binary" ]; then exit 0; fi
pkgs="cmake g++ libboost-program-options-dev libboost-system-dev libboost-thread-dev libboost-test-dev zlib1g-dev libbz2-dev liblzma-dev"
if command -v dpkg >/dev/null; then
  missing=$(for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
  if [ -n "$missing" ]; then
    sudo=""; [ "$(id -u)" = 0 ] || { command -v sudo >/dev/null && sudo=sudo; }
    if [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; then
      echo "setup: apt-get install" $missing >&2
      ($sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing) >/dev/null
    fi   # otherwise `agree setup kenlm` names what is missing and how to install it
  fi
fi
"$VENV/bin/agree" setup kenlm --prefix "$VENV"
