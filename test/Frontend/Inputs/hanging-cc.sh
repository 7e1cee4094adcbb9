#!/bin/sh
# A C compiler driver that writes part of its -o file, says so on stdout
# and hangs: a link that a signal interrupts.
while [ $# -gt 0 ]; do
  [ "$1" = -o ] && out=$2
  shift
done
echo partial > "$out"
echo linking
exec sleep 30 > /dev/null 2>&1
