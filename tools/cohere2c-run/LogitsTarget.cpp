//===- LogitsTarget.cpp ---------------------------------------------------===//

#include "LogitsTarget.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace cohere2c {

namespace {

/// Whether `a` and `b` name one existing file.
bool sameFile(const std::string &a, const std::string &b) {
  struct stat x, y;
  return stat(a.c_str(), &x) == 0 && stat(b.c_str(), &y) == 0 &&
         x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

} // namespace

StatusOr<LogitsTarget>
LogitsTarget::of(const std::string &given,
                 const std::vector<std::string> &inputs) {
  auto error = [&](const std::string &why) {
    return Status::error("--logits-out: " + given + ": " + why);
  };
  if (given.empty())
    return Status::error("--logits-out: the path is empty");
  for (const std::string &input : inputs)
    if (sameFile(given, input))
      return error("the run's input " + input);
  LogitsTarget t{given, given, true};
  struct stat info;
  if (stat(given.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode))
      return error("cannot write (a folder)");
    if (!S_ISREG(info.st_mode)) {
      t.replace = false;
      if (access(given.c_str(), W_OK) != 0)
        return error(std::string("cannot write (") + std::strerror(errno) +
                     ")");
      return t;
    }
    std::error_code ec;
    t.path = std::filesystem::canonical(given, ec).string();
    if (ec)
      return error("cannot resolve (" + ec.message() + ")");
  }
  if (access(t.folder().c_str(), W_OK) != 0)
    return error(std::string("cannot write (") + std::strerror(errno) + ")");
  return t;
}

std::string LogitsTarget::folder() const {
  std::string f = std::filesystem::path(path).parent_path().string();
  return f.empty() ? "." : f;
}

Status LogitsTarget::write(const std::vector<F32Tensor> &tensors) const {
  if (!replace) {
    std::ofstream out(path, std::ios::binary);
    if (!out)
      return Status::error("--logits-out: " + given + ": cannot write (" +
                           std::strerror(errno) + ")");
    return writeSafeTensors(out, given, tensors);
  }
  std::string temp = folder() + "/.cohere2c-logits-XXXXXX";
  int fd = mkstemp(temp.data());
  if (fd < 0)
    return Status::error("--logits-out: " + given +
                         ": cannot write beside it (" + std::strerror(errno) +
                         ")");
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask); // as a newly created file, not mkstemp's 0600
  close(fd);
  std::ofstream out(temp, std::ios::binary);
  Status written =
      out ? writeSafeTensors(out, given, tensors)
          : Status::error("--logits-out: " + given + ": cannot write (" +
                          std::strerror(errno) + ")");
  out.close();
  if (written.ok() && std::rename(temp.c_str(), path.c_str()) != 0)
    written = Status::error("--logits-out: " + given + ": cannot replace (" +
                            std::strerror(errno) + ")");
  if (!written.ok())
    std::remove(temp.c_str());
  return written;
}

} // namespace cohere2c
