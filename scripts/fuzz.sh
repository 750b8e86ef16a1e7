#!/usr/bin/env bash
# libFuzzer targets for Bluewire's decoders (see Fuzz/README.md).
#
#   scripts/fuzz.sh TARGET|all SECONDS    build, replay the regressions, then fuzz each target SECONDS
#   scripts/fuzz.sh build [TARGET|all]    build only
#   scripts/fuzz.sh regress [TARGET|all]  run only the committed corpus and crash regressions once
#   scripts/fuzz.sh merge [TARGET|all]    minimise the committed corpus together with the inputs found
#                                         locally (libFuzzer -set_cover_merge=1) into Fuzz/Corpus/TARGET
#   scripts/fuzz.sh list                  print the target names
#   scripts/fuzz.sh stats                 totals per target over every run logged in .fuzz/logs/runs.txt
#
# How it builds: the package's core modules have no dependencies besides each other, so each one is
# compiled straight with swiftc (whole module, -O, -sanitize=fuzzer,address for coverage and ASan) into
# .fuzz/build, in the dependency order of scripts/check-embedded.sh; each target is one file in
# Fuzz/Targets plus Fuzz/Targets/Support, linked against the modules it imports. SwiftPM is not used, so
# the fuzz build never disturbs .build. Modules are rebuilt only when their sources change.
#
# Exit status: non-zero when a target crashes (the crash input is printed and kept in .fuzz/artifacts)
# or fails to build. New inputs found while fuzzing go to .fuzz/corpus/TARGET, not to the repository;
# `merge` folds them into Fuzz/Corpus/TARGET.
#
# Environment: FUZZ_NICE (default 19). Targets run one after another, one process each (no -jobs):
# the machines this runs on are small and shared.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/.fuzz
build=$out/build
nice_level=${FUZZ_NICE:-19}

# target: modules it imports (in dependency order) | -max_len | extra source folder under Fuzz/Targets
targets=(
  "h4-framer:BluewireCore BluewireTransportFraming|4096"
  "hci-event:BluewireCore BluewireHCI|1024"
  "advertising-data:BluewireCore BluewireHCI|2048"
  "l2cap:BluewireCore BluewireHCI BluewireL2CAP|4096"
  "l2cap-signaling:BluewireCore BluewireHCI BluewireL2CAP|4096"
  "kframe-reassembler:BluewireCore BluewireHCI BluewireL2CAP|4096"
  "att-pdu:BluewireCore BluewireHCI BluewireL2CAP BluewireATT|1024"
  "att-bearer:BluewireCore BluewireHCI BluewireL2CAP BluewireATT|4096"
  "gatt-server:BluewireCore BluewireHCI BluewireL2CAP BluewireATT BluewireGATT|4096"
  "gatt-client:BluewireCore BluewireHCI BluewireL2CAP BluewireATT BluewireGATT|4096"
  "btsnoop:BluewireCore BluewireSnoop|16384|Capture"
  "pcapng:BluewireCore BluewireSnoop|16384|Capture"
  "capture-analysis:BluewireCore BluewireSnoop BluewireHCI BluewireL2CAP BluewireATT BluewireGATT BluewireSMP BluewireAnalysis|8192"
  "gatt-database-json:BluewireCore BluewireHCI BluewireL2CAP BluewireATT BluewireGATT|8192"
  "smp-pdu:BluewireCore BluewireSMP|1024"
)

# module: its sources | the modules it depends on
module_sources() {
  case $1 in
    # Only the pure framing files of the transport module (the rest does I/O through Glibc).
    BluewireTransportFraming) find Sources/BluewireTransport/Framing -name '*.swift' | sort ;;
    *) find "Sources/$1" -name '*.swift' | sort ;;
  esac
}
module_deps() {
  case $1 in
    BluewireCore) echo "" ;;
    BluewireSnoop | BluewireHCI | BluewireTransportFraming | BluewireSMP) echo "BluewireCore" ;;
    BluewireL2CAP) echo "BluewireCore BluewireHCI" ;;
    BluewireATT) echo "BluewireCore BluewireHCI BluewireL2CAP" ;;
    BluewireGATT) echo "BluewireCore BluewireHCI BluewireL2CAP BluewireATT" ;;
    BluewireAnalysis) echo "BluewireCore BluewireSnoop BluewireHCI BluewireL2CAP BluewireATT BluewireGATT BluewireSMP" ;;
    *) echo "fuzz: unknown module $1" >&2; return 1 ;;
  esac
}
# The framing files are compiled as module BluewireTransport so targets read like client code.
module_name() { [ "$1" = BluewireTransportFraming ] && echo BluewireTransport || echo "$1"; }

