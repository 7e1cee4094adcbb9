//===- ChatTemplate.cpp - Hugging Face chat templates (a Jinja2 subset) ---===//
#include "text/chat_template/ChatTemplate.h"

#include "text/chat_template/Ast.h"
#include "text/chat_template/Error.h"
#include "text/chat_template/Globals.h"
#include "text/chat_template/Interpreter.h"
#include "text/chat_template/JsonValue.h"
#include "text/chat_template/Parser.h"

#include <new>

namespace cohere2c::text {

struct ChatTemplate::Impl {
  std::string name;
  std::unique_ptr<jinja::TemplateAst> ast;

  /// "NAME:LINE:COL: message", or "NAME: message" without a location.
  Status located(const jinja::TemplateError &error) const {
    jinja::SourceLoc loc = error.loc();
    if (!loc.known())
      return Status::error(name + ": " + error.message());
    return Status::error(name + ":" + std::to_string(loc.line) + ":" +
                         std::to_string(loc.column) + ": " + error.message());
  }

  template <typename Json>
  StatusOr<std::string> render(const Json &context) const;
};

template <typename Json>
StatusOr<std::string> ChatTemplate::Impl::render(const Json &context) const {
  if (!context.is_object())
    return Status::error(name + ": the render context must be a JSON object");
  try {
    auto globals = std::make_shared<jinja::Scope>();
    jinja::addGlobals(*globals);
    jinja::Value variables = jinja::fromJson(context);
    for (const auto &[key, value] : variables.asDict().entries())
      globals->set(key.asString(), value);
    return jinja::Interpreter(std::move(globals)).render(*ast);
  } catch (const jinja::RaisedError &error) {
    return Status::error(std::string(kRaisedPrefix) + error.message());
  } catch (const jinja::TemplateError &error) {
    return located(error);
  } catch (const std::bad_alloc &) {
    return Status::error(name + ": out of memory while rendering");
  }
}

ChatTemplate::ChatTemplate(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

ChatTemplate::~ChatTemplate() = default;

StatusOr<std::shared_ptr<const ChatTemplate>>
ChatTemplate::parse(std::string_view source, const std::string &name) {
  auto impl = std::make_unique<Impl>();
  impl->name = name;
  try {
    impl->ast = jinja::parseTemplate(source);
  } catch (const jinja::TemplateError &error) {
    return impl->located(error);
  } catch (const std::bad_alloc &) {
    return Status::error(name + ": out of memory while parsing");
  }
  return std::shared_ptr<const ChatTemplate>(new ChatTemplate(std::move(impl)));
}

StatusOr<std::string>
ChatTemplate::render(const nlohmann::json &context) const {
  return impl_->render(context);
}

StatusOr<std::string>
ChatTemplate::render(const nlohmann::ordered_json &context) const {
  return impl_->render(context);
}

} // namespace cohere2c::text
