#!/usr/bin/env bash
# Runs inside the virtme-ng guest (started by run-kernel-test.sh): the real Linux Bluetooth stack
# with two linked virtual LE controllers from BlueZ's emulator (btvirt), hci0 and hci1.
#
#   guest.sh OUTDIR STEP...
#
# Each STEP is a shell command line, run in order with BLUEWIRE_TRANSPORT=hci0 and the host's
# build directory on PATH (so `bluewire scan --transport hci0` works). btmon records everything to
# OUTDIR/btmon.btsnoop (BlueZ monitor format, btsnoop datalink 2001).
# Prints "STEP-RESULT <rc> <step>" per step and "GUEST-DONE failures=<n>" at the end.
set -u
out=$1
shift
echo "GUEST-START uptime=$(cut -d' ' -f1 /proc/uptime)"

fail() { echo "GUEST-FAIL $*"; echo "GUEST-DONE failures=1"; exit 1; }

# Two modules: `modprobe bluetooth hci_vhci` would pass hci_vhci to bluetooth as a parameter.
modprobe -a bluetooth hci_vhci || fail "modprobe bluetooth hci_vhci"
start_btvirt() {
  btvirt -l2 >"$out/btvirt.log" 2>&1 &
  btvirt_pid=$!
  for _ in $(seq 100); do
    [ -e /sys/class/bluetooth/hci0 ] && [ -e /sys/class/bluetooth/hci1 ] && return 0
    sleep 0.1
  done
  fail "btvirt created no hci0/hci1: $(cat "$out/btvirt.log")"
}

# Whether both controllers accept an HCI user channel. The kernel powers each new controller on at
# once; a cold btvirt (binaries still coming over 9p, no KVM) can miss that first Reset (dmesg:
# "hci0: Opcode 0x0c03 failed: -110"), which leaves the device in setup and every user-channel bind
# EBUSY for good. A restarted btvirt answers in time.
controllers_usable() {
  python3 - <<'PY'
import ctypes, fcntl, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
for dev in (0, 1):
    s = socket.socket(31, socket.SOCK_RAW | socket.SOCK_CLOEXEC, 1)
    fcntl.ioctl(s.fileno(), 0x400448CA, dev)  # HCIDEVDOWN
    ok = libc.bind(s.fileno(), struct.pack("<HHH", 31, dev, 1), 6) == 0  # HCI_CHANNEL_USER
    s.close()
    if not ok:
        sys.exit(1)
PY
}

for attempt in 1 2 3; do
  start_btvirt
  controllers_usable && break
  echo "GUEST-NOTE btvirt attempt $attempt: a controller is stuck in setup; restarting btvirt"
  kill "$btvirt_pid"
  wait "$btvirt_pid" 2>/dev/null
  while [ -e /sys/class/bluetooth/hci0 ]; do sleep 0.1; done
  [ "$attempt" -lt 3 ] || fail "controllers still stuck in setup after 3 btvirt starts"
done

btmon -w "$out/btmon.btsnoop" >/dev/null 2>&1 &
btmon_pid=$!
# btmon writes the 16-byte file header once its monitor socket is open.
for _ in $(seq 50); do
  [ "$(stat -c %s "$out/btmon.btsnoop" 2>/dev/null || echo 0)" -ge 16 ] && break
  sleep 0.1
done
echo "GUEST-READY uptime=$(cut -d' ' -f1 /proc/uptime)"

export BLUEWIRE_TRANSPORT=hci0 BLUEWIRE_VM_OUT="$out"
export PATH="$BLUEWIRE_BUILD_DIR:$PATH"
failures=0
for step in "$@"; do
  echo "STEP $step"
  bash -c "$step"
  rc=$?
  echo "STEP-RESULT $rc $step"
  [ "$rc" -eq 0 ] || failures=$((failures + 1))
done

kill -INT "$btmon_pid" 2>/dev/null
wait "$btmon_pid" 2>/dev/null
kill "$btvirt_pid" 2>/dev/null
echo "GUEST-DONE failures=$failures"
