#!/usr/bin/env python3
"""Writes a Cohere2 checkpoint as an FP8 checkpoint in compressed-tensors' "FP8 dynamic" layout.

    export-fp8-checkpoint.py SRC_DIR OUT_DIR

Every linear weight of the decoder layers (model.layers.N.self_attn.{q,k,v,o}_proj.weight and
model.layers.N.mlp.{gate,up,down}_proj.weight, BF16, F16 or F32) becomes F8_E4M3 [out, in] with
its per-output-channel scale "<name>_scale" (i.e. "...weight_scale") F32 [out, 1]; every other
tensor (embedding, norms, an untied lm_head) is copied byte for byte. config.json gets a
compressed-tensors quantization_config (weights per channel, static; activations per token,
dynamic), and the tokenizer and generation files are copied.

The quantization is exactly the one cohere2c-compile --precision fp8-rowwise applies to an
unquantized checkpoint (quantizeRowE4M3 and floatToE4M3, lib/Artifact/WeightPacking.cpp), so
that compiling the export gives the same weights bit for bit as compiling SRC_DIR: per row,
scale = max(amax, 1e-12) / 448 in double, q = e4m3fn(float32(value / scale)) with the quotient in
double, round to nearest even, saturating to 448; the stored scale is float32(scale).

SRC_DIR holds model.safetensors, or model.safetensors.index.json and its shards; OUT_DIR gets
the same files (one file, or the same shards with an updated index). Errors exit 1 naming the
file and tensor: no config.json, a malformed safetensors header, a linear weight that is already
quantized (F8_E4M3) or of another dtype, a NaN or infinity in a linear weight.
"""
import json
import os
import re
import shutil
import struct
import sys

import numpy as np

LINEAR = re.compile(r"model\.layers\.\d+\.(self_attn\.[qkvo]|mlp\.(gate|up|down))_proj\.weight")
TEXT_FILES = ["tokenizer.json", "tokenizer_config.json", "chat_template.jinja",
              "generation_config.json", "special_tokens_map.json"]
QUANTIZATION_CONFIG = {
    "quant_method": "compressed-tensors",
    "format": "float-quantized",
    "quantization_status": "compressed",
    "config_groups": {"group_0": {
        "targets": ["Linear"],
        "weights": {"num_bits": 8, "type": "float", "strategy": "channel",
                    "symmetric": True, "dynamic": False},
        "input_activations": {"num_bits": 8, "type": "float", "strategy": "token",
                              "symmetric": True, "dynamic": True},
        "output_activations": None}},
    "ignore": ["lm_head"],
}
DTYPE_SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "U16": 2, "I16": 2,
               "F16": 2, "BF16": 2, "U32": 4, "I32": 4, "F32": 4, "U64": 8, "I64": 8, "F64": 8}
E4M3_MAX = 448.0
BLOCK_ELEMENTS = 1 << 22  # rows are quantized in blocks of about this many values (memory)


class ExportError(Exception):
    pass


# --- FP8 rounding, as lib/Artifact/WeightPacking.cpp ---------------------------------------

def float_to_e4m3(x):
    """float32 array (no NaN) -> float8 e4m3fn bytes as floatToE4M3: round to nearest even,
    saturating to +-448 (0x7E); below 2^-6 subnormals m * 2^-9."""
    a = np.abs(x)
    fraction, exponent = np.frexp(a)  # a = fraction * 2^exponent, fraction in [0.5, 1)
    mantissa = np.rint((fraction * 2 - 1) * 8).astype(np.int32)
    carry = mantissa == 8
    normal = ((exponent - 1 + carry + 7) << 3) | np.where(carry, 0, mantissa)
    normal = np.where(normal == 0x7F, 0x7E, normal)  # 0x7F is NaN
    subnormal = np.rint(a * 512).astype(np.int32)
    code = np.where(a >= E4M3_MAX, 0x7E, np.where(a < 2.0 ** -6, subnormal, normal))
    return (code | np.where(np.signbit(x), 0x80, 0)).astype(np.uint8)


def quantize_rows(values):
    """float32 [rows, cols] -> (e4m3 bytes [rows, cols], float32 scales [rows, 1]) as
    quantizeRowE4M3 does each row."""
    amax = np.abs(values).max(axis=1, keepdims=True, initial=0).astype(np.float64)
    scale = np.maximum(amax, 1e-12) / E4M3_MAX
    return float_to_e4m3((values / scale).astype(np.float32)), scale.astype(np.float32)


