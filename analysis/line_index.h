// Byte offset <-> (line, column) conversion, computed once per text. Lines split at \n, \r\n
// and lone \r (as Python and LSP do). Columns can be counted in UTF-8 bytes, UTF-16 code
// units (LSP's default) or code points (what the CLI prints, 1-based, like the reference).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace preflight::analysis {

enum class ColumnUnit { Utf8Bytes, Utf16Units, CodePoints };

struct LineColumn {
  uint32_t line = 0;    // 0-based
  uint32_t column = 0;  // 0-based, in the requested unit
  friend bool operator==(const LineColumn&, const LineColumn&) = default;
};

class LineIndex {
 public:
  explicit LineIndex(std::string_view text);
  // Indexes only as far as line `last_line` needs (its start and the next line's): what an
  // edit's range reads, without scanning the rest of a long document. Lines past it are
  // unknown to this index (`line_count` stops there).
  LineIndex(std::string_view text, uint32_t last_line);

  uint32_t line_count() const { return static_cast<uint32_t>(line_starts_.size()); }
  // Offset is clamped to the text; an offset inside a multi-byte sequence counts as the
  // start of that character.
  LineColumn to_line_column(uint32_t offset, ColumnUnit unit) const;
  // Inverse; a column past the end of the line clamps to the line end (before its break).
  uint32_t to_offset(LineColumn pos, ColumnUnit unit) const;

  uint32_t line_start(uint32_t line) const;
  uint32_t line_end(uint32_t line) const;  // offset of the line break (or text end)
  std::string_view line_text(uint32_t line) const;

 private:
  std::string_view text_;
  std::vector<uint32_t> line_starts_;
};

}  // namespace preflight::analysis
