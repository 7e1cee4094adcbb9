//===- Weights.cpp --------------------------------------------------------===//

#include "Weights.h"

#include "Artifact/WeightPacking.h"
#include "Artifact/WeightsFile.h"
#include "Model/SafeTensors.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/mman.h>
#include <sys/stat.h>
#include <system_error>
#include <thread>
#include <unistd.h>

namespace cohere2c {

namespace {

/// `bytes` zeroed bytes in `owned`; host memory that cannot be had is an
/// error, not std::bad_alloc.
Status allocate(std::vector<char> &owned, uint64_t bytes) {
  try {
    owned.assign(bytes, 0);
  } catch (const std::bad_alloc &) {
    return Status::error("cannot allocate " + std::to_string(bytes) +
                         " bytes of host memory for the weights");
  }
  return Status::success();
}

} // namespace

StatusOr<std::unique_ptr<WeightBuffer>>
WeightBuffer::fromWeightsFile(const std::string &path, const Manifest &manifest) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever;
  // it changes nothing for the regular file that is then required.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Status::error(path + ": cannot open the weights file (" +
                         std::strerror(errno) +
                         "); pass --checkpoint DIR or --random-weights SEED");
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status::error(path + ": not a regular file");
  }
  char header[kWeightsHeaderBytes] = {};
  ssize_t got = pread(fd, header, sizeof(header), 0);
  Status valid = got < 0 ? Status::error(path + ": cannot read: " +
                                         std::strerror(errno))
                         : checkWeightsHeader(header, st.st_size, path,
                                              manifest.weightsId,
                                              manifest.weights.totalBytes);
  if (!valid.ok()) {
    close(fd);
    return valid;
  }
  void *mapping = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (mapping == MAP_FAILED)
    return Status::error(path + ": mmap failed: " + std::strerror(errno));
  std::unique_ptr<WeightBuffer> buffer(new WeightBuffer());
  buffer->mapping_ = mapping;
  buffer->mappingBytes_ = st.st_size;
  buffer->data_ = static_cast<const char *>(mapping) + kWeightsHeaderBytes;
  buffer->size_ = manifest.weights.totalBytes;
  return buffer;
}

StatusOr<std::unique_ptr<WeightBuffer>>
WeightBuffer::fromCheckpoint(const std::string &dir, const Manifest &manifest) {
  std::string configPath = dir + "/config.json";
  StatusOr<ModelConfig> config = ModelConfig::fromFile(configPath);
  if (!config.ok())
    return config.status();
  if (std::optional<ConfigDifference> d =
          firstDifference(*config, manifest.config))
    return Status::error(configPath + ": not the model the artifact was "
                                      "compiled for: " +
                         d->field + " is " + d->found + ", the artifact's is " +
                         d->expected);
  StatusOr<Checkpoint> checkpoint = Checkpoint::open(dir);
  if (!checkpoint.ok())
    return checkpoint.status();
  if (Status s = checkTensors(manifest.config, *checkpoint, dir); !s.ok())
    return s;
  std::unique_ptr<WeightBuffer> buffer(new WeightBuffer());
  if (Status s = allocate(buffer->owned_, manifest.weights.totalBytes); !s.ok())
    return s;
  bool terminal = isatty(STDERR_FILENO);
  Status packed = packWeights(*checkpoint, manifest.weights,
                              buffer->owned_.data(), dir,
                              [&](size_t done, size_t all) {
                                if (terminal)
                                  fprintf(stderr, "\rconverting %s: %zu/%zu tensors%s",
                                          dir.c_str(), done, all,
                                          done == all ? "\n" : "");
                              });
  if (!packed.ok())
    return packed;
  buffer->data_ = buffer->owned_.data();
  buffer->size_ = buffer->owned_.size();
  return buffer;
}

StatusOr<std::unique_ptr<WeightBuffer>>
WeightBuffer::random(uint64_t seed, const Manifest &manifest) {
  std::unique_ptr<WeightBuffer> buffer(new WeightBuffer());
  if (Status s = allocate(buffer->owned_, manifest.weights.totalBytes); !s.ok())
    return s;
  // Value i of the stream is splitmix64's output i (Steele, Lea and Flood,
  // 2014), mapped to [-1, 1): its state advances by a constant, so any value
  // is computed on its own and the entries fill in parallel, in chunks of
  // rows, with the values a sequential fill would give.
  auto uniform = [seed](uint64_t i) {
    uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / (double)(1ull << 52) - 1.0;
  };
  const double bound = 0.02 * std::sqrt(3.0);
  struct Chunk {
    const WeightEntry *entry;
    uint64_t stream; // the stream index of the entry's first value
    int64_t firstRow, endRow;
  };
  std::vector<Chunk> chunks;
  uint64_t stream = 0;
  for (const WeightEntry &entry : manifest.weights.entries) {
    if (manifest.weights.isScale(entry))
      continue; // written with its weight
    int64_t n = entry.numBytes / dtypeSize(entry.dtype);
    int64_t cols = entry.shape.back(), rows = n / cols;
    int64_t rowsPerChunk = std::max<int64_t>(1, (int64_t(1) << 20) / cols);
    for (int64_t r = 0; r < rows; r += rowsPerChunk)
      chunks.push_back({&entry, stream, r, std::min(rows, r + rowsPerChunk)});
    stream += n;
  }
  char *base = buffer->owned_.data();
  auto fill = [&](const Chunk &c) {
    const WeightEntry &entry = *c.entry;
    int64_t cols = entry.shape.back();
    bool norm = entry.name.find("norm") != std::string::npos;
    char *dst = base + entry.offset;
    if (entry.dtype == DType::F8E4M3) {
      // Rowwise quantized like a checkpoint's, scales in their own entry.
      auto *scales = reinterpret_cast<float *>(base + manifest.weights.scaleOf(entry)->offset);
      std::vector<float> row(cols);
      for (int64_t r = c.firstRow; r < c.endRow; ++r) {
        for (int64_t i = 0; i < cols; ++i)
          row[i] = bound * uniform(c.stream + r * cols + i);
        scales[r] = quantizeRowE4M3(row.data(), cols,
                                    reinterpret_cast<uint8_t *>(dst) + r * cols);
      }
      return;
    }
    for (int64_t i = c.firstRow * cols; i < c.endRow * cols; ++i) {
      double u = uniform(c.stream + i);
      float v = norm ? 1.0 + 0.1 * u : bound * u;
      if (entry.dtype == DType::F32)
        reinterpret_cast<float *>(dst)[i] = v;
      else
        reinterpret_cast<uint16_t *>(dst)[i] = floatToBF16(v);
    }
  };
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < chunks.size(); i = next++)
      fill(chunks[i]);
  };
  // This thread works too; where no more threads can be started, the ones
  // there are share the chunks.
  std::vector<std::thread> threads;
  for (unsigned i = 1; i < std::thread::hardware_concurrency(); ++i) {
    try {
      threads.emplace_back(worker);
    } catch (const std::system_error &) {
      break;
    }
  }
  worker();
  for (std::thread &t : threads)
    t.join();
  buffer->data_ = buffer->owned_.data();
  buffer->size_ = buffer->owned_.size();
  return buffer;
}

WeightBuffer::~WeightBuffer() {
  if (mapping_)
    munmap(mapping_, mappingBytes_);
}

} // namespace cohere2c
