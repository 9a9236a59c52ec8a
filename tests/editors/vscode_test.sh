#!/usr/bin/env bash
# vscode_test.sh SOURCE BUILD PREFLIGHT EXAMPLE: the VS Code extension's documented build in a
# copy of SOURCE under BUILD: `npm ci`; `npm test` (tsc, the settings mapping, and the
# extension's command paths — lens, palette, fix all — against the real server PREFLIGHT on
# EXAMPLE, under node:test); `npm run package` (tsc + esbuild bundle, vsce, offline except
# the npm registry) and what the .vsix holds; then the linux-x64 package with PREFLIGHT inside.
set -euo pipefail
source=$1 build=$2 preflight=$3 example=$4
. "$(dirname "$0")/lib.sh"
require_tool npm npm

rm -rf "$build"
mkdir -p "$build"
# Everything but what npm, tsc and esbuild produce, so the copy builds like a fresh clone.
tar -C "$source" --exclude=node_modules --exclude=out --exclude=dist --exclude=server --exclude='*.vsix' -cf - . |
  tar -C "$build" -xf -
cd "$build"
npm ci --no-audit --no-fund --loglevel=error
test_log=$(PREFLIGHT_SERVER=$preflight PREFLIGHT_EXAMPLE=$example npm test 2>&1) || { echo "$test_log"; echo "FAIL: npm test"; exit 1; }
echo "$test_log" | grep -E '^(not )?ok |^# (tests|pass|fail|skipped)'
# The protocol tests skip without a server; here they must have run.
grep -qx '# skipped 0' <<<"$test_log" || { echo "FAIL: tests were skipped"; exit 1; }

package_log=$(npm run package 2>&1) || { echo "$package_log"; echo "FAIL: npm run package"; exit 1; }
members=$(unzip -Z1 preflight.vsix)
for member in extension/package.json extension/dist/extension.js; do
  grep -qx "$member" <<<"$members" || { echo "FAIL: preflight.vsix lacks $member"; exit 1; }
done
if grep -q "^extension/\(node_modules\|out\|src\)/" <<<"$members"; then
  echo "FAIL: preflight.vsix ships node_modules, tsc output or sources:"; echo "$members"; exit 1
fi
# The bundle holds vscode-languageclient: what it still requires is VS Code's API or node's own.
unresolved=$(grep -o 'require("[^"]*")' dist/extension.js | sort -u | sed 's/require("\(.*\)")/\1/' |
  node -e 'const b=new Set(require("module").builtinModules); let out="";
           for (const m of require("fs").readFileSync(0,"utf8").split("\n")) if (m && m!=="vscode" && !b.has(m)) out+=m+" ";
           console.log(out.trim())')
[ -z "$unresolved" ] || { echo "FAIL: the bundle requires $unresolved"; exit 1; }
echo "PASS: npm ci, compile, tests, bundled preflight.vsix ($(stat -c %s preflight.vsix) bytes, $(wc -l <<<"$members") files)"

# The platform package: the server inside, executable, and it runs from where VS Code unpacks it.
# (Without its debug sections: the package is about what ships, not the test build's symbols.)
mkdir -p server
strip --strip-debug -o server/preflight "$preflight" 2>/dev/null || cp "$preflight" server/preflight
platform_log=$(npm run package:linux-x64 2>&1) || { echo "$platform_log"; echo "FAIL: npm run package:linux-x64"; exit 1; }
grep -q 'TargetPlatform="linux-x64"' <(unzip -p preflight-linux-x64.vsix extension.vsixmanifest) ||
  { echo "FAIL: preflight-linux-x64.vsix names no linux-x64 target"; exit 1; }
rm -rf unpacked && mkdir unpacked && unzip -q preflight-linux-x64.vsix -d unpacked
[ -x unpacked/extension/server/preflight ] || { echo "FAIL: the packaged server is not executable"; exit 1; }
version=$(unpacked/extension/server/preflight --version)
echo "PASS: preflight-linux-x64.vsix ($(stat -c %s preflight-linux-x64.vsix) bytes) runs its server: $version"
