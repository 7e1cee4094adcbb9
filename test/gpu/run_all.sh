#!/usr/bin/env bash
# On a machine with an NVIDIA Hopper GPU: every shipped model and prompt,
# f32 and bf16, whole prompt and prefill chunks of 1 and 7, against the
# float64 references; then Command R7B's shapes with random weights at real
# scale (a 2048-token prompt, 128 decoded tokens). Needs build/bin/cohere2c-run
# and build/gpu-artifacts from test/gpu/build_artifacts.sh, and python3 with
# numpy and safetensors. Exits non-zero if any check fails.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
run="${COHERE2C_RUN:-$root/build/bin/cohere2c-run}"
art="$root/build/gpu-artifacts"
work=$(mktemp -d)
failures=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

for model in "$root"/test/data/models/*/; do
  name=$(basename "$model")
  for precision in f32 bf16; do
    for chunk in 0 1 7; do
      for prompt in $(python3 -c "import json,sys; print(' '.join(json.load(open(sys.argv[1]))['prompts']))" "$model/reference.json"); do
        # generate: the prompt, 24 greedy tokens; teacher: prompt + greedy[:-1] as the prompt.
        for mode in generate teacher; do
          read -r ids new < <(python3 - "$model/reference.json" "$prompt" "$mode" <<'PY'
import json, sys
ref = json.load(open(sys.argv[1])); prompt = ref["prompts"][sys.argv[2]]
ids = prompt if sys.argv[3] == "generate" else prompt + ref["greedy"][sys.argv[2]][:-1]
print(",".join(map(str, ids)), 24 if sys.argv[3] == "generate" else 1)
PY
)
          "$run" "$art/$name-$precision.so" --prompt-ids "$ids" --max-new-tokens "$new" --ignore-eos \
            --prefill-chunk "$chunk" --logits-out "$work/logits.safetensors" > "$work/tokens" 2> "$work/err" \
            || { echo "FAIL $name $prompt $precision chunk $chunk: cohere2c-run failed"; cat "$work/err"; failures=$((failures+1)); continue; }
          python3 "$root/test/gpu/compare_logits.py" "$model" "$prompt" "$work/logits.safetensors" \
            "$work/tokens" "$precision" "$mode" | sed "s/\$/ (prefill chunk $chunk)/" || failures=$((failures+1))
        done
      done
    done
  done
done

echo "--- prefix reuse across sliding and full layers (tiny-cohere2, window 8, block size 4)"
for precision in f32 bf16; do
  artifact="$art/tiny-cohere2-$precision.so"
  python3 "$root/test/gpu/prefix_requests.py" "$root/test/data/models/tiny-cohere2" "$work"
  common=(--ignore-eos --block-size 4)
  "$run" "$artifact" --requests "$work/seed.jsonl" "${common[@]}" > "$work/seed.served" 2> "$work/err" &&
  "$run" "$artifact" --requests "$work/seed.jsonl" "${common[@]}" --no-prefix-cache > "$work/seed.alone" 2>> "$work/err" &&
  python3 "$root/test/gpu/compare_requests.py" "$work/seed.served" "$work/seed.alone" "seed case $precision" Y=28 \
    || { cat "$work/err"; failures=$((failures+1)); }
  "$run" "$artifact" --requests "$work/sixteen.jsonl" "${common[@]}" --max-batch 4 --kv-blocks 16 \
    --prefill-chunk 7 > "$work/sixteen.served" 2> "$work/err" &&
  "$run" "$artifact" --requests "$work/sixteen.jsonl" "${common[@]}" --no-prefix-cache > "$work/sixteen.alone" 2>> "$work/err" &&
  python3 "$root/test/gpu/compare_requests.py" "$work/sixteen.served" "$work/sixteen.alone" \
    "16 requests, 4 in flight, 16 blocks $precision" && grep preemptions "$work/err" | head -1 \
    || { cat "$work/err"; failures=$((failures+1)); }
done

echo "--- Command R7B shapes, random bf16 weights: 2048-token prompt, 128 decoded tokens"
prompt=$(python3 -c "import random; random.seed(0); print(','.join(str(random.randrange(6, 256000)) for _ in range(2048)))")
if "$run" "$art/command-r7b-bf16.so" --random-weights 1 --prompt-ids "$prompt" \
    --max-new-tokens 128 --ignore-eos > "$work/r7b.tokens" 2> "$work/r7b.err"; then
  cat "$work/r7b.err"; echo "generated $(wc -w < "$work/r7b.tokens") tokens"
else
  cat "$work/r7b.err"; echo "FAIL: Command R7B run"; failures=$((failures+1))
fi
echo "failures: $failures"
exit $((failures > 0))
