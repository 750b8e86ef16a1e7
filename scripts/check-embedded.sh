#!/usr/bin/env bash
# Compiles the sans-I/O core modules under Embedded Swift for a Cortex-M target
# (Docs/Design.md, rule 3): no Foundation, no Glibc, no existentials, typed throws only.
# Modules are compiled in dependency order, each against the ones below it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
target=armv7em-none-none-eabi
# module: dependencies (already compiled)
modules=(
  "BluewireCore:"
  "BluewireSnoop:BluewireCore"
  "BluewireHCI:BluewireCore"
  "BluewireL2CAP:BluewireCore BluewireHCI"
  "BluewireATT:BluewireCore BluewireL2CAP"
  "BluewireGATT:BluewireCore BluewireHCI BluewireL2CAP BluewireATT"
  "BluewireAnalysis:BluewireCore BluewireSnoop BluewireHCI BluewireL2CAP BluewireATT BluewireGATT"
  "BluewireSMP:BluewireCore"
  "BluewireHostEngine:BluewireCore BluewireHCI BluewireL2CAP BluewireATT BluewireGATT BluewireSMP"
)
for entry in "${modules[@]}"; do
  name=${entry%%:*}
  srcs=$(find "Sources/$name" -name '*.swift' | sort)
  [ -n "$srcs" ] || { echo "embedded: $name has no sources"; exit 1; }
  # shellcheck disable=SC2086
  swiftc -enable-experimental-feature Embedded -target "$target" -wmo -parse-as-library \
    -Osize -module-name "$name" -I "$out" \
    -emit-module -emit-module-path "$out/$name.swiftmodule" \
    -c $srcs -o "$out/$name.o"
  echo "embedded: $name OK ($(echo $srcs | wc -w) files)"
done
echo "embedded check passed"
