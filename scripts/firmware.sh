#!/usr/bin/env bash
# Bluewire on a Cortex-M4 microcontroller (QEMU's mps2-an386 board), built with Embedded Swift.
#
#   bash scripts/firmware.sh build                                  # both images, prints their sizes
#   bash scripts/firmware.sh run peripheral|central --uart tcp:HOST:PORT [--store FILE]
#
# --store FILE: the board's key store (its address and bonds) is FILE on this machine, read at reset and
# written when a pairing bonds, through ARM semihosting; without it each run starts with no bonds.
#
# Each image is the sans-I/O core modules, BluewireHostEngine and the app compiled together as one
# Swift module for armv7em-none-none-eabi, linked by the toolchain's ld.lld against picolibc (Debian's
# picolibc-arm-none-eabi) and a small start-up in Examples/Firmware/Startup. UART0 carries H4 to the
# controller; UART1 is the log (QEMU stdio). Both images pair (the controller's crypto). Measured with
# Swift 6.3: peripheral 206,400 bytes of flash (.text+.rodata 205,092) and 6,392 of static RAM (README's
# Firmware section has the figures; Docs/Firmware.md the build, the test and every size step).
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
    source "$root/scripts/apt-wait.sh"
    apt_get install -y "${missing[@]}"
  fi
}

# The toolchain's usr directory (lib/swift/embedded holds the Embedded stdlib's Unicode tables).
swift_lib_dir() { dirname "$(dirname "$(command -v swiftc)")"; }

# The sources of one image: the sans-I/O core modules and BluewireHostEngine (in dependency order,
# as scripts/check-embedded.sh), then the app's own.
core_modules=(BluewireCore BluewireHCI BluewireL2CAP BluewireATT BluewireGATT BluewireSMP BluewireHostEngine)
# Each image is compiled with the compilation conditions that leave out what it does not use
# (HostEngine+NoChannels, +NoCentral, +NoStreams stand in): neither image opens credit based channels
# or runs ATT streams, and the peripheral has no central role (scanning, connecting, GATT client).
# Neither runs the GATT client's step-by-step discovery, Read Using Characteristic UUID, the strict
# Read Multiple variants, long writes at an offset or reliable writes (HostEngine+ClientExtras): the
# central discovers the whole database with one `.discoverAll`.
# Both pair, with the controller's crypto (SMPCrypto.controller); -D BLUEWIRE_NO_SECURITY would leave
# the Security Manager out (HostEngine+NoSecurity). A default (SwiftPM) build compiles everything.
engine_conditions_peripheral=(-D BLUEWIRE_NO_CHANNELS -D BLUEWIRE_NO_STREAMS -D BLUEWIRE_NO_CENTRAL -D BLUEWIRE_NO_GATT_CLIENT_EXTRAS)
engine_conditions_central=(-D BLUEWIRE_NO_CHANNELS -D BLUEWIRE_NO_STREAMS -D BLUEWIRE_NO_GATT_CLIENT_EXTRAS)

# -lto=llvm-full: the compiler optimises the module and emits LLVM bitcode; ld.lld generates the
# image's code from it (see build_image) with every symbol internal, which drops and shares more than
# compiling to an object (about 12 KB less flash for the peripheral, 16 KB for the central).
# -sil-inline-caller-benefit-reduction-factor 8 (default 2): -Osize inlines less into large callers
# (4 saved about 2 KB without LTO; 8 saves another 3.7 KB of the peripheral's flash with LTO. The effect
# is not monotonic: 6 and 16-64 measured 1-5 KB worse than 8, so measure again when changing it).
# -package-name: the core modules share `package` declarations, as SwiftPM builds them.
swift_flags=(-enable-experimental-feature Embedded -target "$target" -wmo -parse-as-library -Osize -package-name bluewire
  -Xcc -mfloat-abi=soft -Xfrontend -function-sections -lto=llvm-full
  -Xfrontend -sil-inline-caller-benefit-reduction-factor -Xfrontend 8)
cflags=(-mcpu=cortex-m4 -mthumb -mfloat-abi=soft --specs=picolibc.specs -Os -ffunction-sections -fdata-sections -Wall)

