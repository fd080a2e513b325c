#!/usr/bin/env python3
"""Checks the code conventions of docs/architecture.md that a compiler does not.

Usage: check_conventions.py [REPO_ROOT] [--only RULE] [--under DIR]

Rules (each names the offending place, one line per finding):
  function-size   no product function longer than 60 lines (measured with ctags)
  file-size       no product .cc longer than 800 lines
  raw-close       no ::close( outside common/os (os::UniqueFd owns descriptors)
  mutex           every mutex member is an absl::Mutex named by an ABSL_GUARDED_BY
  flat-folders    spout/ holds at most 20 files flat, common/core/ at most 30
  status-passup   a Status passed up unchanged uses the status macros, not
                  `if (!s.ok()) return s;`
  void-discard    a result cast to (void) says why in a comment on that line or the one above
"""
import json
import os
import re
import signal
import subprocess
import sys

PRODUCT = ["common", "worker", "spout", "bolts", "nimbus", "supervisor", "devcluster", "study",
           "cli"]
MAX_FUNCTION_LINES = 60
MAX_CC_LINES = 800
FLAT_LIMITS = {"spout": 20, "common/core": 30}


def product_files(root, under, exts=(".h", ".cc")):
    for top in PRODUCT:
        for base, dirs, files in os.walk(os.path.join(root, top)):
            rel_base = os.path.relpath(base, root)
            # Test doubles that ship beside the code they stand in for are not product code.
            if "/testing" in "/" + rel_base + "/":
                dirs[:] = []
                continue
            for name in sorted(files):
                rel = os.path.join(rel_base, name)
                if name.endswith(exts) and (not under or rel.startswith(under)):
                    yield rel


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        return f.read()


def check_function_size(root, under):
    files = list(product_files(root, under))
    if not files:
        return []
    out = subprocess.run(
        ["ctags", "--languages=C++", "--kinds-C++=f", "--fields=+ne", "--output-format=json",
         "-f", "-"] + files, cwd=root, capture_output=True, text=True, check=True).stdout
    findings = []
    for line in out.splitlines():
        tag = json.loads(line)
        if "end" not in tag:
            continue
        length = tag["end"] - tag["line"] + 1
        if length > MAX_FUNCTION_LINES:
            name = (tag.get("scope", "") + "::" + tag["name"]).lstrip(":")
            findings.append(f"{tag['path']}:{tag['line']}: {name} is {length} lines "
                            f"(at most {MAX_FUNCTION_LINES})")
    return sorted(findings)


def check_file_size(root, under):
    findings = []
    for rel in product_files(root, under, (".cc",)):
        n = read(root, rel).count("\n")
        if n > MAX_CC_LINES:
            findings.append(f"{rel}: {n} lines (at most {MAX_CC_LINES})")
    return findings


def check_raw_close(root, under):
    findings = []
    for rel in product_files(root, under):
        if rel.startswith("common/os/"):
            continue
        for i, line in enumerate(read(root, rel).splitlines(), 1):
            code = line.split("//", 1)[0]
            if re.search(r"(^|[^\w.>])::close\(", code):
                findings.append(f"{rel}:{i}: raw ::close (hold the descriptor in os::UniqueFd)")
    return findings


MUTEX_MEMBER = re.compile(
    r"^\s*(?:mutable\s+)?((?:std|absl|core)::\w*[Mm]utex)\s+(\w+)\s*;", re.M)


def check_mutex(root, under):
    findings = []
    for rel in product_files(root, under, (".h", ".cc")):
        text = read(root, rel)
        for m in MUTEX_MEMBER.finditer(text):
            kind, name = m.group(1), m.group(2)
            line = text.count("\n", 0, m.start()) + 1
            if kind != "absl::Mutex":
                findings.append(f"{rel}:{line}: {name} is a {kind}; use absl::Mutex so that "
                                "clang's -Wthread-safety can check it")
            elif not re.search(r"ABSL_(PT_)?GUARDED_BY\(\s*" + re.escape(name) + r"\s*\)", text):
                findings.append(f"{rel}:{line}: no member is ABSL_GUARDED_BY({name})")
    return findings


def check_flat_folders(root, under):
    findings = []
    for folder, limit in FLAT_LIMITS.items():
        path = os.path.join(root, folder)
        if not os.path.isdir(path) or (under and not folder.startswith(under.rstrip("/"))):
            continue
        files = [n for n in os.listdir(path) if os.path.isfile(os.path.join(path, n))
                 and n.endswith((".h", ".cc"))]
        if len(files) > limit:
            findings.append(f"{folder}/: {len(files)} source files flat (at most {limit})")
    return findings


PASSUP = re.compile(r"if \(!(\w+)\.ok\(\)\)\s*(?:\{\s*)?return\s+(\1|\1\.status\(\)|std::move\(\1\)\.status\(\));")


def check_status_passup(root, under):
    findings = []
    for rel in product_files(root, under, (".cc", ".h")):
        code = "\n".join(line.split("//", 1)[0] for line in read(root, rel).splitlines())
        flat = re.sub(r"\s+", " ", code)  # the pattern may span lines
        for m in PASSUP.finditer(flat):
            # Only a bare pass-up: `if (!s.ok()) return s;` (and `{ return s; }`).
            tail = flat[m.end():m.end() + 3]
            if "{" in m.group(0) and not tail.lstrip().startswith("}"):
                continue
            findings.append(f"{rel}: `{m.group(0)}` (use RETURN_IF_ERROR / ASSIGN_OR_RETURN)")
    return findings


def check_void_discard(root, under):
    findings = []
    for rel in product_files(root, under):
        lines = read(root, rel).splitlines()
        for i, line in enumerate(lines):
            code = line.split("//", 1)[0]
            # A call's result cast away; `(void)unused_parameter;` and `f(void)` are not discards.
            if not re.search(r"\(void\)\s*[\w:.>*-]+\s*\(", code) or re.search(r"\w\s*\(void\)", code):
                continue
            above = lines[i - 1].strip() if i else ""
            if "//" in line or above.startswith("//"):
                continue
            findings.append(f"{rel}:{i + 1}: a result cast to (void) without a comment saying why")
    return findings


RULES = {
    "function-size": check_function_size,
    "file-size": check_file_size,
    "raw-close": check_raw_close,
    "mutex": check_mutex,
    "flat-folders": check_flat_folders,
    "status-passup": check_status_passup,
    "void-discard": check_void_discard,
}


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the listing quietly
    args = argv[1:]
    only = under = None
    if "--only" in args:
        i = args.index("--only")
        only = args[i + 1]
        del args[i:i + 2]
    if "--under" in args:
        i = args.index("--under")
        under = args[i + 1]
        del args[i:i + 2]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../..")
    root = os.path.abspath(root)
    total = 0
    for name, rule in RULES.items():
        if only and name != only:
            continue
        findings = rule(root, under)
        for f in findings:
            print(f"{name}: {f}")
        total += len(findings)
    if total:
        print(f"{total} convention finding(s); see docs/architecture.md, \"Conventions\"")
        return 1
    print("conventions OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
