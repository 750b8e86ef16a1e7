#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs Debian packages and the Python peers it needs,
# builds, checks the Embedded-Swift core, runs every Swift test (unit, capture, bumble interop),
# then the kernel HCI user-channel test in a VM.
set -euo pipefail
cd "$(dirname "$0")/.."
export CI=${CI:-}
bash scripts/bootstrap.sh
if [ -f scripts/setup-test-env.sh ]; then bash scripts/setup-test-env.sh; fi
export PATH="$PWD/.venv/bin:$PATH"

echo "== embedded check"
bash scripts/check-embedded.sh

echo "== build"
swift build --build-tests --quiet

echo "== swift test"
set +e
swift test --skip-build 2>&1 | tee .build/test-output.txt | grep -vE 'Test .*(started|passed after)|^Test Case .*(started|passed)'
status=${PIPESTATUS[0]}
set -e
[ "$status" -eq 0 ] || { echo "swift test failed (status $status)"; exit "$status"; }

if [ -x scripts/vm/run-kernel-test.sh ]; then
  echo "== kernel HCI user-channel test (VM)"
  bash scripts/vm/run-kernel-test.sh
fi
echo "== all tests passed"
