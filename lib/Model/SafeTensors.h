//===- SafeTensors.h - Memory-mapped safetensors checkpoints ---------------===//
//
// The safetensors format: an 8-byte little-endian header length N, N bytes of
// JSON ({"name": {"dtype", "shape", "data_offsets": [begin, end]}, optional
// "__metadata__"}), then the raw little-endian tensor data. Files are mmapped
// read-only; tensors are views into the mapping, never copies.
// A checkpoint is a folder with model.safetensors, or with
// model.safetensors.index.json ({"weight_map": {tensor: shard file}}) and its
// shards.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_MODEL_SAFETENSORS_H
#define COHERE2C_MODEL_SAFETENSORS_H

#include "Model/Config.h"
#include "Support/Status.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cohere2c {

/// F64 is read for reference outputs (float64 logits), never for weights.
enum class DType { F32, BF16, F16, F8E4M3, F64 };

/// The safetensors spelling: "F32", "BF16", "F16", "F8_E4M3", "F64".
const char *dtypeName(DType dtype);
size_t dtypeSize(DType dtype);

/// Converts one element to float: bf16 and f16 exactly, f8 e4m3fn exactly
/// (OCP FP8 E4M3: bias 7, no infinities, S.1111.111 is NaN).
float elementToFloat(DType dtype, const void *element);

/// A tensor inside a mapped file. `data` stays valid while the Checkpoint
/// (or SafeTensorsFile) that returned it lives.
struct TensorView {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  size_t numBytes = 0;
  std::string file; // the file it lives in, for messages

  int64_t numElements() const;
  /// Element i (row-major) as float.
  float at(int64_t i) const { return elementToFloat(dtype, (const char *)data + i * dtypeSize(dtype)); }
};

/// Gives back the resident pages of a mapped file wholly inside [data, data
/// + bytes) (a range of a tensor) once it has been read: they are read from
/// the file again if it is read again. What keeps a streaming load's host
/// memory bounded.
void releaseResidentPages(const void *data, size_t bytes);

/// One mmapped .safetensors file.
class SafeTensorsFile {
public:
  /// Errors: missing/unreadable file, a header longer than the file, bad
  /// JSON (or nested too deep, or giving a key twice), an unsupported dtype,
  /// offsets outside the data or not matching shape x dtype size, tensors
  /// whose bytes overlap, bytes of the data section in no tensor. Each names
  /// the file (and the tensors).
  static StatusOr<std::shared_ptr<SafeTensorsFile>> open(const std::string &path);
  ~SafeTensorsFile();
  const std::map<std::string, TensorView> &tensors() const { return tensors_; }

private:
  SafeTensorsFile() = default;
  void *mapping_ = nullptr;
  size_t mappingSize_ = 0;
  std::map<std::string, TensorView> tensors_;
};

/// All tensors of a checkpoint folder (one file or sharded).
class Checkpoint {
public:
  /// `dir` holds model.safetensors or model.safetensors.index.json. Errors
  /// name the folder or the file: neither present, an index naming a missing
  /// shard, a tensor the index places in a shard that lacks it.
  static StatusOr<Checkpoint> open(const std::string &dir);
  /// nullptr when absent.
  const TensorView *find(const std::string &name) const;
  const std::map<std::string, TensorView> &tensors() const { return tensors_; }
  /// The files read: the index, if any, and every safetensors file.
  const std::vector<std::string> &paths() const { return paths_; }

private:
  std::vector<std::shared_ptr<SafeTensorsFile>> files_;
  std::vector<std::string> paths_;
  std::map<std::string, TensorView> tensors_;
};

/// A tensor the config implies: its Hugging Face name and shape.
struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
};

/// The tensors of a Cohere2ForCausalLM checkpoint in a fixed order (the
/// order of the weights file, where the projections of one input are
/// adjacent):
/// model.embed_tokens.weight [vocab, hidden]; per layer i:
/// model.layers.i.input_layernorm.weight [hidden],
/// self_attn.{q,k,v}_proj.weight ([heads*hd, hidden], [kv*hd, hidden] x2),
/// mlp.{gate,up}_proj.weight [inter, hidden], self_attn.o_proj.weight
/// [hidden, heads*hd],
/// mlp.down_proj.weight [hidden, inter]; then model.norm.weight [hidden].
std::vector<TensorSpec> expectedTensors(const ModelConfig &config);

/// Writes F32 tensors as one safetensors file (names in the given order) to
/// the file descriptor `fd`, which the caller opened (so that a path that
/// cannot be written is found before the tensors are computed) and closes.
/// `data` of each holds the product of its shape elements. Errors name
/// `path`, the file `fd` writes, and the OS's reason: "PATH: cannot write
/// (No space left on device)"; the file then holds part of the tensors.
struct F32Tensor {
  std::string name;
  std::vector<int64_t> shape;
  const float *data = nullptr;
};
Status writeSafeTensors(int fd, const std::string &path,
                        const std::vector<F32Tensor> &tensors);

/// The name of an FP8 linear weight's per-output-channel scales, as
/// compressed-tensors checkpoints name them and artifacts' weight layouts
/// keep them: "<weight>_scale" ("...q_proj.weight" ->
/// "...q_proj.weight_scale").
inline constexpr std::string_view kScaleSuffix = "_scale";
inline std::string scaleNameOf(const std::string &weight) {
  return weight + std::string(kScaleSuffix);
}
/// The weight whose scales `name` would name ("x_scale" -> "x"); empty when
/// `name` does not end in kScaleSuffix after at least one character.
std::string weightNameOfScale(const std::string &name);

/// Checks that every expected tensor exists with the right shape, and that
/// the checkpoint holds nothing else but the per-output-channel scales
/// ("<weight>_scale", [rows] or [rows, 1]) of F8_E4M3 linear weights, RoPE
/// inverse-frequency buffers and an lm_head.weight equal to the embedding
/// byte for byte. Errors name the folder and the tensor:
/// "<dir>: tensor model.layers.3.mlp.up_proj.weight missing", "...: tensor X
/// has shape [a, b], expected [c, d]", "...: tensor X is not one the model
/// reads ...", a scale beside a weight that is not F8_E4M3.
Status checkTensors(const ModelConfig &config, const Checkpoint &checkpoint,
                    const std::string &dir);

} // namespace cohere2c

#endif // COHERE2C_MODEL_SAFETENSORS_H
