//===- ModelLoading.h - What the C API loads to run a compiled model ------===//
//
// The steps behind cohere2c_artifact_open, cohere2c_artifact_load_weights
// and cohere2c_engine_create (capi/Runtime.cpp) after loading an artifact
// (Artifact.h): its text (tokenizer, chat template, EOS ids), its weights,
// and the executor of its target.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_RUNTIME_MODELLOADING_H
#define COHERE2C_RUNTIME_MODELLOADING_H

#include "Artifact.h"
#include "Executor.h"
#include "Weights.h"
#include "scheduler/Engine.h"
#include "text/ModelText.h"

#include <memory>
#include <optional>
#include <string>

namespace cohere2c {

/// OUT.weights beside OUT.so: the artifact's path with its extension
/// replaced.
std::string defaultWeightsPath(const std::string &artifactPath);

/// The text the compiler copied into `artifact`; null when it carries none
/// (compiled from a config alone). Errors: ModelText::create's.
StatusOr<std::unique_ptr<text::ModelText>>
loadText(const LoadedArtifact &artifact);

/// The weights from a checkpoint folder if `checkpoint` is not empty, else
/// seeded random ones if `randomSeed` is given, else OUT.weights beside the
/// artifact: checked, not yet read (WeightSource). Errors: WeightSource's,
/// naming the file.
StatusOr<std::unique_ptr<WeightSource>>
loadWeights(const LoadedArtifact &artifact, const std::string &checkpoint,
            std::optional<uint64_t> randomSeed);

/// The executor of the artifact's target (host or cuda) with
/// a KV pool of options.numBlocks blocks of options.blockSize tokens (0
/// blocks: what the target leaves, written back into `options`), the
/// weights read from `weights`. A cuda executor names its device and how
/// it split the device's memory on stderr. Errors: the executor's.
StatusOr<std::unique_ptr<Executor>>
createExecutor(const LoadedArtifact &artifact, const WeightSource &weights,
               EngineOptions &options);

} // namespace cohere2c

#endif // COHERE2C_RUNTIME_MODELLOADING_H
