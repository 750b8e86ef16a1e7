#!/usr/bin/env bash
# Runs both firmware images under QEMU against bumble (Examples/Firmware/firmware_test.py):
# the peripheral image served to a bumble central, then the central image against a bumble peripheral.
#   bash scripts/firmware-test.sh [peripheral|central]
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-$PWD/.venv/bin/python}
[ -x "$python" ] || bash scripts/setup-test-env.sh
bash scripts/firmware.sh build
status=0
for role in "${@:-peripheral central}"; do
  for r in $role; do
    timeout 300 "$python" Examples/Firmware/firmware_test.py "$r" || { echo "firmware-test: $r failed"; status=1; }
  done
done
# Flash and static RAM again, now with the peak heap and stack high-water mark the runs measured.
bash scripts/firmware.sh sizes
exit $status
