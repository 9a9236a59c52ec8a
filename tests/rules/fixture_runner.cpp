#include "fixture_runner.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>

#include <memory>

#include "analysis/line_index.h"
#include "analysis/project_index.h"
#include "rules/engine.h"

namespace preflight::tests {
namespace {

using analysis::ColumnUnit;
using analysis::LineIndex;

constexpr std::string_view kCaseMarker = "# case:";
constexpr std::string_view kCheckMarker = "# check:";
constexpr std::string_view kTargetGpuMarker = "# target-gpu:";
constexpr std::string_view kExpectMarker = "# expect:";
constexpr std::string_view kSilentMarker = "# silent:";

// The entries after `marker` on a line, up to the other kind of marker if it follows.
std::optional<std::string_view> marker_text(std::string_view line_text, std::string_view marker,
                                            std::string_view other) {
  size_t pos = line_text.rfind(marker);
  if (pos == std::string_view::npos) return std::nullopt;
  std::string_view rest = line_text.substr(pos + marker.size());
  return rest.substr(0, rest.find(other));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    parts.push_back(trim(s.substr(start, pos == std::string_view::npos ? pos : pos - start)));
    if (pos == std::string_view::npos) return parts;
    start = pos + 1;
  }
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  LineIndex index(text);
  for (uint32_t i = 0; i < index.line_count(); ++i) lines.push_back(index.line_text(i));
  return lines;
}

std::optional<uint32_t> parse_number(std::string_view s) {
  if (s.empty() || s.size() > 6) return std::nullopt;
  uint32_t value = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  return value;
}

bool is_severity(std::string_view s) { return s == "error" || s == "warning" || s == "note"; }

// "@24-27" -> (24, 27)
bool parse_span(std::string_view s, ExpectedFinding& out) {
  if (s.size() < 4 || s.front() != '@') return false;
  s.remove_prefix(1);
  size_t dash = s.find('-');
  if (dash == std::string_view::npos) return false;
  auto begin = parse_number(s.substr(0, dash));
  auto end = parse_number(s.substr(dash + 1));
  if (!begin || !end || *begin == 0 || *end <= *begin) return false;
  out.column = *begin;
  out.end_column = *end;
  return true;
}

// One `CODE SEVERITY [@S-E]` entry of an expect comment.
std::optional<ExpectedFinding> parse_entry(std::string_view entry, uint32_t line) {
  std::istringstream in{std::string(entry)};
  std::vector<std::string> owned{std::istream_iterator<std::string>(in),
                                 std::istream_iterator<std::string>()};
  if (owned.size() < 2 || owned.size() > 3 || !is_severity(owned[1])) return std::nullopt;
  ExpectedFinding e;
  e.line = line;
  e.code = owned[0];
  e.severity = owned[1];
  if (owned.size() == 3 && !parse_span(owned[2], e)) return std::nullopt;
  return e;
}

// The `;`-separated entries after `marker` on a line, each parsed by `parse` into `out`;
// `kind` names them in problems ("expect", "silent").
template <typename Parse, typename Entry>
void parse_marker_entries(std::string_view line_text, uint32_t line, std::string_view marker,
                          std::string_view other, std::string_view kind, Parse parse,
                          std::vector<Entry>& out, std::vector<std::string>& problems) {
  auto entries = marker_text(line_text, marker, other);
  if (!entries) return;
  for (std::string_view entry : split(*entries, ';')) {
    auto parsed = parse(entry, line);
    if (!parsed) {
      problems.push_back("line " + std::to_string(line) + ": malformed " + std::string(kind) +
                         " entry '" + std::string(entry) + "'");
      continue;
    }
    out.push_back(std::move(*parsed));
  }
}

// One `CODE [@S-E] [reason words]` entry of a silent comment.
std::optional<ExpectedSilence> parse_silence_entry(std::string_view entry, uint32_t line) {
  std::istringstream in{std::string(entry)};
  std::string code, word;
  if (!(in >> code) || code.size() != 5 || !std::isupper(static_cast<unsigned char>(code[0])))
    return std::nullopt;
  ExpectedSilence e;
  e.line = line;
  e.code = code;
  std::string rest;
  std::getline(in, rest);
  std::string_view tail = trim(rest);
  if (tail.starts_with("@")) {
    std::string_view span = tail.substr(0, tail.find(' '));
    ExpectedFinding columns;
    if (!parse_span(span, columns)) return std::nullopt;
    e.column = columns.column;
    e.end_column = columns.end_column;
    tail = trim(tail.substr(span.size()));
  }
  e.reason_part = std::string(tail);
  return e;
}

void parse_check_header(std::string_view rest, FixtureSpec& spec) {
  for (std::string_view code : split(rest, ',')) {
    if (code.empty()) continue;
    spec.checks.insert(std::string(code));
  }
}

std::string span_text(std::optional<uint32_t> begin, std::optional<uint32_t> end) {
  if (!begin || !end) return "";
  return " @" + std::to_string(*begin) + "-" + std::to_string(*end);
}

// --- comparing expected and reported findings ------------------------------------------------

bool matches(const ExpectedFinding& e, const ReportedFinding& r) {
  if (e.line != r.line || e.code != r.code || e.severity != r.severity) return false;
  if (e.column && *e.column != r.column) return false;
  if (e.end_column && (r.end_line != r.line || *e.end_column != r.end_column)) return false;
  return true;
}

struct Matching {
  std::vector<const ExpectedFinding*> missing;
  std::vector<const ReportedFinding*> unexpected;
};

// Each expectation claims one reported finding; the ones that give columns choose first.
Matching match_findings(const std::vector<ExpectedFinding>& expected,
                        const std::vector<ReportedFinding>& reported) {
  Matching m;
  std::vector<bool> claimed(reported.size(), false);
  auto claim = [&](const ExpectedFinding& e) {
    for (size_t i = 0; i < reported.size(); ++i) {
      if (claimed[i] || !matches(e, reported[i])) continue;
      claimed[i] = true;
      return true;
    }
    return false;
  };
  for (bool with_columns : {true, false}) {
    for (const ExpectedFinding& e : expected) {
      if (e.column.has_value() != with_columns) continue;
      if (!claim(e)) m.missing.push_back(&e);
    }
  }
  for (size_t i = 0; i < reported.size(); ++i)
    if (!claimed[i]) m.unexpected.push_back(&reported[i]);
  return m;
}

// Counts code points, so a caret line lines up under columns given in code points.
uint32_t code_points(std::string_view s) {
  uint32_t n = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

void print_source_line(std::ostream& out, const std::vector<std::string_view>& lines,
                       uint32_t line, std::optional<uint32_t> begin,
                       std::optional<uint32_t> end) {
  if (line == 0 || line > lines.size()) return;
  std::string_view text = lines[line - 1];
  out << "      " << line << " | " << text << "\n";
  if (!begin) return;
  uint32_t stop = end.value_or(code_points(text) + 1);
  std::string gutter(std::to_string(line).size(), ' ');
  out << "      " << gutter << " | " << std::string(*begin - 1, ' ')
      << std::string(stop > *begin ? stop - *begin : 1, '^') << "\n";
}

std::string describe_mismatch(const Matching& m, const std::vector<ReportedFinding>& reported,
                              const std::vector<std::string_view>& lines) {
  std::ostringstream out;
  out << "findings differ from the fixture's expectations\n";
  if (!m.missing.empty()) out << "  expected but not reported:\n";
  for (const ExpectedFinding* e : m.missing) {
    out << "    " << format_expected(*e) << "\n";
    print_source_line(out, lines, e->line, e->column, e->end_column);
  }
  if (!m.unexpected.empty()) out << "  reported but not expected:\n";
  for (const ReportedFinding* r : m.unexpected) {
    out << "    " << format_reported(*r) << "\n";
    std::optional<uint32_t> end;
    if (r->end_line == r->line) end = r->end_column;
    print_source_line(out, lines, r->line, r->column, end);
  }
  out << "  all reported findings (" << reported.size() << "):\n";
  for (const ReportedFinding& r : reported) out << "    " << format_reported(r) << "\n";
  return out.str();
}

std::string describe_problems(const std::vector<std::string>& problems) {
  std::string out = "malformed fixture:\n";
  for (const std::string& p : problems) out += "  " + p + "\n";
  return out;
}

// --- fixes -----------------------------------------------------------------------------------

bool edits_overlap(const analysis::ByteRange& a, const analysis::ByteRange& b) {
  if (a.begin == b.begin) return true;
  return a.begin < b.end && b.begin < a.end;
}

bool overlaps_any(const analysis::Fix& fix, const std::vector<analysis::TextEdit>& accepted) {
  for (const analysis::TextEdit& edit : fix.edits)
    for (const analysis::TextEdit& other : accepted)
      if (edits_overlap(edit.range, other.range)) return true;
  return false;
}

std::optional<std::string> invalid_edit(const analysis::TextEdit& edit, size_t text_size) {
  if (edit.range.begin > edit.range.end) return "reversed edit range";
  if (edit.range.end > text_size) return "edit range past the end of the text";
  return std::nullopt;
}

std::string numbered(std::string_view text) {
  std::ostringstream out;
  std::vector<std::string_view> lines = split_lines(text);
  if (!lines.empty() && lines.back().empty()) lines.pop_back();  // after the final newline
  size_t width = std::to_string(lines.size()).size();
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string number = std::to_string(i + 1);
    out << "      " << std::string(width - number.size(), ' ') << number << " | " << lines[i]
        << "\n";
  }
  return out.str();
}

std::string describe_text_mismatch(std::string_view expected, std::string_view actual) {
  std::vector<std::string_view> want = split_lines(expected);
  std::vector<std::string_view> got = split_lines(actual);
  size_t first = 0;
  while (first < want.size() && first < got.size() && want[first] == got[first]) ++first;
  std::ostringstream out;
  out << "fixed text differs from the .fixed.py file, first at line " << first + 1 << "\n";
  out << "    expected: " << (first < want.size() ? want[first] : "<end of file>") << "\n";
  out << "    actual:   " << (first < got.size() ? got[first] : "<end of file>") << "\n";
  if (want.size() == got.size() && first == want.size())
    out << "    (lines are equal: the difference is in line breaks or the final newline)\n";
  out << "  text after applying the safe fixes:\n" << numbered(actual);
  return out.str();
}

// A fixture in a folder that holds a file named PROJECT is one file of a project: it is
// checked with the index of every fixture in that folder (analysis/project_index.h), as the
// CLI checks the files of one run.
std::shared_ptr<const analysis::ProjectIndex> project_of(const std::filesystem::path& path) {
  std::filesystem::path dir = path.parent_path();
  std::error_code ec;
  if (!std::filesystem::exists(dir / "PROJECT", ec)) return nullptr;
  std::vector<std::filesystem::path> members;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.ends_with(".py") && !name.ends_with(".fixed.py")) members.push_back(e.path());
  }
  std::sort(members.begin(), members.end());
  std::vector<analysis::FileCalls> files;
  for (const auto& m : members)
    if (auto t = read_text(m)) files.push_back(analysis::summarize_calls(*t, m.string()));
  return std::make_shared<const analysis::ProjectIndex>(std::move(files));
}

