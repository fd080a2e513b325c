#!/usr/bin/env bash
# Builds the libFuzzer targets (the `fuzz` preset, incrementally), replays
# each target's corpus in tests/fuzz/corpus/<target>/ once, then fuzzes each
# target for SECONDS (default 5; 0 = replay only). Exits non-zero on the first
# crash, leak, timeout or out-of-memory, printing the report and the path of
# the input that caused it. New corpus entries go to a temporary folder,
# never into the source tree. The mutations start from a fixed seed
# (TEMPEST_FUZZ_SEED, default 1) so that a run explores the same inputs each
# time and CI fails only on a change; pass another seed, or 0 for a random
# one, to explore further.
#
#   tests/fuzz/run.sh [SECONDS] [TARGET...]     # e.g. tests/fuzz/run.sh 600 flux_loader
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-5}
seed=${TEMPEST_FUZZ_SEED:-1}
shift || true
build_log=$(mktemp -t tempest-fuzz-build-XXXXXX.log)
if ! { [ -f build/fuzz/CMakeCache.txt ] || cmake --preset fuzz; } >"$build_log" 2>&1 ||
   ! cmake --build build/fuzz -j"$(nproc)" --target tempest_fuzz_targets >>"$build_log" 2>&1; then
  grep -E 'error|Error' "$build_log" | head -n 40 >&2 || tail -n 40 "$build_log" >&2
  echo "fuzz: building the fuzz preset failed (log: $build_log)" >&2
  exit 1
fi
rm -f "$build_log"

mapfile -t binaries < <(find build/fuzz/tests/fuzz -type f -name 'fuzz_*' -perm -u+x | sort)
if [ "$#" -gt 0 ]; then
  wanted=" $* "
  selected=()
  for bin in "${binaries[@]}"; do
    [[ "$wanted" == *" ${bin##*/fuzz_} "* ]] && selected+=("$bin")
  done
  binaries=("${selected[@]}")
fi
[ "${#binaries[@]}" -gt 0 ] || { echo "fuzz: no fuzz targets built" >&2; exit 1; }

work=$(mktemp -d -t tempest-fuzz-XXXXXX)
keep_work=0
cleanup() { [ "$keep_work" = 1 ] || rm -rf "$work"; }
trap cleanup EXIT

fail() {  # fail NAME LOG
  keep_work=1
  echo "fuzz: $1 FAILED; its report (inputs kept under $work/$1/):" >&2
  # The sanitizer's report from its first line, frames cut to 300 characters
  # (a stack overflow prints hundreds of identical ones), then the input's path.
  sed -n '/ERROR: \|ERROR: libFuzzer\|==ERROR\|runtime error/,$p' "$2" | cut -c1-300 | head -n 40 >&2
  grep -E '^(SUMMARY|artifact_prefix|Test unit written)' "$2" | cut -c1-300 >&2 || tail -n 20 "$2" >&2
  exit 1
}

for bin in "${binaries[@]}"; do
  name=${bin##*/fuzz_}
  corpus=tests/fuzz/corpus/$name
  mkdir -p "$work/$name/new"
  log=$work/$name/log
  # Every stored input once, at full size: a fixed crash stays fixed.
  # Files a target makes (the HTTP target's static folder) go under its work
  # folder, removed with it.
  export TMPDIR=$work/$name
  "$bin" -runs=0 -rss_limit_mb=2048 -timeout=20 -artifact_prefix="$work/$name/" "$corpus" \
    >"$log" 2>&1 || fail "$name" "$log"
  if [ "$seconds" -gt 0 ]; then
    "$bin" -max_total_time="$seconds" -seed="$seed" -max_len=8192 -rss_limit_mb=2048 -timeout=20 \
      -print_final_stats=1 -print_funcs=0 -artifact_prefix="$work/$name/" "$work/$name/new" "$corpus" \
      >>"$log" 2>&1 || fail "$name" "$log"
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  echo "fuzz: $name ok ($(find "$corpus" -type f | wc -l) stored inputs replayed, ${runs:-0} runs)"
done
