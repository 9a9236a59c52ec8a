// Brackets no continuation can balance: how the language server knows, without a parse, that
// a text being typed cannot parse (rules/incremental.h). Nothing here knows about PyTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace preflight::analysis {

// Scans `text[begin, end)` as Python tokens, starting outside any string or comment with no
// bracket open, and returns the offset of a bracket that makes every text with this part
// unparsable when what follows `end` is balanced on its own and starts outside any string:
// a closing bracket with no opener or of the wrong kind, or an opener still open at `end`.
// Returns nullopt when the part is balanced, and whenever the scan cannot be sure: `end`
// inside a string, a string left open at the end of its line, an f-string with a brace (its
// expressions may hold quotes of its own kind since Python 3.12).
std::optional<uint32_t> unbalanced_bracket(std::string_view text, size_t begin, size_t end);

}  // namespace preflight::analysis
