#!/usr/bin/env bash
# Runs each libFuzzer target of BUILD (configured with -DCOHERE2C_FUZZ=ON,
# `ninja cohere2c-fuzzers` built) for SECONDS from its committed corpus,
# on a copy of it (what a run adds is not committed). A crash, a sanitizer
# finding, a timeout or a leak fails the run and leaves the input in
# WORK/<target>/; it goes into test/fuzz/corpus/<target>/ with its fix.
#
#   test/fuzz/run.sh BUILD [SECONDS (20)] [WORK (a temporary folder)]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: run.sh BUILD [SECONDS] [WORK]}
seconds=${2:-20}
work=${3:-$(mktemp -d)}
failed=()
for fuzzer in "$build"/bin/fuzz-*; do
  name=${fuzzer##*/fuzz-}
  mkdir -p "$work/$name/corpus"
  # -timeout: seconds one input may take (the chat-template interpreter's
  # step limit stays well below); -rss_limit_mb: the memory a target may
  # hold.
  if "$fuzzer" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$work/$name/" \
       "$work/$name/corpus" "$here/corpus/$name" > "$work/$name/log" 2>&1; then
    echo "fuzz $name: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$work/$name/log" | grep -o '[0-9]*$') inputs in ${seconds} s, no finding"
  else
    echo "fuzz $name: FINDING (log and input in $work/$name/)"
    tail -n 40 "$work/$name/log"
    failed+=("$name")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]}" >&2
  exit 1
fi
