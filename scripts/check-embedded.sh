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
  "BluewireATT:BluewireCore"
  "BluewireGATT:BluewireCore BluewireATT"
  "BluewireSMP:BluewireCore"
  "BluewireAnalysis:BluewireCore BluewireSnoop BluewireHCI BluewireL2CAP BluewireATT BluewireGATT BluewireSMP"
  "BluewireHostEngine:BluewireCore BluewireHCI BluewireL2CAP BluewireATT BluewireGATT BluewireSMP"
)
for entry in "${modules[@]}"; do
  name=${entry%%:*}
  srcs=$(find "Sources/$name" -name '*.swift' | sort)
  [ -n "$srcs" ] || { echo "embedded: $name has no sources"; exit 1; }
  # shellcheck disable=SC2086
  swiftc -enable-experimental-feature Embedded -target "$target" -wmo -parse-as-library \
    -Osize -package-name bluewire -module-name "$name" -I "$out" \
    -emit-module -emit-module-path "$out/$name.swiftmodule" \
    -c $srcs -o "$out/$name.o"
  echo "embedded: $name OK ($(echo $srcs | wc -w) files)"
done
# The engine again with the compilation conditions the firmware images use (scripts/firmware.sh):
# the peripheral's set, and the central role without channels, streams, security and the client's extras.
engine_srcs=$(find Sources/BluewireHostEngine -name '*.swift' | sort)
for conditions in "-D BLUEWIRE_NO_SECURITY -D BLUEWIRE_NO_CHANNELS -D BLUEWIRE_NO_STREAMS -D BLUEWIRE_NO_CENTRAL -D BLUEWIRE_NO_GATT_CLIENT_EXTRAS" \
  "-D BLUEWIRE_NO_SECURITY -D BLUEWIRE_NO_CHANNELS -D BLUEWIRE_NO_STREAMS -D BLUEWIRE_NO_GATT_CLIENT_EXTRAS"; do
  # shellcheck disable=SC2086
  swiftc -enable-experimental-feature Embedded -target "$target" -wmo -parse-as-library \
    -Osize -package-name bluewire $conditions -module-name BluewireHostEngine -I "$out" \
    -c $engine_srcs -o "$out/BluewireHostEngine-conditions.o"
  echo "embedded: BluewireHostEngine OK with $conditions"
done
echo "embedded check passed"
