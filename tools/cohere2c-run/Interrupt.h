//===- Interrupt.h - SIGINT and SIGTERM during cohere2c-run ---------------===//
//
// An interrupted run leaves no partial output and gives the device back:
//   - before requests are stepped nothing has been written, and the signal
//     ends the process as by default (the device's memory goes with it);
//   - while they are stepped (a SteppingScope is alive) the signal is
//     recorded, the step in progress finishes (and with it any output file
//     being written, renamed into place whole), runRequests stops, the
//     engine and the artifact are released, and the tool ends itself by the
//     same signal (interruptExit), so that a shell sees 130 or 143 and a
//     script running it stops as it would for any other interrupted
//     command;
//   - a second signal ends the process at once.
// Whichever way the process ends, the temporary file being written (one at
// a time: --logits-out, or a --logits-dir file) is removed first.
//
// A signal ignored when the tool started (SIGINT of a background job in a
// script) stays ignored, as shells expect of the commands they start.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TOOLS_RUN_INTERRUPT_H
#define COHERE2C_TOOLS_RUN_INTERRUPT_H

#include <string>

namespace cohere2c {

/// Installs the handlers of SIGINT and SIGTERM, and ignores SIGXFSZ: a
/// write past the file size limit (ulimit -f) then fails with EFBIG and is
/// reported as an error, where the signal would end the tool mid-write.
/// Call once, first thing in main.
void installInterruptHandlers();

/// The signal that interrupted the run (SIGINT, SIGTERM), or 0.
int interruptSignal();

/// While alive, SIGINT and SIGTERM are recorded for runRequests to stop
/// at, instead of ending the process. Not nested.
class SteppingScope {
public:
  SteppingScope();
  ~SteppingScope();
  SteppingScope(const SteppingScope &) = delete;
  SteppingScope &operator=(const SteppingScope &) = delete;
};

/// The temporary file that a signal ending the process removes (the last
/// one set; an empty path: none). At most PATH_MAX - 1 bytes are kept; a
/// longer path is not removed.
void setTemporaryFile(const std::string &path);

/// Ends the process by `signal` (its default action), as if the handler had
/// never been installed. For main, after the run was released.
[[noreturn]] void interruptExit(int signal);

} // namespace cohere2c

#endif // COHERE2C_TOOLS_RUN_INTERRUPT_H
