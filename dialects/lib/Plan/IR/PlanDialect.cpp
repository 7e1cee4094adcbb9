//===- PlanDialect.cpp - plan dialect and attributes ----------------------===//

#include "cohere2c/Dialect/Plan/IR/Plan.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::cohere2c::plan;

#include "cohere2c/Dialect/Plan/IR/PlanDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "cohere2c/Dialect/Plan/IR/PlanAttrs.cpp.inc"

void PlanDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "cohere2c/Dialect/Plan/IR/PlanOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "cohere2c/Dialect/Plan/IR/PlanAttrs.cpp.inc"
      >();
}

namespace {

/// A keyword naming one of a closed set, through `named`.
template <typename T, typename Named>
FailureOr<T> parseNamed(AsmParser &parser, Named named, const char *what) {
  SMLoc at = parser.getCurrentLocation();
  std::string name;
  if (parser.parseKeywordOrString(&name))
    return failure();
  if (std::optional<T> value = named(name))
    return *value;
  return parser.emitError(at) << "unknown " << what << " '" << name << "'";
}

} // namespace

FailureOr<::cohere2c::StepParam> mlir::cohere2c::plan::parseStepParam(AsmParser &parser) {
  return parseNamed<::cohere2c::StepParam>(parser, ::cohere2c::stepParamNamed,
                                           "step parameter");
}

FailureOr<::cohere2c::PlanInput> mlir::cohere2c::plan::parsePlanInput(AsmParser &parser) {
  return parseNamed<::cohere2c::PlanInput>(parser, ::cohere2c::planInputNamed, "step input");
}

FailureOr<::cohere2c::KernelSpec> mlir::cohere2c::plan::parseKernelSpec(AsmParser &parser) {
  ::cohere2c::KernelSpec spec;
  FailureOr<::cohere2c::KernelFamily> family =
      parseNamed<::cohere2c::KernelFamily>(parser, ::cohere2c::kernelFamilyNamed, "kernel family");
  if (failed(family))
    return failure();
  spec.family = *family;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc at = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key))
      return failure();
    if (key == "rope" || key == "out_f32" || key == "addend" ||
        key == "grid_sync") {
      (key == "rope"      ? spec.rope
       : key == "out_f32" ? spec.outF32
       : key == "addend"  ? spec.addend
                          : spec.gridSync) = true;
    } else if (key == "rows") {
      if (parser.parseEqual())
        return failure();
      FailureOr<::cohere2c::KernelRows> rows = parseNamed<::cohere2c::KernelRows>(
          parser, ::cohere2c::kernelRowsNamed, "kernel rows");
      if (failed(rows))
        return failure();
      spec.rows = *rows;
    } else if (key == "window") {
      if (parser.parseEqual() || parser.parseInteger(spec.window))
        return failure();
    } else if (key == "strides") {
      size_t n = 0;
      auto one = [&]() -> ParseResult {
        if (n == spec.strides.size())
          return parser.emitError(parser.getCurrentLocation())
                 << "at most " << spec.strides.size() << " strides";
        return parser.parseInteger(spec.strides[n++]);
      };
      if (parser.parseEqual() || parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, one))
        return failure();
    } else {
      return parser.emitError(at) << "unknown kernel spec field '" << key << "'";
    }
  }
  return spec;
}

void mlir::cohere2c::plan::printKernelSpec(AsmPrinter &printer,
                                          const ::cohere2c::KernelSpec &spec) {
  printer << ::cohere2c::kernelFamilyName(spec.family);
  if (spec.rows != ::cohere2c::KernelRows::All)
    printer << ", rows = " << ::cohere2c::kernelRowsName(spec.rows);
  if (spec.rope)
    printer << ", rope";
  if (spec.window)
    printer << ", window = " << spec.window;
  if (spec.outF32)
    printer << ", out_f32";
  if (spec.addend)
    printer << ", addend";
  if (spec.gridSync)
    printer << ", grid_sync";
  size_t n = 0;
  while (n < spec.strides.size() && spec.strides[n])
    ++n;
  if (n) {
    printer << ", strides = [";
    llvm::interleaveComma(llvm::ArrayRef(spec.strides.data(), n), printer);
    printer << "]";
  }
}

LogicalResult ViewAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               FlatSymbolRefAttr buffer, int64_t column, int64_t width) {
  if (column < 0 || width < 0 || (width == 0 && column != 0))
    return emitError() << "a view is a whole buffer or [column, width] with width > 0; found ["
                       << column << ", " << width << "]";
  return success();
}

LogicalResult InputAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                ::cohere2c::PlanInput input,
                                std::optional<int64_t> group) {
  if (::cohere2c::isKVInput(input) != group.has_value() ||
      (group && *group < 0))
    return emitError() << "the KV input kv_tables and only it names a group "
                          "(>= 0); found "
                       << ::cohere2c::planInputName(input)
                       << (group ? " with group " + std::to_string(*group)
                                 : " without one");
  return success();
}

// #plan.view<@b3> or #plan.view<@b3[128, 64]>
Attribute ViewAttr::parse(AsmParser &parser, Type) {
  FlatSymbolRefAttr buffer;
  int64_t column = 0, width = 0;
  if (parser.parseLess() || parser.parseAttribute(buffer))
    return {};
  if (succeeded(parser.parseOptionalLSquare()) &&
      (parser.parseInteger(column) || parser.parseComma() || parser.parseInteger(width) ||
       parser.parseRSquare()))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ViewAttr>(parser.getContext(), buffer, column, width);
}

void ViewAttr::print(AsmPrinter &printer) const {
  printer << "<" << getBuffer();
  if (getWidth() != 0)
    printer << "[" << getColumn() << ", " << getWidth() << "]";
  printer << ">";
}
