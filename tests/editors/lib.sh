# Shared by the editor end-to-end tests (sourced): the skip/fail policy when an editor is
# missing, a scratch workspace holding a copy of buggy_train.py, and a `preflight` on PATH that
# records the real server's pid, so the EXIT trap ends exactly that process and nothing else.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly SKIP_CODE=77   # ctest SKIP_RETURN_CODE (tests/editors/CMakeLists.txt)

# require_tool COMMAND PACKAGE: in CI a missing editor is a failure, locally a skip.
require_tool() {
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ -n "${CI:-}" ]; then
    echo "FAIL: '$1' is not installed (Debian package $2); scripts/bootstrap.sh --editors installs it in CI" >&2
    exit 1
  fi
  echo "SKIP: '$1' is not installed (apt-get install $2; CI installs it through scripts/bootstrap.sh --editors)"
  exit "$SKIP_CODE"
}

# make_workspace SERVER: $work/project/{pyproject.toml,buggy_train.py}; the pyproject.toml
# (without a [tool.preflight] table) only marks the root, so every rule runs with its
# defaults. $work/bin/preflight, first on PATH, records its pid, sends the server's stderr to
# $server_log and becomes SERVER (exec keeps the pid); the editors run it as `preflight lsp`,
# exactly as a user's set-up would.
make_workspace() {
  local server
  server=$(realpath -e "$1") || { echo "FAIL: no server at $1" >&2; exit 1; }
  work=$(mktemp -d "${TMPDIR:-/tmp}/pf-editor-test.XXXXXX")
  server_pids="$work/server.pids"
  server_log="$work/server.log"
  : > "$server_pids"
  trap cleanup EXIT
  mkdir -p "$work/project" "$work/bin"
  printf '[project]\nname = "editor-test"\n' > "$work/project/pyproject.toml"
  cp "$here/buggy_train.py" "$work/project/buggy_train.py"
  printf '#!/bin/sh\necho $$ >> "%s"\nexec "%s" "$@" 2>> "%s"\n' "$server_pids" "$server" "$server_log" > "$work/bin/preflight"
  chmod +x "$work/bin/preflight"
  export PATH="$work/bin:$PATH"
}

server_alive() {
  local pid
  while read -r pid; do kill -0 "$pid" 2>/dev/null && return 0; done < "$server_pids"
  return 1
}

# wait_server_exit SECONDS: the server must end by itself once its editor has quit.
wait_server_exit() {
  local deadline=$((SECONDS + $1))
  while server_alive; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

cleanup() {
  local pid
  if [ -s "$server_pids" ]; then
    while read -r pid; do
      kill -0 "$pid" 2>/dev/null || continue
      echo "cleanup: ending server pid $pid, still running" >&2
      kill -TERM "$pid" 2>/dev/null; sleep 0.5; kill -KILL "$pid" 2>/dev/null
    done < "$server_pids"
  fi
  rm -rf "$work"
}

show_server_log() {
  [ -s "$server_log" ] || return 0
  echo "--- server stderr (last 40 lines) ---"
  tail -n 40 "$server_log"
}

# check_server_log: the server logged no error and rejected no message from the client (a
# malformed request or reply from the editor's set-up shows here, not in the editor).
check_server_log() {
  local bad
  bad=$(grep -E '\[(error|critical)\]|rejected message' "$server_log" 2>/dev/null) || return 0
  echo "FAIL: the server logged:"
  echo "$bad"
  return 1
}
