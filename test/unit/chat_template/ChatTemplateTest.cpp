//===- ChatTemplateTest.cpp - The chat-template renderer -----------------===//
//
// Every expected text here is what transformers' apply_chat_template (for
// the chat cases) or jinja2 3.1.2 configured as transformers configures it
// (for the focused cases; see jinja_oracle.py) rendered.
//
//===----------------------------------------------------------------------===//
#include "text/chat_template/ChatTemplate.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using cohere2c::text::ChatTemplate;
using Json = nlohmann::ordered_json;

namespace {

const std::string kDataDir = COHERE2C_TEST_DATA_DIR;
const std::string kModelDir = kDataDir + "/models/trained-cohere2";

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::shared_ptr<const ChatTemplate> parseOrDie(const std::string &source,
                                               const std::string &name = "t") {
  auto parsed = ChatTemplate::parse(source, name);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  return parsed.ok() ? *parsed : nullptr;
}

/// Renders `source` with `context` (JSON text); the text or the error.
cohere2c::StatusOr<std::string> render(const std::string &source,
                                       const std::string &context = "{}") {
  auto parsed = ChatTemplate::parse(source, "t.jinja");
  if (!parsed.ok())
    return parsed.status();
  return (*parsed)->render(Json::parse(context));
}

std::string errorOf(const std::string &source,
                    const std::string &context = "{}") {
  auto rendered = render(source, context);
  EXPECT_FALSE(rendered.ok()) << "rendered: " << *rendered;
  return rendered.ok() ? "" : rendered.status().message();
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// -- Command R7B: the model's template over transformers' renders ---------

/// transformers' context: the special tokens of tokenizer_config.json, the
/// chat, and documents / tools as None when the case has none.
Json chatContext(const Json &tokenizerConfig, const Json &chatCase) {
  Json context = Json::object();
  for (const auto &[key, value] : tokenizerConfig.items())
    if (key.size() > 6 && key.compare(key.size() - 6, 6, "_token") == 0 &&
        value.is_string())
      context[key] = value;
  context["messages"] = chatCase["messages"];
  context["add_generation_prompt"] = chatCase["add_generation_prompt"];
  context["documents"] = chatCase.value("documents", Json());
  context["tools"] = chatCase.value("tools", Json());
  return context;
}

/// Checks every case of `casesFile`: the rendered text, or a failure (with
/// the raised message when the case names one).
void checkChatCases(const std::string &casesFile, size_t expectedCount) {
  auto chatTemplate = parseOrDie(readFile(kModelDir + "/chat_template.jinja"),
                                 "chat_template.jinja");
  ASSERT_TRUE(chatTemplate);
  Json config = Json::parse(readFile(kModelDir + "/tokenizer_config.json"));
  Json cases = Json::parse(readFile(casesFile));
  ASSERT_EQ(cases.size(), expectedCount);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Json &chatCase = cases[i];
    SCOPED_TRACE("case " + std::to_string(i) + " (" +
                 chatCase.value("shape", "") + ")");
    auto rendered = chatTemplate->render(chatContext(config, chatCase));
    if (chatCase.contains("error")) {
      ASSERT_FALSE(rendered.ok());
      std::string wanted = chatCase["error"];
      if (wanted.rfind("Conversation roles must alternate", 0) == 0)
        EXPECT_EQ(rendered.status().message(),
                  std::string(ChatTemplate::kRaisedPrefix) + wanted);
      else
        EXPECT_TRUE(endsWith(rendered.status().message(), wanted))
            << rendered.status().message();
      continue;
    }
    ASSERT_TRUE(rendered.ok()) << rendered.status().message();
    EXPECT_EQ(*rendered, chatCase["rendered"].get<std::string>());
  }
}

TEST(ChatTemplateTest, RendersTheModelsChatCases) {
  checkChatCases(kModelDir + "/chat_cases.json", 5);
}

TEST(ChatTemplateTest, RendersTransformersChatCases) {
  checkChatCases(kDataDir + "/text/trained-cohere2.chat_cases.json", 220);
}

// -- Constructs, against jinja2 ---------------------------------------------

struct Case {
  const char *name;
  const char *source;
  const char *context;
  const char *expected;
};

const Case kCases[] = {
    {"OutputPrintsPythonValues",
     "{{ none }} {{ true }} {{ 1.0 }} {{ 1e-05 }} {{ 1e16 }} {{ [1, 'a', none] "
     "}} {{ {'k': (1,)} }}",
     R"json({})json", "None True 1.0 1e-05 1e+16 [1, 'a', None] {'k': (1,)}"},
    {"UndefinedPrintsEmpty",
     "[{{ missing }}][{{ missing|upper }}][{{ missing|length }}]",
     R"json({})json", "[][][0]"},
    {"StringEscapesAsPython",
     "{{ 'a\\tb' }}|{{ \"it's\" }}|{{ ['it\\'s', \"q\\\"\"] }}|{{ "
     "'\\u00e9\\x41' }}",
     R"json({})json", "a\tb|it's|[\"it's\", 'q\"']|éA"},
    {"ArithmeticFollowsPython",
     "{{ 7 // -2 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} "
     "{{ 0.1 + 0.2 }} {{ 'ab' * 2 }} {{ [1] + [2] }}",
     R"json({})json", "-4 2 3.5 64 4 0.30000000000000004 abab [1, 2]"},
    {"ComparisonsChain",
     "{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 1 == 1.0 }} {{ true == 1 }} {{ [1, 2] "
     "< [1, 3] }} {{ 'a' in 'cat' }} {{ 2 not in [1, 2] }}",
     R"json({})json", "True False True True True True False"},
    {"AndOrReturnOperands",
     "{{ 0 or 'x' }}|{{ 'a' and 'b' }}|{{ [] and 1 }}|{{ not '' }}|{{ 'y' if 0 "
     "else 'n' }}",
     R"json({})json", "x|b|[]|True|n"},
    {"SlicesWithNegativeIndicesAndSteps",
     "{{ xs[-1] }} {{ xs[1:] }} {{ xs[::-1] }} {{ xs[-2:] }} {{ xs[::2] }} {{ "
     "'héllo'[1:4] }} {{ 'abc'[::-1] }}",
     R"json({"xs": [1, 2, 3, 4, 5]})json",
     "5 [2, 3, 4, 5] [5, 4, 3, 2, 1] [4, 5] [1, 3, 5] éll cba"},
    {"LoopVariables",
     "{% for x in xs %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ "
     "loop.last }}{{ loop.length }}{{ loop.revindex }};{% endfor %}",
     R"json({"xs": ["a", "b", "c"]})json",
     "10TrueFalse33;21FalseFalse32;32FalseTrue31;"},
    {"LoopFilterElseBreakContinue",
     "{% for x in xs if x > 1 %}{% if x == 3 %}{% continue %}{% endif %}{% if "
     "x == 5 %}{% break %}{% endif %}{{ x }}{% endfor %}|{% for x in [] %}x{% "
     "else %}empty{% endfor %}",
     R"json({"xs": [1, 2, 3, 4, 5, 6]})json", "24|empty"},
    {"LoopScopeDoesNotLeak",
     "{% set x = 'outer' %}{% for i in [1, 2] %}{% set x = i %}{{ x }}{% "
     "endfor %}{{ x }}",
     R"json({})json", "12outer"},
    {"NamespaceCarriesValuesOutOfLoops",
     "{% set ns = namespace(n=0, seen=[]) %}{% for m in messages %}{% set ns.n "
     "= ns.n + 1 %}{% set ns.seen = ns.seen + [m.role] %}{% endfor %}{{ ns.n "
     "}} {{ ns.seen }}",
     R"json({"messages": [{"role": "user"}, {"role": "assistant"}]})json",
     "2 ['user', 'assistant']"},
    {"MacrosWithDefaultsAndKeywords",
     "{% macro m(a, b='B', c=a ~ '!') %}[{{ a }}|{{ b }}|{{ c }}]{% endmacro "
     "%}{{ m(1) }}{{ m(1, c=3) }}{{ m(b=2, a=0) }}{{ m() }}",
     R"json({})json", "[1|B|1!][1|B|3][0|2|0!][|B|!]"},
    {"MacroOutputIsAString",
     "{% macro f(x) %}  {{ x }}  {% endmacro %}[{{ f(1) }}]{{ f(2)|trim }}{{ "
     "f(3)|length }}",
     R"json({})json", "[  1  ]25"},
    {"MacroVarargsAndKwargs",
     "{% macro v(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ v(1, 2, "
     "3, k='x') }}",
     R"json({})json", "1(2, 3){'k': 'x'}"},
    {"MacroSeesGlobalsAtCallTime",
     "{% macro f() %}{{ later }}{% endmacro %}{% set later = 'L' %}{{ f() }}",
     R"json({})json", "L"},
    {"WhitespaceControl",
     "a  {{- 'b' -}}  c\n  {% if true %}\n    d\n  {% endif %}\ne  {%- if true "
     "%} f{% endif -%}  \n g",
     R"json({})json", "abc\n    d\ne fg"},
    {"TrimBlocksAndLstripBlocks",
     "  {% for x in xs %}\n  {{ x }}\n  {% endfor %}\n{# c #}\nend\n",
     R"json({"xs": [1, 2]})json", "  1\n  2\nend"},
    {"RawCommentsAndSetBlocks",
     "{% raw %}{{ x }}{% endraw %}{# no #}{% set b %}<{{ 1 + 1 }}>{% endset "
     "%}{{ b }}{% set u | upper %}up{% endset %}{{ u }}",
     R"json({})json", "{{ x }}<2>UP"},
    {"FilterAndWithAndGenerationBlocks",
     "{% filter upper %}a{{ 'b' }}{% endfilter %}{% with x = 1 %}{{ x }}{% "
     "endwith %}{{ x }}{% generation %}gen{% endgeneration %}",
     R"json({})json", "AB1gen"},
    {"StringFilters",
     "{{ ' Hi There '|trim }}|{{ 'ab'|upper }}|{{ 'AB'|lower }}|{{ 'hello "
     "world'|title }}|{{ 'hELLO'|capitalize }}|{{ 'aXa'|replace('a', 'b') "
     "}}|{{ 'a\\nb'|indent(2, true) }}|{{ 'x'|e }}|{{ '<&>'|e }}|{{ 3|string "
     "}}",
     R"json({})json",
     "Hi There|AB|ab|Hello World|Hello|bXb|  a\n  b|x|&lt;&amp;&gt;|3"},
    {"ToJsonAsTransformers",
     "{{ d|tojson }}|{{ d|tojson(indent=2) }}|{{ 'é\\n'|tojson }}|{{ "
     "d|tojson(sort_keys=true, separators=(',', ':')) }}",
     R"json({"d": {"z": [1, 2.5, null, true], "a": "ü"}})json",
     "{\"z\": [1, 2.5, null, true], \"a\": \"ü\"}|{\n  \"z\": [\n    1,\n    "
     "2.5,\n    null,\n    true\n  ],\n  \"a\": "
     "\"ü\"\n}|\"é\\n\"|{\"a\":\"ü\",\"z\":[1,2.5,null,true]}"},
    {"SequenceFilters",
     "{{ xs|length }} {{ xs|first }} {{ xs|last }} {{ xs|sort }} {{ "
     "xs|sort(reverse=true)|join(',') }} {{ xs|reverse|list }} {{ "
     "xs|unique|list }} {{ xs|sum }} {{ xs|min }} {{ xs|max }} {{ "
     "xs|map('string')|join('-') }}",
     R"json({"xs": [3, 1, 2, 3]})json",
     "4 3 3 [1, 2, 3, 3] 3,3,2,1 [3, 2, 1, 3] [3, 1, 2] 9 1 3 3-1-2-3"},
    {"AttributeFilters",
     "{{ ds|selectattr('tag')|map(attribute='name')|list }} {{ "
     "ds|rejectattr('tag')|map(attribute='name')|join }} {{ "
     "ds|selectattr('age', 'gt', 20)|list|length }} {{ "
     "ds|sort(attribute='age')|map(attribute='name')|list }} {{ "
     "ds|map(attribute='tag', default='-')|list }}",
     R"json({"ds": [{"name": "a", "age": 30, "tag": "x"}, {"name": "b", "age": 10}]})json",
     "['a'] b 1 ['b', 'a'] ['x', '-']"},
    {"NumberFilters",
     "{{ '42'|int }} {{ 'x'|int(7) }} {{ 3.7|int }} {{ '2.5'|float }} {{ "
     "2.5|round }} {{ 3.14159|round(2) }} {{ 2.1|round(0, 'ceil') }} {{ -3|abs "
     "}} {{ none|default('d') }} {{ missing|default('d') }} {{ ''|default('d', "
     "true) }}",
     R"json({})json", "42 7 3 2.5 2.0 3.14 3.0 3 None d d"},
    {"DictItemsAndMethods",
     "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{{ d.keys()|list "
     "}}{{ d.values()|list }}{{ d.get('a') }}{{ d.get('z', 0) }}{{ "
     "d|items|list }}{{ d|dictsort }}",
     R"json({"d": {"b": 2, "a": 1}})json",
     "b=2;a=1;['b', 'a'][2, 1]10[('b', 2), ('a', 1)][('a', 1), ('b', 2)]"},
    {"StringMethods",
     "[{{ s.strip() }}][{{ s.lstrip() }}][{{ s.rstrip() }}][{{ "
     "'xxaxx'.strip('x') }}]{{ s.split() }}{{ 'a,b'.split(',') }}{{ "
     "s.startswith(' h') }}{{ s.endswith('d ') }}{{ s.upper() }}{{ "
     "s.replace('l', 'L') }}{{ s.title() }}{{ 'ab'.capitalize() }}",
     R"json({"s": " hello world "})json",
     "[hello world][hello world ][ hello world][a]['hello', 'world']['a', "
     "'b']TrueTrue HELLO WORLD  heLLo worLd  Hello World Ab"},
    {"Tests",
     "{{ x is defined }}{{ missing is defined }}{{ none is none }}{{ 'a' is "
     "string }}{{ {} is mapping }}{{ [] is sequence }}{{ 'a' is iterable }}{{ "
     "1 is number }}{{ 1 is integer }}{{ 1.0 is float }}{{ true is boolean "
     "}}{{ true is true }}{{ false is false }}{{ 4 is even }}{{ 3 is odd }}{{ "
     "9 is divisibleby 3 }}{{ 1 is not string }}",
     R"json({"x": 1})json",
     "TrueFalseTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrue"},
    {"CollectionLiterals",
     "{% set d = {'a': 1, 'b': [1, (2, 3)]} %}{{ d }} {{ d.b[1][0] }} {{ (1, "
     "2) }} {{ [] }} {{ {} }}",
     R"json({})json", "{'a': 1, 'b': [1, (2, 3)]} 2 (1, 2) [] {}"},
    {"SpecialCaseMappings",
     "{{ 'straße'|upper }} {{ 'ﬁne'|upper }} {{ 'İ'|lower|length }} {{ "
     "'ǆ'|title }}",
     R"json({})json", "STRASSE FINE 2 Ǆ"},
};

class ConstructTest : public ::testing::TestWithParam<Case> {};

TEST_P(ConstructTest, RendersAsJinja2) {
  const Case &c = GetParam();
  auto rendered = render(c.source, c.context);
  ASSERT_TRUE(rendered.ok()) << rendered.status().message();
  EXPECT_EQ(*rendered, c.expected);
}

INSTANTIATE_TEST_SUITE_P(Jinja2, ConstructTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return std::string(info.param.name);
                         });

