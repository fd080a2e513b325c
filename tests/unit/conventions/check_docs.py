#!/usr/bin/env python3
"""Checks that the folder READMEs and docs/architecture.md's map match the code.

Usage: check_docs.py [REPO_ROOT]

- Every product folder with source files has a README.md, and it names each of the folder's
  headers (a README says what lives there; a header it does not name is a file nobody was told of).
- The "## Map" table of docs/architecture.md has a row naming every product folder, and every
  folder a row names exists.
"""
import os
import re
import sys

PRODUCT = ["common", "worker", "spout", "bolts", "nimbus", "supervisor", "devcluster", "study",
           "cli", "proto", "ui"]


def source_folders(root):
    for top in PRODUCT:
        for base, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            if any(f.endswith((".h", ".cc", ".html")) for f in files):
                yield os.path.relpath(base, root), sorted(files)


def check_readmes(root):
    findings = []
    for folder, files in source_folders(root):
        readme = os.path.join(root, folder, "README.md")
        if not os.path.isfile(readme):
            findings.append(f"{folder}/: no README.md saying what lives there")
            continue
        with open(readme, encoding="utf-8") as f:
            text = f.read()
        for name in files:
            stem = name[:-2]
            # `x.h`, or the pair written `x.*` / `x.{h,cc}`.
            if name.endswith(".h") and not any(form in text for form in
                                               (name, stem + ".*", stem + ".{h")):
                findings.append(f"{folder}/README.md does not name {name}")
    return findings


def map_folders(root):
    with open(os.path.join(root, "docs/architecture.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## Map\n(.*?)(?=^## )", text, re.S | re.M)
    if not m:
        return None
    named = set()
    for line in m.group(1).splitlines():
        if line.startswith("| `"):
            named.update(re.findall(r"`([a-z_/]+)/`", line.split("|")[1]))
    return named


def check_map(root):
    named = map_folders(root)
    if named is None:
        return ["docs/architecture.md has no \"## Map\" section"]
    findings = []
    for folder, _ in source_folders(root):
        if folder not in named and not folder.endswith("/testing"):
            findings.append(f"docs/architecture.md's map has no row for {folder}/")
    for folder in sorted(named):
        if not os.path.isdir(os.path.join(root, folder)):
            findings.append(f"docs/architecture.md's map names {folder}/, which does not exist")
    return findings


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../.."))
    findings = check_readmes(root) + check_map(root)
    for f in findings:
        print(f)
    if findings:
        print(f"{len(findings)} documentation finding(s)")
        return 1
    print("docs match the code")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
