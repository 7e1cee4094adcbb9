//===- Weights.cpp --------------------------------------------------------===//

#include "Weights.h"

#include "Artifact/RandomWeights.h"
#include "Artifact/WeightPacking.h"
#include "Artifact/WeightsFile.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cohere2c {

namespace {

/// `path` opened for reading if it is a regular file. O_NONBLOCK: opening a
/// FIFO would otherwise wait for a writer forever; it changes nothing for
/// the regular file that is then required.
StatusOr<int> openRegular(const std::string &path, struct stat &st) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Status::error(path + ": cannot open the weights file (" +
                         std::strerror(errno) +
                         "); pass --checkpoint DIR or --random-weights SEED");
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status::error(path + ": not a regular file");
  }
  return fd;
}

/// The checked OUT.weights at `path`, open.
StatusOr<int> openWeightsFile(const std::string &path, const Manifest &manifest,
                              struct stat &st) {
  StatusOr<int> fd = openRegular(path, st);
  if (!fd.ok())
    return fd;
  char header[kWeightsHeaderBytes] = {};
  ssize_t got = pread(*fd, header, sizeof(header), 0);
  Status valid = got < 0 ? Status::error(path + ": cannot read: " +
                                         std::strerror(errno))
                         : checkWeightsHeader(header, st.st_size, path,
                                              manifest.weightsId,
                                              manifest.weights.totalBytes);
  if (!valid.ok()) {
    close(*fd);
    return valid;
  }
  return fd;
}

/// Reads `bytes` at `offset` of `fd` into `out`, however many calls it takes.
Status readFully(int fd, char *out, uint64_t bytes, uint64_t offset,
                 const std::string &path) {
  while (bytes > 0) {
    ssize_t got = pread(fd, out, bytes, offset);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return Status::error(path + ": cannot read " + std::to_string(bytes) +
                           " bytes at offset " + std::to_string(offset) + ": " +
                           (got < 0 ? std::strerror(errno) : "the file ends"));
    out += got;
    bytes -= got;
    offset += got;
  }
  return Status::success();
}

} // namespace

StatusOr<std::unique_ptr<WeightBuffer>>
WeightBuffer::fromWeightsFile(const std::string &path, const Manifest &manifest) {
  struct stat st;
  StatusOr<int> fd = openWeightsFile(path, manifest, st);
  if (!fd.ok())
    return fd.status();
  void *mapping = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, *fd, 0);
  close(*fd);
  if (mapping == MAP_FAILED)
    return Status::error(path + ": mmap failed: " + std::strerror(errno));
  std::unique_ptr<WeightBuffer> buffer(new WeightBuffer());
  buffer->mapping_ = mapping;
  buffer->mappingBytes_ = st.st_size;
  buffer->data_ = static_cast<const char *>(mapping) + kWeightsHeaderBytes;
  buffer->size_ = manifest.weights.totalBytes;
  return buffer;
}

StatusOr<std::unique_ptr<WeightBuffer>> WeightBuffer::zeroed(uint64_t bytes) {
  std::unique_ptr<WeightBuffer> buffer(new WeightBuffer());
  try {
    buffer->owned_.assign(bytes, 0);
  } catch (const std::bad_alloc &) {
    return Status::error("cannot allocate " + std::to_string(bytes) +
                         " bytes of host memory for the weights");
  }
  buffer->data_ = buffer->owned_.data();
  buffer->size_ = bytes;
  return buffer;
}

WeightBuffer::~WeightBuffer() {
  if (mapping_)
    munmap(mapping_, mappingBytes_);
}

StatusOr<std::unique_ptr<WeightSource>>
WeightSource::weightsFile(const std::string &path, const Manifest &manifest) {
  struct stat st;
  StatusOr<int> fd = openWeightsFile(path, manifest, st);
  if (!fd.ok())
    return fd.status();
  std::unique_ptr<WeightSource> source(new WeightSource(manifest));
  source->fd_ = *fd;
  source->path_ = path;
  source->description_ = path;
  return source;
}

