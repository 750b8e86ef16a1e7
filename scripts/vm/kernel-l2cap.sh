#!/usr/bin/env bash
# Kernel VM L2CAP step: run inside the virtme-ng guest once btvirt -l2 has made hci0 and hci1
# (scripts/vm/guest.sh runs it as a STEP: `bash scripts/vm/kernel-l2cap.sh`).
#
# The kernel takes hci1 (mgmt: LE on, connectable, advertising) and its l2test listens on LE PSM 0x80
# and counts what arrives (dump mode; the kernel grants 3 credits at a time with MPS 188, and btvirt
# has one 192-octet ACL buffer whose completions come late under TCG). Bluewire on hci0, through the
# HCI user channel, pipes a 262,144-octet file into `bluewire l2cap connect ADDR 0x80 --close-on-eof`.
# PASS when the command exits 0 and l2test received every octet before the channel closed (the
# Disconnection Request must not overtake the last SDU's K-frames).
# Prints "KERNEL-L2CAP PASS ..." or "KERNEL-L2CAP FAIL ..."; exit status 0 only on PASS.
set -u
bluewire=${BLUEWIRE_BIN:-bluewire}
octets=${KERNEL_L2CAP_OCTETS:-262144}
work=$(mktemp -d /tmp/kernel-l2cap-XXXXXX)
start=$(date +%s%N)

finish() {
  echo "KERNEL-L2CAP $1 ($(( ($(date +%s%N) - start) / 1000000 )) ms) $2"
  if [ "$1" != PASS ]; then
    for file in "$work"/*.log; do
      [ -s "$file" ] && grep -v '^[0-9a-f]\{4\}: ' "$file" | sed "s|^|  $(basename "$file"): |" | tail -20
    done
  fi
  [ -n "${listener:-}" ] && kill "$listener" 2>/dev/null && wait "$listener" 2>/dev/null
  # Later steps want hci1 quiet: the kernel starts no LE connection while it advertises.
  timeout 15 btmgmt --index 1 advertising off >/dev/null 2>&1
  [ "$1" = PASS ]
  exit $?
}

# The kernel's side: hci1, LE only, connectable and advertising, so Bluewire on hci0 can connect.
for setting in "power off" "le on" "bredr off" "connectable on" "advertising on" "power on"; do
  btmgmt --index 1 $setting >>"$work/btmgmt.log" 2>&1 || finish FAIL "btmgmt --index 1 $setting failed"
done
address=$(btmgmt --index 1 info 2>/dev/null | sed -n 's/^[[:space:]]*addr \([0-9A-Fa-f:]\{17\}\).*/\1/p' | head -1)
[ -n "$address" ] || finish FAIL "no address for hci1: $(btmgmt --index 1 info 2>&1 | head -3)"

# Dump mode: one line "Recevied N bytes" (sic, some versions "Received") per SDU, then a hex dump.
l2test -d -V le_public -P 128 -I 512 -b 512 >"$work/l2test.log" 2>&1 &
listener=$!
sleep 1
kill -0 "$listener" 2>/dev/null || finish FAIL "l2test did not start"

head -c "$octets" /dev/urandom >"$work/input.bin"
timeout 300 "$bluewire" l2cap connect "$address" 0x80 --close-on-eof --transport hci0 \
  <"$work/input.bin" >"$work/connect.out" 2>"$work/connect.log"
status=$?
# l2test's child reads until the channel closes, then logs "Disconnect".
for _ in $(seq 100); do
  grep -q 'Disconnect' "$work/l2test.log" && break
  sleep 0.1
done
received=$(grep -o 'Rece[a-z]* [0-9]* bytes' "$work/l2test.log" | awk '{ total += $2 } END { print total + 0 }')
sdus=$(grep -c 'Rece[a-z]* [0-9]* bytes' "$work/l2test.log")
[ "$status" -eq 0 ] || finish FAIL "bluewire l2cap connect exited with status $status; l2test received $received of $octets octets"
[ "$received" -eq "$octets" ] || finish FAIL "l2test received $received of $octets octets in $sdus SDUs"
finish PASS "l2test on hci1 ($address) received all $received octets in $sdus SDUs; bluewire exited 0"
