#!/usr/bin/env bash
# Installs what building Bluewire needs on a fresh Debian machine with Swift: the Linux Bluetooth
# socket headers (libbluetooth-dev) that the CBluetooth system-library target imports.
set -euo pipefail
source "$(dirname "$0")/apt-wait.sh"
missing=()
for pkg in libbluetooth-dev pkg-config; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}" >&2
  apt_get update -qq
  apt_get install -y -qq "${missing[@]}" >/dev/null
fi
