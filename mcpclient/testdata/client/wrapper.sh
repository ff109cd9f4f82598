#!/bin/sh
# Starts the real server as a child (not with exec), the way npx or a
# launcher script does, so the server is a grandchild of the bridge and
# shares the wrapper's process group.
"$@"
status=$?
exit $status
