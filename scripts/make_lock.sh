#!/usr/bin/env bash
# Hold LOCK for as long as the process PID (the make that asks) lives; print "ok" when it is held
# (or already held for that make: it re-reads itself after updating .make/suites.mk), else one
# line saying that another make runs in this checkout and what to do. The Makefile calls it while
# it reads itself, so a second make in one checkout stops at once instead of building the same
# targets side by side.
set -u
lock=$1 pid=$2
mkdir -p "$(dirname "$lock")"
exec 9>>"$lock"
if ! flock -n 9; then
  holder=$(cat "$lock.pid" 2>/dev/null || echo "?")
  if [ "$holder" = "$pid" ]; then echo ok; exit 0; fi
  # a make that has just ended: its watcher (below) lets go of the lock within a second
  if ! { [ "$holder" != "?" ] && ! kill -0 "$holder" 2>/dev/null && flock -w 5 9; }; then
    echo "another make is running in this checkout (pid $holder): wait for it to finish, or run this one" \
         "in a separate clone (two makes would build the same targets side by side)"
    exit 0
  fi
fi
echo "$pid" > "$lock.pid"
# the lock (fd 9, inherited) stays held by a background process that ends when the make does
( while kill -0 "$pid" 2>/dev/null; do sleep 1; done ) > /dev/null 2>&1 &
echo ok
