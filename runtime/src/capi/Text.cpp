//===- Text.cpp - The C API's text handle and streaming decoder -----------===//
//
// cohere2c_text_t shares the ModelText of the artifact it came from, or owns
// one read from a checkpoint folder or a library's text files alone, so
// that a tokenizer tool need not load a model's code or weights.
//
//===----------------------------------------------------------------------===//

#include "cohere2c/runtime.h"

#include "Artifact.h"
#include "Artifact/TextFiles.h"
#include "ModelLoading.h"
#include "Support/Json.h"
#include "capi/Handles.h"

#include <sys/stat.h>

using namespace cohere2c;
using namespace cohere2c::capi;

// The text handle (one reference) is declared first, so that it outlives
// the decoder that reads its tokenizer.
struct cohere2c_decoder_t {
  TextHandle text;
  text::IncrementalDecoder decoder;
};

namespace {

/// The text files of a checkpoint folder, or those a library carries.
StatusOr<std::shared_ptr<const text::ModelText>>
openText(const std::string &path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0)
    return Status::error(path + ": no such checkpoint folder or library");
  StatusOr<std::unique_ptr<text::ModelText>> model =
      std::unique_ptr<text::ModelText>();
  if (S_ISDIR(info.st_mode)) {
    auto files = TextFiles::readCheckpoint(path);
    if (!files.ok())
      return files.status();
    model = text::ModelText::create(*files, path, {});
  } else {
    auto artifact = LoadedArtifact::load(path);
    if (!artifact.ok())
      return artifact.status();
    model = loadText(**artifact);
  }
  if (!model.ok())
    return model.status();
  if (!*model)
    return Status::error(path + " carries no tokenizer " + kNoTokenizerReason);
  return std::shared_ptr<const text::ModelText>(std::move(*model));
}

cohere2c_status_t needText(const cohere2c_text_t *text, const char *function) {
  return text ? nullptr : nullArgument(function, "text");
}

/// The checks of the chat calls (a text with a chat template, a chat), then
/// `chatJson` parsed into `chat`: a JSON object, for ModelText's chat calls.
cohere2c_status_t chatArgument(const cohere2c_text_t *text,
                               const char *function, const char *chatJson,
                               nlohmann::ordered_json &chat) {
  if (cohere2c_status_t s = needText(text, function))
    return s;
  if (!chatJson)
    return nullArgument(function, "chat_json");
  if (!text->model->hasChatTemplate())
    return makeStatus(COHERE2C_STATUS_FAILED_PRECONDITION,
                      text->source + " carries no chat template");
  StatusOr<nlohmann::ordered_json> parsed =
      parseJson<nlohmann::ordered_json>(chatJson, "chat");
  if (!parsed.ok())
    return statusOf(parsed.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
  if (!parsed->is_object())
    return makeStatus(COHERE2C_STATUS_INVALID_ARGUMENT,
                      "chat: not a JSON object");
  chat = std::move(*parsed);
  return nullptr;
}

} // namespace

