//===- Artifact.cpp -------------------------------------------------------===//

#include "Artifact.h"

#include <dlfcn.h>
#include <sys/stat.h>

namespace cohere2c {

StatusOr<std::unique_ptr<LoadedArtifact>>
LoadedArtifact::load(const std::string &path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return Status::error(path + ": no such artifact");
  std::unique_ptr<LoadedArtifact> artifact(new LoadedArtifact());
  artifact->path_ = path;
  // A relative name without '/' would be searched on the library path.
  std::string openPath =
      path.find('/') == std::string::npos ? "./" + path : path;
  artifact->handle_ = dlopen(openPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!artifact->handle_)
    return Status::error(path + ": cannot load the artifact: " + dlerror());
  StatusOr<void *> manifest = artifact->symbol(kManifestSymbol);
  if (!manifest.ok())
    return Status::error(path + ": not a cohere2c artifact (no manifest)");
  std::string text = static_cast<const char *>(*manifest);
  StatusOr<void *> digest = artifact->symbol(kManifestDigestSymbol);
  if (!digest.ok() ||
      *static_cast<const uint64_t *>(*digest) != manifestDigest(text))
    return Status::error(
        path + ": the manifest does not match the compiled code (edited, "
               "or compiled by another version of cohere2c-compile): "
               "compile the model again");
  StatusOr<Manifest> parsed = Manifest::parse(text, path);
  if (!parsed.ok())
    return parsed.status();
  artifact->manifest_ = std::move(*parsed);
  return artifact;
}

LoadedArtifact::~LoadedArtifact() {
  if (handle_)
    dlclose(handle_);
}

TextFiles LoadedArtifact::textFiles() const {
  auto bytes = [&](const char *name) -> std::string {
    void *data = dlsym(handle_, name);
    void *size = dlsym(handle_, (std::string(name) + "_size").c_str());
    return data && size ? std::string(static_cast<const char *>(data),
                                      *static_cast<const uint64_t *>(size))
                        : std::string();
  };
  TextFiles files;
  files.tokenizerJson = bytes(kTokenizerJsonSymbol);
  files.tokenizerConfigJson = bytes(kTokenizerConfigSymbol);
  files.chatTemplate = bytes(kChatTemplateSymbol);
  files.generationConfigJson = bytes(kGenerationConfigSymbol);
  return files;
}

StatusOr<void *> LoadedArtifact::symbol(const char *name) const {
  void *address = dlsym(handle_, name);
  if (!address)
    return Status::error(path_ + ": missing symbol " + name);
  return address;
}

} // namespace cohere2c
