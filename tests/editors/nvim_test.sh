#!/usr/bin/env bash
# nvim_test.sh SERVER SOURCE_DIR: headless Neovim (Debian 12: 0.7.2) against the built server;
# nvim_test.lua does the checks and prints what the client received.
set -uo pipefail
server=$1 source_dir=$2
. "$(dirname "$0")/lib.sh"
require_tool nvim neovim
make_workspace "$server"

export PF_TEST_FILE="$work/project/buggy_train.py"
export PF_EDITORS_DIR="$source_dir/editors"
# Neovim's own state (lsp.log, shada) stays inside the scratch directory.
export XDG_STATE_HOME="$work/state" XDG_CACHE_HOME="$work/cache" XDG_DATA_HOME="$work/data" XDG_CONFIG_HOME="$work/config"

timeout --kill-after=5 60 nvim --headless -u NONE -i NONE -n -c "luafile $here/nvim_test.lua" </dev/null
status=$?
echo
if ((status == 124 || status == 137)); then echo "FAIL: neovim did not finish within 60 s"; fi
if ! wait_server_exit 5; then
  echo "FAIL: the server was still running 5 s after neovim quit"
  status=1
fi
check_server_log || status=1
# Neovim logs the client's own failures (a handler that threw, a malformed message) as ERROR.
for f in "$work"/state/nvim/lsp.log "$work"/cache/nvim/lsp.log; do
  if [ -s "$f" ] && grep -q '^\[ERROR\]' "$f"; then echo "FAIL: neovim's lsp.log has errors"; status=1; fi
done
if ((status != 0)); then
  show_server_log
  for f in "$work"/state/nvim/lsp.log "$work"/cache/nvim/lsp.log; do
    [ -s "$f" ] && { echo "--- $f (last 40 lines) ---"; tail -n 40 "$f"; }
  done
fi
exit "$status"
