#include "server/cli/positions.h"

namespace preflight::server {

Span span_of(const analysis::LineIndex& index, analysis::ByteRange range,
             analysis::ColumnUnit unit) {
  analysis::LineColumn begin = index.to_line_column(range.begin, unit);
  analysis::LineColumn end = index.to_line_column(range.end, unit);
  return {begin.line + 1, begin.column + 1, end.line + 1, end.column + 1};
}

}  // namespace preflight::server
