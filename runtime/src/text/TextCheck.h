//===- TextCheck.h - Whether a checkpoint's text files load ---------------===//
//
// For the compiler, which checks a checkpoint's tokenizer and chat template
// before it copies them into the artifact, so that a malformed one fails
// the compile and not the first request. Declared apart from ModelText.h:
// the compiler is built without exceptions and must not include
// nlohmann/json, whose inline functions differ in that mode.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_TEXTCHECK_H
#define COHERE2C_TEXT_TEXTCHECK_H

#include "Artifact/TextFiles.h"
#include "Support/Status.h"

#include <string>

namespace cohere2c::text {

/// ModelText::create's errors for `files` from the checkpoint folder
/// `source`; success for files without a tokenizer (nothing to check).
Status checkTextFiles(const TextFiles &files, const std::string &source);

} // namespace cohere2c::text

#endif // COHERE2C_TEXT_TEXTCHECK_H
