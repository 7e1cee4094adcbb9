//===- Completion.cpp -----------------------------------------------------===//

#include "serve/Completion.h"

#include <algorithm>
#include <atomic>
#include <ctime>
#include <random>

namespace cohere2c::serve {

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string newId(bool chat) {
  static std::atomic<uint64_t> next{1};
  char text[48];
  std::snprintf(
      text, sizeof text, "%s-%016llx%08llx", chat ? "chatcmpl" : "cmpl",
      (unsigned long long)std::time(nullptr), (unsigned long long)next++);
  return text;
}

/// The end of the longest prefix of `text` that ends on a whole UTF-8
/// character, at or before `end`.
size_t characterBoundary(const std::string &text, size_t end) {
  while (end > 0 && end < text.size() &&
         ((unsigned char)text[end] & 0xC0) == 0x80)
    --end;
  return end;
}

/// One choice: an engine request and the text it has produced.
struct Choice {
  Choice(const text::Tokenizer &tokenizer)
      : decoder(tokenizer, /*skipSpecialTokens=*/true) {}
  std::shared_ptr<RequestStream> stream;
  text::IncrementalDecoder decoder;
  int64_t promptTokens = 0, cachedTokens = 0, generated = 0;
  std::string text; // decoded so far; cut at a stop string
  size_t sent = 0;  // bytes of text already streamed
  json logprobs =
      json::array();        // entries not yet streamed (or all, unstreamed)
  std::string finishReason; // empty while running
  double ttft = -1;
  int32_t lastToken = -1;
};

class CompletionRun {
public:
  CompletionRun(const CompletionSpec &spec, const CompletionContext &context,
                const ResponseSink &sink, Clock::time_point arrived)
      : spec(spec), ctx(context), sink(sink), arrived(arrived),
        id(newId(spec.chat)), created(std::time(nullptr)) {
    for (const std::string &s : spec.stop)
      longestStop = std::max(longestStop, s.size());
  }

  std::variant<std::string, ApiError> run() {
    if (auto error = submit())
      return *error;
    if (spec.stream && spec.chat)
      for (size_t i = 0; i < choices.size(); ++i)
        if (!send(chunk(i, {{"role", "assistant"}, {"content", ""}}, json(),
                        json())))
          return cancelAll();
    while (std::any_of(choices.begin(), choices.end(), [](const Choice &c) {
      return c.finishReason.empty();
    })) {
      if (sink.clientGone && sink.clientGone())
        return cancelAll();
      if (auto error = poll())
        return *error;
      if (clientLeft)
        return cancelAll();
    }
    for (Choice &c : choices)
      ctx.metrics.finished(c.finishReason == "length" ? "length" : "stop",
                           c.promptTokens, c.cachedTokens, c.generated, c.ttft,
                           secondsSince(arrived));
    if (!spec.stream)
      return body().dump(-1, ' ', false, json::error_handler_t::replace);
    if (spec.includeUsage) {
      json last = chunkHeader();
      last["choices"] = json::array();
      last["usage"] = usage();
      send(last);
    }
    return std::string();
  }

private:
  std::optional<ApiError> submit() {
    // More prompts than the queue holds would get 503 on every retry.
    if ((int64_t)spec.prompts.size() > ctx.engine.maxWaiting())
      return ApiError::badRequest(
          std::to_string(spec.prompts.size()) +
              " prompts in one request; the server queues at most " +
              std::to_string(ctx.engine.maxWaiting()),
          "prompt");
    for (const std::vector<int32_t> &prompt : spec.prompts) {
      OwnedRequest r;
      r.id = id + "-" + std::to_string(requests.size());
      r.promptIds = prompt;
      int64_t room = ctx.contextLength - (int64_t)prompt.size() + 1;
      if (room < 1)
        return ApiError::badRequest(
            "the prompt (" + std::to_string(prompt.size()) +
                " tokens) is longer than the context (" +
                std::to_string(ctx.contextLength) + " tokens)",
            spec.chat ? "messages" : "prompt");
      if (spec.maxTokens && *spec.maxTokens > room)
        return ApiError::badRequest(
            "max_tokens (" + std::to_string(*spec.maxTokens) + ") is more than the " +
                std::to_string(room) + " tokens the context (" +
                std::to_string(ctx.contextLength) + ") leaves after the prompt (" +
                std::to_string(prompt.size()) + " tokens)",
            "max_tokens");
      cohere2c_request_options_t &o = r.options;
      o.max_new_tokens = spec.maxTokens.value_or(room);
      o.temperature = spec.temperature;
      o.top_k = spec.topK;
      o.top_p = spec.topP;
      o.seed = spec.seed ? *spec.seed
                         : ((uint64_t)std::random_device{}() << 32) ^
                               std::random_device{}();
      o.ignore_eos = spec.ignoreEos;
      o.top_logprobs = spec.topLogprobs;
      Status valid = ctx.engine.validate(r);
      if (!valid.ok())
        return ApiError::badRequest(valid.message());
      requests.push_back(r);
    }
    choices.reserve(requests.size()); // a Choice's decoder stays where it is
    for (const OwnedRequest &r : requests) {
      auto stream = ctx.engine.submit(r);
      if (!stream.ok()) {
        cancelAll();
        return ApiError{503, stream.status().message()};
      }
      choices.emplace_back(ctx.text.tokenizer());
      choices.back().stream = *stream;
      choices.back().promptTokens = r.promptIds.size();
    }
    return std::nullopt;
  }

