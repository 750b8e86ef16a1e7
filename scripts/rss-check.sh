#!/usr/bin/env bash
# Memory flat: `bluewire decode --summary` streams a capture, so its peak resident memory must not grow
# with the file. Builds a capture 10x larger than the given one (default: the largest btsnoop file in
# Captures/) by repeating its records ten times, in a temporary directory that is removed afterwards,
# then compares the peak RSS (GNU time -v) of decoding the original and the 10x file.
#
# Prints both peaks and their ratio; exits 1 if the 10x file needs more than 1.5x the memory (or if
# its summary does not count 10x the frames: the big file must really be decoded).
#
# Then the same for `bluewire replay`: a million-record scan capture replays with `scan` in at most 64 MB.
#
# Usage: scripts/rss-check.sh [CAPTURE]     (BLUEWIRE_BINARY=path to use a build other than release)
set -euo pipefail
cd "$(dirname "$0")/.."

capture=${1:-}
if [ -z "$capture" ]; then
  # The largest btsnoop capture (detected by magic, not by extension).
  capture=$(for file in $(ls -S Captures/*); do
    if [ "$(head -c 8 "$file" | od -An -c | tr -d ' \n')" = 'btsnoop\0' ]; then echo "$file"; break; fi
  done)
fi
[ -f "$capture" ] || { echo "rss-check: no btsnoop capture found" >&2; exit 2; }

if ! /usr/bin/time -v true >/dev/null 2>&1; then
  echo "rss-check: installing GNU time (Debian package time)"
  source scripts/apt-wait.sh
  apt_get install -y -q --no-install-recommends time >/dev/null
fi

bluewire=${BLUEWIRE_BINARY:-}
if [ -z "$bluewire" ]; then
  swift build -c release --product bluewire >/dev/null
  bluewire=$(swift build -c release --show-bin-path)/bluewire
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
big="$work/$(basename "$capture").x10"

# btsnoop: a 16-byte header, then records of a 24-byte header (included length at offset 4,
# big-endian) and that many bytes. A partial record at the end is left out, so that every copy ends
# on a record boundary.
python3 - "$capture" "$big" <<'EOF'
import struct, sys
source, target = sys.argv[1], sys.argv[2]
data = open(source, 'rb').read()
if data[:8] != b'btsnoop\0':
    sys.exit(f'rss-check: {source} is not a btsnoop file')
offset = 16
while offset + 24 <= len(data):
    included = struct.unpack('>I', data[offset + 4:offset + 8])[0]
    if offset + 24 + included > len(data):
        break
    offset += 24 + included
records = data[16:offset]
with open(target, 'wb') as out:
    out.write(data[:16])
    for _ in range(10):
        out.write(records)
EOF

# Peak RSS in kB, and the summary's frame count.
measure() {
  local file=$1
  /usr/bin/time -v "$bluewire" decode --summary --json "$file" >"$work/summary.json" 2>"$work/time.txt" \
    || { cat "$work/time.txt" >&2; echo "rss-check: bluewire decode --summary $file failed" >&2; exit 2; }
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$work/time.txt")
  frames=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["frames"])' "$work/summary.json")
}

measure "$capture"
rss1=$rss frames1=$frames
measure "$big"
rss10=$rss frames10=$frames

ratio=$(python3 -c "print(f'{$rss10 / $rss1:.2f}')")
printf '%-48s %12s bytes %9s frames  peak RSS %8s kB\n' "$(basename "$capture")" "$(stat -c %s "$capture")" "$frames1" "$rss1"
printf '%-48s %12s bytes %9s frames  peak RSS %8s kB\n' "10x" "$(stat -c %s "$big")" "$frames10" "$rss10"
echo "RSS ratio (10x / 1x): $ratio (limit 1.5)"

status=0
if [ "$frames10" -ne $((frames1 * 10)) ]; then
  echo "rss-check: the 10x file decoded to $frames10 frames, not $((frames1 * 10))" >&2
  status=1
fi
if python3 -c "import sys; sys.exit(0 if $rss10 <= 1.5 * $rss1 else 1)"; then :; else
  echo "rss-check: decoding a 10x larger file needs ${ratio}x the memory (more than 1.5x)" >&2
  status=1
fi

# Replay streams too: `bluewire replay` of a scan capture grown to a million records (the recorded
# scan's two advertising reports repeated, evenly spaced over the scan's one second, between its scan
# enable and scan disable) must run the command to the end in at most 64 MB.
scan_capture=Captures/bluewire_scan_bumble.btsnoop
replay_big="$work/replay-1m.btsnoop"
python3 - "$scan_capture" "$replay_big" 1000000 <<'EOF2'
import struct, sys
source, target, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(source, 'rb').read()
records, offset = [], 16
while offset + 24 <= len(data):
    included = struct.unpack('>I', data[offset + 4:offset + 8])[0]
    records.append(data[offset:offset + 24 + included])
    offset += 24 + included
def flags(r): return struct.unpack('>I', r[8:12])[0]
def stamp(r): return struct.unpack('>q', r[16:24])[0]
def payload(r): return r[24:]
# The LE Advertising Reports (LE Meta event 0x3E, subevent 0x0D or 0x02) sit between the scan enable's
# Command Complete and the scan disable (LE Set Scan Enable 0x200C, enable 0).
reports = [i for i, r in enumerate(records) if payload(r)[:2] == b'\x04\x3e']
first, last = reports[0], reports[-1]
start, end = stamp(records[first - 1]), stamp(records[last + 1])
count = total - (len(records) - len(reports))
with open(target, 'wb') as out:
    out.write(data[:16])
    for r in records[:first]: out.write(r)
    for k in range(count):
        r = records[reports[k % len(reports)]]
        out.write(r[:16] + struct.pack('>q', start + 1 + (end - start - 2) * k // count) + r[24:])
    for r in records[last + 1:]: out.write(r)
EOF2

replay_measure() {
  local file=$1
  /usr/bin/time -v "$bluewire" replay "$file" -- scan --duration 1 --json >"$work/replay.out" 2>"$work/time.txt" \
    || { cat "$work/time.txt" >&2; echo "rss-check: bluewire replay $file -- scan failed" >&2; exit 2; }
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$work/time.txt")
  lines=$(wc -l <"$work/replay.out")
}
replay_measure "$scan_capture"
replay_rss1=$rss replay_lines1=$lines
replay_measure "$replay_big"
replay_rss=$rss
printf '%-48s %12s bytes  replay -- scan: peak RSS %8s kB\n' "$(basename "$scan_capture")" "$(stat -c %s "$scan_capture")" "$replay_rss1"
printf '%-48s %12s bytes  replay -- scan: peak RSS %8s kB (limit 65536)\n' "1M records" "$(stat -c %s "$replay_big")" "$replay_rss"
if [ "$lines" -ne "$replay_lines1" ]; then
  echo "rss-check: the replayed 1M-record scan printed $lines devices, the recorded one $replay_lines1" >&2
  status=1
fi
if [ "$replay_rss" -gt 65536 ]; then
  echo "rss-check: replaying a 1M-record capture needs $replay_rss kB (more than 64 MB)" >&2
  status=1
fi
exit $status
