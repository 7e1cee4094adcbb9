//===- ReferenceModel.h - A shipped test model and its float64 reference --===//
#ifndef COHERE2C_TEST_REFERENCEMODEL_H
#define COHERE2C_TEST_REFERENCEMODEL_H

#include "Artifact.h"
#include "scheduler/Engine.h"
#include "Model/SafeTensors.h"
#include "Weights.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cohere2c::test {

/// test/data/models/<name>: reference.json (prompts, greedy tokens) and
/// reference.safetensors (logits.<prompt> and logits_fp8.<prompt>,
/// [P + 23, vocab] float64), with the host artifact the build compiled from
/// it (<build>/test/artifacts/<name>-<precision>.so and .weights).
struct ReferenceModel {
  std::string name;
  std::map<std::string, std::vector<int32_t>> prompts, greedy;
  std::shared_ptr<SafeTensorsFile> reference;
  std::unique_ptr<LoadedArtifact> artifact;
  std::unique_ptr<WeightBuffer> weights;

  /// Fails the test (EXPECT) if anything is missing.
  static std::unique_ptr<ReferenceModel> load(const std::string &name,
                                              const std::string &precision = "f32");
  /// Row-major [rows, vocab] reference logits of a prompt, as float:
  /// `tensor` "logits" (float64 arithmetic) or "logits_fp8" (the FP8
  /// rowwise recipe emulated in float64).
  std::vector<float> logits(const std::string &prompt, int64_t &rows,
                            const std::string &tensor = "logits") const;
  /// Teacher forcing (test/data/models/README.md): the prompt followed by
  /// all but the last greedy token, one new token, every row's logits kept,
  /// so that the logits have the reference's rows, each conditioned on the
  /// reference's tokens.
  Request teacherForced(const std::string &prompt) const;
};

/// The shipped models every numeric test covers.
std::vector<std::string> referenceModelNames();

/// `text` as a GoogleTest parameter name: every character other than a
/// letter or digit becomes '_' ("tiny-cohere2 bf16" -> "tiny_cohere2_bf16").
std::string testName(std::string text);

} // namespace cohere2c::test

#endif // COHERE2C_TEST_REFERENCEMODEL_H
