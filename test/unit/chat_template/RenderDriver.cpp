//===- RenderDriver.cpp - chat-template-render: render JSON lines ---------===//
//
// The test driver of the jinja2 oracle (jinja_oracle.py): reads one JSON
// object per line on stdin, {"template": TEXT, "context": {...}}, renders it
// and writes one line per input: {"rendered": TEXT} or {"error": MESSAGE}.
// Contexts keep their key order (nlohmann::ordered_json), as Python's
// json.loads does. Templates are parsed once per distinct text.
//
//===----------------------------------------------------------------------===//
#include "text/chat_template/ChatTemplate.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <map>
#include <memory>
#include <string>

using cohere2c::text::ChatTemplate;
using Json = nlohmann::ordered_json;

namespace {

Json renderLine(
    const std::string &line,
    std::map<std::string, std::shared_ptr<const ChatTemplate>> &cache) {
  Json request = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!request.is_object() || !request.contains("template") ||
      !request["template"].is_string())
    return Json{
        {"error", "bad request: want {\"template\": ..., \"context\": ...}"}};
  const std::string &text = request["template"].get_ref<const std::string &>();
  auto it = cache.find(text);
  if (it == cache.end()) {
    auto parsed = ChatTemplate::parse(text, "template");
    if (!parsed.ok())
      return Json{{"error", parsed.status().message()}};
    it = cache.emplace(text, *parsed).first;
  }
  auto rendered = it->second->render(request.value("context", Json::object()));
  if (!rendered.ok())
    return Json{{"error", rendered.status().message()}};
  return Json{{"rendered", *rendered}};
}

} // namespace

int main() {
  std::ios::sync_with_stdio(false);
  std::map<std::string, std::shared_ptr<const ChatTemplate>> cache;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty())
      continue;
    std::cout << renderLine(line, cache)
                     .dump(-1, ' ', false, Json::error_handler_t::replace)
              << '\n';
  }
  return 0;
}
