//===- TextFiles.cpp ------------------------------------------------------===//

#include "Artifact/TextFiles.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace cohere2c {

namespace {

/// The bytes of `dir`/`name` into `out`; a file that does not exist leaves
/// `out` empty.
Status readIfPresent(const std::string &dir, const char *name,
                     std::string &out) {
  std::string path = dir + "/" + name;
  struct stat info;
  if (stat(path.c_str(), &info) != 0)
    return Status::success();
  if (!S_ISREG(info.st_mode))
    return Status::error(path + ": not a regular file");
  // Empty means absent everywhere after this read: an empty file would
  // pass for a missing one (a checkpoint without text).
  if (info.st_size == 0)
    return Status::error(path + ": an empty file (remove it if the "
                                "checkpoint has none)");
  if ((size_t)info.st_size > kMaxTextFileBytes)
    return Status::error(path + ": " + std::to_string(info.st_size) +
                         " bytes, more than the " +
                         std::to_string(kMaxTextFileBytes) +
                         " a text file of a checkpoint may have");
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return Status::error(path + ": cannot open (" + std::strerror(errno) + ")");
  std::ostringstream bytes;
  bytes << file.rdbuf();
  if (file.bad())
    return Status::error(path + ": cannot read (" + std::strerror(errno) + ")");
  out = bytes.str();
  return Status::success();
}

} // namespace

StatusOr<TextFiles> TextFiles::readCheckpoint(const std::string &dir) {
  TextFiles files;
  for (auto [name, field] :
       {std::pair{"tokenizer.json", &files.tokenizerJson},
        std::pair{"tokenizer_config.json", &files.tokenizerConfigJson},
        std::pair{"chat_template.jinja", &files.chatTemplate},
        std::pair{"generation_config.json", &files.generationConfigJson}}) {
    Status read = readIfPresent(dir, name, *field);
    if (!read.ok())
      return read;
    if (!field->empty())
      files.paths.push_back(dir + "/" + name);
  }
  return files;
}

} // namespace cohere2c
