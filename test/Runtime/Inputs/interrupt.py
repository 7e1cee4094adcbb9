"""Sends a signal to a command once it has printed a line, then reports how
it ended.

    interrupt.py SIGNAL -- COMMAND...

Starts COMMAND with SIGINT and SIGTERM at their default actions (whatever
the test runner left them at), waits for its first line on stdout (a
finished request: the tool is stepping), sends SIGNAL, waits for it to end
and prints its stdout's lines, then "killed by SIGNAL" or "exit N". Its
stderr passes through.
"""
import signal
import subprocess
import sys

args = sys.argv[1:]
sent = signal.Signals[args.pop(0)]
assert args.pop(0) == "--"


def default_signals():
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True,
                        preexec_fn=default_signals)
first = proc.stdout.readline()
proc.send_signal(sent)
rest = proc.stdout.read()
code = proc.wait(timeout=120)
sys.stdout.write(first + rest)
if code < 0:
    print("killed by " + signal.Signals(-code).name)
else:
    print("exit %d" % code)
