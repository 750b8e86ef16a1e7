#!/usr/bin/env python3
"""Where a firmware image's flash goes, by module: `arm-none-eabi-nm --size-sort -S` over the ELF, each
Swift symbol demangled (swift-demangle) and given to the module whose sources declare the type (or free
function) it belongs to, so the one-module image (scripts/firmware.sh) is still reported per module.

  python3 scripts/firmware-breakdown.py ELF [BEFORE_ELF] [--top N]

Groups: the Bluewire* core modules and the app (Examples/Firmware), `stdlib` (Swift.*: the standard
library's code and its specialisations, and generic specialisations of it for the image's types), and
`C` (picolibc, libgcc, start-up: symbols that are not Swift). Only code and read-only data in flash
(t/T/r/R symbols) count. With BEFORE_ELF, each group's change is shown too.
"""

import collections
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = ['BluewireCore', 'BluewireHCI', 'BluewireL2CAP', 'BluewireATT', 'BluewireGATT', 'BluewireSMP',
           'BluewireHostEngine']
DECLARATION = re.compile(r'^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:public |package |internal |fileprivate |private |final |indirect )*'
                         r'(?:struct|enum|class|protocol|actor|typealias|func)\s+(\w+)', re.M)


def declarations():
    owner = {}
    sources = [(m, os.path.join(ROOT, 'Sources', m)) for m in MODULES]
    sources.append(('app', os.path.join(ROOT, 'Examples', 'Firmware', 'Sources')))
    for module, directory in sources:
        for base, _, files in os.walk(directory):
            for name in files:
                if name.endswith('.swift'):
                    with open(os.path.join(base, name)) as f:
                        for match in DECLARATION.finditer(f.read()):
                            owner.setdefault(match.group(1), module)
    return owner


def symbols(elf):
    out = subprocess.run(['arm-none-eabi-nm', '--size-sort', '-S', elf], capture_output=True, text=True, check=True)
    rows = []
    for line in out.stdout.splitlines():
        parts = line.split(maxsplit=3)
        if len(parts) == 4 and parts[2] in 'tTrR':
            rows.append((int(parts[1], 16), parts[3]))
    names = subprocess.run(['swift-demangle', '--compact'], input='\n'.join(n for _, n in rows),
                           capture_output=True, text=True, check=True).stdout.splitlines()
    return [(size, raw, names[i] if i < len(names) else raw) for i, (size, raw) in enumerate(rows)]


def module_of(raw, demangled, owner):
    if not raw.startswith(('$s', '$e')):
        return 'C'
    # The entity the symbol belongs to: the first Firmware.Name after any "specialization of" prefix.
    text = demangled.split(' of ', 1)[1] if ' of ' in demangled and demangled.startswith(('generic', 'function signature', 'outlined', 'merged', 'partial apply', 'closure', 'implicit closure', 'reabstraction', 'protocol witness', 'value witness', 'type metadata', 'nominal', 'lazy', 'key path', 'default argument', 'property descriptor', 'flag', 'Firmware')) else demangled
    for match in re.finditer(r'Firmware\.(\w+)', text):
        if match.group(1) in owner:
            return owner[match.group(1)]
    if text.lstrip('(').startswith('Swift.') or 'Swift.' in text.split('(')[0]:
        return 'stdlib'
    return 'stdlib' if 'Firmware.' not in text else 'app'


def breakdown(elf, owner):
    groups = collections.Counter()
    biggest = []
    for size, raw, name in symbols(elf):
        module = module_of(raw, name, owner)
        groups[module] += size
        biggest.append((size, module, name))
    return groups, sorted(biggest, reverse=True)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    top = 15
    if '--top' in sys.argv:
        top = int(sys.argv[sys.argv.index('--top') + 1])
        args = [a for a in args if a != str(top)]
    if not args:
        raise SystemExit(__doc__)
    owner = declarations()
    after, biggest = breakdown(args[0], owner)
    before = breakdown(args[1], owner)[0] if len(args) > 1 else None
    total = sum(after.values())
    print(f'{"module":<20} {"bytes":>8} {"share":>6}' + (f' {"before":>8} {"change":>8}' if before else ''))
    for module, size in after.most_common():
        line = f'{module:<20} {size:>8} {100 * size / total:>5.1f}%'
        if before is not None:
            line += f' {before.get(module, 0):>8} {size - before.get(module, 0):>+8}'
        print(line)
    if before is not None:
        for module in sorted(set(before) - set(after)):
            print(f'{module:<20} {0:>8} {0:>5.1f}% {before[module]:>8} {-before[module]:>+8}')
    print(f'{"total (symbols)":<20} {total:>8}' + (f'        {sum(before.values()):>8} {total - sum(before.values()):>+8}' if before else ''))
    print(f'\nlargest {top}:')
    for size, module, name in biggest[:top]:
        print(f'{size:>7} {module:<18} {name[:110]}')


if __name__ == '__main__':
    main()
