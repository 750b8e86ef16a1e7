#!/usr/bin/env bash
# Bluewire on a Cortex-M4 microcontroller (QEMU's mps2-an386 board), built with Embedded Swift.
#
#   bash scripts/firmware.sh build                                  # both images, prints their sizes
#   bash scripts/firmware.sh run peripheral|central --uart tcp:HOST:PORT
#
# The images link the sans-I/O core modules and BluewireHostEngine, compiled for
# armv7em-none-none-eabi, against picolibc (Debian's picolibc-arm-none-eabi) and a small start-up
# in Examples/Firmware/Startup. UART0 carries H4 to the controller; UART1 is the log (QEMU stdio).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
fw=Examples/Firmware
out=${FIRMWARE_BUILD_DIR:-$root/.build/firmware}
target=armv7em-none-none-eabi

need_packages() {
  local missing=()
  command -v qemu-system-arm >/dev/null || missing+=(qemu-system-arm)
  [ -d /usr/lib/picolibc/arm-none-eabi ] || missing+=(picolibc-arm-none-eabi)
  command -v arm-none-eabi-gcc >/dev/null || missing+=(gcc-arm-none-eabi)
  command -v arm-none-eabi-size >/dev/null || missing+=(binutils-arm-none-eabi)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "firmware: installing ${missing[*]}"
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get install -y "${missing[@]}"
  fi
}

# The toolchain's usr directory (lib/swift/embedded holds the Embedded stdlib's Unicode tables).
swift_lib_dir() { dirname "$(dirname "$(command -v swiftc)")"; }

# Swift module: dependencies, in dependency order (as scripts/check-embedded.sh).
modules=(
  "BluewireCore:"
  "BluewireHCI:BluewireCore"
  "BluewireL2CAP:BluewireCore BluewireHCI"
  "BluewireATT:BluewireCore BluewireL2CAP"
  "BluewireGATT:BluewireCore BluewireHCI BluewireL2CAP BluewireATT"
  "BluewireSMP:BluewireCore"
)
# BluewireHostEngine is compiled once per image, with the compilation conditions that leave out what
# the image does not use (HostEngine+NoSecurity, +NoChannels, +NoCentral stand in): neither image
# pairs or opens credit based channels, and the peripheral has no central role (scanning,
# connecting, GATT client). A default (SwiftPM) build compiles everything.
engine_conditions_peripheral=(-D BLUEWIRE_NO_SECURITY -D BLUEWIRE_NO_CHANNELS -D BLUEWIRE_NO_CENTRAL)
engine_conditions_central=(-D BLUEWIRE_NO_SECURITY -D BLUEWIRE_NO_CHANNELS)

swift_flags=(-enable-experimental-feature Embedded -target "$target" -wmo -parse-as-library -Osize
  -Xcc -mfloat-abi=soft -Xfrontend -function-sections)
cflags=(-mcpu=cortex-m4 -mthumb -mfloat-abi=soft --specs=picolibc.specs -Os -ffunction-sections -fdata-sections -Wall)

# Recompile a module when one of its sources is newer than its object, and every module after it
# once one was recompiled (they import its .swiftmodule).
build_modules() {
  mkdir -p "$out/modules"
  local stale=""
  # Objects built with other flags (or another compiler) are not reused.
  local stamp="$out/modules/flags"
  local flags_now
  flags_now="$(swiftc --version 2>&1 | head -1) ${swift_flags[*]}"
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$flags_now" ] || { rm -f "$out"/modules/*.o; stale=1; }
  echo "$flags_now" > "$stamp"
  for entry in "${modules[@]}"; do
    local name=${entry%%:*}
    local srcs
    srcs=$(find "Sources/$name" -name '*.swift' | sort)
    local obj="$out/modules/$name.o"
    if [ -z "$stale" ] && [ -f "$obj" ] && [ -z "$(find "Sources/$name" -name '*.swift' -newer "$obj")" ]; then continue; fi
    stale=1
    echo "firmware: compiling $name"
    # shellcheck disable=SC2086
    swiftc "${swift_flags[@]}" -module-name "$name" -I "$out/modules" \
      -emit-module -emit-module-path "$out/modules/$name.swiftmodule" -c $srcs -o "$obj"
  done
}

