#!/usr/bin/env bash
# vscode_test.sh SOURCE BUILD: the VS Code extension's documented build in a copy of SOURCE
# under BUILD: `npm ci`, `npm test` (tsc + the settings mapping unit tests under node:test),
# `npm run package` (vsce, offline except the npm registry), then what the .vsix holds.
set -euo pipefail
source=$1 build=$2
. "$(dirname "$0")/lib.sh"
require_tool npm npm

rm -rf "$build"
mkdir -p "$build"
# Everything but what npm and tsc produce, so the copy builds like a fresh clone.
tar -C "$source" --exclude=node_modules --exclude=out --exclude='*.vsix' -cf - . | tar -C "$build" -xf -
cd "$build"
npm ci --no-audit --no-fund --loglevel=error
test_log=$(npm test 2>&1) || { echo "$test_log"; echo "FAIL: npm test"; exit 1; }
echo "$test_log" | grep -E '^(not )?ok |^# (tests|pass|fail)'
package_log=$(npm run package 2>&1) || { echo "$package_log"; echo "FAIL: npm run package"; exit 1; }
listing=$(npx --no-install vsce ls 2>&1)
for member in package.json out/extension.js out/settings.js node_modules/vscode-languageclient/package.json; do
  grep -qx "$member" <<<"$listing" || { echo "FAIL: preflight.vsix lacks $member"; exit 1; }
done
if grep -q "^out/test/\|^src/" <<<"$listing"; then echo "FAIL: preflight.vsix ships sources or tests"; exit 1; fi
echo "PASS: npm ci, compile, unit tests, preflight.vsix ($(stat -c %s preflight.vsix) bytes, $(wc -l <<<"$listing") files)"
