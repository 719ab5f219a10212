#!/usr/bin/env bash
# Build llama-cpp-python (the test and gguf extras; no wheel on the package index) into
# agree's own wheel cache and print the wheel's path (usage: build_llama_cpp.sh VENV).
#
# Why not pip's default source build: it compiles llama.cpp with -march=native, which on
# a CPU that reports AMX (Sapphire Rapids and later) compiles ggml's AMX matmul, and in
# this workplace's virtual machines that path dies with SIGILL (`tilezero` in a ggml worker
# thread; seen in `tests/test_llamacpp.py`). The build here is portable instead: AVX2,
# FMA and F16C, no AVX-512, no AMX (x86_64; other machines keep llama.cpp's defaults).
# pip's own wheel cache cannot tell builds apart by their flags, so the wheel goes into
# $XDG_CACHE_HOME/agree/wheels/<version>-<flags hash>/ and is reused from there.
set -euo pipefail
VENV=${1:-.venv}
cd "$(dirname "$0")/.."
version=$(grep -i '^llama[-_]cpp[-_]python==' constraints.txt | cut -d= -f3)
[ -n "$version" ] || { echo "build_llama_cpp: no llama-cpp-python pin in constraints.txt" >&2; exit 1; }
flags=""
if [ "$(uname -m)" = x86_64 ]; then
  flags="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
fi
key=$(printf '%s %s' "$version" "$flags" | sha256sum | cut -c1-12)
dir=${XDG_CACHE_HOME:-$HOME/.cache}/agree/wheels/llama-cpp-python-$version-$key
wheel=$(ls "$dir"/llama_cpp_python-*.whl 2>/dev/null | head -n 1 || true)
if [ -z "$wheel" ]; then
  echo "setup: compiling llama-cpp-python $version (portable: ${flags:-defaults}), minutes" >&2
  mkdir -p "$dir"
  tmp=$(mktemp -d "$dir.tmp.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  CMAKE_ARGS="$flags" "$VENV/bin/python" -m pip wheel -q --disable-pip-version-check --no-deps \
    --no-cache-dir --no-binary llama-cpp-python -w "$tmp" "llama-cpp-python==$version" 2>&1 | { grep -v "^WARNING: Location" || true; } >&2
  mv "$tmp"/llama_cpp_python-*.whl "$dir"/
  wheel=$(ls "$dir"/llama_cpp_python-*.whl | head -n 1)
fi
echo "$wheel"
