#!/usr/bin/env python3
"""Re-records Captures/bluewire_pair_*.btsnoop: `bluewire pair --capture` against a bumble peripheral
with bumble's Security Manager (Tests/Peers/bumble_link.py --pairing), one capture per pairing method.

Usage (from the repository, after `swift build` and `bash scripts/setup-test-env.sh`):
    .venv/bin/python scripts/record-pairing-captures.py [--out DIR] [METHOD...]

METHOD is one of the names below (default: all). The bluewire binary is .build/debug/bluewire or
$BLUEWIRE_BINARY. Each run uses a fresh bond file (so it always pairs) and a fixed own address, and
answers the passkey prompts itself: the passkey one side shows is typed on the other (bluewire's stderr
line "passkey: N" goes to bumble's standard input, bumble's EVENT {"passkey": N} to bluewire's).
The capture tests (Tests/InteropTests/PairingCaptureTests.swift) check what the files must show.
"""

import argparse
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name: (bumble IO:SC:MITM, bluewire pair options, own address)
METHODS = {
    'sc_just_works': ('3:1:0', ['--io', 'no-input-no-output'], 'C4:5A:17:00:B3:01'),
    'sc_numeric_comparison': ('1:1:1', ['--io', 'display-yes-no', '--mitm', '--yes'], 'C4:5A:17:00:B3:02'),
    'sc_passkey_bluewire_displays': ('2:1:1', ['--io', 'display-only', '--mitm'], 'C4:5A:17:00:B3:03'),
    'sc_passkey_bluewire_enters': ('0:1:1', ['--io', 'keyboard-only', '--mitm'], 'C4:5A:17:00:B3:04'),
    'legacy_just_works': ('3:0:0', ['--io', 'no-input-no-output', '--legacy'], 'C4:5A:17:00:B3:05'),
    'legacy_passkey': ('0:0:1', ['--io', 'keyboard-only', '--mitm', '--legacy'], 'C4:5A:17:00:B3:06'),
}


def reader(stream, lines):
    for line in iter(stream.readline, ''):
        lines.put(line.rstrip('\n'))
    lines.put(None)


def record(name, out_dir, binary):
    pairing, options, own = METHODS[name]
    bumble = subprocess.Popen(
        [sys.executable, os.path.join(ROOT, 'Tests/Peers/bumble_link.py'), 'tcp-server:127.0.0.1:0',
         '--peripheral', '--name', 'bumble-smp', '--interval', '50', '--pairing', pairing],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    try:
        ready = json.loads(bumble.stdout.readline().split(' ', 1)[1])
        transport, address = ready['controllers'][0]['transport'], ready['device']['address']
        bumble_lines = queue.Queue()
        threading.Thread(target=reader, args=(bumble.stdout, bumble_lines), daemon=True).start()
        capture = os.path.join(out_dir, f'bluewire_pair_{name}.btsnoop')
        if os.path.exists(capture):
            os.remove(capture)
        with tempfile.TemporaryDirectory() as keys:
            command = [binary, 'pair', address + '/random', '--transport', transport, '--own-address', own,
                       '--keys', os.path.join(keys, 'keys.json'), '--capture', capture, '--json'] + options
            pair = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, bufsize=1)
            errors = queue.Queue()
            threading.Thread(target=reader, args=(pair.stderr, errors), daemon=True).start()

            # bumble ignores a passkey typed before it asks ({"passkey_wanted": true}): bluewire's is
            # sent once both the passkey and the question are there.
            typed = {'passkey': None, 'wanted': False, 'sent': False}
            lock = threading.Lock()

            def type_on_bumble():
                with lock:
                    if typed['passkey'] is not None and typed['wanted'] and not typed['sent']:
                        typed['sent'] = True
                        bumble.stdin.write(json.dumps({'op': 'passkey', 'value': typed['passkey']}) + '\n')
                        bumble.stdin.flush()

            def forward_bumble():
                while (line := bumble_lines.get()) is not None:
                    if not line.startswith('EVENT '):
                        continue
                    event = json.loads(line[6:])
                    if isinstance(event.get('passkey'), int):
                        pair.stdin.write(f"{event['passkey']}\n")
                        pair.stdin.flush()
                    elif event.get('passkey_wanted'):
                        typed['wanted'] = True
                        type_on_bumble()
            threading.Thread(target=forward_bumble, daemon=True).start()
            stderr = []

            def forward_bluewire():
                while (line := errors.get()) is not None:
                    stderr.append(line)
                    if match := re.match(r'passkey: (\d+)', line):
                        typed['passkey'] = int(match.group(1))
                        type_on_bumble()
            watcher = threading.Thread(target=forward_bluewire, daemon=True)
            watcher.start()
            outputs = queue.Queue()
            threading.Thread(target=reader, args=(pair.stdout, outputs), daemon=True).start()
            try:
                # Not communicate(): it would close standard input, where the passkey is typed.
                pair.wait(timeout=60)
                output = '\n'.join(iter(outputs.get, None))
            except subprocess.TimeoutExpired:
                pair.kill()
                raise SystemExit(f'{name}: bluewire pair did not finish')
            watcher.join(timeout=5)
            if pair.returncode != 0:
                raise SystemExit(f'{name}: bluewire pair exited {pair.returncode}: ' + ' | '.join(stderr))
            print(f'{name}: {capture} ({os.path.getsize(capture)} bytes) {output.strip()}')
    finally:
        bumble.stdin.close()
        bumble.terminate()
        bumble.wait(timeout=10)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--out', default=os.path.join(ROOT, 'Captures'), help='directory for the captures')
    parser.add_argument('methods', nargs='*', metavar='METHOD', help=', '.join(METHODS))
    args = parser.parse_args()
    for name in args.methods:
        if name not in METHODS:
            parser.error(f'unknown method {name}: expected one of {", ".join(METHODS)}')
    binary = os.environ.get('BLUEWIRE_BINARY', os.path.join(ROOT, '.build/debug/bluewire'))
    for name in args.methods or list(METHODS):
        record(name, args.out, binary)


if __name__ == '__main__':
    main()
