#!/usr/bin/env python3
"""Checks that Package.swift's target dependencies match what each target's sources import.

A dependency that no source file imports is a layering claim the code does not make (and a build
edge that slows every build); an import of a package module that the target does not declare works
only by accident, through another target's dependency, and breaks when that one changes.

Reads `swift package dump-package` (no build needed) and every .swift file under each target's
path. Only this package's own targets and the products it depends on are checked: the standard
library, Foundation, Glibc and the like are not package dependencies.

Usage: python3 scripts/check-dependencies.py   (exit 0: they match; 1: a mismatch, listed)
"""
import json
import os
import re
import subprocess
import sys

IMPORT = re.compile(
    r"^\s*(?:@[\w]+(?:\([^)]*\))?\s+)*"          # @testable, @_implementationOnly, @preconcurrency ...
    r"(?:public\s+|package\s+|internal\s+|private\s+|fileprivate\s+)?"
    r"import\s+(?:(?:struct|enum|class|func|protocol|typealias|var|let)\s+)?"
    r"(\w+)"
)


def dependency_names(target):
    names = set()
    for dependency in target["dependencies"]:
        for kind in ("byName", "target", "product"):
            if kind in dependency:
                names.add(dependency[kind][0])
    return names


def target_path(target):
    if target.get("path"):
        return target["path"]
    return os.path.join("Tests" if target["type"] == "test" else "Sources", target["name"])


def imports_of(path):
    found = set()
    for root, _, files in os.walk(path):
        for name in files:
            if not name.endswith(".swift"):
                continue
            with open(os.path.join(root, name), encoding="utf-8") as source:
                in_block_comment = False
                for line in source:
                    stripped = line.strip()
                    if in_block_comment:
                        in_block_comment = "*/" not in stripped
                        continue
                    if stripped.startswith("/*"):
                        in_block_comment = "*/" not in stripped
                        continue
                    match = IMPORT.match(line)
                    if match:
                        found.add(match.group(1))
    return found


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    dump = subprocess.run(
        ["swift", "package", "dump-package"], check=True, capture_output=True, text=True
    ).stdout
    package = json.loads(dump)
    targets = {target["name"]: target for target in package["targets"]}
    # Every module a dependency of this package can give: the products named anywhere in the manifest.
    products = set()
    for target in package["targets"]:
        for dependency in target["dependencies"]:
            if "product" in dependency:
                products.add(dependency["product"][0])
    known = set(targets) | products

    problems = []
    for name, target in sorted(targets.items()):
        if target["type"] == "system":
            continue
        declared = dependency_names(target)
        imported = imports_of(target_path(target)) & known
        imported.discard(name)
        for unused in sorted(declared - imported):
            problems.append(f"{name}: depends on {unused}, which none of its sources imports")
        for undeclared in sorted(imported - declared):
            problems.append(f"{name}: imports {undeclared} without declaring it in Package.swift")
    if problems:
        print("Package.swift dependencies do not match the imports:")
        for problem in problems:
            print("  " + problem)
        return 1
    print(f"Package.swift dependencies match the imports of {len(targets)} targets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