cohere2c_status_t cohere2c_text_open(const char *path,
                                     cohere2c_text_t **out_text) {
  if (!path || !out_text)
    return nullArgument("cohere2c_text_open", "path or out_text");
  auto model = openText(path);
  if (!model.ok())
    return statusOf(model.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
  *out_text = new cohere2c_text_t{{1}, std::move(*model), path};
  return nullptr;
}

cohere2c_status_t cohere2c_artifact_text(const cohere2c_artifact_t *artifact,
                                         cohere2c_text_t **out_text) {
  if (!artifact || !out_text)
    return nullArgument("cohere2c_artifact_text", "artifact or out_text");
  if (!artifact->text)
    return makeStatus(COHERE2C_STATUS_FAILED_PRECONDITION,
                      artifact->loaded->path() + " carries no tokenizer " +
                          kNoTokenizerReason);
  *out_text =
      new cohere2c_text_t{{1}, artifact->text, artifact->loaded->path()};
  return nullptr;
}

void cohere2c_text_retain(cohere2c_text_t *text) {
  if (text)
    text->references.fetch_add(1);
}

void cohere2c_text_release(cohere2c_text_t *text) { releaseReference(text); }

cohere2c_status_t cohere2c_text_encode(const cohere2c_text_t *text,
                                       const char *utf8, size_t length,
                                       bool add_special_tokens,
                                       int32_t **out_ids, size_t *out_count) {
  if (cohere2c_status_t s = needText(text, "cohere2c_text_encode"))
    return s;
  if (!utf8 || !out_ids || !out_count)
    return nullArgument("cohere2c_text_encode", "utf8, out_ids or out_count");
  auto ids = text->model->tokenizer().encode(std::string_view(utf8, length),
                                             add_special_tokens);
  if (!ids.ok())
    return statusOf(ids.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
  copyOut(*ids, out_ids, out_count);
  return nullptr;
}

cohere2c_status_t cohere2c_text_decode(const cohere2c_text_t *text,
                                       const int32_t *ids, size_t count,
                                       bool skip_special_tokens,
                                       char **out_utf8, size_t *out_length) {
  if (cohere2c_status_t s = needText(text, "cohere2c_text_decode"))
    return s;
  if ((!ids && count) || !out_utf8)
    return nullArgument("cohere2c_text_decode", "ids or out_utf8");
  auto decoded = text->model->tokenizer().decode(
      std::vector<int32_t>(ids, ids + count), skip_special_tokens);
  if (!decoded.ok())
    return statusOf(decoded.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
  copyOut(*decoded, out_utf8, out_length);
  return nullptr;
}

cohere2c_status_t cohere2c_text_render_chat(const cohere2c_text_t *text,
                                            const char *chat_json,
                                            bool add_generation_prompt,
                                            char **out_utf8,
                                            size_t *out_length) {
  if (!out_utf8)
    return nullArgument("cohere2c_text_render_chat", "out_utf8");
  nlohmann::ordered_json chat;
  if (cohere2c_status_t s =
          chatArgument(text, "cohere2c_text_render_chat", chat_json, chat))
    return s;
  auto rendered = text->model->renderChat(chat, add_generation_prompt);
  if (!rendered.ok())
    return statusOf(rendered.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
  copyOut(*rendered, out_utf8, out_length);
  return nullptr;
}

cohere2c_status_t cohere2c_text_encode_chat(const cohere2c_text_t *text,
                                            const char *chat_json,
                                            bool add_generation_prompt,
                                            int32_t **out_ids,
                                            size_t *out_count) {
  if (!out_ids || !out_count)
    return nullArgument("cohere2c_text_encode_chat", "out_ids or out_count");
  nlohmann::ordered_json chat;
  if (cohere2c_status_t s =
          chatArgument(text, "cohere2c_text_encode_chat", chat_json, chat))
    return s;
  auto ids = text->model->encodeChat(chat, add_generation_prompt);
  if (!ids.ok())
    return statusOf(ids.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
  copyOut(*ids, out_ids, out_count);
  return nullptr;
}

cohere2c_status_t cohere2c_decoder_create(cohere2c_text_t *text,
                                          bool skip_special_tokens,
                                          cohere2c_decoder_t **out_decoder) {
  if (!text || !out_decoder)
    return nullArgument("cohere2c_decoder_create", "text or out_decoder");
  cohere2c_text_retain(text);
  *out_decoder = new cohere2c_decoder_t{
      TextHandle(text),
      text::IncrementalDecoder(text->model->tokenizer(), skip_special_tokens)};
  return nullptr;
}

cohere2c_status_t cohere2c_decoder_push(cohere2c_decoder_t *decoder, int32_t id,
                                        char **out_text, size_t *out_length) {
  if (!decoder || !out_text)
    return nullArgument("cohere2c_decoder_push", "decoder or out_text");
  auto piece = decoder->decoder.push(id);
  if (!piece.ok())
    return statusOf(piece.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
  copyOut(*piece, out_text, out_length);
  return nullptr;
}

cohere2c_status_t cohere2c_decoder_finish(cohere2c_decoder_t *decoder,
                                          char **out_text, size_t *out_length) {
  if (!decoder || !out_text)
    return nullArgument("cohere2c_decoder_finish", "decoder or out_text");
  copyOut(decoder->decoder.finish(), out_text, out_length);
  return nullptr;
}

void cohere2c_decoder_release(cohere2c_decoder_t *decoder) { delete decoder; }
