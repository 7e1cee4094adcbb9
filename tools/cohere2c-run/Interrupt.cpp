//===- Interrupt.cpp ------------------------------------------------------===//
//
// The handler touches only what is safe in a signal handler: sig_atomic_t
// flags, a fixed buffer holding the temporary path, unlink, sigaction and
// raise.
//
//===----------------------------------------------------------------------===//

#include "Interrupt.h"

#include <climits>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace cohere2c {

namespace {

volatile sig_atomic_t received = 0;
volatile sig_atomic_t stepping = 0;
/// temporaryPath holds a path to remove while hasTemporary is set.
char temporaryPath[PATH_MAX];
volatile sig_atomic_t hasTemporary = 0;

void setDefaultAction(int signal) {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signal, &action, nullptr);
}

void onSignal(int signal) {
  if (stepping && !received) {
    received = signal;
    return;
  }
  if (hasTemporary)
    unlink(temporaryPath);
  // The signal stays blocked until the handler returns, and then ends the
  // process with the default action.
  setDefaultAction(signal);
  raise(signal);
}

} // namespace

void installInterruptHandlers() {
  for (int signal : {SIGINT, SIGTERM}) {
    struct sigaction old;
    if (sigaction(signal, nullptr, &old) == 0 && old.sa_handler == SIG_IGN)
      continue;
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_handler = onSignal;
    sigemptyset(&action.sa_mask);
    // The other one waits while the handler runs: one removal, one exit.
    sigaddset(&action.sa_mask, SIGINT);
    sigaddset(&action.sa_mask, SIGTERM);
    action.sa_flags = SA_RESTART;
    sigaction(signal, &action, nullptr);
  }
  std::signal(SIGXFSZ, SIG_IGN);
}

int interruptSignal() { return received; }

SteppingScope::SteppingScope() { stepping = 1; }
SteppingScope::~SteppingScope() { stepping = 0; }

void setTemporaryFile(const std::string &path) {
  hasTemporary = 0;
  if (path.empty() || path.size() >= sizeof(temporaryPath))
    return;
  std::memcpy(temporaryPath, path.c_str(), path.size() + 1);
  hasTemporary = 1;
}

void interruptExit(int signal) {
  setDefaultAction(signal);
  raise(signal);
  // Unreachable unless the signal is blocked by whoever started the tool.
  _exit(128 + signal);
}

} // namespace cohere2c
