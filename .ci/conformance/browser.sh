#!/usr/bin/env bash
# The conformance run's "browser": the suite's authorization server
# approves at once and redirects to the client's loopback callback, so
# following the redirects is the whole of the user's part.
exec curl -sS -L --max-time 60 -o /dev/null "$1"