# -package-name: the core modules share `package` declarations, as SwiftPM builds them.
common_flags=(-O -g -sanitize=fuzzer,address -parse-as-library -use-ld=lld -package-name bluewire)

entry_for() {
  local t
  for t in "${targets[@]}"; do
    if [ "${t%%:*}" = "$1" ]; then echo "$t"; return 0; fi
  done
  echo "fuzz: unknown target '$1' (try: scripts/fuzz.sh list)" >&2
  return 1
}
target_modules() { local e; e=$(entry_for "$1"); e=${e#*:}; echo "${e%%|*}"; }
target_max_len() { local e; e=$(entry_for "$1"); e=${e#*|}; echo "${e%%|*}"; }
target_extra() { local e; e=$(entry_for "$1"); e=${e#*|}; [[ $e == *"|"* ]] && echo "${e#*|}" || true; }
all_targets() { local t; for t in "${targets[@]}"; do echo "${t%%:*}"; done; }

# A target is available when every module it needs has sources on this branch.
target_available() {
  local m
  for m in $(target_modules "$1"); do
    [ -n "$(module_sources "$m" 2>/dev/null)" ] || return 1
  done
  [ -f "Fuzz/Targets/$1.swift" ]
}

# Whether $1 is missing or older than any of the files given after it.
stale() {
  local product=$1 f
  shift
  [ -f "$product" ] || return 0
  for f in "$@"; do [ "$f" -nt "$product" ] && return 0; done
  return 1
}

build_module() {
  local m=$1 name srcs deps d objs=()
  name=$(module_name "$m")
  mapfile -t srcs < <(module_sources "$m")
  deps=$(module_deps "$m")
  for d in $deps; do objs+=("$build/$(module_name "$d").o"); done
  if stale "$build/$name.o" "${srcs[@]}" "${objs[@]}" "$build/flags"; then
    echo "fuzz: compiling $name (${#srcs[@]} files)"
    nice -n "$nice_level" swiftc "${common_flags[@]}" -wmo -module-name "$name" -I "$build" \
      -emit-module -emit-module-path "$build/$name.swiftmodule" -c "${srcs[@]}" -o "$build/$name.o"
    # swiftc leaves an identical object file untouched; the timestamp is what `stale` compares.
    touch "$build/$name.o"
  fi
}

# The compiler flags in force: a change rebuilds everything (editing this script otherwise does not).
record_flags() {
  mkdir -p "$build"
  local flags="${common_flags[*]} $(swiftc --version 2>/dev/null | head -n 1)"
  [ -f "$build/flags" ] && [ "$(cat "$build/flags")" = "$flags" ] || echo "$flags" >"$build/flags"
}

build_target() {
  local t=$1 m objs=() support extra
  record_flags
  for m in $(target_modules "$t"); do
    build_module "$m"
    objs+=("$build/$(module_name "$m").o")
  done
  extra=$(target_extra "$t")
  mapfile -t support < <(find Fuzz/Targets/Support ${extra:+"Fuzz/Targets/$extra"} -name '*.swift' | sort)
  if stale "$build/$t" "Fuzz/Targets/$t.swift" "${support[@]}" "${objs[@]}"; then
    echo "fuzz: linking $t"
    # -module-name keeps the target's own symbols apart from the modules' (all are "main" otherwise).
    nice -n "$nice_level" swiftc "${common_flags[@]}" -module-name "Fuzz_${t//-/_}" -I "$build" \
      "Fuzz/Targets/$t.swift" "${support[@]}" "${objs[@]}" -o "$build/$t"
    touch "$build/$t"
  fi
}

# Runtime settings: libFuzzer reports crashes itself, so the Swift runtime's backtracer (which would
# otherwise hang around after a crash holding the terminal) is off.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:symbolize=1}

# Runs every committed seed and regression input through the target once.
regress_target() {
  local t=$1 inputs=()
  [ -d "Fuzz/Regressions/$t" ] && mapfile -t -O "${#inputs[@]}" inputs < <(find "Fuzz/Regressions/$t" -type f ! -name '*.md' | sort)
  [ -d "Fuzz/Corpus/$t" ] && mapfile -t -O "${#inputs[@]}" inputs < <(find "Fuzz/Corpus/$t" -type f | sort)
  [ "${#inputs[@]}" -gt 0 ] || return 0
  echo "fuzz: $t: replaying ${#inputs[@]} committed input(s)"
  if ! nice -n "$nice_level" "$build/$t" -runs=1 "${inputs[@]}" >"$out/logs/$t.regress.log" 2>&1; then
    tail -n 40 "$out/logs/$t.regress.log"
    echo "fuzz: $t: a committed input fails (log: .fuzz/logs/$t.regress.log)" >&2
    return 1
  fi
}

run_target() {
  local t=$1 seconds=$2 log status corpus=$out/corpus/$t artifacts=$out/artifacts/$t/
  mkdir -p "$corpus" "$artifacts" "$out/logs"
  log=$out/logs/$t.log
  local seeds=()
  [ -d "Fuzz/Corpus/$t" ] && seeds+=("Fuzz/Corpus/$t")
  echo "fuzz: $t: fuzzing for ${seconds}s (log: .fuzz/logs/$t.log)"
  set +e
  nice -n "$nice_level" "$build/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len="$(target_max_len "$t")" -print_final_stats=1 -artifact_prefix="$artifacts" \
    "$corpus" "${seeds[@]}" >"$log" 2>&1
  status=$?
  set -e
  local execs rate
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  if [ "$status" -ne 0 ]; then
    grep -E 'ERROR|Fatal error|SUMMARY|==[0-9]+==|#[0-9]+ 0x' "$log" | head -n 30 || true
    local crash
    crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    echo "fuzz: $t: FAILED (status $status) after ${execs:-?} executions; input: ${crash:-see log}" >&2
    return 1
  fi
  echo "fuzz: $t: ok, ${execs:-?} executions, ${rate:-?} exec/s, corpus $(find "$corpus" -type f | wc -l) file(s)"
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $t seconds=$seconds execs=${execs:-?} exec_per_sec=${rate:-?}" >>"$out/logs/runs.txt"
}

merge_target() {
  local t=$1 tmp
  tmp=$(mktemp -d "$out/merge.XXXXXX")
  mkdir -p "Fuzz/Corpus/$t" "$out/corpus/$t"
  # -set_cover_merge keeps a smallest set of inputs covering every feature (smaller than -merge=1).
  nice -n "$nice_level" "$build/$t" -set_cover_merge=1 -max_len="$(target_max_len "$t")" "$tmp" \
    "Fuzz/Corpus/$t" "$out/corpus/$t" >"$out/logs/$t.merge.log" 2>&1
  rm -rf "Fuzz/Corpus/$t"
  mv "$tmp" "Fuzz/Corpus/$t"
  echo "fuzz: $t: corpus minimised to $(find "Fuzz/Corpus/$t" -type f | wc -l) file(s)"
}

select_targets() {
  if [ "${1:-all}" = all ]; then
    local t
    for t in $(all_targets); do
      if target_available "$t"; then echo "$t"; else echo "fuzz: skipping $t (its sources are not on this branch)" >&2; fi
    done
  else
    entry_for "$1" >/dev/null
    target_available "$1" || { echo "fuzz: $1 cannot be built on this branch" >&2; return 1; }
    echo "$1"
  fi
}

mkdir -p "$out/logs"
case ${1:-} in
  list) all_targets ;;
  stats)
    [ -f "$out/logs/runs.txt" ] || { echo "fuzz: no runs logged yet"; exit 0; }
    printf "%-20s %5s %8s %14s %12s\n" target runs seconds executions "best exec/s"
    awk '{ split($3, s, "="); split($4, e, "="); split($5, r, "=");
           runs[$2]++; secs[$2] += s[2]; execs[$2] += e[2]; if (r[2] + 0 > best[$2]) best[$2] = r[2] }
         END { for (t in runs) printf "%-20s %5d %8d %14d %12d\n", t, runs[t], secs[t], execs[t], best[t] }' \
      "$out/logs/runs.txt" | sort ;;
  build)
    for t in $(select_targets "${2:-all}"); do build_target "$t"; done ;;
  regress)
    for t in $(select_targets "${2:-all}"); do build_target "$t"; regress_target "$t"; done ;;
  merge)
    for t in $(select_targets "${2:-all}"); do build_target "$t"; merge_target "$t"; done ;;
  "" | -h | --help)
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 2 ;;
  *)
    [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "usage: scripts/fuzz.sh TARGET|all SECONDS" >&2; exit 2; }
    failed=0
    for t in $(select_targets "$1"); do
      build_target "$t"
      regress_target "$t" || { failed=1; continue; }
      run_target "$t" "$2" || failed=1
    done
    exit "$failed" ;;
esac
