#!/usr/bin/env python3
"""Runs clang's thread-safety analysis over the product's translation units.

Usage: check_thread_safety.py BUILD_DIR SOURCE_DIR [--under DIR] [--jobs N] [--transitive]

Every mutex member is an absl::Mutex and the data it protects is marked
ABSL_GUARDED_BY (tests/unit/conventions/check_conventions.py checks that).
This script makes the compiler check the locking itself: it takes the compile
commands of the release build (compile_commands.json), swaps the compiler for
clang++ and compiles each product file that uses an annotation with
-fsyntax-only -Wthread-safety -Werror=thread-safety: the file mentions
absl::Mutex or an ABSL_ lock annotation itself, or includes one of our headers
that does. Those are the files where the analysis can find something: guarded
members are private, so they are touched by their class's own .cc and by
inline code of the annotated header (checked with it), and a caller of an
annotated function includes its header directly (we include what we use).
A file that sees annotations only through other headers costs two seconds of
clang and cannot fail, so it is skipped; `--transitive` checks those as well
(158 files instead of 54 when this was written).

Before the tree, it compiles a planted violation and fails unless clang
rejects it, so a toolchain that silently ignores the annotations cannot pass.
"""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

PRODUCT = ("common/", "worker/", "spout/", "bolts/", "nimbus/", "supervisor/", "devcluster/",
           "study/", "cli/")
CLANG = os.environ.get("TEMPEST_CLANGXX", "clang++")
ANALYSIS = ["-fsyntax-only", "-Wthread-safety", "-Werror=thread-safety", "-Wno-unknown-warning-option"]
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
ANNOTATED = re.compile(r"absl::Mutex|ABSL_[A-Z_]*(GUARDED_BY|LOCKS_REQUIRED|LOCK_FUNCTION|CAPABILITY)")

PLANTED = """
#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
class Counter {
 public:
  void Bump() { ++count_; }  // not holding mu_: clang must reject this
 private:
  absl::Mutex mu_;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
};
int main() { Counter c; c.Bump(); }
"""


def clang_command(entry, source_dir):
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    out = [CLANG]
    skip = False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-c"):
            skip = a == "-o"
            continue
        if a == "-Werror" or a.startswith("-O") or a == entry["file"]:
            continue
        out.append(a)
    return out + ANALYSIS + [entry["file"]]


def sees_annotations(path, source_dir, memo, transitive=True):
    """True when the file or a header of ours it includes (directly, or transitively when
    `transitive`) is annotated."""
    if path in memo:
        return memo[path]
    memo[path] = False  # breaks include cycles
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return False
    found = bool(ANNOTATED.search(text))
    if not found:
        for inc in INCLUDE.findall(text):
            candidate = os.path.join(source_dir, inc)
            if not os.path.isfile(candidate):
                continue
            if transitive and sees_annotations(candidate, source_dir, memo):
                found = True
                break
            if not transitive and annotated(candidate):
                found = True
                break
    memo[path] = found
    return found


def annotated(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return bool(ANNOTATED.search(f.read()))
    except OSError:
        return False


def planted_violation_is_caught(any_entry, source_dir):
    with tempfile.TemporaryDirectory() as scratch:
        planted = os.path.join(scratch, "planted.cc")
        with open(planted, "w") as f:
            f.write(PLANTED)
        cmd = clang_command(dict(any_entry, file=planted), source_dir)
        run = subprocess.run(cmd, cwd=any_entry["directory"], capture_output=True, text=True)
        return run.returncode != 0 and "thread-safety" in run.stderr


def main(argv):
    args = argv[1:]
    under = None
    jobs = os.cpu_count() or 2
    if "--under" in args:
        i = args.index("--under")
        under = args[i + 1]
        del args[i:i + 2]
    transitive = "--transitive" in args
    if transitive:
        args.remove("--transitive")
    if "--jobs" in args:
        i = args.index("--jobs")
        jobs = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__)
        return 2
    build_dir, source_dir = (os.path.abspath(a) for a in args)
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        entries = json.load(f)
    memo = {}
    chosen = []
    for e in entries:
        rel = os.path.relpath(e["file"], source_dir)
        if not rel.startswith(PRODUCT) or (under and not rel.startswith(under)):
            continue
        if sees_annotations(e["file"], source_dir, memo, transitive):
            chosen.append(e)
    if not entries or not planted_violation_is_caught(entries[0], source_dir):
        print(f"{CLANG} did not reject an unguarded access to a guarded member: "
              "the analysis is not working, so the tree cannot be checked")
        return 1

    def check(entry):
        run = subprocess.run(clang_command(entry, source_dir), cwd=entry["directory"],
                             capture_output=True, text=True)
        return entry["file"], run.returncode, run.stderr

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for path, code, err in pool.map(check, chosen):
            if code != 0:
                failed += 1
                print(f"--- {os.path.relpath(path, source_dir)}\n{err}")
    print(f"thread-safety analysis: {len(chosen)} file(s) checked, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
