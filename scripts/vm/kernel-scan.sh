#!/usr/bin/env bash
# Kernel VM scan step: run inside the virtme-ng guest once btvirt -l2 has made hci0 and hci1
# (scripts/vm/guest.sh runs it as a STEP: `bash scripts/vm/kernel-scan.sh`).
#
# A second Bluewire process takes hci1 through the HCI user channel and advertises with the raw
# legacy advertising commands (hidden `bluewire scan-test-advertiser`); Bluewire on hci0, also
# through the user channel, brings its controller up and scans. PASS when the scan's JSON shows
# hci1's advertisement with its name, 16-bit service UUID and manufacturer data.
# Prints "KERNEL-SCAN PASS ..." or "KERNEL-SCAN FAIL ..."; exit status 0 only on PASS.
set -u
bluewire=${BLUEWIRE_BIN:-bluewire}
work=$(mktemp -d /tmp/kernel-scan-XXXXXX)
name="BluewireVM$$"
start=$(date +%s%N)

finish() {
  echo "KERNEL-SCAN $1 ($(( ($(date +%s%N) - start) / 1000000 )) ms) $2"
  if [ "$1" != PASS ]; then
    for file in "$work"/*.log "$work"/*.json; do
      [ -s "$file" ] && sed "s|^|  $(basename "$file"): |" "$file" | tail -20
    done
  fi
  [ -n "${advertiser:-}" ] && kill "$advertiser" 2>/dev/null && wait "$advertiser" 2>/dev/null
  [ "$1" = PASS ]
  exit $?
}

# Generous limits: without KVM, on a loaded machine, a Swift binary can take 20 s to start in the guest.
timeout 150 "$bluewire" scan-test-advertiser --transport hci1 --name "$name" --uuid16 180D \
  --manufacturer FFFF:c0ffee --duration 120 >"$work/advertiser.log" 2>&1 &
advertiser=$!
for _ in $(seq 600); do
  grep -q '^ADVERTISING ' "$work/advertiser.log" 2>/dev/null && break
  kill -0 "$advertiser" 2>/dev/null || finish FAIL "the advertiser on hci1 exited"
  sleep 0.1
done
grep -q '^ADVERTISING ' "$work/advertiser.log" || finish FAIL "hci1 did not start advertising within 60 s"
address=$(sed -n 's/^ADVERTISING //p' "$work/advertiser.log" | head -1)

timeout 90 "$bluewire" scan --transport hci0 --duration 3 --json --name "$name" >"$work/scan.json" 2>"$work/scan.log"
status=$?
[ "$status" -eq 0 ] || finish FAIL "bluewire scan on hci0 exited with status $status"
line=$(grep -F "\"address\":\"$address\"" "$work/scan.json" | tail -1)
[ -n "$line" ] || finish FAIL "hci1's advertisement ($address) was not found by the scan on hci0"
for expected in "\"name\":\"$name\"" '"address_type":"random"' '"uuid":"0x180D","name":"Heart Rate"' \
  '"company":"0xFFFF","data":"c0ffee"'; do
  case "$line" in
    *"$expected"*) ;;
    *) finish FAIL "scan output lacks $expected: $line" ;;
  esac
done
finish PASS "hci0 found hci1 ($address, \"$name\", 0x180D, 0xFFFF:c0ffee)"
