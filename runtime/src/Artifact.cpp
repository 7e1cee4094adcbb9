//===- Artifact.cpp -------------------------------------------------------===//

#include "Artifact.h"

#include <dlfcn.h>
#include <elf.h>
#include <fstream>
#include <sys/stat.h>
#include <vector>

namespace cohere2c {

namespace {

/// Whether the 64-bit ELF file at `path` of `size` bytes holds every
/// segment and section table its header names. dlopen maps a truncated
/// library as it is and dies of SIGBUS touching the missing pages, so a
/// cut-off download or copy must be refused before it.
Status checkElfExtent(const std::string &path, uint64_t size) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr header;
  if (!in.read(reinterpret_cast<char *>(&header), sizeof header) ||
      std::string(reinterpret_cast<char *>(header.e_ident), 4) != ELFMAG ||
      header.e_ident[EI_CLASS] != ELFCLASS64)
    return Status::error(path + ": not a 64-bit ELF shared library");
  auto ends = [&](uint64_t offset, uint64_t bytes) {
    return offset <= size && bytes <= size - offset;
  };
  bool whole =
      ends(header.e_shoff, uint64_t(header.e_shnum) * header.e_shentsize) &&
      ends(header.e_phoff, uint64_t(header.e_phnum) * header.e_phentsize) &&
      header.e_phentsize == sizeof(Elf64_Phdr);
  std::vector<Elf64_Phdr> segments(whole ? header.e_phnum : 0);
  in.seekg(header.e_phoff);
  whole = whole && in.read(reinterpret_cast<char *>(segments.data()),
                           segments.size() * sizeof(Elf64_Phdr));
  for (const Elf64_Phdr &segment : segments)
    whole = whole && ends(segment.p_offset, segment.p_filesz);
  if (!whole)
    return Status::error(path + ": truncated (" + std::to_string(size) +
                         " bytes, fewer than its ELF headers name)");
  return Status::success();
}

} // namespace

StatusOr<std::unique_ptr<LoadedArtifact>>
LoadedArtifact::load(const std::string &path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return Status::error(path + ": no such artifact");
  // Opening a FIFO to read its ELF header would wait for a writer forever.
  if (!S_ISREG(st.st_mode))
    return Status::error(path + ": not a regular file");
  if (Status whole = checkElfExtent(path, st.st_size); !whole.ok())
    return whole;
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
