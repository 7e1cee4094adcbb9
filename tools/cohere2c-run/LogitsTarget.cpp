//===- LogitsTarget.cpp ---------------------------------------------------===//

#include "LogitsTarget.h"
#include "Interrupt.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
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
LogitsTarget::of(const std::string &option, const std::string &given,
                 const std::vector<std::string> &inputs) {
  auto error = [&](const std::string &why) {
    return Status::error(option + ": " + given + ": " + why);
  };
  if (given.empty())
    return Status::error(option + ": the path is empty");
  for (const std::string &input : inputs)
    if (sameFile(given, input))
      return error("the run's input " + input);
  LogitsTarget t{option, given, given, true};
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

Status LogitsTarget::writeThrough(const std::vector<F32Tensor> &tensors) const {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0)
    return Status::error(option + ": " + given + ": cannot write (" +
                         std::strerror(errno) + ")");
  Status written = writeSafeTensors(fd, given, tensors);
  close(fd);
  if (!written.ok())
    return Status::error(option + ": " + written.message());
  return written;
}

Status LogitsTarget::write(const std::vector<F32Tensor> &tensors) const {
  if (!replace)
    return writeThrough(tensors);
  auto error = [&](const std::string &what, int number) {
    return Status::error(option + ": " + given + ": " + what + " (" +
                         std::strerror(number) + ")");
  };
  std::string temp = folder() + "/.cohere2c-logits-XXXXXX";
  int fd = mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0)
    return error("cannot write beside it", errno);
  setTemporaryFile(temp);
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask); // as a newly created file, not mkstemp's 0600
  Status written = writeSafeTensors(fd, given, tensors);
  if (!written.ok())
    written = Status::error(option + ": " + written.message());
  // Synced before the rename: after a crash the file is the old one or the
  // new one, never a new name for lost data.
  if (written.ok() && fsync(fd) != 0)
    written = error("cannot write", errno);
  if (close(fd) != 0 && written.ok())
    written = error("cannot write", errno);
  if (written.ok() && std::rename(temp.c_str(), path.c_str()) != 0)
    written = error("cannot replace", errno);
  if (!written.ok())
    unlink(temp.c_str());
  setTemporaryFile("");
  return written;
}

} // namespace cohere2c
