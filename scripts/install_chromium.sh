#!/usr/bin/env bash
# Install Debian's chromium for agree browse's tests (they open the results page in it,
# headless); as build_kenlm.sh does for its build packages: apt-get when we are root (or
# have sudo) and it is missing. Never fails the set-up: without it those tests skip,
# saying why.
set -uo pipefail
for name in chromium chromium-browser google-chrome; do
  if command -v "$name" >/dev/null; then exit 0; fi
done
if command -v dpkg >/dev/null; then
  sudo=""; [ "$(id -u)" = 0 ] || { command -v sudo >/dev/null && sudo=sudo; }
  if [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; then
    echo "setup: apt-get install chromium (agree browse's tests)" >&2
    if ($sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null; then
      exit 0
    fi
  fi
fi
echo "setup: no chromium (apt-get install chromium); agree browse's browser tests will skip" >&2