  /// Waits a little for events and handles those that came.
  std::optional<ApiError> poll() {
    for (size_t i = 0; i < choices.size(); ++i) {
      Choice &c = choices[i];
      if (!c.finishReason.empty())
        continue;
      auto wait = std::chrono::milliseconds(choices.size() == 1 ? 50 : 5);
      for (StreamEvent &event : c.stream->wait(wait)) {
        if (event.kind == StreamEvent::Failed) {
          cancelAll();
          bool busy = event.error == EngineLoop::kShuttingDown;
          ctx.metrics.finished("error", c.promptTokens, 0, c.generated, c.ttft,
                               secondsSince(arrived));
          return ApiError{busy ? 503 : 500, event.error};
        }
        if (event.kind == StreamEvent::Token)
          onToken(i, event);
        else
          onFinished(i, event.cachedTokens);
        if (!c.finishReason.empty())
          break;
      }
      flush(i);
    }
    return std::nullopt;
  }

  void onToken(size_t i, const StreamEvent &event) {
    Choice &c = choices[i];
    if (c.ttft < 0) {
      c.ttft = secondsSince(arrived);
      ctx.metrics.firstToken(c.ttft);
    }
    ++c.generated;
    c.lastToken = event.token;
    if (event.logprobs)
      c.logprobs.push_back(logprobEntry(event.token, *event.logprobs));
    auto piece = c.decoder.push(event.token);
    if (piece.ok())
      c.text += *piece;
    if (cutAtStop(c)) {
      c.finishReason = "stop";
      ctx.engine.cancel(c.stream);
    }
  }

  void onFinished(size_t i, int64_t cachedTokens) {
    Choice &c = choices[i];
    c.cachedTokens = cachedTokens;
    c.text += c.decoder.finish();
    bool stopped = cutAtStop(c);
    const auto &eos = ctx.eosTokenIds;
    bool eos_ = std::find(eos.begin(), eos.end(), c.lastToken) != eos.end();
    c.finishReason = stopped || (eos_ && !spec.ignoreEos) ? "stop" : "length";
  }

  /// Cuts the text at the first stop string in it; whether there was one.
  bool cutAtStop(Choice &c) const {
    if (spec.stop.empty())
      return false;
    size_t from = c.sent, first = std::string::npos;
    for (const std::string &s : spec.stop) {
      size_t at = c.text.find(s, from > s.size() ? from - s.size() : 0);
      first = std::min(first, at);
    }
    if (first == std::string::npos)
      return false;
    c.text.resize(first);
    return true;
  }

  /// Streams what of choice i's text can no longer begin a stop string.
  void flush(size_t i) {
    Choice &c = choices[i];
    if (!spec.stream || clientLeft)
      return;
    bool done = !c.finishReason.empty();
    size_t safe =
        done ? c.text.size()
             : characterBoundary(
                   c.text,
                   c.text.size() - std::min(c.text.size(),
                                            longestStop ? longestStop - 1 : 0));
    safe = std::max(safe, c.sent);
    std::string piece = c.text.substr(c.sent, safe - c.sent);
    if (piece.empty() && c.logprobs.empty() && !done)
      return;
    json logprobs = c.logprobs.empty() ? json() : logprobsBlock(c.logprobs);
    json finish = done ? json(c.finishReason) : json();
    json delta = spec.chat ? json{{"content", piece}} : json(piece);
    if (done && spec.chat && piece.empty())
      delta = json::object();
    c.sent = safe;
    c.logprobs = json::array();
    if (!send(chunk(i, delta, logprobs, finish)))
      clientLeft = true;
  }

