//===- CApiTest.cpp - The C API (cohere2c/runtime.h) ----------------------===//
//
// Through the C API alone: every prompt of the tiny model generates the
// float64 reference's greedy tokens with logits within 1e-4 of its rows;
// each token's log probabilities are the log-softmax of its logits; validate
// answers what submit would; the load and the KV groups' blocks follow the
// requests; requests cancel and outlive their released engine and artifact;
// errors come back as statuses naming what is wrong; the text calls agree with
// each other on the trained model.
//
//===----------------------------------------------------------------------===//

#include "ReferenceModel.h"
#include "cohere2c/runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace cohere2c::test {
namespace {

/// Fails the test with the status' message (and frees it) unless it is OK.
#define ASSERT_C_OK(call)                                                      \
  do {                                                                         \
    cohere2c_status_t status_ = (call);                                        \
    std::string message_ = cohere2c_status_message(status_);                   \
    cohere2c_status_free(status_);                                             \
    ASSERT_TRUE(message_.empty()) << #call << ": " << message_;                \
  } while (false)

/// The code and message of `status`, which is freed.
std::pair<cohere2c_status_code_t, std::string> take(cohere2c_status_t status) {
  std::pair<cohere2c_status_code_t, std::string> taken = {
      cohere2c_status_code(status), cohere2c_status_message(status)};
  cohere2c_status_free(status);
  return taken;
}

std::string artifactPath(const std::string &model) {
  return std::string(COHERE2C_TEST_ARTIFACT_DIR) + "/" + model + "-f32.so";
}

/// An artifact with its weights file and an engine of 64 blocks of 4
/// tokens, EOS ignored (as the reference generates).
struct Loaded {
  cohere2c_artifact_t *artifact = nullptr;
  cohere2c_engine_t *engine = nullptr;
  ~Loaded() {
    cohere2c_engine_release(engine);
    cohere2c_artifact_release(artifact);
  }
};

void load(const std::string &model, int64_t maxBatch, Loaded &loaded) {
  ASSERT_C_OK(
      cohere2c_artifact_open(artifactPath(model).c_str(), &loaded.artifact));
  ASSERT_C_OK(cohere2c_artifact_load_weights(loaded.artifact, nullptr));
  cohere2c_engine_options_t options;
  cohere2c_engine_options_initialize(&options);
  options.block_size = 4;
  options.kv_blocks = 128;
  options.max_batch = maxBatch;
  options.ignore_eos = true;
  ASSERT_C_OK(
      cohere2c_engine_create(loaded.artifact, &options, &loaded.engine));
}

cohere2c_request_options_t greedy(const std::vector<int32_t> &prompt,
                                  int64_t maxNewTokens) {
  cohere2c_request_options_t options;
  cohere2c_request_options_initialize(&options);
  options.prompt_ids = prompt.data();
  options.prompt_length = prompt.size();
  options.max_new_tokens = maxNewTokens;
  return options;
}

std::vector<int32_t> generatedIds(const cohere2c_request_t *request) {
  const int32_t *ids = nullptr;
  size_t count = 0;
  EXPECT_EQ(take(cohere2c_request_generated_ids(request, &ids, &count)).first,
            COHERE2C_STATUS_OK);
  return std::vector<int32_t>(ids, ids + count);
}

cohere2c_request_state_t stateOf(const cohere2c_request_t *request) {
  cohere2c_request_state_t state = COHERE2C_REQUEST_IN_FLIGHT;
  EXPECT_EQ(take(cohere2c_request_state(request, &state)).first,
            COHERE2C_STATUS_OK);
  return state;
}

void runToEnd(cohere2c_engine_t *engine) {
  for (bool work = true; work;) {
    ASSERT_C_OK(cohere2c_engine_step(engine));
    ASSERT_C_OK(cohere2c_engine_has_work(engine, &work));
  }
}

TEST(CApiTest, GreedyTokensAndLogitsMatchReference) {
  auto model = ReferenceModel::load("tiny-cohere2");
  Loaded loaded;
  load("tiny-cohere2", /*maxBatch=*/1, loaded);
  cohere2c_artifact_info_t info;
  ASSERT_C_OK(cohere2c_artifact_info(loaded.artifact, &info));
  EXPECT_STREQ(info.target, "host");
  for (const auto &[name, prompt] : model->prompts) {
    SCOPED_TRACE(name);
    cohere2c_request_options_t options =
        greedy(prompt, model->greedy[name].size());
    options.record_logits = true;
    cohere2c_request_t *request = nullptr;
    ASSERT_C_OK(cohere2c_engine_submit(loaded.engine, &options, &request));
    runToEnd(loaded.engine);
    EXPECT_EQ(stateOf(request), COHERE2C_REQUEST_FINISHED);
    EXPECT_EQ(generatedIds(request), model->greedy[name]);
    const float *logits = nullptr;
    int64_t rows = 0, firstRow = -1;
    ASSERT_C_OK(cohere2c_request_logits(request, &logits, &rows, &firstRow));
    int64_t referenceRows = 0;
    std::vector<float> reference = model->logits(name, referenceRows);
    // Later prompts reuse no cached block of earlier ones (no common
    // prefix), so every row is computed.
    EXPECT_EQ(firstRow, 0);
    ASSERT_EQ(rows, referenceRows);
    double maxDiff = 0;
    for (size_t i = 0; i < reference.size(); ++i)
      maxDiff = std::max(maxDiff, (double)std::fabs(logits[i] - reference[i]));
    EXPECT_LT(maxDiff, 1e-4) << "max |logits - reference|";
    cohere2c_request_release(request);
  }
}

// Each generated token's log probability is the log-softmax of the row that
// predicted it (the request's own recorded logits), and its top tokens are
// that row's largest, most likely first.
TEST(CApiTest, LogprobsAreTheLogSoftmaxOfTheLogits) {
  auto model = ReferenceModel::load("tiny-cohere2");
  Loaded loaded;
  load("tiny-cohere2", /*maxBatch=*/1, loaded);
  const std::vector<int32_t> &prompt = model->prompts.begin()->second;
  cohere2c_request_options_t options = greedy(prompt, 5);
  options.record_logits = true;
  options.top_logprobs = 3;
  cohere2c_request_t *request = nullptr;
  ASSERT_C_OK(cohere2c_engine_submit(loaded.engine, &options, &request));
  runToEnd(loaded.engine);
  std::vector<int32_t> ids = generatedIds(request);
  const float *logits = nullptr;
  int64_t rows = 0, firstRow = 0;
  ASSERT_C_OK(cohere2c_request_logits(request, &logits, &rows, &firstRow));
  int64_t vocab = 512;
  for (size_t t = 0; t < ids.size(); ++t) {
    SCOPED_TRACE("token " + std::to_string(t));
    const float *row = logits + (prompt.size() - 1 + t - firstRow) * vocab;
    double z = 0, top = *std::max_element(row, row + vocab);
    for (int64_t v = 0; v < vocab; ++v)
      z += std::exp((double)row[v] - top);
    auto logprobOf = [&](int32_t v) { return row[v] - top - std::log(z); };
    std::vector<int32_t> order(vocab);
    for (int64_t v = 0; v < vocab; ++v)
      order[v] = v;
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t b) { return row[a] > row[b]; });
    float logprob = 0, topLogprobs[COHERE2C_MAX_TOP_LOGPROBS];
    int32_t topIds[COHERE2C_MAX_TOP_LOGPROBS];
    size_t count = 0;
    ASSERT_C_OK(cohere2c_request_logprobs(request, t, &logprob, topIds,
                                          topLogprobs,
                                          COHERE2C_MAX_TOP_LOGPROBS, &count));
    EXPECT_NEAR(logprob, logprobOf(ids[t]), 1e-5);
    ASSERT_EQ(count, 3u);
    for (size_t i = 0; i < count; ++i) {
      EXPECT_EQ(topIds[i], order[i]);
      EXPECT_NEAR(topLogprobs[i], logprobOf(order[i]), 1e-5);
    }
  }
  float logprob = 0, one[1];
  int32_t oneId[1];
  size_t count = 0;
  EXPECT_EQ(take(cohere2c_request_logprobs(request, ids.size(), &logprob, oneId,
                                           one, 1, &count))
                .first,
            COHERE2C_STATUS_INVALID_ARGUMENT);
  auto small = take(
      cohere2c_request_logprobs(request, 0, &logprob, oneId, one, 1, &count));
  EXPECT_EQ(small.first, COHERE2C_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(small.second.find("room for 1 of its 3"), std::string::npos)
      << small.second;
  cohere2c_request_release(request);

  cohere2c_request_options_t plain = greedy(prompt, 1);
  ASSERT_C_OK(cohere2c_engine_submit(loaded.engine, &plain, &request));
  runToEnd(loaded.engine);
  EXPECT_EQ(take(cohere2c_request_logprobs(request, 0, &logprob, oneId, one, 1,
                                           &count))
                .first,
            COHERE2C_STATUS_FAILED_PRECONDITION);
  cohere2c_request_release(request);
}