def as_float32(dtype, raw):
    """Little-endian BF16, F16 or F32 bytes (a uint8 array) -> float32 values, exactly."""
    if dtype == "BF16":
        return (raw.view("<u2").astype(np.uint32) << 16).view(np.float32)
    return raw.view("<f2" if dtype == "F16" else "<f4").astype(np.float32)


# --- safetensors ---------------------------------------------------------------------------

def nbytes(dtype, shape):
    return DTYPE_SIZES[dtype] * int(np.prod(shape, dtype=np.int64))


def read_header(path):
    """(header dict, data offset) of a safetensors file; ExportError when it is malformed."""
    def fail(message):
        raise ExportError(f"{path}: {message}")
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        prefix = f.read(8)
        if len(prefix) < 8:
            fail(f"file is {size} bytes, shorter than the 8-byte header length")
        length = struct.unpack("<Q", prefix)[0]
        if length > size - 8:
            fail(f"header length {length} exceeds the {size - 8} bytes after the length field")
        try:
            header = json.loads(f.read(length))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            fail(f"header is not valid JSON ({error})")
    if not isinstance(header, dict):
        fail("header is not a JSON object")
    for name, entry in header.items():
        if name != "__metadata__":
            check_entry(path, name, entry, size - 8 - length)
    return header, 8 + length


def check_entry(path, name, entry, data_size):
    """ExportError unless `entry` is a tensor whose data_offsets fit its shape and the data."""
    def fail(message):
        raise ExportError(f"{path}: tensor {name} {message}")
    if not isinstance(entry, dict) or not {"dtype", "shape", "data_offsets"} <= entry.keys():
        fail(f"needs dtype, shape and data_offsets, found {json.dumps(entry)}")
    dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if dtype not in DTYPE_SIZES:
        fail(f"has unknown dtype {dtype}")
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
        fail(f"has a bad shape {json.dumps(shape)}")
    if (not isinstance(offsets, list) or len(offsets) != 2 or
            not all(isinstance(o, int) for o in offsets) or
            not 0 <= offsets[0] <= offsets[1] <= data_size):
        fail(f"has data_offsets {json.dumps(offsets)} outside the {data_size} bytes of data")
    if offsets[1] - offsets[0] != nbytes(dtype, shape):
        fail(f"has {offsets[1] - offsets[0]} bytes, expected {shape} x {DTYPE_SIZES[dtype]}")


def tensors_in_order(header):
    """(name, entry) of the tensors of a header, in the order of their data."""
    tensors = [(n, e) for n, e in header.items() if n != "__metadata__"]
    return sorted(tensors, key=lambda item: item[1]["data_offsets"][0])


def output_entries(path, header):
    """(name, dtype, shape) of each tensor the export writes for one input file, scales
    right after their weights; ExportError for a linear weight that cannot be quantized."""
    entries = []
    for name, entry in tensors_in_order(header):
        dtype, shape = entry["dtype"], entry["shape"]
        if not LINEAR.fullmatch(name):
            entries.append((name, dtype, shape))
            continue
        if dtype == "F8_E4M3":
            raise ExportError(f"{path}: tensor {name} is already F8_E4M3 (an FP8 checkpoint)")
        if dtype not in ("BF16", "F16", "F32") or len(shape) != 2:
            raise ExportError(f"{path}: tensor {name} is {dtype} {shape}; "
                              f"a linear weight to quantize must be a 2-D BF16, F16 or F32 matrix")
        entries += [(name, "F8_E4M3", shape), (name + "_scale", "F32", [shape[0], 1])]
    return entries


def write_header(f, metadata, entries):
    """Writes the length and JSON header of `entries`, their data contiguous in this order."""
    header = {"__metadata__": metadata} if metadata is not None else {}
    offset = 0
    for name, dtype, shape in entries:
        size = nbytes(dtype, shape)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    f.write(struct.pack("<Q", len(text)) + text)


