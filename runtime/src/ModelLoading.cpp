//===- ModelLoading.cpp ---------------------------------------------------===//

#include "ModelLoading.h"
#include "cuda/CudaExecutor.h"
#include "host/HostExecutor.h"

#include <cstdio>

namespace cohere2c {

std::string defaultWeightsPath(const std::string &artifactPath) {
  size_t dot = artifactPath.rfind('.');
  size_t slash = artifactPath.rfind('/');
  bool extension =
      dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return (extension ? artifactPath.substr(0, dot) : artifactPath) + ".weights";
}

StatusOr<std::unique_ptr<text::ModelText>>
loadText(const LoadedArtifact &artifact) {
  TextFiles files = artifact.textFiles();
  if (!files.hasTokenizer())
    return std::unique_ptr<text::ModelText>();
  return text::ModelText::create(files, artifact.path(),
                                 artifact.manifest().config.eosTokenIds);
}

StatusOr<std::unique_ptr<WeightSource>>
loadWeights(const LoadedArtifact &artifact, const std::string &checkpoint,
            std::optional<uint64_t> randomSeed) {
  const Manifest &manifest = artifact.manifest();
  if (!checkpoint.empty())
    return WeightSource::checkpoint(checkpoint, manifest);
  if (randomSeed)
    return WeightSource::random(*randomSeed, manifest);
  return WeightSource::weightsFile(defaultWeightsPath(artifact.path()),
                                   manifest);
}

StatusOr<std::unique_ptr<Executor>>
createExecutor(const LoadedArtifact &artifact, const WeightSource &weights,
               EngineOptions &options) {
  if (artifact.manifest().target != "cuda") {
    if (options.numBlocks == 0)
      options.numBlocks = defaultKVBlocks(artifact.manifest(), options);
    StatusOr<const WeightBuffer *> buffer = weights.hostBuffer();
    if (!buffer.ok())
      return buffer.status();
    auto created = HostExecutor::create(artifact, **buffer, options.numBlocks,
                                        options.blockSize);
    if (!created.ok())
      return created.status();
    return std::unique_ptr<Executor>(std::move(*created));
  }
  auto created = CudaExecutor::create(artifact, weights, options);
  if (!created.ok())
    return created.status();
  std::fprintf(stderr, "device: %s; %s\n", (*created)->deviceName().c_str(),
               (*created)->memoryReport().c_str());
  return std::unique_ptr<Executor>(std::move(*created));
}

} // namespace cohere2c