rules::CheckOptions options_for(const FixtureSpec& spec, const std::filesystem::path& path) {
  rules::CheckOptions options;
  options.select = spec.checks;
  options.target_gpu = spec.target_gpu;
  options.project = project_of(path);
  if (options.project) options.project_path = path.string();
  return options;
}

std::vector<analysis::Finding> checked_findings(const rules::CheckResult& result,
                                                const FixtureSpec& spec) {
  std::vector<analysis::Finding> kept;
  for (const analysis::Finding& f : result.findings)
    if (spec.checks.count(f.code)) kept.push_back(f);
  return kept;
}

std::string check_no_safe_fix(const std::vector<ReportedFinding>& reported) {
  std::string out;
  for (const ReportedFinding& r : reported) {
    if (!r.has_safe_fix) continue;
    if (out.empty()) out = "findings offer a safe fix but the fixture has no .fixed.py:\n";
    out += "    " + format_reported(r) + "\n";
  }
  return out;
}

std::string check_syntax_after_fix(const rules::CheckResult& rerun, std::string_view fixed) {
  if (rerun.syntax_errors.empty()) return "";
  LineIndex index(fixed);
  std::ostringstream out;
  out << "the fixed text has syntax errors:\n";
  for (const rules::SyntaxError& e : rerun.syntax_errors) {
    auto pos = index.to_line_column(e.range.begin, ColumnUnit::CodePoints);
    out << "    line " << pos.line + 1 << ":" << pos.column + 1 << ": " << e.message << "\n";
  }
  out << numbered(fixed);
  return out.str();
}

