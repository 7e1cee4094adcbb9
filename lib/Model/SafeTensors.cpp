//===- SafeTensors.cpp - Memory-mapped safetensors checkpoints ------------===//
//
// Reads the format directly (https://github.com/huggingface/safetensors):
// an 8-byte little-endian header length, the JSON header, the data section.
// Element reads assume a little-endian host, as the format does.
//
//===----------------------------------------------------------------------===//
#include "Model/SafeTensors.h"
#include "Support/Json.h"
#include "Support/Strings.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/mman.h>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>

using nlohmann::json;

namespace cohere2c {

namespace {

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

bool parseDType(const std::string &name, DType &dtype) {
  for (DType candidate :
       {DType::F32, DType::BF16, DType::F16, DType::F8E4M3, DType::F64})
    if (name == dtypeName(candidate)) {
      dtype = candidate;
      return true;
    }
  return false;
}

float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1F;
  uint32_t mantissa = h & 0x3FF;
  if (exponent == 0) // Zero or subnormal: mantissa x 2^-24, exact in f32.
    return std::copysign(std::ldexp(float(mantissa), -24), sign ? -1.0f : 1.0f);
  if (exponent == 0x1F) // Infinity or NaN, payload kept.
    return bitsToFloat(sign | 0x7F800000 | (mantissa << 13));
  return bitsToFloat(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

/// OCP FP8 E4M3 ("fn"): bias 7, S.1111.111 is NaN, no infinities, max 448.
float e4m3ToFloat(uint8_t b) {
  float sign = (b & 0x80) ? -1.0f : 1.0f;
  uint32_t exponent = (b >> 3) & 0xF;
  uint32_t mantissa = b & 0x7;
  if ((b & 0x7F) == 0x7F)
    return std::nanf("");
  if (exponent == 0) // Zero or subnormal: mantissa x 2^-9.
    return sign * std::ldexp(float(mantissa), -9);
  return sign * std::ldexp(float(8 + mantissa), int(exponent) - 10);
}

/// A non-negative integer from the header, or false.
bool toSize(const json &value, uint64_t &out) {
  if (!value.is_number_unsigned())
    return false;
  out = value.get<uint64_t>();
  return true;
}

/// A key the header gives twice: JSON readers keep one of the entries
/// silently (nlohmann and Python the last), so a tensor named twice would
/// be read from whichever entry the reader picks. Messages without the path.
Status checkUniqueKeys(std::string_view header) {
  std::optional<DuplicateKey> twice = findDuplicateKey(header);
  if (!twice)
    return Status::success();
  bool topLevel = twice->pointer.find('/', 1) == std::string::npos;
  if (topLevel && twice->key != "__metadata__")
    return Status::error("tensor " + excerpt(twice->key) +
                         " is named twice in the header");
  return Status::error("header: " + excerpt(twice->pointer) +
                       " is given twice");
}

/// Where a tensor's bytes lie in the data section.
struct Extent {
  uint64_t begin, end;
  std::string name;
};

std::string describe(const Extent &e) {
  return excerpt(e.name) + " (data_offsets [" + std::to_string(e.begin) + ", " +
         std::to_string(e.end) + "])";
}

/// Every byte of the data section is in exactly one tensor, as the format's
/// reference reader requires (it refuses overlaps, holes and bytes after the
/// last tensor): otherwise a tensor reads its neighbour's bytes, or the file
/// carries bytes that no tensor accounts for. Messages without the path.
Status checkDataSection(std::vector<Extent> extents, uint64_t dataSize) {
  std::sort(extents.begin(), extents.end(),
            [](const Extent &a, const Extent &b) {
              return std::tie(a.begin, a.end, a.name) <
                     std::tie(b.begin, b.end, b.name);
            });
  const Extent *previous = nullptr; // the tensor that ends at `covered`
  uint64_t covered = 0;
  for (const Extent &e : extents) {
    if (e.begin < covered)
      return Status::error("tensors " + describe(*previous) + " and " +
                           describe(e) + " overlap");
    if (e.begin > covered)
      return Status::error(
          std::to_string(e.begin - covered) + " bytes " +
          (previous ? "between tensors " + describe(*previous) + " and "
                    : std::string("before the first tensor ")) +
          describe(e) + " belong to no tensor");
    covered = e.end;
    previous = &e;
  }
  if (covered < dataSize)
    return Status::error(std::to_string(dataSize - covered) +
                         " bytes after the " +
                         (previous ? "last tensor " + describe(*previous)
                                   : std::string("header")) +
                         " belong to no tensor");
  return Status::success();
}

/// Closes a file descriptor on every path out of open().
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0)
      ::close(fd);
  }
};

} // namespace

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::BF16:
    return "BF16";
  case DType::F16:
    return "F16";
  case DType::F8E4M3:
    return "F8_E4M3";
  case DType::F64:
    return "F64";
  }
  return "?";
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return 4;
  case DType::BF16:
  case DType::F16:
    return 2;
  case DType::F8E4M3:
    return 1;
  case DType::F64:
    return 8;
  }
  return 0;
}

