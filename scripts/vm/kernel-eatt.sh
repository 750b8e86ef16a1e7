#!/usr/bin/env bash
# Kernel VM EATT step: run inside the virtme-ng guest once btvirt -l2 has made hci0 and hci1
# (scripts/vm/guest.sh runs it as a STEP: `bash scripts/vm/kernel-eatt.sh`).
#
# `bluewire serve` takes hci0 through the HCI user channel and serves a small database; BlueZ's own
# bluetoothd (5.66, the GATT client with EATT: [GATT] Channels = 3) runs on hci1 with the kernel's
# enhanced credit based mode on (bluetooth.enable_ecred). bluetoothctl connects to serve; bluetoothd
# reads Server Supported Features, opens Enhanced Credit Based channels on SPSM 0x0027, and a read
# asked after that travels on one of them. PASS when serve reports EATT bearers opened by the kernel
# and answers a read of the Battery Level made through bluetoothd after they opened.
# Prints "KERNEL-EATT PASS ..." or "KERNEL-EATT FAIL ..."; exit status 0 only on PASS.
set -u
bluewire=${BLUEWIRE_BIN:-bluewire}
work=$(mktemp -d /tmp/kernel-eatt-XXXXXX)
start=$(date +%s%N)
address=C4:5A:17:00:EA:77