# The engine for one image, with that image's conditions, when a source, a module below it or the
# conditions changed.
build_engine() {
  local app=$1 dir="$out/$1"
  local -n conditions="engine_conditions_$app"
  local obj="$dir/BluewireHostEngine.o" stamp="$dir/engine-flags"
  local flags_now="$(cat "$out/modules/flags") ${conditions[*]}"
  if [ -f "$obj" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$flags_now" ] \
    && [ -z "$(find Sources/BluewireHostEngine "$out/modules" -name '*.swift' -newer "$obj" -o -name '*.o' -newer "$obj")" ]; then
    return
  fi
  echo "firmware: compiling BluewireHostEngine for $app (${conditions[*]})"
  # Older builds compiled one engine for both images into modules/: it must not be found first.
  rm -f "$out"/modules/BluewireHostEngine.*
  # shellcheck disable=SC2046
  swiftc "${swift_flags[@]}" "${conditions[@]}" -module-name BluewireHostEngine -I "$out/modules" \
    -emit-module -emit-module-path "$dir/BluewireHostEngine.swiftmodule" \
    -c $(find Sources/BluewireHostEngine -name '*.swift' | sort) -o "$obj"
  echo "$flags_now" > "$stamp"
}

build_image() {
  local app=$1
  local dir="$out/$app"
  mkdir -p "$dir"
  build_engine "$app"
  echo "firmware: compiling $app"
  # shellcheck disable=SC2046
  swiftc "${swift_flags[@]}" -module-name "Firmware" -I "$dir" -I "$out/modules" \
    -import-objc-header "$fw/Startup/board.h" \
    -c $(find "$fw/Sources/Shared" "$fw/Sources/${app^}" -name '*.swift' | sort) -o "$dir/app.o"
  arm-none-eabi-gcc "${cflags[@]}" -c "$fw/Startup/startup.c" -o "$dir/startup.o"
  arm-none-eabi-gcc "${cflags[@]}" -c "$fw/Startup/support.c" -o "$dir/support.o"
  local objs=("$dir/startup.o" "$dir/support.o" "$dir/app.o" "$dir/BluewireHostEngine.o")
  for entry in "${modules[@]}"; do objs+=("$out/modules/${entry%%:*}.o"); done
  arm-none-eabi-gcc "${cflags[@]}" -nostartfiles -T "$fw/Startup/mps2-an386.ld" -Wl,--gc-sections -Wl,--no-enum-size-warning -Wl,--no-warn-execstack -Wl,--no-warn-rwx-segments -Wl,--wrap=malloc,--wrap=free,--wrap=posix_memalign,--wrap=calloc,--wrap=realloc \
    -Wl,-Map="$dir/$app.map" "${objs[@]}" \
    "$(swift_lib_dir)/lib/swift/embedded/$target/libswiftUnicodeDataTables.a" \
    -o "$out/bluewire-$app.elf"
  [ -f "$out/bluewire-$app.elf" ] || { echo "firmware: link failed for $app"; exit 1; }
}

print_sizes() {
  local app=$1 elf="$out/bluewire-$app.elf"
  # Berkeley format: text includes .rodata and the vector table; data+bss is static RAM.
  read -r text data bss _ < <(arm-none-eabi-size "$elf" | tail -1)
  printf 'firmware: %-10s flash %7d bytes (.text+.rodata %d, .data init %d)  static RAM %6d bytes (.data %d + .bss %d)\n' \
    "$app" $((text + data)) "$text" "$data" $((data + bss)) "$data" "$bss"
}

case "${1:-}" in
  modules) build_modules ;;
  build)
    need_packages
    build_modules
    for app in peripheral central; do
      rm -f "$out/bluewire-$app.elf"
      build_image "$app"
    done
    for app in peripheral central; do print_sizes "$app"; done
    ;;
  run)
    app=${2:-}
    [ "$app" = peripheral ] || [ "$app" = central ] || { echo "usage: $0 run peripheral|central --uart tcp:HOST:PORT"; exit 2; }
    shift 2
    uart=""
    while [ $# -gt 0 ]; do
      case "$1" in
        --uart) uart=$2; shift 2 ;;
        *) echo "unknown option $1"; exit 2 ;;
      esac
    done
    [ -n "$uart" ] || { echo "usage: $0 run $app --uart tcp:HOST:PORT"; exit 2; }
    elf="$out/bluewire-$app.elf"
    [ -f "$elf" ] || { echo "firmware: $elf missing, run '$0 build' first"; exit 1; }
    # UART0 (first -serial) is the HCI controller, UART1 the log on stdout.
    exec qemu-system-arm -M mps2-an386 -nographic -monitor none \
      -serial "$uart" -serial stdio -kernel "$elf"
    ;;
  *)
    echo "usage: $0 build | run peripheral|central --uart tcp:HOST:PORT"; exit 2 ;;
esac