float elementToFloat(DType dtype, const void *element) {
  switch (dtype) {
  case DType::F32: {
    float value;
    std::memcpy(&value, element, sizeof(value));
    return value;
  }
  case DType::BF16: {
    uint16_t bits;
    std::memcpy(&bits, element, sizeof(bits));
    return bitsToFloat(uint32_t(bits) << 16);
  }
  case DType::F16: {
    uint16_t bits;
    std::memcpy(&bits, element, sizeof(bits));
    return halfToFloat(bits);
  }
  case DType::F8E4M3:
    return e4m3ToFloat(*static_cast<const uint8_t *>(element));
  case DType::F64: {
    double value;
    std::memcpy(&value, element, sizeof(value));
    return (float)value;
  }
  }
  return std::nanf("");
}

int64_t TensorView::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

StatusOr<std::shared_ptr<SafeTensorsFile>>
SafeTensorsFile::open(const std::string &path) {
  auto fail = [&](const std::string &message) {
    return Status::error(path + ": " + message);
  };
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever;
  // it changes nothing for the regular file that is then required.
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0)
    return fail(std::string("cannot open (") + std::strerror(errno) + ")");
  struct stat info;
  if (::fstat(file.fd, &info) != 0)
    return fail(std::string("cannot stat (") + std::strerror(errno) + ")");
  if (!S_ISREG(info.st_mode))
    return fail("not a regular file");
  uint64_t fileSize = uint64_t(info.st_size);
  if (fileSize < 8)
    return fail("file is " + std::to_string(fileSize) +
                " bytes, shorter than the 8-byte header length");

  std::shared_ptr<SafeTensorsFile> result(new SafeTensorsFile());
  void *mapping = ::mmap(nullptr, fileSize, PROT_READ, MAP_PRIVATE, file.fd, 0);
  if (mapping == MAP_FAILED)
    return fail(std::string("cannot mmap (") + std::strerror(errno) + ")");
  result->mapping_ = mapping;
  result->mappingSize_ = fileSize;

  const auto *bytes = static_cast<const unsigned char *>(mapping);
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | bytes[i];
  if (headerSize > fileSize - 8)
    return fail("header length " + std::to_string(headerSize) +
                " exceeds the " + std::to_string(fileSize - 8) +
                " bytes after the length field");
  std::string_view headerText(reinterpret_cast<const char *>(bytes + 8),
                              headerSize);
  StatusOr<json> parsed = parseJson(headerText, path + ": header");
  if (!parsed.ok())
    return parsed.status();
  const json &header = *parsed;
  if (!header.is_object())
    return fail("header is not a JSON object");
  if (Status unique = checkUniqueKeys(headerText); !unique.ok())
    return fail(unique.message());
  const unsigned char *data = bytes + 8 + headerSize;
  uint64_t dataSize = fileSize - 8 - headerSize;

  std::vector<Extent> extents;
  for (const auto &[name, entry] : header.items()) {
    if (name == "__metadata__")
      continue;
    auto tensorFail = [&](const std::string &message) {
      return fail("tensor " + excerpt(name) + " " + message);
    };
    TensorView view;
    view.name = name;
    view.file = path;
    auto dtype = entry.find("dtype");
    auto shape = entry.find("shape");
    auto offsets = entry.find("data_offsets");
    if (!entry.is_object() || dtype == entry.end() || !dtype->is_string() ||
        shape == entry.end() || !shape->is_array() || offsets == entry.end() ||
        !offsets->is_array() || offsets->size() != 2)
      return tensorFail("needs dtype, shape and data_offsets [begin, end], "
                        "found " +
                        jsonExcerpt(entry));
    if (!parseDType(dtype->get<std::string>(), view.dtype))
      return tensorFail("has unsupported dtype " + dtype->get<std::string>() +
                        " (supported: F32, BF16, F16, F8_E4M3, F64)");
    uint64_t expectedBytes = dtypeSize(view.dtype);
    bool overflow = false;
    for (const json &dim : *shape) {
      uint64_t d;
      if (!toSize(dim, d) || d > uint64_t(INT64_MAX))
        return tensorFail("has a bad shape " + jsonExcerpt(*shape));
      view.shape.push_back(int64_t(d));
      overflow |= __builtin_mul_overflow(expectedBytes, d, &expectedBytes);
    }
    uint64_t begin, end;
    if (!toSize((*offsets)[0], begin) || !toSize((*offsets)[1], end) ||
        begin > end || end > dataSize)
      return tensorFail("has data_offsets " + jsonExcerpt(*offsets) +
                        " outside the data section of " +
                        std::to_string(dataSize) + " bytes");
    if (overflow || end - begin != expectedBytes)
      return tensorFail("has " + std::to_string(end - begin) +
                        " bytes at data_offsets " + jsonExcerpt(*offsets) +
                        ", expected shape " + formatShape(view.shape) + " x " +
                        std::to_string(dtypeSize(view.dtype)) + " bytes");
    view.data = data + begin;
    view.numBytes = end - begin;
    result->tensors_.emplace(name, std::move(view));
    extents.push_back({begin, end, name});
  }
  if (Status whole = checkDataSection(std::move(extents), dataSize);
      !whole.ok())
    return fail(whole.message());
  return result;
}