// Every finding whose fix was applied must be gone: no finding of its code on its (mapped) line.
std::string check_fixed_findings_gone(std::string_view original,
                                      const std::vector<analysis::Finding>& findings,
                                      const FixOutcome& outcome,
                                      const std::vector<analysis::Finding>& after) {
  LineIndex before_index(original);
  LineIndex after_index(outcome.text);
  std::ostringstream out;
  for (size_t i : outcome.fixed_findings) {
    const analysis::Finding& f = findings[i];
    uint32_t moved = map_offset(f.range.begin, outcome.applied);
    uint32_t line = after_index.to_line_column(moved, ColumnUnit::CodePoints).line;
    for (const analysis::Finding& g : after) {
      if (g.code != f.code) continue;
      if (after_index.to_line_column(g.range.begin, ColumnUnit::CodePoints).line != line) continue;
      uint32_t old_line = before_index.to_line_column(f.range.begin, ColumnUnit::CodePoints).line;
      out << "    " << f.code << " fixed at line " << old_line + 1
          << " is still reported after the fix, at line " << line + 1 << ": " << g.message
          << "\n";
      break;
    }
  }
  std::string text = out.str();
  return text.empty() ? "" : "fixes did not remove their findings:\n" + text;
}

std::string check_fixes(const std::filesystem::path& fixed_path, std::string_view text,
                        const std::vector<analysis::Finding>& findings,
                        const FixtureSpec& spec, const rules::CheckOptions& options) {
  auto expected_fixed = read_text(fixed_path);
  if (!expected_fixed) return "cannot read " + fixed_path.string() + "\n";
  FixOutcome outcome = apply_safe_fixes(text, findings);
  std::string report;
  for (const std::string& p : outcome.problems) report += "invalid fix edit: " + p + "\n";
  if (outcome.fixed_findings.empty())
    return report + "a .fixed.py exists but no finding offers a safe fix\n";
  if (outcome.text != *expected_fixed)
    report += describe_text_mismatch(*expected_fixed, outcome.text);
  rules::CheckResult rerun = rules::check_source(outcome.text, options);
  report += check_syntax_after_fix(rerun, outcome.text);
  report += check_fixed_findings_gone(text, findings, outcome, checked_findings(rerun, spec));
  return report;
}

