#!/usr/bin/env bash
# The hooks of .pre-commit-hooks.yaml through the real pre-commit, the way a user adds them:
# a scratch git repository whose .pre-commit-config.yaml names a clone of this repository
# (repo: <path>, rev: <commit>), with a training script that has a known finding.
#   pre_commit_test.sh PREFLIGHT_EXE SOURCE_DIR
# PREFLIGHT_HOOK_EXE points the hook's entry script at the already-built binary, so nothing is
# compiled here (the from-scratch build is the same script without it). The clone is a commit
# of the source tree as it is now, tracked and untracked files both, so uncommitted hook
# changes are what gets tested. Skip (77) without pre-commit locally, fail in CI.
set -euo pipefail
exe=$(realpath "$1")
source_dir=$(realpath "$2")

if ! command -v pre-commit >/dev/null 2>&1; then
  message="pre-commit is not installed (Debian: apt-get install pre-commit; scripts/bootstrap.sh --tests)"
  if [ -n "${CI:-}" ]; then echo "FAIL: $message" >&2; exit 1; fi
  echo "SKIP: $message"; exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PRE_COMMIT_HOME="$work/pre-commit-home" HOME="$work/home"
mkdir -p "$HOME"
git config --global user.email test@example.invalid
git config --global user.name "pre-commit test"
git config --global init.defaultBranch main
git config --global protocol.file.allow always

fail() { echo "FAIL: $*" >&2; exit 1; }

# The hook repository: this tree's files (without build outputs) committed in a fresh repo.
hooks="$work/hooks"
mkdir -p "$hooks"
git -C "$source_dir" ls-files -z --cached --others --exclude-standard |
  (cd "$source_dir" && xargs -0 cp --parents -t "$hooks" 2>/dev/null || true)
[ -f "$hooks/.pre-commit-hooks.yaml" ] && [ -x "$hooks/scripts/pre-commit-hook.sh" ] ||
  fail "the hook files were not copied"
git -C "$hooks" init -q && git -C "$hooks" add -A && git -C "$hooks" commit -qm hooks
rev=$(git -C "$hooks" rev-parse HEAD)

user="$work/user"
mkdir -p "$user"
git -C "$user" init -q
cat > "$user/train.py" <<'EOF'
import torch


def train(model, loader, optimizer):
    history = []
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
        history.append(loss)
    return history
EOF
cat > "$user/.pre-commit-config.yaml" <<EOF
repos:
  - repo: $hooks
    rev: $rev
    hooks:
      - id: preflight
        args: [--fail-on, warning]
EOF
git -C "$user" add -A && git -C "$user" commit -qm "a training script"

run_hooks() {  # run_hooks LOG: pre-commit run --all-files in the user's repository
  (cd "$user" && PREFLIGHT_HOOK_EXE="$exe" pre-commit run --all-files --color never) >"$1" 2>&1
}

echo "== preflight hook: the finding fails the commit"
status=0
run_hooks "$work/check.log" || status=$?
cat "$work/check.log"
[ "$status" -eq 1 ] || fail "pre-commit exited $status, expected 1"
grep -q '^preflight\.*Failed$' "$work/check.log" || fail "the preflight hook did not fail"
grep -q 'train.py:11:24: warning TG001' "$work/check.log" || fail "TG001 not reported"
git -C "$user" diff --quiet || fail "the check hook changed a file"
! find "$PRE_COMMIT_HOME" -maxdepth 2 -name .pre-commit-build | grep -q . ||
  fail "the hook built although PREFLIGHT_HOOK_EXE was set"

echo "== preflight-fix hook: the safe fix is applied, pre-commit reports the change"
sed -i 's/      - id: preflight$/      - id: preflight-fix/' "$user/.pre-commit-config.yaml"
git -C "$user" commit -qam "the fixing hook"
status=0
run_hooks "$work/fix.log" || status=$?
cat "$work/fix.log"
[ "$status" -eq 1 ] || fail "pre-commit exited $status, expected 1 (files were modified)"
grep -q 'files were modified by this hook' "$work/fix.log" || fail "no modification reported"
grep -q '        history.append(loss.detach())$' "$user/train.py" ||
  fail "the .detach() fix was not applied: $(cat "$user/train.py")"
[ "$(git -C "$user" diff --numstat)" = "$(printf '1\t1\ttrain.py')" ] ||
  fail "the fix changed more than one line: $(git -C "$user" diff)"

echo "== both hooks pass on the fixed file"
printf '      - id: preflight\n        args: [--fail-on, warning]\n' >> "$user/.pre-commit-config.yaml"
git -C "$user" commit -qam "fixed, and both hooks"
status=0
run_hooks "$work/clean.log" || status=$?
cat "$work/clean.log"
[ "$status" -eq 0 ] || fail "pre-commit exited $status on the fixed file"
[ "$(grep -c '[.]Passed$' "$work/clean.log")" -eq 2 ] || fail "expected two hooks to pass"
echo "PASS"
