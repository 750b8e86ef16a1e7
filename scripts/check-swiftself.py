#!/usr/bin/env python3
"""Fails when a firmware image has a function that returns and changes r10 through a base-register
writeback (`stmia.w sl!, ...`, `ldr rX, [sl], #4`, ...) without saving r10 in its prologue.

Swift's calling convention on 32-bit Arm passes `self` in r10 (swiftself), and r10 is callee-saved:
a caller keeps using its own r10 after the call. LLVM's Arm load/store optimiser can turn the last
stores through `self` into a writeback form, because r10 is dead in the callee after that use; the
caller then gets r10 back advanced by the stored bytes and writes the next mutation of its value to
the wrong place. The build links with `-mllvm -arm-assume-misaligned-load-store` to keep the
optimiser from forming those multiple stores; this check keeps it that way.

  check-swiftself.py IMAGE.elf
"""
import bisect
import re
import subprocess
import sys


def run(*command):
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def main(elf):
    functions = []
    for line in run('arm-none-eabi-nm', '-n', elf).splitlines():
        fields = line.split()
        # Arm mapping symbols ($t, $d) mark code and data, not functions.
        if len(fields) >= 3 and fields[1] in 'tT' and not re.match(r'\$[atd](\.|$)', fields[2]):
            functions.append((int(fields[0], 16) & ~1, fields[2]))
    starts = [start for start, _ in functions]
    saving, returning, writebacks = set(), set(), []
    callers = {}  # function index -> indices of the functions that branch to it
    for line in run('arm-none-eabi-objdump', '-d', elf).splitlines():
        match = re.match(r'\s*([0-9a-f]+):\t[0-9a-f ]+\t(\S+)\s*(.*)', line)
        if not match:
            continue
        address, mnemonic, operands = int(match.group(1), 16), match.group(2), match.group(3)
        function = bisect.bisect_right(starts, address) - 1
        if (mnemonic.startswith('push') or (mnemonic.startswith('stmdb') and 'sp!' in operands)) \
                and re.search(r'\bsl\b', operands):
            saving.add(function)
        # A function that never returns (the firmware's main loop) need not give r10 back.
        if (mnemonic == 'bx' and operands.startswith('lr')) or \
                (mnemonic.startswith(('pop', 'ldmia', 'ldm.w', 'ldmia.w')) and re.search(r'\bpc\b', operands)):
            returning.add(function)
        branch = re.match(r'([0-9a-f]+) <', operands)
        if mnemonic in ('b', 'b.w', 'b.n', 'bl') and branch:
            target = bisect.bisect_right(starts, int(branch.group(1), 16)) - 1
            if target != function:
                callers.setdefault(target, set()).add(function)
                if mnemonic != 'bl':
                    returning.add(function)  # a tail call returns to our caller
        if re.search(r'\bsl!|\[sl(, #-?\d+)?\]!|\[sl\], #', operands):
            writebacks.append((function, address, mnemonic, operands))
    def unsafe(f, seen=()):
        if f in saving or f not in returning:
            return False
        if not functions[f][1].startswith('OUTLINED_FUNCTION_'):
            return True
        # Outlined code: unsafe if any caller (through outlined callers) returns without saving r10.
        return not callers.get(f) or any(unsafe(c, seen + (f,)) for c in callers[f] if c not in seen)
    bad = [(functions[f][1], a, m, o) for f, a, m, o in writebacks if unsafe(f)]
    for name, address, mnemonic, operands in bad:
        print(f'check-swiftself: {elf}: {name} at {address:#x}: {mnemonic} {operands} changes r10 without saving it')
    return 1 if bad else 0


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
