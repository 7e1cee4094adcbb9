//===- Api.cpp ------------------------------------------------------------===//

#include "serve/Api.h"
#include "Support/Json.h"

#include <cctype>
#include <ctime>
#include <string_view>

namespace cohere2c::serve {

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

namespace {

HttpResponse jsonResponse(const json &body, int status = 200) {
  HttpResponse r;
  r.status = status;
  r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

/// Compares in time independent of where the strings first differ.
bool sameSecret(const std::string &a, const std::string &b) {
  unsigned char diff = a.size() != b.size();
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    diff |= (unsigned char)(a[i] ^ b[i]);
  return diff == 0;
}

/// The token of "Bearer TOKEN" (the scheme case-insensitive, RFC 9110
/// 11.1); empty for any other value.
std::string bearerToken(const std::string &authorization) {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size())
    return "";
  for (size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower((unsigned char)authorization[i]) != kScheme[i])
      return "";
  return authorization.substr(kScheme.size());
}

} // namespace

HttpResponse Api::errorResponse(const ApiError &error) {
  HttpResponse r = jsonResponse(error.body(), error.status);
  if (error.status == 503)
    r.headers.push_back({"Retry-After", "1"});
  return r;
}

HttpResponse Api::handle(const HttpRequest &request, StreamWriter &stream) {
  const std::string &path = request.path;
  bool get = request.method == "GET", post = request.method == "POST";
  if (path == "/health")
    return get ? (context_.load()
                      ? jsonResponse(json::object())
                      : errorResponse({503, "the model is loading"}))
               : errorResponse({405, "use GET for /health"});
  if (path == "/metrics") {
    if (!get)
      return errorResponse({405, "use GET for /metrics"});
    HttpResponse r;
    r.contentType = "text/plain; version=0.0.4; charset=utf-8";
    r.body = metrics_.prometheusText();
    return r;
  }
  static const char *kPost[] = {"/v1/chat/completions", "/v1/completions",
                                "/tokenize", "/detokenize"};
  bool known =
      path == "/v1/models" ||
      std::find(std::begin(kPost), std::end(kPost), path) != std::end(kPost);
  if (!known)
    return errorResponse({404, "no route " + request.method + " " + path});
  if (!apiKey_.empty() && !sameSecret(bearerToken(request.authorization), apiKey_))
    return errorResponse(
        {401, "a missing or wrong API key (Authorization: Bearer KEY)"});
  if (path == "/v1/models")
    return get ? models() : errorResponse({405, "use GET for /v1/models"});
  if (!post)
    return errorResponse({405, "use POST for " + path});
  if (!context_.load())
    return errorResponse({503, "the model is loading"});
  if (path == "/v1/chat/completions" || path == "/v1/completions")
    return completions(request, stream, path == "/v1/chat/completions");
  return path == "/tokenize" ? tokenize(request) : detokenize(request);
}

HttpResponse Api::completions(const HttpRequest &request, StreamWriter &stream,
                              bool chat) {
  Clock::time_point arrived = Clock::now();
  const CompletionContext &ctx = *context_.load();
  json body;
  CompletionSpec spec;
  std::optional<ApiError> error = parseBody(request.body, body);
  if (!error && body.contains("model") && !body["model"].is_string())
    error = ApiError::badRequest("model must be a string", "model");
  if (!error && body.contains("model") &&
      body["model"].get<std::string>() != modelName_)
    error = ApiError{404,
                     "the model " + jsonExcerpt(body["model"]) +
                         " does not exist (this server "
                         "serves \"" +
                         modelName_ + "\")",
                     "model"};
  if (!error)
    error = chat ? parseChatRequest(body, ctx.text, spec)
                 : parseCompletionRequest(
                       body, ctx.text, ctx.text.tokenizer().vocabSize(), spec);
  if (error) {
    metrics_.rejected(error->status);
    return errorResponse(*error);
  }
  bool started = false;
  ResponseSink sink;
  sink.sendEvent = [&](const std::string &data) {
    if (!started && !(started = stream.start()))
      return false;
    return stream.sendEvent(data);
  };
  sink.clientGone = [&] { return stream.clientGone(); };
  auto result = serveCompletion(spec, ctx, sink, arrived);
  if (auto *failed = std::get_if<ApiError>(&result)) {
    if (failed->status == 400 || failed->status == 503)
      metrics_.rejected(failed->status);
    if (!started)
      return errorResponse(*failed);
    // An error after the stream began: as vLLM, an error event, then done.
    if (failed->status != 499)
      stream.sendEvent(failed->body().dump());
  } else if (!spec.stream) {
    HttpResponse r;
    r.body = std::move(std::get<std::string>(result));
    return r;
  }
  if (started || (started = stream.start())) {
    stream.sendEvent("[DONE]");
    stream.finish();
  }
  HttpResponse done;
  done.streamed = true;
  return done;
}

HttpResponse Api::tokenize(const HttpRequest &request) {
  const CompletionContext &ctx = *context_.load();
  json body;
  if (auto error = parseBody(request.body, body))
    return errorResponse(*error);
  auto flag = [&](const char *name, bool fallback) -> std::optional<bool> {
    if (!body.contains(name))
      return fallback;
    return body[name].is_boolean() ? std::optional<bool>(body[name].get<bool>())
                                   : std::nullopt;
  };
  std::optional<bool> generationPrompt = flag("add_generation_prompt", true);
  std::optional<bool> special = flag("add_special_tokens", true);
  if (!generationPrompt || !special)
    return errorResponse(ApiError::badRequest(
        "add_generation_prompt and add_special_tokens must be true or false"));
  StatusOr<std::vector<int32_t>> ids = Status::error("");
  if (body.contains("messages")) {
    ids = ctx.text.encodeChat(body, *generationPrompt);
  } else if (body.contains("prompt") && body["prompt"].is_string()) {
    ids = ctx.text.tokenizer().encode(body["prompt"].get<std::string>(),
                                      *special);
  } else {
    return errorResponse(
        ApiError::badRequest("give prompt (a string) or messages"));
  }
  if (!ids.ok())
    return errorResponse(ApiError::badRequest(ids.status().message()));
  return jsonResponse({{"tokens", *ids},
                       {"count", ids->size()},
                       {"max_model_len", ctx.contextLength}});
}

HttpResponse Api::detokenize(const HttpRequest &request) {
  const CompletionContext &ctx = *context_.load();
  json body;
  if (auto error = parseBody(request.body, body))
    return errorResponse(*error);
  std::vector<int32_t> ids;
  const json &tokens = body.value("tokens", json());
  bool ok = tokens.is_array();
  for (const json &t : tokens) {
    ok &= t.is_number_integer() && t.get<int64_t>() >= 0 &&
          t.get<int64_t>() <= INT32_MAX;
    if (ok)
      ids.push_back(t.get<int32_t>());
  }
  if (!ok)
    return errorResponse(
        ApiError::badRequest("tokens must be a list of token ids", "tokens"));
  auto text = ctx.text.tokenizer().decode(ids, /*skipSpecialTokens=*/false);
  if (!text.ok())
    return errorResponse(
        ApiError::badRequest(text.status().message(), "tokens"));
  return jsonResponse({{"prompt", *text}});
}

HttpResponse Api::models() const {
  const CompletionContext *ctx = context_.load();
  json model = {{"id", modelName_},
                {"object", "model"},
                {"created", (int64_t)std::time(nullptr)},
                {"owned_by", "cohere2c"}};
  if (ctx)
    model["max_model_len"] = ctx->contextLength;
  return jsonResponse({{"object", "list"}, {"data", json::array({model})}});
}

} // namespace cohere2c::serve
