#!/usr/bin/env bash
# Installs the Debian packages tpbsim needs, only those that are missing, and
# the pinned npm trace consumer of the Perfetto test (docs/TRACES.md).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
pkgs=(build-essential cmake ninja-build pkg-config libsystemc-dev libgtest-dev libgmock-dev
      libbenchmark-dev libboost-program-options-dev nlohmann-json3-dev libfmt-dev
      gtkwave python3 python3-numpy python3-matplotlib verilator clang parallel xvfb xauth
      python3-dev pybind11-dev python3-pybind11 python3-pytest
      python3-torch python3-sklearn)   # tpbsim.torch and its example (docs/PYTHON.md)
# Node and npm run the trace consumer; Debian's, unless a node is already there.
command -v npm >/dev/null 2>&1 || pkgs+=(nodejs npm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -ne 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Chrome DevTools' trace engine, exact versions from package-lock.json, into
# scripts/trace_consumer/node_modules (ignored by git).
consumer="$here/scripts/trace_consumer"
want=$(sed -n 's/.*"@paulirish\/trace_engine": "\(.*\)".*/\1/p' "$consumer/package.json" | head -n1)
have=$(sed -n 's/^  "version": "\(.*\)".*/\1/p' \
         "$consumer/node_modules/@paulirish/trace_engine/package.json" 2>/dev/null || true)
if [ "$have" != "$want" ]; then
  echo "installing @paulirish/trace_engine@$want (npm ci) into $consumer/node_modules"
  npm ci --prefix "$consumer" --no-audit --no-fund --loglevel=error ||
    echo "warning: npm ci failed: TraceConsumer.DevToolsTraceEngine* will be skipped" >&2
fi
