#include "analysis/brackets.h"

#include <vector>

namespace preflight::analysis {
namespace {

bool identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// The letters right before the quote at `quote`, when they are a string prefix (`rb`, `f`):
// true when one of them makes a formatted string (f, or t for Python 3.14's templates).
bool formatted_prefix(std::string_view text, size_t begin, size_t quote) {
  size_t p = quote;
  while (p > begin && identifier_char(text[p - 1])) --p;
  for (size_t i = p; i < quote; ++i)
    if (text[i] == 'f' || text[i] == 'F' || text[i] == 't' || text[i] == 'T') return true;
  return false;
}

char closer_of(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

}  // namespace

std::optional<uint32_t> unbalanced_bracket(std::string_view text, size_t begin, size_t end) {
  if (end > text.size() || begin > end) return std::nullopt;
  std::vector<uint32_t> open;  // offsets of the brackets still open
  for (size_t i = begin; i < end; ++i) {
    char c = text[i];
    if (c == '#') {
      while (i + 1 < end && text[i + 1] != '\n') ++i;
      if (i + 1 >= end) return std::nullopt;  // the comment may run on past `end`
    } else if (c == '"' || c == '\'') {
      bool triple = i + 2 < end && text[i + 1] == c && text[i + 2] == c;
      bool formatted = formatted_prefix(text, begin, i);
      size_t j = i + (triple ? 3 : 1);
      bool closed = false;
      for (; j < end; ++j) {
        if (text[j] == '\\') {
          ++j;  // an escaped character, a quote or a newline included
          continue;
        }
        if (formatted && text[j] == '{') return std::nullopt;
        if (!triple && text[j] == '\n') return std::nullopt;  // left open on its line
        if (text[j] == c && (!triple || (j + 2 < end && text[j + 1] == c && text[j + 2] == c))) {
          j += triple ? 2 : 0;
          closed = true;
          break;
        }
      }
      if (!closed) return std::nullopt;  // `end` is inside the string
      i = j;
    } else if (c == '(' || c == '[' || c == '{') {
      open.push_back(static_cast<uint32_t>(i));
    } else if (c == ')' || c == ']' || c == '}') {
      if (open.empty() || closer_of(text[open.back()]) != c) return static_cast<uint32_t>(i);
      open.pop_back();
    }
  }
  if (open.empty()) return std::nullopt;
  return open.back();
}

}  // namespace preflight::analysis
