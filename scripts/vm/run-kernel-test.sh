#!/usr/bin/env bash
# Kernel VM test: boots the machine's Debian kernel under virtme-ng (no KVM: see Docs/Testing.md), loads
# the Bluetooth modules, starts BlueZ's btvirt (hci0 + hci1), and runs steps that drive hci0
# through Bluewire's HCI user-channel transport. Prints one PASS/FAIL line; exits non-zero on failure.
#
#   scripts/vm/run-kernel-test.sh [--capture FILE] [--kernel VMLINUZ] [--verbose] [STEP...]
#
# STEP: a shell command line run in the guest with BLUEWIRE_TRANSPORT=hci0 and the debug build
# directory on PATH, e.g. 'bluewire scan --transport hci0 --duration 3'. hci1 is linked to hci0 over
# btvirt's virtual radio, so one step can advertise on it while scanning on hci0:
#   'bluewire serve --transport hci1 --db db.json & sleep 2; bluewire scan --transport hci0 --duration 3'
# Without steps it runs the KernelUserChannelTests suite (Reset → Command Complete over the user
# channel, busy, reopen, missing device), scripts/vm/kernel-scan.sh (Bluewire on hci0 scans what
# Bluewire on hci1 advertises), scripts/vm/kernel-l2cap.sh (262,144 octets piped through `bluewire
# l2cap connect` on hci0 all reach the kernel's l2test on hci1) and scripts/vm/kernel-eatt.sh
# (bluetoothd on hci1 reads from `bluewire serve` on hci0 over an EATT bearer; it fails by itself
# within 240 s). --capture FILE keeps the guest's btmon recording (btsnoop datalink 2001). --verbose
# echoes everything the guest prints. KEEP_VM_OUT=1 keeps the guest's output directory (under .build,
# named in the output) with the steps' logs.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

capture=""
kernel=""
verbose=false
while [ $# -gt 0 ]; do
  case "$1" in
    --capture) capture=$2; shift 2 ;;
    --kernel) kernel=$2; shift 2 ;;
    -v|--verbose) verbose=true; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) break ;;
  esac
done

./scripts/setup-test-env.sh >/dev/null
[ -n "$kernel" ] || kernel=$(ls /boot/vmlinuz-*-amd64 | sort -V | tail -1)
[ -f "$kernel" ] || { echo "kernel-vm-test: FAIL (no kernel in /boot: install linux-image-amd64)"; exit 1; }
busybox=$root/scripts/.cache/busybox-static/bin/busybox

echo "kernel-vm-test: building"
swift build --build-tests >/dev/null
build_dir=$(swift build --show-bin-path)
tests="$build_dir/BluewirePackageTests.xctest"

if [ $# -eq 0 ]; then
  set -- "BLUEWIRE_KERNEL_HCI=hci0 $tests --testing-library swift-testing --filter KernelUserChannelTests" \
    "bash $root/scripts/vm/kernel-scan.sh" "bash $root/scripts/vm/kernel-l2cap.sh" \
    "bash $root/scripts/vm/kernel-eatt.sh"
fi

out=$(mktemp -d "$root/.build/vm-XXXXXX")
if [ -n "${KEEP_VM_OUT:-}" ]; then echo "kernel-vm-test: guest output kept in $out"; else trap 'rm -rf "$out"' EXIT; fi
log=$out/guest.log
steps=()
for step in "$@"; do steps+=("$(printf '%q' "$step")"); done

echo "kernel-vm-test: booting $(basename "$kernel") (no KVM)"
start=$(date +%s.%N)
ready_at=""
set +e
PATH="$root/.venv/bin:$PATH" BLUEWIRE_BUILD_DIR="$build_dir" timeout 900 vng --run "$kernel" --user root --disable-kvm \
  --busybox "$busybox" --rwdir "$out" --cwd "$root" \
  -- "BLUEWIRE_BUILD_DIR=$build_dir bash $root/scripts/vm/guest.sh $out ${steps[*]}" </dev/null 2>&1 |
  while IFS= read -r line; do
    printf '%s\n' "$line" >>"$log"
    $verbose && printf '  | %s\n' "$line"
    case "$line" in
      GUEST-START*) echo "kernel-vm-test: guest booted after $(echo "$(date +%s.%N) - $start" | bc | cut -c1-5) s (kernel $line)" ;;
      GUEST-READY*) echo "kernel-vm-test: btvirt controllers ready after $(echo "$(date +%s.%N) - $start" | bc | cut -c1-5) s" ;;
      STEP-RESULT*|GUEST-FAIL*|GUEST-NOTE*|KERNEL-*|*"✘"*) $verbose || echo "  $line" ;;
    esac
  done
set -e
elapsed=$(echo "$(date +%s.%N) - $start" | bc | cut -c1-5)

if [ -n "$capture" ] && [ -s "$out/btmon.btsnoop" ]; then
  cp "$out/btmon.btsnoop" "$capture"
  echo "kernel-vm-test: btmon capture (datalink 2001) saved to $capture"
fi
if grep -q "^GUEST-DONE failures=0" "$log"; then
  echo "kernel-vm-test: PASS ($# step(s), ${elapsed} s including boot)"
else
  echo "kernel-vm-test: FAIL (${elapsed} s); guest output:"
  sed 's/^/  | /' "$log" | tail -60
  exit 1
fi
