#!/usr/bin/env bash
# emacs_test.sh SERVER SOURCE_DIR: Emacs in batch mode (Debian 12: 28.2 + elpa-eglot 1.9)
# against the built server; emacs_test.el does the checks and prints what eglot received.
set -uo pipefail
server=$1 source_dir=$2
. "$(dirname "$0")/lib.sh"
require_tool emacs emacs-nox
has_eglot='(progn (require (quote package))
  (add-to-list (quote package-directory-list) "/usr/share/emacs/site-lisp/elpa")
  (package-initialize) (kill-emacs (if (require (quote eglot) nil t) 0 1)))'
if ! emacs -Q --batch --eval "$has_eglot" 2>/dev/null; then
  if [ -n "${CI:-}" ]; then echo "FAIL: eglot is not available (Debian package elpa-eglot)" >&2; exit 1; fi
  echo "SKIP: eglot is not available (apt-get install elpa-eglot)"; exit "$SKIP_CODE"
fi
make_workspace "$server"

# preflight.el as a package manager installs it: byte-compiled (here with warnings as errors,
# and without eglot loaded), then the test loads the .elc.
mkdir -p "$work/lisp"
cp "$source_dir/editors/emacs/preflight.el" "$work/lisp/"
if ! compile_log=$(emacs -Q --batch --eval '(setq byte-compile-error-on-warn t)' \
                     -f batch-byte-compile "$work/lisp/preflight.el" 2>&1); then
  echo "$compile_log"; echo "FAIL: editors/emacs/preflight.el does not byte-compile cleanly"; exit 1
fi
export PF_TEST_FILE="$work/project/buggy_train.py"
export PF_PREFLIGHT_ELC="$work/lisp/preflight.elc"
HOME="$work" timeout --kill-after=5 60 emacs -Q --batch -l "$here/emacs_test.el" </dev/null
status=$?
echo
if ((status == 124 || status == 137)); then echo "FAIL: emacs did not finish within 60 s"; fi
if ! wait_server_exit 5; then
  echo "FAIL: the server was still running 5 s after emacs quit"
  status=1
fi
check_server_log || status=1
((status == 0)) || show_server_log
exit "$status"