// validate answers what submit would, and queues nothing; the load and the
// KV groups' blocks follow the requests (every block of the pool free, or
// used or evictable in one group).
TEST(CApiTest, ValidateAndLoadFollowTheEngine) {
  auto model = ReferenceModel::load("tiny-cohere2");
  Loaded loaded;
  load("tiny-cohere2", /*maxBatch=*/1, loaded);
  const std::vector<int32_t> &prompt = model->prompts.begin()->second;
  cohere2c_request_options_t options = greedy(prompt, 4);
  ASSERT_C_OK(cohere2c_engine_validate(loaded.engine, &options));
  std::vector<int32_t> bad = {5, 512};
  cohere2c_request_options_t badOptions = greedy(bad, 1);
  auto refused = take(cohere2c_engine_validate(loaded.engine, &badOptions));
  EXPECT_EQ(refused.first, COHERE2C_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(refused.second.find("512"), std::string::npos) << refused.second;
  cohere2c_engine_load_t load = {};
  ASSERT_C_OK(cohere2c_engine_load(loaded.engine, &load));
  EXPECT_EQ(load.running + load.waiting, 0);
  // tiny-cohere2: 2 full and 6 sliding layers in 4 groups of 2 layers.
  ASSERT_EQ(load.kv_groups, 4u);
  EXPECT_EQ(load.free_kv_blocks, 128);

  cohere2c_request_t *first = nullptr, *second = nullptr;
  ASSERT_C_OK(cohere2c_engine_submit(loaded.engine, &options, &first));
  ASSERT_C_OK(cohere2c_engine_submit(loaded.engine, &options, &second));
  ASSERT_C_OK(cohere2c_engine_step(loaded.engine));
  ASSERT_C_OK(cohere2c_engine_load(loaded.engine, &load));
  EXPECT_EQ(load.running, 1); // max_batch 1
  EXPECT_EQ(load.waiting, 1);
  auto group = [&](size_t g) {
    cohere2c_kv_group_t out = {};
    cohere2c_status_t s = cohere2c_engine_kv_group(loaded.engine, g, &out);
    EXPECT_EQ(s, nullptr);
    cohere2c_status_free(s);
    return out;
  };
  // Every block is free or held by one group; the prompt's blocks are used
  // in each group (the window of 8 keeps the last block or two of a prompt
  // longer than that).
  auto heldByGroups = [&] {
    int64_t held = 0;
    for (size_t g = 0; g < 4; ++g)
      held += group(g).used_blocks + group(g).evictable_blocks;
    return held;
  };
  ASSERT_C_OK(cohere2c_engine_load(loaded.engine, &load));
  EXPECT_EQ(heldByGroups() + load.free_kv_blocks, 128);
  int64_t prompting = (prompt.size() + 3) / 4;
  EXPECT_GE(group(0).used_blocks, prompting);
  for (size_t g = 1; g < 4; ++g)
    EXPECT_GE(group(g).used_blocks, 1) << g;
  cohere2c_kv_group_t fifth;
  auto outside = take(cohere2c_engine_kv_group(loaded.engine, 4, &fifth));
  EXPECT_EQ(outside.first, COHERE2C_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(outside.second.find("group 4 of an engine with 4 KV groups"),
            std::string::npos)
      << outside.second;
  runToEnd(loaded.engine);
  ASSERT_C_OK(cohere2c_engine_load(loaded.engine, &load));
  EXPECT_EQ(load.running + load.waiting, 0);
  for (size_t g = 0; g < 4; ++g)
    EXPECT_EQ(group(g).used_blocks, 0) << g;
  EXPECT_EQ(heldByGroups() + load.free_kv_blocks, 128);
  EXPECT_STREQ(group(0).name, "full");
  EXPECT_STREQ(group(1).name, "sliding8.0");
  EXPECT_STREQ(group(3).name, "sliding8.2");
  cohere2c_request_release(first);
  cohere2c_request_release(second);
}

TEST(CApiTest, CancelEndsAWaitingRequest) {
  auto model = ReferenceModel::load("tiny-cohere2");
  Loaded loaded;
  load("tiny-cohere2", /*maxBatch=*/1, loaded);
  const std::vector<int32_t> &prompt = model->prompts.at("len12");
  cohere2c_request_options_t options = greedy(prompt, 4);
  cohere2c_request_t *first = nullptr, *second = nullptr;
  ASSERT_C_OK(cohere2c_engine_submit(loaded.engine, &options, &first));
  ASSERT_C_OK(cohere2c_engine_submit(loaded.engine, &options, &second));
  ASSERT_C_OK(cohere2c_engine_step(loaded.engine));
  // A batch of one: the second waits behind the first.
  EXPECT_EQ(generatedIds(second).size(), 0u);
  ASSERT_C_OK(cohere2c_request_cancel(second));
  EXPECT_EQ(stateOf(second), COHERE2C_REQUEST_CANCELLED);
  runToEnd(loaded.engine);
  EXPECT_EQ(stateOf(first), COHERE2C_REQUEST_FINISHED);
  EXPECT_EQ(generatedIds(first),
            std::vector<int32_t>(model->greedy["len12"].begin(),
                                 model->greedy["len12"].begin() + 4));
  EXPECT_EQ(generatedIds(second).size(), 0u);
  // Cancelling what has ended is no error.
  ASSERT_C_OK(cohere2c_request_cancel(first));
  EXPECT_EQ(stateOf(first), COHERE2C_REQUEST_FINISHED);
  cohere2c_request_release(first);
  cohere2c_request_release(second);
}

TEST(CApiTest, RequestOutlivesItsReleasedEngineAndArtifact) {
  auto model = ReferenceModel::load("tiny-cohere2");
  const std::vector<int32_t> &prompt = model->prompts.at("len12");
  cohere2c_request_t *request = nullptr;
  cohere2c_engine_t *engine = nullptr;
  {
    Loaded loaded;
    load("tiny-cohere2", /*maxBatch=*/1, loaded);
    cohere2c_request_options_t options = greedy(prompt, 3);
    ASSERT_C_OK(cohere2c_engine_submit(loaded.engine, &options, &request));
    engine = loaded.engine;
    cohere2c_engine_retain(engine);
  } // the caller's first references go here
  runToEnd(engine);
  cohere2c_engine_release(engine);
  EXPECT_EQ(generatedIds(request),
            std::vector<int32_t>(model->greedy["len12"].begin(),
                                 model->greedy["len12"].begin() + 3));
  cohere2c_request_release(request);
}

TEST(CApiTest, ErrorsComeBackAsStatuses) {
  Loaded loaded;
  load("tiny-cohere2", /*maxBatch=*/1, loaded);
  auto [code, message] =
      take(cohere2c_artifact_load_weights(loaded.artifact, nullptr));
  EXPECT_EQ(code, COHERE2C_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(message.find("weights already bound"), std::string::npos);

  std::vector<int32_t> prompt = {5, 17, 33};
  cohere2c_request_options_t options = greedy(prompt, 4);
  options.id = "hot";
  options.temperature = NAN;
  cohere2c_request_t *request = nullptr;
  std::tie(code, message) =
      take(cohere2c_engine_submit(loaded.engine, &options, &request));
  EXPECT_EQ(code, COHERE2C_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("request hot: temperature"), std::string::npos)
      << message;
  EXPECT_EQ(request, nullptr);

  options.temperature = 0;
  options.max_new_tokens = 9000;
  std::tie(code, message) =
      take(cohere2c_engine_submit(loaded.engine, &options, &request));
  EXPECT_EQ(code, COHERE2C_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("max_position_embeddings"), std::string::npos)
      << message;

  options.max_new_tokens = 4;
  ASSERT_C_OK(cohere2c_engine_submit(loaded.engine, &options, &request));
  const float *logits = nullptr;
  int64_t rows = 0, firstRow = 0;
  std::tie(code, message) =
      take(cohere2c_request_logits(request, &logits, &rows, &firstRow));
  EXPECT_EQ(code, COHERE2C_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(message.find("request hot"), std::string::npos) << message;
  cohere2c_request_release(request);

  std::tie(code, message) = take(cohere2c_engine_step(nullptr));
  EXPECT_EQ(code, COHERE2C_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("engine is NULL"), std::string::npos) << message;
}

TEST(CApiTest, TextCallsAgree) {
  cohere2c_artifact_t *artifact = nullptr;
  ASSERT_C_OK(cohere2c_artifact_open(artifactPath("trained-cohere2").c_str(),
                                     &artifact));
  cohere2c_artifact_info_t info;
  ASSERT_C_OK(cohere2c_artifact_info(artifact, &info));
  EXPECT_TRUE(info.has_tokenizer && info.has_chat_template);
  EXPECT_FALSE(info.has_weights);
  cohere2c_text_t *model = nullptr;
  ASSERT_C_OK(cohere2c_artifact_text(artifact, &model));
  // The text handle outlives the artifact it came from.
  cohere2c_artifact_release(artifact);

  const std::string text = "Hello, world! Ça va?";
  int32_t *ids = nullptr;
  size_t count = 0;
  ASSERT_C_OK(cohere2c_text_encode(model, text.data(), text.size(),
                                   /*add_special_tokens=*/false, &ids, &count));
  char *decoded = nullptr;
  size_t length = 0;
  ASSERT_C_OK(cohere2c_text_decode(model, ids, count,
                                   /*skip_special_tokens=*/true, &decoded,
                                   &length));
  EXPECT_EQ(std::string(decoded, length), text);
  cohere2c_free(decoded);

  // Streaming pieces join to the whole decode.
  cohere2c_decoder_t *decoder = nullptr;
  ASSERT_C_OK(cohere2c_decoder_create(model, true, &decoder));
  std::string streamed;
  for (size_t i = 0; i < count; ++i) {
    char *piece = nullptr;
    ASSERT_C_OK(cohere2c_decoder_push(decoder, ids[i], &piece, &length));
    streamed.append(piece, length);
    cohere2c_free(piece);
  }
  char *rest = nullptr;
  ASSERT_C_OK(cohere2c_decoder_finish(decoder, &rest, &length));
  streamed.append(rest, length);
  cohere2c_free(rest);
  cohere2c_decoder_release(decoder);
  EXPECT_EQ(streamed, text);
  cohere2c_free(ids);

  // A chat's ids are its rendering's, encoded without special tokens.
  const char *chat = R"({"messages": [{"role": "user", "content": "Hi"}]})";
  char *rendered = nullptr;
  ASSERT_C_OK(cohere2c_text_render_chat(model, chat, true, &rendered, &length));
  std::string renderedText(rendered, length);
  cohere2c_free(rendered);
  EXPECT_NE(renderedText.find("Hi"), std::string::npos);
  ASSERT_C_OK(cohere2c_text_encode_chat(model, chat, true, &ids, &count));
  std::vector<int32_t> chatIds(ids, ids + count);
  cohere2c_free(ids);
  ASSERT_C_OK(cohere2c_text_encode(model, renderedText.data(),
                                   renderedText.size(), false, &ids, &count));
  EXPECT_EQ(chatIds, std::vector<int32_t>(ids, ids + count));
  cohere2c_free(ids);

  auto [code, message] = take(
      cohere2c_text_render_chat(model, "[1, 2]", true, &rendered, &length));
  EXPECT_EQ(code, COHERE2C_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("chat"), std::string::npos) << message;
  cohere2c_text_release(model);
}

/// The ids of `text` with special tokens, by `model`.
std::vector<int32_t> encoded(const cohere2c_text_t *model,
                             const std::string &text) {
  int32_t *ids = nullptr;
  size_t count = 0;
  cohere2c_status_t status =
      cohere2c_text_encode(model, text.data(), text.size(), true, &ids, &count);
  bool ok = status == nullptr;
  EXPECT_TRUE(ok) << cohere2c_status_message(status);
  cohere2c_status_free(status);
  if (!ok)
    return {};
  std::vector<int32_t> taken(ids, ids + count);
  cohere2c_free(ids);
  return taken;
}

TEST(CApiTest, TextOpensFromAFolderOrALibrary) {
  cohere2c_text_t *fromFolder = nullptr, *fromLibrary = nullptr;
  ASSERT_C_OK(cohere2c_text_open(
      COHERE2C_TEST_DATA_DIR "/models/trained-cohere2", &fromFolder));
  ASSERT_C_OK(cohere2c_text_open(artifactPath("trained-cohere2").c_str(),
                                 &fromLibrary));
  // Hugging Face's ids of the first of the model's tokenizer cases
  // (tokenizer_cases.json), from the folder's tokenizer.json and from the
  // copy in the library.
  const std::vector<int32_t> expected = {5, 1566, 3649, 19, 1747, 8};
  EXPECT_EQ(encoded(fromFolder, "Hello, world!"), expected);
  EXPECT_EQ(encoded(fromLibrary, "Hello, world!"), expected);
  cohere2c_text_release(fromFolder);
  cohere2c_text_release(fromLibrary);

  cohere2c_text_t *text0 = nullptr;
  auto [code, message] = take(cohere2c_text_open("/nonexistent/model", &text0));
  EXPECT_EQ(code, COHERE2C_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("/nonexistent/model"), std::string::npos) << message;
  // A library compiled from a folder without tokenizer.json.
  std::tie(code, message) =
      take(cohere2c_text_open(artifactPath("tiny-cohere2").c_str(), &text0));
  EXPECT_EQ(code, COHERE2C_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("no tokenizer"), std::string::npos) << message;
  EXPECT_EQ(text0, nullptr);
}

} // namespace
} // namespace cohere2c::test