std::filesystem::path fixed_sibling(const std::filesystem::path& path) {
  std::filesystem::path fixed = path;
  fixed.replace_extension(".fixed.py");
  return fixed;
}

std::string check_status(const rules::CheckResult& result, std::string_view text) {
  if (result.status == rules::FileStatus::NotText)
    return "the fixture was not analysed as text: " + result.status_reason + "\n";
  if (result.syntax_errors.empty()) return "";
  LineIndex index(text);
  std::string out = "the fixture itself has syntax errors:\n";
  for (const rules::SyntaxError& e : result.syntax_errors) {
    auto pos = index.to_line_column(e.range.begin, ColumnUnit::CodePoints);
    out += "    line " + std::to_string(pos.line + 1) + ":" + std::to_string(pos.column + 1) +
           ": " + e.message + "\n";
  }
  return out;
}

}  // namespace

FixtureSpec parse_fixture(std::string_view text) {
  FixtureSpec spec;
  bool saw_check = false;
  std::vector<std::string_view> lines = split_lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (line.starts_with(kCaseMarker)) {
      spec.case_title = std::string(trim(line.substr(kCaseMarker.size())));
    } else if (line.starts_with(kTargetGpuMarker)) {
      spec.target_gpu = std::string(trim(line.substr(kTargetGpuMarker.size())));
    } else if (line.starts_with(kCheckMarker)) {
      saw_check = true;
      parse_check_header(line.substr(kCheckMarker.size()), spec);
    }
    auto number = static_cast<uint32_t>(i + 1);
    parse_marker_entries(line, number, kExpectMarker, kSilentMarker, "expect", parse_entry,
                         spec.expected, spec.problems);
    parse_marker_entries(line, number, kSilentMarker, kExpectMarker, "silent", parse_silence_entry,
                         spec.silences, spec.problems);
  }
  if (!saw_check || spec.checks.empty()) spec.problems.push_back("missing `# check:` header");
  for (const ExpectedFinding& e : spec.expected)
    if (!spec.checks.count(e.code))
      spec.problems.push_back("line " + std::to_string(e.line) + ": expects " + e.code +
                              ", which `# check:` does not list");
  for (const ExpectedSilence& e : spec.silences)
    if (!spec.checks.count(e.code))
      spec.problems.push_back("line " + std::to_string(e.line) + ": expects " + e.code +
                              " to stay silent, but `# check:` does not list it");
  return spec;
}

