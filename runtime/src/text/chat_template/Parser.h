//===- Parser.h - Tokens to the tree of a chat template
//--------------------===//
//
// jinja2's parser (jinja2/parser.py) for the subset chat templates use:
// output, text, comments, if/elif/else, for (with `if` filter and else),
// set (expression, namespace attribute, block), macro, filter blocks, with,
// break/continue (jinja2.ext.loopcontrols) and generation (transformers'
// AssistantTracker). Expressions follow jinja2's precedence, including its
// left-associative `**` and filters binding tighter than unary minus's
// operand but looser than postfix access.
//
// What the renderer cannot do is refused here, at parse time, with the
// line and column: other tags (include, extends, import, block, call, ...),
// unknown filters and tests, recursive loops, break outside a loop.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_PARSER_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_PARSER_H

#include "text/chat_template/Ast.h"
#include "text/chat_template/Lexer.h"

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <vector>

namespace cohere2c::text::jinja {

/// Expressions nest at most this deep ((((x)))), so that neither parsing
/// nor evaluation can exhaust the stack.
inline constexpr unsigned kMaxExpressionDepth = 128;
/// Statements nest at most this deep ({% if %} inside {% for %} ...).
inline constexpr unsigned kMaxStatementDepth = 128;

/// Parses a whole template. Throws a TemplateError with the line and column
/// of the first syntax error or unsupported construct.
std::unique_ptr<TemplateAst> parseTemplate(std::string_view source);

/// The recursive-descent parser over one template's tokens; statements in
/// Parser.cpp, expressions in ParseExpression.cpp.
class Parser {
public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  /// The statements up to the end of the input.
  Body parseTemplateBody();

private:
  // Token stream.
  const Token &current() const { return tokens_[pos_]; }
  const Token &peek(size_t ahead = 1) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  const Token &next() {
    return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_];
  }
  bool skipOperator(std::string_view op);
  bool skipName(std::string_view name);
  const Token &expectOperator(std::string_view op);
  const Token &expectName();
  void expectBlockEnd();
  [[noreturn]] void fail(const std::string &message, const Token &at) const;
  /// jinja2's "unexpected 'x'" for the current token.
  [[noreturn]] void failUnexpected() const;

  // Statements (Parser.cpp).
  /// Statements until a block tag named in `ends`; leaves the stream at that
  /// name. Fails at the end of input, naming `construct`.
  Body parseStatements(std::initializer_list<std::string_view> ends,
                       const char *construct);
  StmtPtr parseTag();
  StmtPtr parseIf(SourceLoc loc);
  StmtPtr parseFor(SourceLoc loc);
  StmtPtr parseSet(SourceLoc loc);
  StmtPtr parseMacro(SourceLoc loc);
  StmtPtr parseFilterBlock(SourceLoc loc);
  StmtPtr parseWith(SourceLoc loc);
  StmtPtr parseGeneration(SourceLoc loc);
  StmtPtr parseLoopControl(Stmt::Kind kind, SourceLoc loc);
  Target parseAssignTarget(bool withNamespace, bool withTuple);
  void parseMacroSignature(MacroStmt &macro);

  // Expressions (ParseExpression.cpp).
  ExprPtr parseExpression(bool withCondExpr = true);
  /// jinja2's parse_tuple: one expression, or a tuple of them when commas
  /// follow. `explicitParens` allows the empty tuple.
  ExprPtr parseTuple(bool withCondExpr = true, bool explicitParens = false);
  ExprPtr parseCondExpr();
  ExprPtr parseOr();
  ExprPtr parseAnd();
  ExprPtr parseNot();
  ExprPtr parseCompare();
  ExprPtr parseMath1();
  ExprPtr parseConcat();
  ExprPtr parseMath2();
  ExprPtr parsePow();
  ExprPtr parseUnary(bool withFilter = true);
  ExprPtr parsePrimary();
  ExprPtr parseList(SourceLoc loc);
  ExprPtr parseDict(SourceLoc loc);
  ExprPtr parsePostfix(ExprPtr node);
  ExprPtr parseFilterExpr(ExprPtr node);
  ExprPtr parseSubscript(ExprPtr node);
  ExprPtr parseSubscribed();
  ExprPtr parseCall(ExprPtr node);
  Arguments parseCallArgs();
  /// `| name(args)` filters; with `startInline` the first `|` is implied
  /// ({% filter f %}, {% set x | f %}). `node` may be null there.
  ExprPtr parseFilter(ExprPtr node, bool startInline);
  ExprPtr parseTest(ExprPtr node);
  /// A filter or test name: NAME ('.' NAME)*.
  std::string parseDottedName();
  /// Whether the current token may end a tuple (a block end, `in`, ...).
  bool tupleEnds() const;

  /// Counts nesting on entry and fails beyond `limit`.
  class DepthGuard {
  public:
    DepthGuard(Parser &parser, unsigned &depth, unsigned limit);
    ~DepthGuard() { --depth_; }

  private:
    unsigned &depth_;
  };

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  unsigned exprDepth_ = 0;
  unsigned stmtDepth_ = 0;
  /// Open for loops in the current macro (break/continue need one).
  unsigned loopDepth_ = 0;
};

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_PARSER_H
