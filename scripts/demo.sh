#!/usr/bin/env bash
# The main job on the small model that ships in test/data: compile the
# checkpoint to a host shared library, generate 24 tokens greedily for the
# reference prompt, and compare them with the reference's greedy tokens.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/build/bin"
model="$root/test/data/models/tiny-cohere2"
out="$root/build/demo"
mkdir -p "$out"

"$bin/cohere2c-compile" "$model" -o "$out/tiny-cohere2.so" --target host --precision f32
read -r prompt expected < <(python3 - "$model/reference.json" <<'PY'
import json, sys
ref = json.load(open(sys.argv[1]))
print(",".join(map(str, ref["prompts"]["len40"])), " ".join(map(str, ref["greedy"]["len40"])))
PY
)
echo "prompt ids: $prompt"
generated=$("$bin/cohere2c-run" "$out/tiny-cohere2.so" --prompt-ids "$prompt" \
            --max-new-tokens 24 --ignore-eos)
echo "generated:  $generated"
echo "reference:  $expected"
if [ "$generated" = "$expected" ]; then
  echo "MATCH: the generated tokens equal the float64 reference's greedy tokens"
else
  echo "MISMATCH: the generated tokens differ from the reference" >&2
  exit 1
fi
