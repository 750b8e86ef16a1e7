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
# Steps that use one core while the foreground step leaves the other idle run in the background:
# their output goes to .build/step-NAME.log and is printed when they are waited for; a failure
# there fails the run at that point. Each one's time (from its start to its end) is listed too.
declare -A bg_pid=()
background() {
  local name=$1; shift
  mkdir -p .build
  rm -f ".build/step-$name.seconds"
  echo "== $name (in the background: .build/step-$name.log)"
  # Its own session, so that stopping it stops every process it started; it writes its own time.
  setsid bash -c 'started=$(date +%s); "$@"; status=$?; echo $(( $(date +%s) - started )) >"$0"; exit $status' \
    ".build/step-$name.seconds" "$@" >".build/step-$name.log" 2>&1 &
  bg_pid[$name]=$!
}
wait_for() {
  local name=$1 status=0
  step "waiting for $name"
  wait "${bg_pid[$name]}" || status=$?
  unset 'bg_pid[$name]'
  step_times+=("$(printf '%6ss  %s (background)' "$(cat ".build/step-$name.seconds" 2>/dev/null || echo '?')" "$name")")
  echo "== $name (background) output:"
  cat ".build/step-$name.log"
  [ "$status" -eq 0 ] || { echo "$name failed (status $status)"; exit "$status"; }
}
# A failure in the foreground leaves no background step running behind it.
stop_background() {
  local name
  for name in "${!bg_pid[@]}"; do kill -- "-${bg_pid[$name]}" 2>/dev/null || true; done
  print_step_times
}
trap stop_background EXIT
bash scripts/bootstrap.sh
bash scripts/setup-test-env.sh
export PATH="$PWD/.venv/bin:$PATH"

# Package.swift's dependencies must be exactly what each target imports (no build needed).
step "package dependencies match imports"
python3 scripts/check-dependencies.py

# The Embedded-Swift check and the fuzz targets' build each compile one module at a time on one core,
# so they run beside the package build, which leaves a core idle whenever it links or compiles one
# large module. The fuzz build runs at nice 19 (scripts/fuzz.sh), the package build's leftovers.
background embedded-check bash scripts/check-embedded.sh
background fuzz-build bash scripts/fuzz.sh build all

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
wait_for embedded-check

step "documentation (DocC)"
swift package --disable-sandbox generate-documentation --target Bluewire --warnings-as-errors

# Two runs: the CPU-bound unit and capture tests first, then the tests that talk to real peers and
# wait on clocks (bumble, sockets, the host). On a 2-core machine the cooperative pool has two
# threads: long CPU-bound tests running beside the peer tests would starve their timers.
#
# Each run has a time limit (about three times what it takes on a loaded 2-core machine): a test that
# hangs stops the run there, and the tests that started but never finished are named, instead of the
# whole job running into the CI's own limit with nothing said.
# Log lines below error level (the hostile-peer tests provoke thousands of "malformed PDU" warnings)
# stay in .build/test-output-*.txt; the console shows results, failures and errors.
console_lines() {
  awk '/^[0-9-]+T[0-9:]+[+-][0-9]+ (trace|debug|info|notice|warning) / { next }
       !/^(◇|✔|􀟈|􁁛) (Test|Suite) / || /Test run with/ { print; fflush() }'
}
run_tests() {
  local label=$1 limit=$2; shift 2
  step "swift test ($label)"
  set +e
  # timeout(1) signals its whole process group, so the test runner swift test started goes too.
  timeout -s INT -k 30 "$limit" swift test --skip-build "$@" 2>&1 | tee ".build/test-output-$label.txt" | console_lines
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
# The peer tests run one at a time within a run (--no-parallel): several of them wait on subprocesses
# and wall clocks, and with two cooperative threads in parallel they would starve each other's timers.
# They run as two such runs side by side: InteropTests (the CLI and the examples as processes) and the
# other peer targets. Every test starts its own peers (bumble controllers on free ports, its own
# processes), so the two runs share no controller. The test bundle is run directly: two `swift test`
# processes would wait for each other's lock on .build. Each run's output is in
# .build/test-output-LABEL-N.txt and is shown when both have ended.
run_tests_side_by_side() {
  local label=$1 limit=$2 first=$3 second=$4
  step "swift test ($label: two runs side by side)"
  local bundle pids=() statuses=() i pid failed=0
  bundle="$(swift build --show-bin-path)/BluewirePackageTests.xctest"
  set +e
  for filter in "$first" "$second"; do
    timeout -s INT -k 30 "$limit" "$bundle" --testing-library swift-testing --no-parallel --filter "$filter" \
      >".build/test-output-$label-$(( ${#pids[@]} + 1 )).txt" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; statuses+=($?); done
  set -e
  for i in 1 2; do
    local output=".build/test-output-$label-$i.txt" status=${statuses[$((i - 1))]}
    echo "-- $label, run $i of 2 ($([ "$i" = 1 ] && echo "$first" || echo "$second"))"
    console_lines <"$output"
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
      echo "run $i did not finish within $limit; started and never finished:"
      unfinished_tests "$output"
    fi
    [ "$status" -eq 0 ] || { echo "swift test ($label, run $i) failed (status $status)"; failed=$status; }
  done
  [ "$failed" -eq 0 ] || exit "$failed"
}
# The peer test targets are listed once, in scripts/peer-suites.txt (one a line), which
# scripts/sanitizers.sh reads too.
peers=$(paste -sd'|' scripts/peer-suites.txt)
# A blank or malformed line would make the regex match every test (an empty alternative).
[[ $peers =~ ^[A-Za-z0-9_]+(\|[A-Za-z0-9_]+)*$ ]] || { echo "scripts/peer-suites.txt: one test target or suite name a line, nothing else" >&2; exit 2; }
run_tests units 25m --skip "$peers"

# Every libFuzzer target (Fuzz/README.md) replays its committed corpus and crash regressions, then
# fuzzes for 12 s; a crash fails the run. It runs at nice 19 beside the peer tests, which spend most
# of their time waiting on peers and clocks: the scheduler gives the peer tests the CPU whenever they
# want it, so their timers are not starved, and the fuzzer takes what they leave.
wait_for fuzz-build
background fuzz bash scripts/fuzz.sh all 12

# InteropTests alone (anchored: other targets have suites whose names end in InteropTests), and
# every other peer target.
run_tests_side_by_side peers 40m '^InteropTests\.' "$(tr '|' '\n' <<<"$peers" | grep -vx InteropTests | paste -sd '|')"
wait_for fuzz

# The firmware images (Examples/Firmware) under QEMU's mps2-an386, their H4 UART on a bumble
# controller: the peripheral image serves a bumble central, the central image reads a bumble
# peripheral. QEMU and the kernel VM (no KVM) each keep one core busy, so they run side by side.
background firmware bash scripts/firmware-test.sh

step "kernel HCI user-channel test (VM)"
bash scripts/vm/run-kernel-test.sh

step "memory flat: decoding a capture 10x larger (peak RSS)"
BLUEWIRE_BINARY="$(swift build --show-bin-path)/bluewire" bash scripts/rss-check.sh

wait_for firmware
echo "== all tests passed"
