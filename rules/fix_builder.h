// CST-exact edit helpers: every fix touches only the bytes it must, so comments, spacing and
// everything else in the file stay byte-identical.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "analysis/findings.h"
#include "analysis/syntax.h"

namespace preflight::rules {

// True when `e.method()` can be written without parentheses around `e`.
bool is_primary_expression(TSNode e);

// `e` -> `e<suffix>` (parenthesised first when needed): `loss * 2` -> `(loss * 2).detach()`.
analysis::TextEdit append_method(TSNode e, std::string_view suffix, std::string_view src);

// Insert `line` (without newline) on its own line just before the line holding `offset`,
// with that line's indentation.
analysis::TextEdit insert_line_before(uint32_t offset, std::string_view line, std::string_view src);

// Unwrap a call, keeping its first positional argument: `F.softmax(x, dim=1)` -> `x`.
std::optional<analysis::TextEdit> unwrap_call(TSNode call, std::string_view src);

}  // namespace preflight::rules
