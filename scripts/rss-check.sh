#!/usr/bin/env bash
# Memory flat: `bluewire decode --summary` streams a capture, so its peak resident memory must not grow
# with the file. Builds a capture 10x larger than the given one (default: the largest btsnoop file in
# Captures/) by repeating its records ten times, in a temporary directory that is removed afterwards,
# then compares the peak RSS (GNU time -v) of decoding the original and the 10x file.
#
# Prints both peaks and their ratio; exits 1 if the 10x file needs more than 1.5x the memory (or if
# its summary does not count 10x the frames: the big file must really be decoded).
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
exit $status
