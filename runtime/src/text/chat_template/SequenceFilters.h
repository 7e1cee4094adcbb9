//===- SequenceFilters.h - jinja2's filters over sequences ----------------===//
//
// The filters of Filters.h that walk a sequence: first last join list map
// select reject selectattr rejectattr sort unique min max sum dictsort items
// reverse. Each takes the filtered value and the call's arguments, and
// follows the jinja2 3.1 function named in its comment.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_SEQUENCEFILTERS_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_SEQUENCEFILTERS_H

#include "text/chat_template/Args.h"
#include "text/chat_template/Value.h"

namespace cohere2c::text::jinja {

Value filterFirst(const Value &input, CallArgs &&args);
Value filterLast(const Value &input, CallArgs &&args);
Value filterJoin(const Value &input, CallArgs &&args);
Value filterList(const Value &input, CallArgs &&args);
Value filterMap(const Value &input, CallArgs &&args);
Value filterSelect(const Value &input, CallArgs &&args);
Value filterReject(const Value &input, CallArgs &&args);
Value filterSelectAttr(const Value &input, CallArgs &&args);
Value filterRejectAttr(const Value &input, CallArgs &&args);
Value filterSort(const Value &input, CallArgs &&args);
Value filterUnique(const Value &input, CallArgs &&args);
Value filterMin(const Value &input, CallArgs &&args);
Value filterMax(const Value &input, CallArgs &&args);
Value filterSum(const Value &input, CallArgs &&args);
Value filterDictSort(const Value &input, CallArgs &&args);
Value filterItems(const Value &input, CallArgs &&args);
Value filterReverse(const Value &input, CallArgs &&args);

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_SEQUENCEFILTERS_H
