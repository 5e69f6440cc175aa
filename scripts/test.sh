#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh Debian machine, then run it.
# Lavapipe (mesa-vulkan-drivers) gives the wgsl backend a Vulkan adapter with no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! dpkg -s mesa-vulkan-drivers >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq mesa-vulkan-drivers >/dev/null
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'
# Deno, whose WebGPU is wgpu (lavapipe here), runs the kernels `tilec export` makes for
# the web (tests/test_web_export.py); from the npm registry, into the git-ignored .tools/.
DENO=.tools/node_modules/.bin/deno
if [ ! -x "$DENO" ]; then
  command -v npm >/dev/null || { $SUDO apt-get update -qq; $SUDO apt-get install -y -qq npm >/dev/null; }
  npm install --prefix .tools --no-fund --no-audit --silent deno@2.9.6
fi
export TILEC_DENO="$PWD/$DENO" TILEC_REQUIRE_DENO=1
.venv/bin/ruff check compiler dialects backends tests examples
# One pytest worker per CPU (pytest-xdist); no test depends on another's order or state.
# pytest exits 5 when it collects nothing: that fails this script too.
exec .venv/bin/python -m pytest -q -n auto "$@"
