#!/usr/bin/env bash
# Installs the Debian packages tpbsim needs, only those that are missing.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libsystemc-dev libgtest-dev libgmock-dev
      libbenchmark-dev libboost-program-options-dev nlohmann-json3-dev libfmt-dev
      gtkwave python3 python3-numpy python3-matplotlib verilator clang parallel)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
