#include "server/cli/positions.h"

namespace preflight::server {

Span span_of(const analysis::LineIndex& index, analysis::ByteRange range) {
  using analysis::ColumnUnit;
  analysis::LineColumn begin = index.to_line_column(range.begin, ColumnUnit::CodePoints);
  analysis::LineColumn end = index.to_line_column(range.end, ColumnUnit::CodePoints);
  return {begin.line + 1, begin.column + 1, end.line + 1, end.column + 1};
}

}  // namespace preflight::server
