#include "analysis/line_index.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace preflight::analysis {
namespace {

bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the UTF-8 sequence that starts with `lead` (1 for invalid lead bytes, so that
// malformed text still advances).
uint32_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

// Length of the character starting at `i`: its lead byte's length when every continuation
// byte is present, else 1 (malformed text advances byte by byte, never past `end`).
uint32_t char_length(std::string_view text, uint32_t i, uint32_t end) {
  uint32_t len = sequence_length(static_cast<unsigned char>(text[i]));
  for (uint32_t k = 1; k < len; ++k)
    if (i + k >= end || !is_continuation(static_cast<unsigned char>(text[i + k]))) return 1;
  return len;
}

uint32_t units_of(uint32_t seq_len, ColumnUnit unit) {
  switch (unit) {
    case ColumnUnit::Utf8Bytes: return seq_len;
    case ColumnUnit::Utf16Units: return seq_len == 4 ? 2 : 1;
    case ColumnUnit::CodePoints: return 1;
  }
  return 1;
}

}  // namespace

LineIndex::LineIndex(std::string_view text) : LineIndex(text, UINT32_MAX) {}

LineIndex::LineIndex(std::string_view text, uint32_t last_line) : text_(text) {
  line_starts_.push_back(0);
  if (text.empty()) return;
  // Enough once the start of the line after `last_line` is known (it ends `last_line`).
  const size_t enough = last_line >= UINT32_MAX - 1 ? SIZE_MAX : static_cast<size_t>(last_line) + 2;
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (!std::memchr(begin, '\r', text.size())) {
    // The usual text: '\n' ends every line, and memchr finds it many bytes at a time (the
    // server indexes the whole document at every edit).
    for (const char* p = begin; p < end && line_starts_.size() < enough; ++p) {
      p = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
      if (!p) break;
      line_starts_.push_back(static_cast<uint32_t>(p - begin + 1));
    }
    return;
  }
  for (uint32_t i = 0; i < text.size() && line_starts_.size() < enough; ++i) {
    if (text[i] == '\n') {
      line_starts_.push_back(i + 1);
    } else if (text[i] == '\r') {
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
      line_starts_.push_back(i + 1);
    }
  }
}

uint32_t LineIndex::line_start(uint32_t line) const {
  if (line >= line_starts_.size()) return static_cast<uint32_t>(text_.size());
  return line_starts_[line];
}

uint32_t LineIndex::line_end(uint32_t line) const {
  if (line >= line_starts_.size()) return static_cast<uint32_t>(text_.size());
  uint32_t end = line + 1 < line_starts_.size() ? line_starts_[line + 1]
                                                 : static_cast<uint32_t>(text_.size());
  while (end > line_starts_[line] && (text_[end - 1] == '\n' || text_[end - 1] == '\r')) --end;
  return end;
}

std::string_view LineIndex::line_text(uint32_t line) const {
  uint32_t begin = line_start(line);
  return text_.substr(begin, line_end(line) - begin);
}

LineColumn LineIndex::to_line_column(uint32_t offset, ColumnUnit unit) const {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text_.size()));
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - line_starts_.begin()) - 1;
  uint32_t column = 0;
  for (uint32_t i = line_starts_[line]; i < offset;) {
    uint32_t len = char_length(text_, i, static_cast<uint32_t>(text_.size()));
    if (i + len > offset) break;  // offset is inside this character
    column += units_of(len, unit);
    i += len;
  }
  return {line, column};
}

uint32_t LineIndex::to_offset(LineColumn pos, ColumnUnit unit) const {
  if (pos.line >= line_starts_.size()) return static_cast<uint32_t>(text_.size());
  uint32_t i = line_starts_[pos.line];
  uint32_t end = line_end(pos.line);
  uint32_t column = 0;
  while (i < end && column < pos.column) {
    uint32_t len = char_length(text_, i, end);
    column += units_of(len, unit);
    i += len;
  }
  return i;
}

}  // namespace preflight::analysis