StatusOr<std::unique_ptr<WeightSource>>
WeightSource::checkpoint(const std::string &dir, const Manifest &manifest) {
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
  std::unique_ptr<WeightSource> source(new WeightSource(manifest));
  source->checkpoint_ = std::move(*checkpoint);
  source->description_ = dir;
  return source;
}

std::unique_ptr<WeightSource> WeightSource::random(uint64_t seed,
                                                   const Manifest &manifest) {
  std::unique_ptr<WeightSource> source(new WeightSource(manifest));
  source->seed_ = seed;
  source->streamStarts_ = randomStreamStarts(manifest.weights);
  source->description_ = "random weights of seed " + std::to_string(seed);
  return source;
}

WeightSource::~WeightSource() {
  if (fd_ >= 0)
    close(fd_);
}

Status WeightSource::readRows(const WeightEntry &entry, int64_t firstRow,
                              int64_t endRow, char *rows, float *scales) const {
  const WeightLayout &layout = manifest_.weights;
  if (checkpoint_)
    return packRows(*checkpoint_, entry, firstRow, endRow, rows, scales,
                    description_);
  if (seed_) {
    size_t index = &entry - layout.entries.data();
    fillRandomRows(entry, *seed_, streamStarts_[index], firstRow, endRow, rows,
                   scales);
    return Status::success();
  }
  uint64_t rowBytes = entry.shape.back() * dtypeSize(entry.dtype);
  Status s = readFully(fd_, rows, (endRow - firstRow) * rowBytes,
                       kWeightsHeaderBytes + entry.offset + firstRow * rowBytes,
                       path_);
  if (!s.ok() || entry.dtype != DType::F8E4M3)
    return s;
  return readFully(fd_, reinterpret_cast<char *>(scales),
                   (endRow - firstRow) * sizeof(float),
                   kWeightsHeaderBytes + layout.scaleOf(entry)->offset +
                       firstRow * sizeof(float),
                   path_);
}

void WeightSource::release(const WeightEntry &entry, int64_t firstRow,
                           int64_t endRow) const {
  if (!checkpoint_)
    return;
  if (const TensorView *tensor = checkpoint_->find(entry.name)) {
    size_t rowBytes = entry.shape.back() * dtypeSize(tensor->dtype);
    releaseResidentPages(static_cast<const char *>(tensor->data) + firstRow * rowBytes,
                         (endRow - firstRow) * rowBytes);
  }
  const TensorView *scales = checkpoint_->find(scaleNameOf(entry.name));
  if (scales && endRow == entry.rows())
    releaseResidentPages(scales->data, scales->numBytes);
}

StatusOr<const WeightBuffer *> WeightSource::hostBuffer() const {
  std::lock_guard<std::mutex> lock(hostMutex_);
  if (host_)
    return host_.get();
  if (fd_ >= 0) {
    auto mapped = WeightBuffer::fromWeightsFile(path_, manifest_);
    if (!mapped.ok())
      return mapped.status();
    host_ = std::move(*mapped);
    return host_.get();
  }
  const WeightLayout &layout = manifest_.weights;
  auto buffer = WeightBuffer::zeroed(layout.totalBytes);
  if (!buffer.ok())
    return buffer.status();
  char *base = (*buffer)->mutableData();
  if (seed_) {
    fillRandomWeights(layout, *seed_, base);
  } else {
    bool terminal = isatty(STDERR_FILENO);
    Status packed = packWeights(*checkpoint_, layout, base, description_,
                                [&](size_t done, size_t all) {
                                  if (terminal)
                                    fprintf(stderr, "\rconverting %s: %zu/%zu tensors%s",
                                            description_.c_str(), done, all,
                                            done == all ? "\n" : "");
                                });
    if (!packed.ok())
      return packed;
  }
  host_ = std::move(*buffer);
  return host_.get();
}

} // namespace cohere2c
