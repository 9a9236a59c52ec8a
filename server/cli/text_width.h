// How wide UTF-8 text is on a terminal, so carets line up under the span even after wide
// (CJK, emoji) or zero-width (combining) characters. Tabs are shown as kTabWidth spaces.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace preflight::server {

inline constexpr uint32_t kTabWidth = 4;

// Terminal columns taken by one code point: 0 (combining, zero-width), 1 or 2 (wide).
uint32_t code_point_width(char32_t cp);

// Sum of code point widths; a tab counts kTabWidth; an invalid byte counts 1.
uint32_t display_width(std::string_view utf8);

// The line as printed in a snippet: tabs replaced by kTabWidth spaces, so widths agree.
std::string expand_tabs(std::string_view line);

}  // namespace preflight::server
