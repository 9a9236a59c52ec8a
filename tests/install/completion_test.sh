#!/bin/bash
# completion_test.sh PREFLIGHT GENERATED_DIR: the generated completions parse in their shells
# (zsh and fish only where installed: a message says which were skipped), the bash one
# completes commands, options and option values when driven the way bash drives it, and every
# value it offers for an enumerated option is one the binary accepts.
set -u
bin=$(realpath -e "$1") generated=$(realpath -e "$2") || exit 1
. "$(dirname "$0")/lib.sh"
bash_file=$generated/bash/preflight zsh_file=$generated/zsh/_preflight fish_file=$generated/fish/preflight.fish

bash -n "$bash_file" || fail "bash -n $bash_file"
if command -v zsh >/dev/null; then
  zsh -n "$zsh_file" || fail "zsh -n $zsh_file"
else
  echo "SKIP: zsh is not installed; the zsh completion's syntax was not checked"
fi
if command -v fish >/dev/null; then
  fish -n "$fish_file" || fail "fish -n $fish_file"
  offered=$(fish -c 'source $argv[1]; complete -C "preflight check --format "' "$fish_file" | cut -f1)
  [ "$(echo $offered)" = "github json sarif terminal" ] || fail "fish offers for check --format: $(echo $offered)"
else
  echo "SKIP: fish is not installed; the fish completion's syntax was not checked"
fi

# complete WORD...: COMPREPLY, one a line, after bash's completion of the last word, in an
# empty directory so no file name is offered alongside.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/pf-completion-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
complete_words() {
  (cd "$scratch/empty" && bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _preflight
         printf "%s\n" "${COMPREPLY[@]}"' _ "$bash_file" "$@")
}
mkdir "$scratch/empty"
expect_completion() {  # EXPECTED WORD...: the completions, space-separated and sorted
  local expected=$1; shift
  local got
  got=$(complete_words "$@" | sort | tr '\n' ' ')
  [ "${got% }" = "$expected" ] || fail "completing '$*': got '${got% }', want '$expected'"
}

expect_completion "$(help_subcommands "$bin" | sort | tr '\n' ' ' | sed 's/ $//')" preflight ""
expect_completion "check" preflight ch
expect_completion "github json sarif terminal" preflight check --format ""
expect_completion "sarif" preflight check -f s
expect_completion "--format=sarif" preflight check --format=s
expect_completion "json" preflight check --format = j
expect_completion "warning" preflight train.py --fail-on w
expect_completion "markdown" preflight rules --format m
expect_completion "--fail-on --file-timeout --fix --format" preflight check --f
expect_completion "TG010 TG011 TG012 TG013 TG014" preflight explain tg01
expect_completion "TG001,TG010 TG001,TG011 TG001,TG012 TG001,TG013 TG001,TG014" preflight check --select TG001,TG01
expect_completion "warn" preflight lsp --log-level wa

# Every value offered for an enumerated option, given to the binary: not a usage error (2).
args_for() {  # the arguments a command needs besides the option, to get past validation
  case $1 in
    check) echo "$scratch/empty" ;;
    estimate) echo "--model gpt2 --gpu $("$bin" gpus --format json | sed -n 's/.*"id": "\(.*\)".*/\1/p' | head -1)" ;;
  esac
}
checked=0
while read -r cmd opt values; do
  for value in $values; do
    # shellcheck disable=SC2046
    timeout 20 "$bin" "$cmd" $(args_for "$cmd") "$opt" "$value" </dev/null >/dev/null 2>"$scratch/err"
    rc=$?
    [ "$rc" -ne 2 ] && [ "$rc" -ne 124 ] || fail "preflight $cmd $opt $value: exit $rc: $(head -c 300 "$scratch/err")"
    checked=$((checked + 1))
  done
done < <(sed -n "s/^    .*'\([a-z-]*\) \(--[a-z-]*\)') echo 'choice \(.*\)' ;;$/\1 \2 \3/p" "$bash_file")
[ "$checked" -ge 10 ] || fail "only $checked enumerated values found in $bash_file"

[ "$failures" -eq 0 ] || exit 1
echo "completions parse; bash completes commands, options and values; $checked offered values accepted"