# One image is ONE Swift module, compiled in one whole-module (-wmo) compilation: the core modules'
# sources, BluewireHostEngine's and the app's, copied into $dir/src with the imports of our own modules
# blanked out (line numbers kept; #sourceLocation points diagnostics at the original file). The
# optimiser then specialises each generic once for the image, not once per module, and drops what
# the image never calls.
gather_sources() {
  local app=$1 src=$2
  rm -rf "$src"; mkdir -p "$src"
  local file rel
  while read -r file; do
    rel=${file#Sources/}; rel=${rel#"$fw"/}
    { printf '#sourceLocation(file: "%s", line: 1)\n' "$file"
      sed -E 's/^[[:space:]]*import (BluewireCore|BluewireHCI|BluewireL2CAP|BluewireATT|BluewireGATT|BluewireSMP|BluewireHostEngine)[[:space:]]*$//' "$file"
    } > "$src/${rel//\//__}"
  done < <(image_sources "$app")
}

image_sources() {
  local app=$1 m
  for m in "${core_modules[@]}"; do find "Sources/$m" -name '*.swift' | sort; done
  find "$fw/Sources/Shared" "$fw/Sources/${app^}" -name '*.swift' | sort
}

# Recompiles an image's Swift when a source is newer than its object or the flags changed.
build_swift() {
  local app=$1 dir="$out/$1"
  local -n conditions="engine_conditions_$app"
  local obj="$dir/image.o" stamp="$dir/flags"
  local flags_now
  flags_now="$(swiftc --version 2>&1 | head -1) ${swift_flags[*]} ${conditions[*]}"
  if [ -f "$obj" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$flags_now" ] \
    && [ -z "$(find $(image_sources "$app") "$fw/Startup/board.h" -newer "$obj")" ]; then
    return
  fi
  echo "firmware: compiling $app as one module (${conditions[*]})"
  gather_sources "$app" "$dir/src"
  rm -f "$obj"
  swiftc "${swift_flags[@]}" "${conditions[@]}" -module-name Firmware \
    -import-objc-header "$fw/Startup/board.h" -c "$dir"/src/*.swift -o "$obj"
  echo "$flags_now" > "$stamp"
}

build_image() {
  local app=$1
  local dir="$out/$app"
  mkdir -p "$dir"
  build_swift "$app"
  arm-none-eabi-gcc "${cflags[@]}" -c "$fw/Startup/startup.c" -o "$dir/startup.o"
  arm-none-eabi-gcc "${cflags[@]}" -c "$fw/Startup/support.c" -o "$dir/support.o"
  # The toolchain's ld.lld, not GNU ld: it generates the code from the bitcode (LTO), garbage-collects
  # the pieces of a merged string section one by one (GNU ld keeps .rodata.str whole: every string
  # literal of the image, used or not) and folds identical functions (--icf=all).
  # --lto-O2 (lld's default): the link optimises the whole image once more before generating code.
  # -arm-assume-misaligned-load-store works around an LLVM Arm back-end miscompile: the load/store
  # optimiser may merge a function's last stores through `self` into a writeback `stmia sl!`, which
  # hands the caller back r10 (Swift's self register, callee-saved) advanced by 16; the caller's next
  # mutation of that value then lands in whatever follows it on the stack (an ATT response that stayed
  # empty, swift_release of 0x1). With the option it forms no such multiple stores; scripts/
  # check-swiftself.py fails the build if any function still changes r10 without saving it.
  local libgcc libc
  libgcc=$(arm-none-eabi-gcc "${cflags[@]}" -print-libgcc-file-name)
  libc=/usr/lib/picolibc/arm-none-eabi/lib/$(arm-none-eabi-gcc "${cflags[@]}" -print-multi-directory)/libc.a
  "$(swift_lib_dir)/bin/ld.lld" -T "$fw/Startup/mps2-an386.ld" --gc-sections --icf=all --lto-O2 -mllvm -arm-assume-misaligned-load-store \
    --wrap=malloc --wrap=free --wrap=posix_memalign --wrap=calloc --wrap=realloc \
    -Map="$dir/$app.map" "$dir/startup.o" "$dir/support.o" "$dir/image.o" \
    "$(swift_lib_dir)/lib/swift/embedded/$target/libswiftUnicodeDataTables.a" \
    --start-group "$libc" "$libgcc" --end-group \
    -o "$out/bluewire-$app.elf"
  [ -f "$out/bluewire-$app.elf" ] || { echo "firmware: link failed for $app"; exit 1; }
  python3 scripts/check-swiftself.py "$out/bluewire-$app.elf" || { rm -f "$out/bluewire-$app.elf"; exit 1; }
}

print_sizes() {
  local app=$1 elf="$out/bluewire-$app.elf" runtime="$out/runtime-$app.txt"
  [ -f "$elf" ] || return 0
  # Berkeley format: text includes .rodata and the vector table; data+bss is static RAM.
  read -r text data bss _ < <(arm-none-eabi-size "$elf" | tail -1)
  printf 'firmware: %-10s flash %7d bytes (.text+.rodata %d, .data init %d)  static RAM %6d bytes (.data %d + .bss %d)\n' \
    "$app" $((text + data)) "$text" "$data" $((data + bss)) "$data" "$bss"
  # Peak heap and the stack's high-water mark (startup.c paints the stack) come from running the image:
  # firmware_test.py keeps the largest its log reported, for this ELF or an older one.
  if [ -f "$runtime" ]; then
    read -r heap stack < "$runtime"
    local when="this image"
    [ "$runtime" -nt "$elf" ] || when="an earlier image: run scripts/firmware-test.sh to measure this one"
    printf 'firmware: %-10s peak heap %6d bytes  stack high-water %6d bytes (QEMU test, %s)\n' "$app" "$heap" "$stack" "$when"
  else
    printf 'firmware: %-10s peak heap and stack high-water: not measured yet (scripts/firmware-test.sh)\n' "$app"
  fi
}

case "${1:-}" in
  build)
    need_packages
    # FIRMWARE_APPS=peripheral (or central) builds one image only, for quick size measurements.
    apps=(${FIRMWARE_APPS:-peripheral central})
    for app in "${apps[@]}"; do
      rm -f "$out/bluewire-$app.elf"
      build_image "$app"
    done
    for app in "${apps[@]}"; do print_sizes "$app"; done
    ;;
  sizes)
    # What `build` printed, with the peak heap and stack of the last QEMU test (firmware-test.sh ends so).
    for app in ${FIRMWARE_APPS:-peripheral central}; do print_sizes "$app"; done
    ;;
  run)
    app=${2:-}
    [ "$app" = peripheral ] || [ "$app" = central ] || { echo "usage: $0 run peripheral|central --uart tcp:HOST:PORT [--store FILE]"; exit 2; }
    shift 2
    uart=""
    store=""
    while [ $# -gt 0 ]; do
      case "$1" in
        --uart) uart=$2; shift 2 ;;
        --store) store=$2; shift 2 ;;
        *) echo "unknown option $1"; exit 2 ;;
      esac
    done
    [ -n "$uart" ] || { echo "usage: $0 run $app --uart tcp:HOST:PORT"; exit 2; }
    elf="$out/bluewire-$app.elf"
    [ -f "$elf" ] || { echo "firmware: $elf missing, run '$0 build' first"; exit 1; }
    # The semihosting command line carries the store file (Startup/support.c reads its second word);
    # QEMU opens it relative to this directory, so make it absolute. A comma would end QEMU's option.
    semihosting=enable=on,target=native,arg=bluewire
    if [ -n "$store" ]; then
      case "$store" in *,*|*' '*) echo "firmware: --store FILE must not contain commas or spaces"; exit 2 ;; esac
      case "$store" in /*) ;; *) store=$PWD/$store ;; esac
      semihosting=$semihosting,arg=$store
    fi
    # UART0 (first -serial) is the HCI controller, UART1 the log on stdout.
    exec qemu-system-arm -M mps2-an386 -nographic -monitor none -semihosting-config "$semihosting" \
      -serial "$uart" -serial stdio -kernel "$elf"
    ;;
  *)
    echo "usage: $0 build | sizes | run peripheral|central --uart tcp:HOST:PORT [--store FILE]"; exit 2 ;;
esac
