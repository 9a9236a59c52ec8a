// Byte ranges as the CLI prints them: 1-based lines and columns, columns counted in code
// points, end column exclusive (the column just after the last character).
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

Span span_of(const analysis::LineIndex& index, analysis::ByteRange range);

}  // namespace preflight::server
