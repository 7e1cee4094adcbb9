//===- Artifact.h - A compiled model library, loaded ----------------------===//
//
// dlopen()s an OUT.so written by cohere2c-compile and checks its manifest.
// Not thread-safe to load; the loaded artifact is immutable.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_RUNTIME_ARTIFACT_H
#define COHERE2C_RUNTIME_ARTIFACT_H

#include "Artifact/Manifest.h"
#include "Artifact/TextFiles.h"
#include "Support/Status.h"

#include <memory>
#include <string>

namespace cohere2c {

class LoadedArtifact {
public:
  /// Errors name `path`: a file that is missing or not a shared library, one
  /// without a `cohere2c_manifest`, a manifest that does not parse.
  static StatusOr<std::unique_ptr<LoadedArtifact>>
  load(const std::string &path);
  ~LoadedArtifact();

  const Manifest &manifest() const { return manifest_; }
  const std::string &path() const { return path_; }
  /// The address of `symbol` in the library; an error names both.
  StatusOr<void *> symbol(const char *symbol) const;
  /// The checkpoint's text files the compiler copied into the library
  /// (TextFiles.h); all empty for an artifact compiled from a config alone.
  TextFiles textFiles() const;

private:
  LoadedArtifact() = default;
  void *handle_ = nullptr;
  std::string path_;
  Manifest manifest_;
};

} // namespace cohere2c

#endif // COHERE2C_RUNTIME_ARTIFACT_H