  json logprobEntry(int32_t token, const TokenLogprobs &lp) const {
    auto tokenText = [&](int32_t t) {
      auto s = ctx.text.tokenizer().decode({t}, /*skipSpecialTokens=*/false);
      return s.ok() ? *s : std::string();
    };
    json top = json::array();
    for (const auto &[t, l] : lp.top)
      top.push_back({{"token", tokenText(t)}, {"logprob", l}, {"id", t}});
    return {{"token", tokenText(token)},
            {"logprob", lp.logprob},
            {"id", token},
            {"top_logprobs", top}};
  }

  /// OpenAI's logprobs object: chat {"content": [...]}; completions the
  /// legacy {"tokens", "token_logprobs", "top_logprobs"}.
  json logprobsBlock(const json &entries) const {
    if (spec.chat) {
      json content = json::array();
      for (const json &e : entries) {
        json top = json::array();
        for (const json &t : e["top_logprobs"])
          top.push_back({{"token", t["token"]}, {"logprob", t["logprob"]}});
        content.push_back({{"token", e["token"]},
                           {"logprob", e["logprob"]},
                           {"top_logprobs", top}});
      }
      return {{"content", content}};
    }
    json tokens = json::array(), logprobs = json::array(), tops = json::array();
    for (const json &e : entries) {
      tokens.push_back(e["token"]);
      logprobs.push_back(e["logprob"]);
      json top = json::object();
      for (const json &t : e["top_logprobs"])
        top[t["token"].get<std::string>()] = t["logprob"];
      tops.push_back(top);
    }
    return {{"tokens", tokens},
            {"token_logprobs", logprobs},
            {"top_logprobs", tops}};
  }

  json chunkHeader() const {
    return {{"id", id},
            {"object", spec.chat ? "chat.completion.chunk" : "text_completion"},
            {"created", created},
            {"model", ctx.modelName}};
  }

  json chunk(size_t i, const json &delta, const json &logprobs,
             const json &finish) const {
    json c = chunkHeader();
    json choice = {
        {"index", i}, {"logprobs", logprobs}, {"finish_reason", finish}};
    choice[spec.chat ? "delta" : "text"] = delta;
    c["choices"] = json::array({choice});
    return c;
  }

  json usage() const {
    int64_t prompt = 0, generated = 0, cached = 0;
    for (const Choice &c : choices)
      prompt += c.promptTokens, generated += c.generated,
          cached += c.cachedTokens;
    return {{"prompt_tokens", prompt},
            {"completion_tokens", generated},
            {"total_tokens", prompt + generated},
            {"prompt_tokens_details", {{"cached_tokens", cached}}}};
  }

  json body() const {
    json out = chunkHeader();
    out["object"] = spec.chat ? "chat.completion" : "text_completion";
    out["choices"] = json::array();
    for (size_t i = 0; i < choices.size(); ++i) {
      const Choice &c = choices[i];
      json choice = {{"index", i},
                     {"finish_reason", c.finishReason},
                     {"logprobs", spec.topLogprobs >= 0
                                      ? logprobsBlock(c.logprobs)
                                      : json()}};
      if (spec.chat)
        choice["message"] = {{"role", "assistant"}, {"content", c.text}};
      else
        choice["text"] = c.text;
      out["choices"].push_back(choice);
    }
    out["usage"] = usage();
    return out;
  }

  bool send(const json &event) {
    return sink.sendEvent(
        event.dump(-1, ' ', false, json::error_handler_t::replace));
  }

  ApiError cancelAll() {
    for (Choice &c : choices)
      if (c.finishReason.empty()) {
        ctx.engine.cancel(c.stream);
        c.finishReason = "cancelled";
        ctx.metrics.finished("cancelled", c.promptTokens, c.cachedTokens,
                             c.generated, c.ttft, secondsSince(arrived));
      }
    return ApiError{499, "the client closed the connection"};
  }

  const CompletionSpec &spec;
  const CompletionContext &ctx;
  const ResponseSink &sink;
  Clock::time_point arrived;
  std::string id;
  int64_t created;
  size_t longestStop = 0;
  bool clientLeft = false;
  std::vector<OwnedRequest> requests;
  std::vector<Choice> choices;
};

} // namespace

std::variant<std::string, ApiError>
serveCompletion(const CompletionSpec &spec, const CompletionContext &context,
                const ResponseSink &sink, Clock::time_point arrived) {
  return CompletionRun(spec, context, sink, arrived).run();
}

} // namespace cohere2c::serve
