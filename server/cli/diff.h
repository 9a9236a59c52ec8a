// A line-based unified diff (the `--diff` output), written here because the fixes are small:
// common prefix and suffix are trimmed, the rest is diffed with Myers' greedy algorithm, which
// costs O((N+M)·D) time and O(D²) memory for D changed lines.
#pragma once

#include <string>
#include <string_view>

namespace preflight::server {

// Returns "" when the texts are equal. Labels are printed as given ("a/train.py"). Lines
// keep their terminators; a last line without one is marked "\ No newline at end of file".
std::string unified_diff(std::string_view old_text, std::string_view new_text,
                         std::string_view old_label, std::string_view new_label,
                         int context = 3);

}  // namespace preflight::server
