// Byte ranges as the CLI prints them: 1-based lines and columns, end column exclusive (the
// column just after the last character). Columns count code points unless a format asks for
// another unit (SARIF counts UTF-16 code units).
#pragma once

#include <cstdint>

#include "analysis/findings.h"
#include "analysis/line_index.h"

namespace preflight::server {

struct Span {
  uint32_t line = 1;
  uint32_t column = 1;
  uint32_t end_line = 1;
  uint32_t end_column = 1;
};

Span span_of(const analysis::LineIndex& index, analysis::ByteRange range,
             analysis::ColumnUnit unit = analysis::ColumnUnit::CodePoints);

}  // namespace preflight::server