def write_quantized(f, path, name, dtype, shape, raw):
    """Writes the e4m3 bytes of a linear weight, then its scales."""
    rows, cols = shape
    values = as_float32(dtype, raw).reshape(rows, cols)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise ExportError(f"{path}: tensor {name} holds a non-finite value (NaN or infinity) "
                          f"at element {bad[0]}")
    block = max(1, BLOCK_ELEMENTS // max(cols, 1))
    scales = np.empty((rows, 1), dtype="<f4")
    for begin in range(0, rows, block):
        codes, scales[begin:begin + block] = quantize_rows(values[begin:begin + block])
        f.write(codes.tobytes())
    f.write(scales.tobytes())


def plan_file(src):
    """(src, header, data offset, output entries) of one safetensors file, all checked."""
    header, data_start = read_header(src)
    return src, header, data_start, output_entries(src, header)


def export_file(plan, out):
    """Writes the export of one planned file to `out`; returns {tensor name: data bytes}."""
    src, header, data_start, entries = plan
    data = np.memmap(src, dtype=np.uint8, mode="r")
    partial = out + ".partial"
    try:
        with open(partial, "wb") as f:
            write_header(f, header.get("__metadata__"), entries)
            for name, entry in tensors_in_order(header):
                begin, end = (data_start + o for o in entry["data_offsets"])
                if LINEAR.fullmatch(name):
                    write_quantized(f, src, name, entry["dtype"], entry["shape"], data[begin:end])
                else:
                    f.write(data[begin:end])
        os.replace(partial, out)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return {name: nbytes(dtype, shape) for name, dtype, shape in entries}


# --- the checkpoint folder -----------------------------------------------------------------

def read_index(path):
    """The sharded checkpoint's index, its weight_map checked to name files of the folder."""
    index = read_json(path)
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict) or not all(
            isinstance(s, str) and s and s not in (".", "..") and "/" not in s
            for s in weight_map.values()):
        raise ExportError(f"{path}: expected a JSON object with a weight_map naming shard files")
    return index


def export_weights(src_dir, out_dir):
    """Exports model.safetensors, or model.safetensors.index.json and its shards (every
    header checked before anything is written)."""
    index_path = os.path.join(src_dir, "model.safetensors.index.json")
    if not os.path.exists(index_path):
        single = os.path.join(src_dir, "model.safetensors")
        if not os.path.exists(single):
            raise ExportError(f"{src_dir}: neither model.safetensors nor "
                              f"model.safetensors.index.json found")
        export_file(plan_file(single), os.path.join(out_dir, "model.safetensors"))
        return
    index = read_index(index_path)
    shards = list(dict.fromkeys(index["weight_map"].values()))
    plans = [plan_file(os.path.join(src_dir, shard)) for shard in shards]
    weight_map, total = {}, 0
    for shard, plan in zip(shards, plans):
        written = export_file(plan, os.path.join(out_dir, shard))
        weight_map.update(dict.fromkeys(written, shard))
        total += sum(written.values())
    index["metadata"] = {**index.get("metadata", {}), "total_size": total}
    index["weight_map"] = weight_map
    write_json(os.path.join(out_dir, "model.safetensors.index.json"), index)


def read_json(path):
    """The JSON in `path`; ExportError when it is missing or not JSON."""
    if not os.path.exists(path):
        raise ExportError(f"{path} missing")
    try:
        with open(path) as f:
            return json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ExportError(f"{path}: not valid JSON ({error})")


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=2)
        f.write("\n")


def export_config(config, src_dir, out_dir):
    """config.json with the quantization_config, and the text files beside it."""
    write_json(os.path.join(out_dir, "config.json"),
               {**config, "quantization_config": QUANTIZATION_CONFIG})
    for name in TEXT_FILES:
        if os.path.exists(os.path.join(src_dir, name)):
            shutil.copyfile(os.path.join(src_dir, name), os.path.join(out_dir, name))


def main(argv):
    if len(argv) != 3:
        print("usage: export-fp8-checkpoint.py SRC_DIR OUT_DIR", file=sys.stderr)
        return 2
    src_dir, out_dir = argv[1:]
    try:
        config = read_json(os.path.join(src_dir, "config.json"))
        if not isinstance(config, dict):
            raise ExportError(f"{src_dir}/config.json: expected a JSON object")
        os.makedirs(out_dir, exist_ok=True)
        if os.path.samefile(src_dir, out_dir):
            raise ExportError(f"{out_dir}: the output folder must differ from the input")
        export_weights(src_dir, out_dir)
        export_config(config, src_dir, out_dir)
    except (ExportError, OSError) as error:
        print(f"export-fp8-checkpoint: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