TEST(ChatTemplateTest, KeepsTheContextsKeyOrderInToJson) {
  // transformers: json.dumps keeps the order json.loads read.
  auto rendered =
      render("{{ args|tojson }}", R"({"args": {"q": "a", "n": 1}})");
  ASSERT_TRUE(rendered.ok()) << rendered.status().message();
  EXPECT_EQ(*rendered, R"({"q": "a", "n": 1})");
}

TEST(ChatTemplateTest, RendersFromManyThreadsAtOnce) {
  auto chatTemplate =
      parseOrDie("{% for m in messages %}{{ m.role }}:{{ m.content }};"
                 "{% endfor %}");
  ASSERT_TRUE(chatTemplate);
  Json context = Json::parse(
      R"({"messages": [{"role": "user", "content": "hi"},
                       {"role": "assistant", "content": "yo"}]})");
  std::vector<std::string> results(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        auto rendered = chatTemplate->render(context);
        results[t] = rendered.ok() ? *rendered : rendered.status().message();
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (const std::string &result : results)
    EXPECT_EQ(result, "user:hi;assistant:yo;");
}

// -- Errors -------------------------------------------------------------------

TEST(ChatTemplateErrorTest, UnsupportedTagsFailAtParseWithLineAndColumn) {
  const char *tags[] = {"include 'x'",       "extends 'x'", "import 'x' as y",
                        "from 'x' import y", "block b",     "call m()"};
  for (const char *tag : tags) {
    auto parsed =
        ChatTemplate::parse(std::string("a\n  {% ") + tag + " %}", "c.jinja");
    ASSERT_FALSE(parsed.ok()) << tag;
    std::string name = std::string(tag).substr(0, std::string(tag).find(' '));
    EXPECT_EQ(parsed.status().message(),
              "c.jinja:2:6: unknown tag '" + name + "'");
  }
}