SafeTensorsFile::~SafeTensorsFile() {
  if (mapping_)
    ::munmap(mapping_, mappingSize_);
}

StatusOr<Checkpoint> Checkpoint::open(const std::string &dir) {
  Checkpoint checkpoint;
  std::string indexPath = dir + "/model.safetensors.index.json";
  // Opening a FIFO would block, and a device would be read forever.
  struct stat indexInfo;
  if (::stat(indexPath.c_str(), &indexInfo) == 0 &&
      !S_ISREG(indexInfo.st_mode))
    return Status::error(indexPath + ": not a regular file");
  std::ifstream indexFile(indexPath, std::ios::binary);
  if (!indexFile) {
    std::string singlePath = dir + "/model.safetensors";
    struct stat info;
    if (::stat(singlePath.c_str(), &info) != 0)
      return Status::error(dir + ": neither model.safetensors nor "
                                 "model.safetensors.index.json found");
    StatusOr<std::shared_ptr<SafeTensorsFile>> file =
        SafeTensorsFile::open(singlePath);
    if (!file.ok())
      return file.status();
    checkpoint.tensors_ = (*file)->tensors();
    checkpoint.files_.push_back(*file);
    checkpoint.paths_.push_back(singlePath);
    return checkpoint;
  }

  checkpoint.paths_.push_back(indexPath);
  std::ostringstream text;
  text << indexFile.rdbuf();
  StatusOr<json> parsed = parseJson(text.str(), indexPath);
  if (!parsed.ok())
    return parsed.status();
  const json &index = *parsed;
  auto weightMap = index.is_object() ? index.find("weight_map") : index.end();
  if (!index.is_object() || weightMap == index.end() ||
      !weightMap->is_object())
    return Status::error(indexPath + ": expected a JSON object with a "
                                     "weight_map object");
  std::map<std::string, std::shared_ptr<SafeTensorsFile>> shards;
  for (const auto &[name, shard] : weightMap->items()) {
    if (!shard.is_string())
      return Status::error(indexPath + ": weight_map[" + excerpt(name) +
                           "] must be a file name, found " +
                           jsonExcerpt(shard));
    std::string shardName = shard.get<std::string>();
    // A name longer than a file name can be (NAME_MAX) names no file.
    if (shardName.empty() || shardName == "." || shardName == ".." ||
        shardName.find('/') != std::string::npos || shardName.size() > 255)
      return Status::error(indexPath + ": weight_map[" + excerpt(name) +
                           "] must name a file in " + dir + ", found '" +
                           excerpt(shardName) + "'");
    auto &file = shards[shardName];
    if (!file) {
      StatusOr<std::shared_ptr<SafeTensorsFile>> opened =
          SafeTensorsFile::open(dir + "/" + shardName);
      if (!opened.ok())
        return Status::error(indexPath + ": shard " + shardName + ": " +
                             opened.status().message());
      file = *opened;
      checkpoint.files_.push_back(file);
      checkpoint.paths_.push_back(dir + "/" + shardName);
    }
    auto tensor = file->tensors().find(name);
    if (tensor == file->tensors().end())
      return Status::error(dir + "/" + shardName + ": tensor " +
                           excerpt(name) +
                           " missing (the index places it in this shard)");
    checkpoint.tensors_.emplace(name, tensor->second);
  }
  // A shard's tensor that the index places elsewhere (or nowhere) would be
  // dropped unread: a checkpoint with two copies of a tensor, or a stale
  // index, loads whichever copy the index names.
  for (const auto &[shardName, file] : shards)
    for (const auto &[name, tensor] : file->tensors()) {
      auto placed = weightMap->find(name);
      if (placed == weightMap->end() || *placed != shardName)
        return Status::error(
            dir + "/" + shardName + ": tensor " + excerpt(name) +
            (placed == weightMap->end()
                 ? std::string(" is not in the index ") + indexPath
                 : " is also in " + placed->get<std::string>() +
                       ", where the index places it"));
    }
  return checkpoint;
}