namespace {
// 1-based lines and code-point columns of `range`, into a reported finding or silence.
template <typename Reported>
void set_span(const LineIndex& index, analysis::ByteRange range, Reported& r) {
  auto begin = index.to_line_column(range.begin, ColumnUnit::CodePoints);
  auto end = index.to_line_column(range.end, ColumnUnit::CodePoints);
  r.line = begin.line + 1;
  r.column = begin.column + 1;
  r.end_line = end.line + 1;
  r.end_column = end.column + 1;
}
}  // namespace

std::vector<ReportedFinding> describe_findings(std::string_view text,
                                               const std::vector<analysis::Finding>& findings) {
  LineIndex index(text);
  std::vector<ReportedFinding> out;
  for (const analysis::Finding& f : findings) {
    ReportedFinding r;
    set_span(index, f.range, r);
    r.code = f.code;
    r.severity = std::string(analysis::severity_name(f.severity));
    r.message = f.message;
    r.has_safe_fix = f.safe_fix() != nullptr;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<ReportedSilence> describe_silences(std::string_view text,
                                               const std::vector<analysis::Silence>& silences) {
  LineIndex index(text);
  std::vector<ReportedSilence> out;
  for (const analysis::Silence& s : silences) {
    ReportedSilence r;
    set_span(index, s.range, r);
    r.code = s.code;
    r.reason = s.reason;
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

bool silence_matches(const ExpectedSilence& e, const ReportedSilence& r) {
  if (e.line != r.line || e.code != r.code) return false;
  if (e.column && *e.column != r.column) return false;
  if (e.end_column && (r.end_line != r.line || *e.end_column != r.end_column)) return false;
  return r.reason.find(e.reason_part) != std::string::npos;
}

std::string format_silence(const ReportedSilence& r) {
  return "line " + std::to_string(r.line) + ": " + r.code + " @" + std::to_string(r.column) + "-" +
         (r.end_line == r.line ? "" : "(line " + std::to_string(r.end_line) + ")") +
         std::to_string(r.end_column) + ": " + r.reason;
}

std::string format_expected_silence(const ExpectedSilence& e) {
  return "line " + std::to_string(e.line) + ": " + e.code + span_text(e.column, e.end_column) +
         (e.reason_part.empty() ? "" : " \"" + e.reason_part + "\"");
}

}  // namespace

std::string compare_silences(const std::vector<ExpectedSilence>& expected,
                             const std::vector<ReportedSilence>& reported) {
  std::vector<bool> claimed(reported.size(), false);
  std::string missing, unexpected;
  for (const ExpectedSilence& e : expected) {
    bool found = false;
    for (size_t i = 0; i < reported.size() && !found; ++i)
      if (!claimed[i] && silence_matches(e, reported[i])) claimed[i] = found = true;
    if (!found) missing += "    " + format_expected_silence(e) + "\n";
  }
  for (size_t i = 0; i < reported.size(); ++i)
    if (!claimed[i]) unexpected += "    " + format_silence(reported[i]) + "\n";
  if (missing.empty() && unexpected.empty()) return "";
  std::string out = "silences differ from the fixture's `# silent:` comments\n";
  if (!missing.empty()) out += "  expected but not reported:\n" + missing;
  if (!unexpected.empty()) out += "  reported but not expected:\n" + unexpected;
  return out;
}

std::string format_expected(const ExpectedFinding& e) {
  return "line " + std::to_string(e.line) + ": " + e.code + " " + e.severity +
         span_text(e.column, e.end_column);
}

std::string format_reported(const ReportedFinding& r) {
  std::string span = r.end_line == r.line
                         ? span_text(r.column, r.end_column)
                         : " @" + std::to_string(r.column) + "-(line " +
                               std::to_string(r.end_line) + ")" + std::to_string(r.end_column);
  return "line " + std::to_string(r.line) + ": " + r.code + " " + r.severity + span +
         (r.has_safe_fix ? " [safe fix]" : "") + ": " + r.message;
}

FixOutcome apply_safe_fixes(std::string_view text, const std::vector<analysis::Finding>& findings) {
  FixOutcome outcome;
  for (size_t i = 0; i < findings.size(); ++i) {
    const analysis::Fix* fix = findings[i].safe_fix();
    if (!fix || fix->edits.empty() || overlaps_any(*fix, outcome.applied)) continue;
    bool valid = true;
    for (const analysis::TextEdit& edit : fix->edits) {
      if (auto problem = invalid_edit(edit, text.size())) {
        outcome.problems.push_back(findings[i].code + ": " + *problem);
        valid = false;
      }
    }
    if (!valid) continue;
    outcome.applied.insert(outcome.applied.end(), fix->edits.begin(), fix->edits.end());
    outcome.fixed_findings.push_back(i);
  }
  std::sort(outcome.applied.begin(), outcome.applied.end(),
            [](const analysis::TextEdit& a, const analysis::TextEdit& b) {
              return a.range.begin < b.range.begin;
            });
  outcome.text = std::string(text);
  for (auto it = outcome.applied.rbegin(); it != outcome.applied.rend(); ++it)
    outcome.text.replace(it->range.begin, it->range.end - it->range.begin, it->replacement);
  return outcome;
}

uint32_t map_offset(uint32_t offset, const std::vector<analysis::TextEdit>& applied) {
  int64_t delta = 0;
  for (const analysis::TextEdit& edit : applied) {
    if (edit.range.begin > offset) break;
    bool insertion = edit.range.begin == edit.range.end;
    if (edit.range.begin == offset && !insertion) break;  // replaced text starts here
    if (edit.range.end > offset) return static_cast<uint32_t>(edit.range.begin + delta);
    delta += static_cast<int64_t>(edit.replacement.size()) -
             static_cast<int64_t>(edit.range.end - edit.range.begin);
  }
  return static_cast<uint32_t>(offset + delta);
}

std::string run_fixture(const std::filesystem::path& path) {
  auto text = read_text(path);
  if (!text) return "cannot read " + path.string() + "\n";
  FixtureSpec spec = parse_fixture(*text);
  if (!spec.problems.empty()) return describe_problems(spec.problems);

  rules::CheckOptions options = options_for(spec, path);
  rules::CheckResult result = rules::check_source(*text, options);
  std::string report = check_status(result, *text);
  std::vector<analysis::Finding> findings = checked_findings(result, spec);
  std::vector<ReportedFinding> reported = describe_findings(*text, findings);
  Matching m = match_findings(spec.expected, reported);
  if (!m.missing.empty() || !m.unexpected.empty())
    report += describe_mismatch(m, reported, split_lines(*text));
  std::vector<analysis::Silence> silences;
  for (const analysis::Silence& s : result.silences)
    if (spec.checks.count(s.code)) silences.push_back(s);
  report += compare_silences(spec.silences, describe_silences(*text, silences));

  std::filesystem::path fixed_path = fixed_sibling(path);
  std::error_code ec;
  if (std::filesystem::exists(fixed_path, ec))
    report += check_fixes(fixed_path, *text, findings, spec, options);
  else
    report += check_no_safe_fix(reported);
  return report;
}

std::vector<std::string> list_fixtures(const std::filesystem::path& root) {
  std::vector<std::string> out;
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(root, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string name = it->path().filename().string();
    if (!name.ends_with(".py") || name.ends_with(".fixed.py")) continue;
    out.push_back(std::filesystem::relative(it->path(), root, ec).generic_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string test_name_for(std::string_view relative_path) {
  std::string_view stem = relative_path;
  if (stem.ends_with(".py")) stem.remove_suffix(3);
  std::string name;
  for (char c : stem) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

std::optional<std::string> read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace preflight::tests
