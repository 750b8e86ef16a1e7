#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs Debian packages and the Python peers it needs,
# builds, checks the Embedded-Swift core, runs every Swift test (unit, capture, bumble interop),
# then the kernel HCI user-channel test in a VM.
set -euo pipefail
cd "$(dirname "$0")/.."
export CI=${CI:-}

# Each step's wall-clock time, printed at the end (and when a step fails, up to it).
step_name="set-up (apt packages, .venv)"
step_started=$SECONDS
step_times=()
step() {
  step_times+=("$(printf '%6ds  %s' $((SECONDS - step_started)) "$step_name")")
  step_name=$1
  step_started=$SECONDS
  echo "== $1"
}
print_step_times() {
  step_times+=("$(printf '%6ds  %s' $((SECONDS - step_started)) "$step_name")")
  echo "== time per step (total ${SECONDS}s)"
  printf '%s\n' "${step_times[@]}"
}
trap print_step_times EXIT
bash scripts/bootstrap.sh
bash scripts/setup-test-env.sh
export PATH="$PWD/.venv/bin:$PATH"

# Package.swift's dependencies must be exactly what each target imports (no build needed).
step "package dependencies match imports"
python3 scripts/check-dependencies.py

step "embedded check"
bash scripts/check-embedded.sh

step "build"
# Warning-free: a warning the build prints (the package's code; its dependencies print none) fails
# the run here, each named once with the line that says where it comes from (a macro expansion's
# warning names its source on the next line).
mkdir -p .build
swift build --build-tests --quiet 2>&1 | tee .build/build-output.txt
if grep -A1 "warning:" .build/build-output.txt | grep -v "^--$" | sort -u | grep .; then
  echo "the build printed warnings (above)"; exit 1
fi

# The Bluewire module's DocC catalog (Sources/Bluewire/Bluewire.docc): a broken symbol link, an
# undocumented parameter or a malformed article fails the run (the articles' code is compiled by
# DocumentationSnippetsTests).
step "documentation (DocC)"
swift package --disable-sandbox generate-documentation --target Bluewire --warnings-as-errors

# Two runs: the CPU-bound unit and capture tests first, then the tests that talk to real peers and
# wait on clocks (bumble, sockets, the host). On a 2-core machine the cooperative pool has two
# threads: long CPU-bound tests running beside the peer tests would starve their timers.
#
# Each run has a time limit (about three times what it takes on a loaded 2-core machine): a test that
# hangs stops the run there, and the tests that started but never finished are named, instead of the
# whole job running into the CI's own limit with nothing said.
run_tests() {
  local label=$1 limit=$2; shift 2
  step "swift test ($label)"
  set +e
  # Log lines below error level (the hostile-peer tests provoke thousands of "malformed PDU"
  # warnings) stay in .build/test-output-*.txt; the console shows results, failures and errors.
  # timeout(1) signals its whole process group, so the test runner swift test started goes too.
  timeout -s INT -k 30 "$limit" swift test --skip-build "$@" 2>&1 | tee ".build/test-output-$label.txt" \
    | awk '/^[0-9-]+T[0-9:]+[+-][0-9]+ (trace|debug|info|notice|warning) / { next }
           !/^(◇|✔|􀟈|􁁛) (Test|Suite) / || /Test run with/ { print; fflush() }'
  local status=${PIPESTATUS[0]}
  set -e
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "swift test ($label) did not finish within $limit; started and never finished:"
    unfinished_tests ".build/test-output-$label.txt"
  fi
  [ "$status" -eq 0 ] || { echo "swift test ($label) failed (status $status)"; exit "$status"; }
}

# The swift-testing tests (and XCTest cases) a run's output shows as started but not as ended.
unfinished_tests() {
  awk '
    /^◇ Test "/ { split($0, part, "\""); open[part[2]] = 1 }
    /^(✔|✘|➜) Test "/ { split($0, part, "\""); delete open[part[2]] }
    /^Test Case .* started/ { name = $3 " " $4; open[name] = 1 }
    /^Test Case .* (passed|failed|skipped)/ { name = $3 " " $4; delete open[name] }
    END { for (name in open) print "  " name }' "$1"
}
# The peer tests run one at a time: several of them wait on subprocesses and wall clocks, and with
# two cooperative threads in parallel they would starve each other's timers.
peers='InteropTests|BluewireTransportTests|BluewireHostPeerTests|BluewireHostEnginePeerTests|BumbleSMPTests'
run_tests units 25m --skip "$peers"

# Every libFuzzer target (Fuzz/README.md) replays its committed corpus and crash regressions, then
# fuzzes for 20 s; a crash fails the run.
step "fuzz (each target 20 s)"
bash scripts/fuzz.sh all 20

run_tests peers 40m --no-parallel --filter "$peers"

step "memory flat: decoding a capture 10x larger (peak RSS)"
BLUEWIRE_BINARY="$(swift build --show-bin-path)/bluewire" bash scripts/rss-check.sh

# The Embedded Swift firmware images (Examples/Firmware) under QEMU's mps2-an386, their H4 UART on a
# bumble controller: the peripheral image serves a bumble central, the central image reads a bumble
# peripheral.
step "firmware under QEMU (both roles)"
bash scripts/firmware-test.sh

step "kernel HCI user-channel test (VM)"
bash scripts/vm/run-kernel-test.sh
echo "== all tests passed"