const TensorView *Checkpoint::find(const std::string &name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

std::vector<TensorSpec> expectedTensors(const ModelConfig &config) {
  int64_t hidden = config.hiddenSize;
  int64_t inter = config.intermediateSize;
  int64_t qDim = config.numHeads * config.headDim;
  int64_t kvDim = config.numKVHeads * config.headDim;
  std::vector<TensorSpec> specs;
  specs.push_back({"model.embed_tokens.weight", {config.vocabSize, hidden}});
  for (int64_t i = 0; i < config.numLayers; ++i) {
    std::string prefix = "model.layers." + std::to_string(i) + ".";
    specs.push_back({prefix + "input_layernorm.weight", {hidden}});
    specs.push_back({prefix + "self_attn.q_proj.weight", {qDim, hidden}});
    specs.push_back({prefix + "self_attn.k_proj.weight", {kvDim, hidden}});
    specs.push_back({prefix + "self_attn.v_proj.weight", {kvDim, hidden}});
    specs.push_back({prefix + "mlp.gate_proj.weight", {inter, hidden}});
    specs.push_back({prefix + "mlp.up_proj.weight", {inter, hidden}});
    specs.push_back({prefix + "self_attn.o_proj.weight", {hidden, qDim}});
    specs.push_back({prefix + "mlp.down_proj.weight", {hidden, inter}});
  }
  specs.push_back({"model.norm.weight", {hidden}});
  return specs;
}

namespace {

/// `name`'s "<weight>_scale" check: the per-output-channel scales of an
/// F8_E4M3 linear weight ([rows] or [rows, 1], as compressed-tensors writes
/// them). Anything else named so would be dropped or misread.
Status checkScaleTensor(const std::string &name, const TensorView &scale,
                        const TensorView &weight, const std::string &dir) {
  if (weight.dtype != DType::F8E4M3)
    return Status::error(dir + ": tensor " + name + " scales " +
                         dtypeName(weight.dtype) +
                         " weights: only F8_E4M3 "
                         "weights take a weight_scale (a dequantized weight "
                         "has none)");
  int64_t rows = weight.shape[0];
  if (scale.shape != std::vector<int64_t>{rows} &&
      scale.shape != std::vector<int64_t>{rows, 1})
    return Status::error(
        dir + ": tensor " + name + " has shape " + formatShape(scale.shape) +
        ", expected [" + std::to_string(rows) + "] or [" +
        std::to_string(rows) + ", 1] (one scale per output channel)");
  return Status::success();
}

} // namespace

std::string weightNameOfScale(const std::string &name) {
  return endsWith(name, kScaleSuffix)
             ? name.substr(0, name.size() - kScaleSuffix.size())
             : std::string();
}

namespace {

/// Tensors a checkpoint may carry that the model does not read, harmlessly:
/// RoPE's inverse frequencies, which some exporters save as buffers, and an
/// lm_head.weight that is a byte-for-byte copy of the embedding it is tied
/// to (some exporters write the tied matrix twice).
bool isRedundant(const std::string &name, const TensorView &tensor,
                 const TensorView &embedding) {
  if (endsWith(name, ".rotary_emb.inv_freq"))
    return true;
  return name == "lm_head.weight" && tensor.dtype == embedding.dtype &&
         tensor.shape == embedding.shape &&
         tensor.numBytes == embedding.numBytes &&
         std::memcmp(tensor.data, embedding.data, tensor.numBytes) == 0;
}

} // namespace

Status checkTensors(const ModelConfig &config, const Checkpoint &checkpoint,
                    const std::string &dir) {
  std::map<std::string, const TensorView *> expected;
  for (const TensorSpec &spec : expectedTensors(config)) {
    const TensorView *tensor = checkpoint.find(spec.name);
    if (!tensor)
      return Status::error(dir + ": tensor " + spec.name + " missing");
    if (tensor->shape != spec.shape)
      return Status::error(dir + ": tensor " + spec.name + " has shape " +
                           formatShape(tensor->shape) + ", expected " +
                           formatShape(spec.shape));
    expected[spec.name] = tensor;
  }
  // A tensor the model does not read means the config and the checkpoint
  // disagree (more layers than num_hidden_layers, biases, an untied
  // lm_head, static activation scales): computing without it would give
  // another model's output.
  const TensorView &embedding = *expected.at("model.embed_tokens.weight");
  for (const auto &[name, tensor] : checkpoint.tensors()) {
    if (expected.count(name) || isRedundant(name, tensor, embedding))
      continue;
    auto weight = expected.find(weightNameOfScale(name));
    if (weight != expected.end() && weight->second->shape.size() == 2) {
      if (Status s = checkScaleTensor(name, tensor, *weight->second, dir);
          !s.ok())
        return s;
      continue;
    }
    return Status::error(
        dir + ": tensor " + name +
        " is not one the model reads (config.json: num_hidden_layers " +
        std::to_string(config.numLayers) +
        ", no biases, the output projection tied to "
        "model.embed_tokens.weight); the checkpoint and its config disagree");
  }
  return Status::success();
}

} // namespace cohere2c

