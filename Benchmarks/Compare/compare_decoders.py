#!/usr/bin/env python3
"""Decode the same capture with Bluewire, tshark and bumble, and print Bluewire's speed as a ratio.

Comparisons per capture, each the fastest of --repeat runs (wall time of the whole process, so
start-up is included for every tool; the capture sizes keep start-up small next to the work):
  text:    every packet decoded and printed   bluewire decode FILE | tshark -r FILE | bumble show --format snoop FILE
  parse:   every packet decoded, not printed  bluewire decode --summary --json FILE | bumble HCI_Packet.from_bytes per record
  summary: counts per protocol                bluewire decode --summary FILE | tshark -q -z io,phs -r FILE
(tshark has no parse-only mode that skips dissection; its text run is its full decode.)
And Bluewire's own JSON against its text: the CPU time (user + system) of `decode --json` over
`decode -v` (the goal: at most 1.5x); and Bluewire's process start alone (`bluewire --version`:
wall and CPU time, peak RSS), which every decode pays.

Usage: compare_decoders.py [--bluewire PATH] [--python PATH] [--repeat N] CAPTURE...
Needs: a release build of bluewire, tshark (Debian), and a Python with bumble (PyPI).
"""
import argparse
import os
import struct
import subprocess
import sys
import time

BUMBLE_PARSE = r'''
import struct, sys
from bumble import hci
data = open(sys.argv[1], 'rb').read()
_, datalink = struct.unpack('>II', data[8:16])
offset, count = 16, 0
while offset + 24 <= len(data):
    orig, incl, flags, drops, ts = struct.unpack('>IIIIQ', data[offset:offset + 24])
    packet = data[offset + 24:offset + 24 + incl]
    offset += 24 + incl
    try:
        hci.HCI_Packet.from_bytes(packet)
    except Exception:
        pass
    count += 1
print(count)
'''


def run_once(command):
    """One run: (wall seconds, user + system CPU seconds, peak RSS in MB), or None if it failed."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        return None
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def timed(command, repeat, cpu=False):
    """The fastest of `repeat` runs: wall seconds, or with `cpu` the child's user + system seconds."""
    best = None
    for _ in range(repeat):
        measured = run_once(command)
        if measured is None:
            return None
        value = measured[1] if cpu else measured[0]
        best = value if best is None else min(best, value)
    return best


def records(path):
    with open(path, 'rb') as f:
        data = f.read()
    offset, count = 16, 0
    while offset + 24 <= len(data):
        incl = struct.unpack('>I', data[offset + 4:offset + 8])[0]
        offset += 24 + incl
        count += 1
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('captures', nargs='+')
    parser.add_argument('--bluewire', default='.build/release/bluewire')
    parser.add_argument('--python', default='.venv/bin/python')
    parser.add_argument('--repeat', type=int, default=3)
    args = parser.parse_args()
    starts = [run_once([args.bluewire, '--version']) for _ in range(max(args.repeat, 5))]
    if all(starts):
        print(f'bluewire process start (--version): {min(s[0] for s in starts) * 1000:.1f} ms wall, '
              f'{min(s[1] for s in starts) * 1000:.1f} ms CPU, {max(s[2] for s in starts):.1f} MB peak RSS')
    for capture in args.captures:
        n = records(capture)
        runs = {
            'bluewire text': [args.bluewire, 'decode', capture],
            'tshark text': ['tshark', '-n', '-r', capture],
            'bumble text': [args.python, '-m', 'bumble.apps.show', '--format', 'snoop', capture],
            'bluewire parse': [args.bluewire, 'decode', '--summary', '--json', capture],
            'bumble parse': [args.python, '-c', BUMBLE_PARSE, capture],
            'bluewire summary': [args.bluewire, 'decode', '--summary', capture],
            'tshark phs': ['tshark', '-n', '-q', '-z', 'io,phs', '-r', capture],
        }
        times = {name: timed(command, args.repeat) for name, command in runs.items()}
        cpu = {name: timed([args.bluewire, 'decode', flag, capture], args.repeat, cpu=True)
               for name, flag in [('json', '--json'), ('verbose', '-v')]}
        print(f'{os.path.basename(capture)}: {n} records, {os.path.getsize(capture)} bytes')
        for name, seconds in times.items():
            rate = f'{n / seconds:>12,.0f} packets/s' if seconds else '      failed'
            print(f'  {name:15} {seconds or 0:8.3f} s {rate}')
        def ratio(a, b):
            return f'{times[b] / times[a]:.1f}x' if times[a] and times[b] else 'n/a'
        print(f'  bluewire vs tshark (text):  {ratio("bluewire text", "tshark text")}')
        print(f'  bluewire vs bumble (text):  {ratio("bluewire text", "bumble text")}')
        print(f'  bluewire vs bumble (parse): {ratio("bluewire parse", "bumble parse")}')
        print(f'  bluewire vs tshark (summary, io,phs): {ratio("bluewire summary", "tshark phs")} (goal: at least 20x)')
        if cpu['json'] and cpu['verbose']:
            print(f'  decode --json CPU {cpu["json"]:.3f} s, -v {cpu["verbose"]:.3f} s: '
                  f'{cpu["json"] / cpu["verbose"]:.2f}x (goal: at most 1.5x)')


if __name__ == '__main__':
    sys.exit(main())
