# Shared by the install tests (sourced): reading the subcommands and options out of the
# binary's own --help, the reference the generated files are checked against.

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
failures=0

# help_subcommands BIN: the names under "Subcommands:" of `BIN --help`.
help_subcommands() {
  "$1" --help | awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}'
}

# help_options BIN [SUBCOMMAND]: every option name (-f, --format) of that help, one a line.
help_options() {
  local bin=$1; shift
  "$bin" "$@" --help | awk '/^Options:/ {on = 1; next} /^[A-Z][a-z]*:/ {on = 0}
    on && /^  -/ {n = split($1, names, ","); for (i = 1; i <= n; i++) print names[i]}'
}

# help_positionals BIN SUBCOMMAND: the names under "Positionals:".
help_positionals() {
  "$1" "$2" --help | awk '/^Positionals:/ {on = 1; next} /^[A-Z][a-z]*:/ {on = 0}
    on && /^  [a-z]/ {print $1}'
}