namespace cohere2c {

namespace {

/// Writes all `size` bytes at `data` to `fd`, resuming after a signal or a
/// short write. Errors: write(2)'s, naming `path`.
Status writeAll(int fd, const std::string &path, const void *data,
                size_t size) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t written = ::write(fd, p, std::min(size, size_t(1) << 30));
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      return Status::error(path + ": cannot write (" +
                           std::strerror(written < 0 ? errno : EIO) + ")");
    p += written;
    size -= written;
  }
  return Status::success();
}

} // namespace

Status writeSafeTensors(int fd, const std::string &path,
                        const std::vector<F32Tensor> &tensors) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  uint64_t offset = 0;
  for (const F32Tensor &t : tensors) {
    uint64_t bytes = sizeof(float);
    for (int64_t d : t.shape)
      bytes *= d;
    header[t.name] = {{"dtype", "F32"},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' '); // data 8-byte aligned
  uint64_t length = text.size();
  text.insert(0, reinterpret_cast<const char *>(&length), sizeof(length));
  if (Status s = writeAll(fd, path, text.data(), text.size()); !s.ok())
    return s;
  for (const F32Tensor &t : tensors) {
    uint64_t n = 1;
    for (int64_t d : t.shape)
      n *= d;
    if (Status s = writeAll(fd, path, t.data, n * sizeof(float)); !s.ok())
      return s;
  }
  return Status::success();
}

void releaseResidentPages(const void *data, size_t bytes) {
  uintptr_t page = sysconf(_SC_PAGESIZE);
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  if (end > begin)
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

} // namespace cohere2c
