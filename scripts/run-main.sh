#!/usr/bin/env bash
# The main job: build Bluewire and decode a bundled capture, btmon-style, then print its counts.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
swift build -c release --product bluewire >&2
capture=${1:-Captures/horizon_treadmill_notify.btsnoop_hci.log}
.build/release/bluewire decode "$capture"
.build/release/bluewire decode --summary "$capture"
