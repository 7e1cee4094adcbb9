//===- ReferenceModel.cpp -------------------------------------------------===//

#include "ReferenceModel.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <fstream>

namespace cohere2c::test {

std::string testName(std::string text) {
  for (char &c : text)
    if (!isalnum((unsigned char)c))
      c = '_';
  return text;
}

std::vector<std::string> referenceModelNames() {
  return {"tiny-cohere2", "tiny-cohere2-bf16"};
}

std::unique_ptr<ReferenceModel> ReferenceModel::load(const std::string &name,
                                                     const std::string &precision) {
  auto model = std::make_unique<ReferenceModel>();
  model->name = name;
  std::string dir = std::string(COHERE2C_TEST_DATA_DIR) + "/models/" + name;
  std::ifstream in(dir + "/reference.json");
  EXPECT_TRUE(in.good()) << dir << "/reference.json";
  nlohmann::json j = nlohmann::json::parse(in);
  for (auto &[prompt, ids] : j["prompts"].items())
    model->prompts[prompt] = ids.get<std::vector<int32_t>>();
  for (auto &[prompt, ids] : j["greedy"].items())
    model->greedy[prompt] = ids.get<std::vector<int32_t>>();
  auto reference = SafeTensorsFile::open(dir + "/reference.safetensors");
  EXPECT_TRUE(reference.ok()) << reference.status().message();
  model->reference = *reference;

  std::string artifact =
      std::string(COHERE2C_TEST_ARTIFACT_DIR) + "/" + name + "-" + precision;
  auto loaded = LoadedArtifact::load(artifact + ".so");
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  model->artifact = std::move(*loaded);
  auto weights =
      WeightBuffer::fromWeightsFile(artifact + ".weights", model->artifact->manifest());
  EXPECT_TRUE(weights.ok()) << weights.status().message();
  model->weights = std::move(*weights);
  return model;
}

std::vector<float> ReferenceModel::logits(const std::string &prompt, int64_t &rows,
                                          const std::string &tensor) const {
  const TensorView &t = reference->tensors().at(tensor + "." + prompt);
  rows = t.shape[0];
  std::vector<float> out(t.numElements());
  for (int64_t i = 0; i < t.numElements(); ++i)
    out[i] = t.at(i);
  return out;
}

Request ReferenceModel::teacherForced(const std::string &prompt) const {
  Request r;
  r.id = prompt;
  r.promptIds = prompts.at(prompt);
  const std::vector<int32_t> &tokens = greedy.at(prompt);
  r.promptIds.insert(r.promptIds.end(), tokens.begin(), tokens.end() - 1);
  r.maxNewTokens = 1;
  r.recordLogits = true;
  return r;
}

} // namespace cohere2c::test