finish() {
  echo "KERNEL-EATT $1 ($(( ($(date +%s%N) - start) / 1000000 )) ms) $2"
  if [ "$1" != PASS ]; then
    for file in "$work"/*.log; do
      [ -s "$file" ] && sed "s|^|  $(basename "$file"): |" "$file" | tail -40
    done
  fi
  [ -n "${serve:-}" ] && kill -INT "$serve" 2>/dev/null && wait "$serve" 2>/dev/null
  [ -n "${bluetoothd:-}" ] && kill "$bluetoothd" 2>/dev/null
  [ -n "${dbus:-}" ] && kill "$dbus" 2>/dev/null
  [ -n "${monitor:-}" ] && kill -INT "$monitor" 2>/dev/null
  [ "$1" = PASS ]
  exit $?
}

# The kernel's L2CAP takes and makes Enhanced Credit Based channels only with this set.
echo Y >/sys/module/bluetooth/parameters/enable_ecred || finish FAIL "cannot set bluetooth.enable_ecred"

cat >"$work/db.json" <<'JSON'
{ "services": [ { "uuid": "0x180f", "characteristics": [
  { "uuid": "0x2a19", "properties": ["read"], "value": "64" } ] } ] }
JSON

# A monitor of our own, to see which channel each ATT PDU took.
btmon -w "$work/eatt.btsnoop" >/dev/null 2>&1 &
monitor=$!

# serve first, so that bluetoothd never sees hci0 as its own.
timeout 300 "$bluewire" serve --transport hci0 --db "$work/db.json" --name BluewireEATT --own-address "$address" \
  --keys "$work/keys.json" >"$work/serve.log" 2>&1 &
serve=$!
for _ in $(seq 900); do
  grep -q '^advertising "' "$work/serve.log" 2>/dev/null && break
  kill -0 "$serve" 2>/dev/null || finish FAIL "serve on hci0 exited"
  sleep 0.1
done
grep -q '^eatt on SPSM 0x0027' "$work/serve.log" || finish FAIL "serve did not offer EATT"

# bluetoothd needs the system bus.
mkdir -p /run/dbus
dbus-daemon --system --nofork --nopidfile >"$work/dbus.log" 2>&1 &
dbus=$!
for _ in $(seq 100); do [ -S /run/dbus/system_bus_socket ] && break; sleep 0.1; done
cat >"$work/main.conf" <<'CONF'
[General]
ControllerMode = le
[GATT]
Channels = 3
CONF
# bluetoothd 5.66 has crashed (SIGSEGV) in this step once, and bluetoothctl waits for ever for a
# bluetoothd that is gone: every bluetoothctl call has a time limit, and a try whose bluetoothd died
# starts it again. Up to three tries, each: start bluetoothd if needed, find serve, stop the scanning
# client, connect, and wait 30 s for an EATT bearer.
start_bluetoothd() {
  bluetoothd -n -d -f "$work/main.conf" >>"$work/bluetoothd.log" 2>&1 &
  bluetoothd=$!
  for _ in $(seq 100); do timeout 5 bluetoothctl list 2>/dev/null | grep -q Controller && break; sleep 0.2; done
  timeout 10 bluetoothctl power on >>"$work/bluetoothctl.log" 2>&1
}
for attempt in 1 2 3; do
  kill -0 "${bluetoothd:-0}" 2>/dev/null || start_bluetoothd
  timeout 30 bluetoothctl --timeout 20 scan le >>"$work/bluetoothctl.log" 2>&1 &
  scanner=$!
  for _ in $(seq 200); do
    timeout 5 bluetoothctl devices 2>/dev/null | grep -qi "$address" && break
    sleep 0.1
  done
  # Discovery belongs to the D-Bus client that started it: `bluetoothctl scan off` from another
  # process is refused, and a discovery left running makes bluetoothd restart it under the kernel's
  # LE connection attempt, which the kernel then aborts ("le-connection-abort-by-local"). So the
  # scanning client itself goes, and the connect waits until the adapter has stopped discovering.
  kill "$scanner" 2>/dev/null
  wait "$scanner" 2>/dev/null
  for _ in $(seq 100); do
    timeout 5 bluetoothctl show 2>/dev/null | grep -q 'Discovering: no' && break
    sleep 0.1
  done
  timeout 40 bluetoothctl connect "$address" >>"$work/bluetoothctl.log" 2>&1
  for _ in $(seq 300); do
    grep -q '^eatt bearer 0x' "$work/serve.log" && break 2
    sleep 0.1
  done
  echo "kernel-eatt: try $attempt opened no EATT bearer (bluetoothd $(kill -0 "$bluetoothd" 2>/dev/null && echo running || echo gone))" >>"$work/bluetoothctl.log"
  timeout 10 bluetoothctl disconnect "$address" >>"$work/bluetoothctl.log" 2>&1
done
grep -q '^eatt bearer 0x' "$work/serve.log" || finish FAIL "no EATT bearer opened by bluetoothd"
sleep 2
bearers=$(grep -c '^eatt bearer 0x' "$work/serve.log")
reads_before=$(grep -c '^read 0x' "$work/serve.log")
# A read through bluetoothd's GATT client, now that its bearers are up.
(echo "menu gatt"; sleep 1; echo "select-attribute 00002a19-0000-1000-8000-00805f9b34fb"; sleep 1; echo "read"; sleep 4; echo "back"; echo "quit") |
  timeout 30 bluetoothctl >>"$work/bluetoothctl.log" 2>&1
reads_after=$(grep -c '^read 0x' "$work/serve.log")
[ "$reads_after" -gt "$reads_before" ] || finish FAIL "bluetoothd's read did not reach serve"
timeout 10 bluetoothctl disconnect "$address" >>"$work/bluetoothctl.log" 2>&1
kill -INT "$monitor" 2>/dev/null
wait "$monitor" 2>/dev/null
monitor=""
# Requests on an EATT bearer: K-frames on SPSM 0x0027's channels carrying ATT requests, and answers.
"$bluewire" decode "$work/eatt.btsnoop" >"$work/decoded.txt" 2>"$work/decode.log"
on_eatt=$(grep -c '\[hci0\] > ACL: .*EATT K-frame (SPSM 0x0027).* ATT .*Request' "$work/decoded.txt")
answered=$(grep -c '\[hci0\] < ACL: .*EATT K-frame (SPSM 0x0027).* ATT .*Response' "$work/decoded.txt")
[ "$on_eatt" -gt 0 ] && [ "$answered" -gt 0 ] || finish FAIL "no ATT request travelled on an EATT bearer (btmon: $on_eatt requests, $answered responses)"
grep 'EATT K-frame' "$work/decoded.txt" | sed 's/^/  /' | head -6
finish PASS "bluetoothd opened $bearers EATT bearer(s) to serve; $on_eatt ATT request(s) on them, $answered answered there; serve answered $reads_after read(s)"