TEST(ChatTemplateErrorTest, UnknownFiltersAndTestsFailAtParse) {
  auto filter = ChatTemplate::parse("{{ x }}\n{{ x | nofilter }}", "c.jinja");
  ASSERT_FALSE(filter.ok());
  EXPECT_EQ(filter.status().message(),
            "c.jinja:2:8: unknown filter 'nofilter'");
  auto test =
      ChatTemplate::parse("{% if x is notatest %}{% endif %}", "c.jinja");
  ASSERT_FALSE(test.ok());
  EXPECT_EQ(test.status().message(), "c.jinja:1:12: unknown test 'notatest'");
}

TEST(ChatTemplateErrorTest, SyntaxErrorsFailAtParse) {
  const char *sources[] = {
      "{% if x %}",  "{% endfor %}",  "{{ 1 + }}",
      "{{ (1 }}",    "{{ 'open }}",   "{% for x in y recursive %}{% endfor %}",
      "{% break %}", "{# open",       "{% raw %}open",
      "{{ x | }}",   "{% set = 1 %}", "{% macro m(a=1, b) %}{% endmacro %}",
  };
  for (const char *source : sources) {
    auto parsed = ChatTemplate::parse(source, "c.jinja");
    ASSERT_FALSE(parsed.ok()) << source;
    EXPECT_EQ(parsed.status().message().rfind("c.jinja:1:", 0), 0u)
        << parsed.status().message();
  }
}

