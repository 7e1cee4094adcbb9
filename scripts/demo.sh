#!/usr/bin/env bash
# The main job on the small trained model that ships in test/data: compile
# the checkpoint (its tokenizer and chat template travel in the artifact) to
# a host shared library, ask it a question through the chat template, print
# the answer as it is generated, and say whether it equals the float64
# reference model's greedy answer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/build/bin"
model="$root/test/data/models/trained-cohere2"
out="$root/build/demo"
question="What is cruft?"
mkdir -p "$out"

"$bin/cohere2c-compile" "$model" -o "$out/trained-cohere2.so" --target host --precision f32
echo "question:  $question"
echo -n "answer:    "
# 32 tokens: as many as the reference generated.
# The answer streams to stdout as it is generated and into answer.txt.
"$bin/cohere2c-run" "$out/trained-cohere2.so" --chat "$question" --max-new-tokens 32 \
  2> "$out/run.log" | tee "$out/answer.txt"
answer=$(cat "$out/answer.txt")
expected=$(python3 "$root/scripts/reference_answer.py" "$model" chat_cruft)
echo "reference: $expected"
if [ "$answer" = "$expected" ]; then
  echo "MATCH: the answer equals the float64 reference model's greedy answer"
else
  echo "MISMATCH: the answer differs from the reference" >&2
  exit 1
fi
