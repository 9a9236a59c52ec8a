#!/bin/bash
# install_test.sh CMAKE BUILD_DIR VERSION: `cmake --install` into a scratch prefix, then check
# that every file is where the README says, that the installed binary runs, and that the man
# page and the three completions name every subcommand and option the binary's --help lists.
set -u
cmake=$1 build=$2 version=$3
. "$(dirname "$0")/lib.sh"

prefix=$(mktemp -d "${TMPDIR:-/tmp}/pf-install-test.XXXXXX")
trap 'rm -rf "$prefix"' EXIT
"$cmake" --install "$build" --prefix "$prefix" >/dev/null || { echo "FAIL: cmake --install" >&2; exit 1; }

man=$prefix/share/man/man1/preflight.1
bash_completion=$prefix/share/bash-completion/completions/preflight
zsh_completion=$prefix/share/zsh/site-functions/_preflight
fish_completion=$prefix/share/fish/vendor_completions.d/preflight.fish
doc=$prefix/share/doc/preflight
for f in "$man" "$bash_completion" "$zsh_completion" "$fish_completion" \
         "$doc/README.md" "$doc/LICENSE" "$doc/CHANGELOG.md" "$doc/docs/rules.md"; do
  [ -s "$f" ] || fail "not installed: ${f#"$prefix"/}"
done
bin=$prefix/bin/preflight
[ -x "$bin" ] || { fail "not installed: bin/preflight"; exit 1; }
[ "$("$bin" --version)" = "preflight $version" ] || fail "installed --version: $("$bin" --version)"

# The man page with hyphens unescaped, and the section of one command (.SS up to the next
# .SS or .SH).
man_text=$(sed 's/\\-/-/g' "$man")
man_section() { awk -v head=".SS \"preflight $1\"" '$0 == head {on = 1; next} /^\.S[SH]/ {on = 0} on' <<<"$man_text"; }
# A zsh function's body, from its `NAME() {` to the closing `}`.
zsh_function() { awk -v head="$1() {" '$0 == head {on = 1; next} /^}/ {on = 0} on' "$zsh_completion"; }

# The options the bash completion offers after a command ("" for the top level).
bash_options() { bash -c '. "$1"; _preflight_options "$2"' _ "$bash_completion" "$1"; }

# Top level: --help, --version.
man_options=$(awk '/^\.SH OPTIONS/ {on = 1; next} /^\.S[SH]/ {on = 0} on' <<<"$man_text")
for opt in $(help_options "$bin"); do
  grep -qF "\\fB$opt\\fR" <<<"$man_options" || fail "man page OPTIONS lacks $opt"
  [[ " $(bash_options "") " == *" $opt "* ]] || fail "bash completion lacks top-level $opt"
done

subcommands=$(help_subcommands "$bin")
[ -n "$subcommands" ] || fail "no subcommands read from preflight --help"
for cmd in $subcommands; do
  section=$(man_section "$cmd")
  [ -n "$section" ] || fail "man page has no section for '$cmd'"
  grep -qE "^_preflight_commands='([^']* )?$cmd( [^']*)?'$" "$bash_completion" || fail "bash completion lacks command $cmd"
  grep -qE "^    '$cmd:" "$zsh_completion" || fail "zsh completion lacks command $cmd"
  grep -qE "^complete -c preflight -n 'not __fish_seen_subcommand_from [^']*' -a $cmd " "$fish_completion" \
    || fail "fish completion lacks command $cmd"
  options_of_cmd=$(bash_options "$cmd")
  zsh_body=$(zsh_function "_preflight_$cmd")
  fish_lines=$(grep -F "'__fish_seen_subcommand_from $cmd'" "$fish_completion")
  for opt in $(help_options "$bin" "$cmd"); do
    grep -qF "\\fB$opt\\fR" <<<"$section" || fail "man page section '$cmd' lacks $opt"
    [[ " $options_of_cmd " == *" $opt "* ]] || fail "bash completion of '$cmd' lacks $opt"
    grep -qE "(['{,]|\\*)$opt[=+,}'[]" <<<"$zsh_body" || fail "zsh completion of '$cmd' lacks $opt"
    if [[ $opt == --* ]]; then flag="-l ${opt#--}"; else flag="-s ${opt#-}"; fi
    grep -qE -- "$flag( |$)" <<<"$fish_lines" || fail "fish completion of '$cmd' lacks $opt"
  done
  for pos in $(help_positionals "$bin" "$cmd"); do
    grep -qF "\\fI$pos\\fR" <<<"$section" || fail "man page section '$cmd' lacks positional $pos"
  done
done

[ "$failures" -eq 0 ] || exit 1
echo "installed under $prefix: bin, man page, completions and docs name every command and option"
