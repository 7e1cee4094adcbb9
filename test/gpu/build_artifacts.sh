#!/usr/bin/env bash
# On the build machine: compile what test/gpu/run_all.sh runs on the GPU
# machine into build/gpu-artifacts (the runtime binary travels in build/bin).
# From config.json alone: no OUT.weights, so the artifacts travel small;
# run_all.sh binds the shipped checkpoints' weights as they load.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/build/gpu-artifacts"
mkdir -p "$out"
for model in "$root"/test/data/models/*/; do
  name=$(basename "$model")
  for precision in f32 bf16 fp8-rowwise; do
    "$root/build/bin/cohere2c-compile" "$model/config.json" --target cuda --precision "$precision" \
      -o "$out/$name-$precision.so"
  done
done
# OUT.weights from the host's random-weights generator, which run_all.sh compares with the
# device's weight-fill kernels.
for precision in f32 bf16 fp8-rowwise; do
  "$root/build/bin/cohere2c-compile" "$root/test/data/models/tiny-cohere2/config.json" --target cuda \
    --precision "$precision" --random-weights 5 -o "$out/random5-tiny-cohere2-$precision.so"
done
# The host target's f32, the reference of run_all.sh's long-prompt check.
"$root/build/bin/cohere2c-compile" "$root/test/data/models/tiny-cohere2/config.json" --target host \
  --precision f32 -o "$out/tiny-cohere2-host-f32.so"
for precision in bf16 fp8-rowwise; do
  "$root/build/bin/cohere2c-compile" "$root/test/data/configs/command-r7b.config.json" \
    --target cuda --precision "$precision" -o "$out/command-r7b-$precision.so"
done
"$root/build/bin/cohere2c-compile" "$root/test/data/configs/command-a.config.json" \
  --target cuda --precision fp8-rowwise -o "$out/command-a-fp8-rowwise.so"
echo "artifacts in $out"