TEST(ChatTemplateErrorTest, RaiseExceptionGivesTheMessageExactly) {
  EXPECT_EQ(errorOf("{{ raise_exception('Roles must alternate ' ~ n) }}",
                    R"({"n": 2})"),
            std::string(ChatTemplate::kRaisedPrefix) +
                "Roles must alternate 2");
}

TEST(ChatTemplateErrorTest, MethodOnUndefinedFailsAsJinja2) {
  // jinja2: UndefinedError("'dict object' has no attribute 'content'").
  std::string error = errorOf("\n{{ messages[0]['content'].strip() }}",
                              R"({"messages": [{"role": "user"}]})");
  EXPECT_EQ(error.rfind("t.jinja:2:", 0), 0u) << error;
  EXPECT_TRUE(endsWith(error, "'dict object' has no attribute 'content'"))
      << error;
}

TEST(ChatTemplateErrorTest, RuntimeErrorsNameTheLocation) {
  EXPECT_EQ(errorOf("ab\n  {{ 1 / 0 }}"), "t.jinja:2:8: division by zero");
  EXPECT_EQ(errorOf("{{ undefined_fn() }}"),
            "t.jinja:1:4: 'undefined_fn' is undefined");
  EXPECT_EQ(
      errorOf("{{ [].append(1) }}"),
      "t.jinja:1:6: access to attribute 'append' of 'list' object is unsafe.");
}

TEST(ChatTemplateErrorTest, TheContextMustBeAnObject) {
  auto chatTemplate = parseOrDie("x");
  ASSERT_TRUE(chatTemplate);
  EXPECT_FALSE(chatTemplate->render(nlohmann::json::array()).ok());
}

TEST(ChatTemplateErrorTest, BoundsStopRunawayTemplates) {
  // Unbounded recursion, output growth, nesting and loops fail cleanly.
  EXPECT_NE(errorOf("{% macro r() %}{{ r() }}{% endmacro %}{{ r() }}")
                .find("recursion"),
            std::string::npos);
  errorOf("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}");
  errorOf("{% set s = 'xxxxxxxx' %}{% set ns = namespace(s=s) %}"
          "{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}");
  errorOf("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') +
          " }}");
  errorOf(std::string(2000, '[') + "{% if true %}" + "{{ " +
          std::string(300, '-') + "1 }}");
  errorOf("{% for i in range(100000) %}{% for j in range(100000) %}"
          "{% endfor %}{% endfor %}");
}

} // namespace
