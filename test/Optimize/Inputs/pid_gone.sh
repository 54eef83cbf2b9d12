#!/bin/sh
# pid_gone.sh PIDFILE SECONDS: exit 0 once the process whose pid PIDFILE holds is gone (or a
# zombie: dead, waiting to be reaped), within SECONDS; else print it and exit 1.
pid=$(cat "$1") || exit 2
i=0
while [ "$i" -lt $(( $2 * 10 )) ]; do
  state=$(sed -n 's/^[0-9]* (.*) \([A-Z]\).*/\1/p' "/proc/$pid/stat" 2>/dev/null)
  if [ -z "$state" ] || [ "$state" = Z ]; then exit 0; fi
  sleep 0.1
  i=$((i + 1))
done
echo "pid $pid still running: $(cat /proc/$pid/cmdline 2>/dev/null | tr '\0' ' ')"
exit 1
