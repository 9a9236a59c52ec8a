#include "analysis/suppressions.h"

#include <algorithm>
#include <cctype>

#include "analysis/names.h"

namespace preflight::analysis {
namespace {

std::string_view trim_left(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// `TG003`, `E501`: letters then digits, ending at a word boundary.
bool looks_like_code(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
  size_t letters = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  bool boundary = i == s.size() || !std::isalnum(static_cast<unsigned char>(s[i]));
  return letters > 0 && i > letters && boundary;
}

bool consume(std::string_view& s, std::string_view word) {
  if (!s.starts_with(word)) return false;
  s.remove_prefix(word.size());
  return true;
}

// After `noqa` / `ignore`: an optional `:` or `[` list of codes. Returns false when the
// directive word is followed by something that makes it another word (`noqa-ish`).
bool parse_codes(std::string_view rest, CommentDirective& d) {
  if (!rest.empty() && (std::isalnum(static_cast<unsigned char>(rest.front())) ||
                        rest.front() == '_' || rest.front() == '-'))
    return false;
  std::string_view r = trim_left(rest);
  if (r.empty() || (r.front() != ':' && r.front() != '[')) {
    d.all = true;
    return true;
  }
  r.remove_prefix(1);
  while (true) {
    r = trim_left(r);
    size_t n = 0;
    while (n < r.size() && std::isalnum(static_cast<unsigned char>(r[n]))) ++n;
    if (n == 0) break;
    std::string code;
    for (char c : r.substr(0, n)) code += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    d.codes.insert(code);
    r.remove_prefix(n);
    r = trim_left(r);
    if (!r.empty() && r.front() == ',') {
      r.remove_prefix(1);
      continue;
    }
    if (!looks_like_code(r)) break;  // `# noqa: TG001 TG003`, as flake8 and ruff accept
  }
  if (d.codes.empty()) d.all = true;
  return true;
}

void parse_segment(std::string_view seg, CommentDirective& d) {
  seg = trim_left(seg);
  if (consume(seg, "noqa")) {
    CommentDirective tmp;
    if (parse_codes(seg, tmp)) {
      d.suppression = true;
      d.all = d.all || tmp.all;
      d.codes.insert(tmp.codes.begin(), tmp.codes.end());
    }
    return;
  }
  consume(seg, "torch-");
  if (!consume(seg, "preflight")) return;
  seg = trim_left(seg);
  if (!consume(seg, ":")) return;
  seg = trim_left(seg);
  if (consume(seg, "skip-file") || consume(seg, "skip_file")) {
    d.skip_file = true;
    return;
  }
  if (consume(seg, "ignore")) {
    CommentDirective tmp;
    if (parse_codes(seg, tmp)) {
      d.suppression = true;
      d.all = d.all || tmp.all;
      d.own_blanket = d.own_blanket || tmp.all;
      d.codes.insert(tmp.codes.begin(), tmp.codes.end());
    }
  }
}

}  // namespace

CommentDirective parse_comment(std::string_view comment) {
  CommentDirective d;
  std::string lowered = names::lower(comment);
  std::string_view s = lowered;
  size_t pos = 0;
  while ((pos = s.find('#')) != std::string_view::npos) {
    s.remove_prefix(pos + 1);
    size_t next = s.find('#');
    parse_segment(s.substr(0, next), d);
  }
  return d;
}

Suppressions scan_suppressions(TSNode root, std::string_view src, const LineIndex& lines) {
  Suppressions out;
  NodesOfKind comments = scan_nodes_of_kind(root, kinds().comment);
  out.max_depth = comments.shape.max_depth;
  out.node_count = comments.shape.node_count;
  for (TSNode n : comments.nodes) {
    CommentDirective d = parse_comment(text_of(n, src));
    if (d.skip_file) out.skip_file = true;
    if (!d.suppression) continue;
    uint32_t line = lines.to_line_column(ts_node_start_byte(n), ColumnUnit::Utf8Bytes).line;
    LineSuppression& s = out.by_line[line];
    s.all = s.all || d.all;
    s.own_blanket = s.own_blanket || d.own_blanket;
    s.codes.insert(d.codes.begin(), d.codes.end());
    s.comment = range_of(n);
  }
  return out;
}

bool Suppressions::suppresses(const Finding& f, const LineIndex& lines) {
  if (by_line.empty()) return false;
  uint32_t first = lines.to_line_column(f.range.begin, ColumnUnit::Utf8Bytes).line;
  uint32_t last = lines.to_line_column(f.range.end, ColumnUnit::Utf8Bytes).line;
  for (uint32_t l = first; l <= last; ++l) {
    auto it = by_line.find(l);
    if (it != by_line.end() && (it->second.all || it->second.codes.count(f.code))) {
      it->second.used.insert(f.code);
      return true;
    }
  }
  return false;
}

}  // namespace preflight::analysis
