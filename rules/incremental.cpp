#include "rules/incremental.h"

#include <algorithm>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "analysis/brackets.h"

namespace preflight::rules {

using namespace preflight::analysis;

namespace {

constexpr size_t kMaxRegionBytes = 32 * 1024;  // read_region_units: larger regions reparse the tree

// Tree-sitter's point of `offset` in `parsed`: rows count '\n' (the parse view has no lone
// \r), columns are bytes.
TSPoint point_at(std::string_view parsed, size_t offset) {
  TSPoint p{0, 0};
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i)
    if (parsed[i] == '\n') {
      ++p.row;
      line_start = i + 1;
    }
  p.column = static_cast<uint32_t>(offset - line_start);
  return p;
}

// The parse view of text[begin, end) (parse_view for that span; a \r looks one byte ahead).
std::string parse_view_of_span(std::string_view text, size_t begin, size_t end) {
  std::string out(text.substr(begin, end - begin));
  for (size_t i = begin; i < end; ++i)
    if (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')) out[i - begin] = '\n';
  return out;
}

// Where the bytes of the previous text are in the current one: [0, prefix) did not move, the
// bytes from `old_suffix` on moved by `delta`, and whatever lies between was replaced.
struct TextShift {
  uint32_t prefix = 0;
  uint32_t old_suffix = 0;
  int64_t delta = 0;

  // `r` of the previous text in the current one, or nullopt when the edit overlaps it.
  std::optional<ByteRange> map(ByteRange r) const {
    if (r.end <= prefix) return r;
    if (r.begin >= old_suffix) return ByteRange{static_cast<uint32_t>(r.begin + delta), static_cast<uint32_t>(r.end + delta)};
    return std::nullopt;
  }
  // The range of the previous text that `r` of the current one was, if it is untouched.
  std::optional<ByteRange> unmap(ByteRange r) const {
    if (r.end <= prefix) return r;
    if (r.begin >= old_suffix + delta) return ByteRange{static_cast<uint32_t>(r.begin - delta), static_cast<uint32_t>(r.end - delta)};
    return std::nullopt;
  }
};

TextShift text_shift(std::string_view before, std::string_view after) {
  size_t limit = std::min(before.size(), after.size());
  size_t prefix = std::mismatch(before.begin(), before.begin() + limit, after.begin()).first - before.begin();
  size_t suffix = 0;
  while (suffix < limit - prefix && before[before.size() - 1 - suffix] == after[after.size() - 1 - suffix]) ++suffix;
  return {static_cast<uint32_t>(prefix), static_cast<uint32_t>(before.size() - suffix),
          static_cast<int64_t>(after.size()) - static_cast<int64_t>(before.size())};
}

// Index of the unit whose range is exactly `r`, or -1 (units sorted, disjoint).
int unit_with_range(const std::vector<UnitFacts>& units, ByteRange r) {
  auto it = std::lower_bound(units.begin(), units.end(), r.begin,
                             [](const UnitFacts& u, uint32_t b) { return u.range.begin < b; });
  return it != units.end() && it->range == r ? static_cast<int>(it - units.begin()) : -1;
}

// Index of the unit holding byte `offset` (a range's start; an empty range at a unit's end
// belongs to it), or -1.
int unit_holding(const std::vector<UnitFacts>& units, uint32_t offset) {
  auto it = std::upper_bound(units.begin(), units.end(), offset,
                             [](uint32_t o, const UnitFacts& u) { return o < u.range.begin; });
  if (it == units.begin()) return -1;
  --it;
  return offset <= it->range.end ? static_cast<int>(it - units.begin()) : -1;
}

// Moves every offset of a cached finding, silence or unused suppression; false when the edit
// overlaps one of them (the cached item cannot be trusted).
struct Mover {
  const TextShift& shift;
  bool ok = true;
  void move(ByteRange& r) {
    if (auto m = shift.map(r)) r = *m;
    else ok = false;
  }
  void move(std::vector<EvidenceStep>& steps) {
    for (EvidenceStep& s : steps) move(s.range);
  }
  void move(Finding& f) {
    move(f.range);
    move(f.evidence);
    for (Fix& fix : f.fixes)
      for (TextEdit& e : fix.edits) move(e.range);
  }
  void move(Silence& s) {
    move(s.range);
    move(s.evidence);
  }
  void move(UnusedSuppression& u) { move(u.comment); }
};

// The point of byte `to` of `parsed`, counting on from byte `from` at point `at`.
TSPoint point_after(std::string_view parsed, size_t from, TSPoint at, size_t to) {
  for (size_t i = from; i < to; ++i) {
    if (parsed[i] == '\n') at = {at.row + 1, 0};
    else ++at.column;
  }
  return at;
}

// Offset just past the line break at or after `offset` (the text's end if there is none).
size_t next_line_start(std::string_view parsed, size_t offset) {
  size_t nl = parsed.find('\n', offset);
  return nl == std::string_view::npos ? parsed.size() : nl + 1;
}

bool context_order(const ContextFact& a, const ContextFact& b) {
  if (a.what != b.what) return a.what < b.what;
  if (a.range.begin != b.range.begin) return a.range.begin < b.range.begin;
  return a.range.end < b.range.end;
}

// The parts of the parse view the slice is parsed from: each kept unit with the line breaks
// after it (up to the next unit), so the scanner sees the statement end and, at the next
// kept unit's first column, its indentation. A member of a split class starts at the start
// of its line (its indentation is its own: a kept member after left-out ones is indented as
// before, and a top-level unit after a kept member dedents); any other unit at its first
// byte, so that one at an odd column after a left-out unit is read at the top level, as the
// whole text reads it. `end` is the point where the text ends.
std::vector<TSRange> slice_ranges(std::string_view parsed, TSPoint end_of_text, const std::vector<UnitFacts>& units,
                                  const std::vector<char>& keep) {
  std::vector<TSRange> ranges;
  auto begin_of = [&](size_t u) {
    return is_member(units[u].role) ? units[u].range.begin - units[u].start.column : units[u].range.begin;
  };
  auto point_of = [&](size_t u) {
    return is_member(units[u].role) ? TSPoint{units[u].start.row, 0} : units[u].start;
  };
  for (size_t u = 0; u < units.size(); ++u) {
    if (!keep[u]) continue;
    bool last = u + 1 == units.size();
    uint32_t begin = begin_of(u);
    uint32_t end = last ? static_cast<uint32_t>(parsed.size()) : begin_of(u + 1);
    TSPoint end_point = last ? end_of_text : point_of(u + 1);
    if (!ranges.empty() && ranges.back().end_byte == begin) {
      ranges.back().end_byte = end;
      ranges.back().end_point = end_point;
    } else {
      ranges.push_back({point_of(u), end_point, begin, end});
    }
  }
  return ranges;
}

// Offset of the start of the line holding `offset` (lines end at '\n').
size_t line_start(std::string_view text, size_t offset) {
  size_t nl = offset == 0 ? std::string_view::npos : text.rfind('\n', offset - 1);
  return nl == std::string_view::npos ? 0 : nl + 1;
}

// Per unit of `before`: whether an edit (`shift`) falls on one of its lines.
std::vector<char> units_touched(std::string_view before, const std::vector<UnitFacts>& units, const TextShift& shift) {
  std::vector<char> touched(units.size(), 0);
  for (size_t u = 0; u < units.size(); ++u) {
    size_t first = line_start(before, units[u].range.begin), past = next_line_start(before, units[u].range.end);
    touched[u] = shift.prefix < past && shift.old_suffix >= first;
  }
  return touched;
}

// The items of a previous result whose unit is not touched and whose ranges the edit left
// alone, moved by the edit, appended to `out`.
template <typename T, typename Start>
void keep_untouched(const std::vector<T>& items, const std::vector<UnitFacts>& units, const std::vector<char>& touched,
                    const TextShift& shift, std::vector<T>& out, Start start) {
  for (const T& item : items) {
    int u = unit_holding(units, start(item));
    if (u < 0 || touched[u]) continue;
    T moved = item;
    Mover mover{shift};
    mover.move(moved);
    if (mover.ok) out.push_back(std::move(moved));
  }
}

}  // namespace

DocumentAnalysis::DocumentAnalysis(std::string text, double max_slice_share)
    : text_(std::move(text)), parsed_(parse_view(text_)), tree_(SyntaxTree::parse("")),
      tree_unparsed_(true), max_slice_share_(max_slice_share) {}

void DocumentAnalysis::edit(size_t begin, size_t end, std::string_view replacement) {
  if (begin > end || end > text_.size()) throw std::out_of_range("edit span outside the document");
  // A lone \r before the edit may stop (or start) being lone when the byte after it changes,
  // so the parse view's edit starts one byte earlier there. Bytes from `end` on keep their
  // view: a byte's view depends only on itself and the byte after it.
  size_t view_begin = begin > 0 && text_[begin - 1] == '\r' ? begin - 1 : begin;
  TSInputEdit e{};
  e.start_byte = static_cast<uint32_t>(view_begin);
  e.old_end_byte = static_cast<uint32_t>(end);
  e.start_point = point_at(parsed_, view_begin);
  e.old_end_point = point_at(parsed_, end);

  text_.replace(begin, end - begin, replacement);
  size_t new_end = begin + replacement.size();
  parsed_.replace(view_begin, end - view_begin, parse_view_of_span(text_, view_begin, new_end));
  e.new_end_byte = static_cast<uint32_t>(new_end);
  e.new_end_point = point_at(parsed_, new_end);
  if (tree_unparsed_) return;  // the first parse reads the edited text whole
  tree_.record_edit(e);
  tree_stale_ = true;
}

void DocumentAnalysis::replace_all(std::string text) {
  text_ = std::move(text);
  parsed_ = parse_view(text_);
  tree_unparsed_ = true;  // parsed by the next check, within its budget
  tree_stale_ = false;
  tree_from_edit_ = false;
}

const std::string& DocumentAnalysis::text() const { return text_; }

const SyntaxTree& DocumentAnalysis::reparsed_tree(const Interrupt& interrupt) {
  if (tree_unparsed_) {
    tree_ = SyntaxTree::parse(parsed_, &interrupt);
    tree_unparsed_ = tree_stale_ = tree_from_edit_ = false;
  }
  if (tree_stale_) {
    tree_.reparse(parsed_, &interrupt);
    tree_stale_ = false;
    tree_from_edit_ = true;
  }
  stats_.incremental_parse = tree_from_edit_;
  return tree_;
}

const SyntaxTree& DocumentAnalysis::tree(const Interrupt& interrupt) {
  reparsed_tree(interrupt);
  // Error recovery over reused subtrees may place an error elsewhere than a fresh parse
  // does (seen after several edits were recorded before one reparse), and the result
  // reports where the first error is: a text with errors is parsed afresh.
  if (tree_from_edit_ && has_syntax_error(tree_.root())) {
    tree_unparsed_ = true;  // if this parse is interrupted, the next check parses afresh
    tree_ = SyntaxTree::parse(parsed_, &interrupt);
    tree_unparsed_ = tree_from_edit_ = false;
  }
  stats_.incremental_parse = tree_from_edit_;
  return tree_;
}

const DocumentAnalysis::Stats& DocumentAnalysis::last_stats() const { return stats_; }

std::optional<CheckResult> DocumentAnalysis::check(const CheckOptions& options,
                                                   const std::function<bool()>& cancelled,
                                                   const std::function<bool()>& out_of_time,
                                                   const std::string& budget) {
  stats_ = Stats{};
  if (previous_ && previous_->text == text_ && previous_->options == options) {
    stats_.units = previous_->units.size();
    return previous_->result;
  }
  if (broken_ && broken_->text == text_ && broken_->options == options) {
    stats_.units = previous_ ? previous_->units.size() : 0;
    stats_.kept_while_broken = true;
    return broken_->result;
  }
  if (cancelled && cancelled()) return std::nullopt;
  Previous next{text_, options, {}, {}, {}};
  if (auto reason = not_text_reason(text_)) {
    next.result.status = FileStatus::NotText;
    next.result.status_reason = std::move(*reason);
  } else {
    Interrupt interrupt(out_of_time, budget, cancelled);
    try {
      std::optional<CheckResult> sliced = check_slice(options, interrupt, next.units, next.context);
      if (stats_.kept_while_broken) {  // the last good check stays the one to slice against
        stats_.units = previous_->units.size();
        broken_ = Broken{text_, options, std::move(*sliced)};
        return broken_->result;
      }
      if (sliced) {
        next.result = std::move(*sliced);
      } else {
        next.context.clear();
        next.result = check_parsed(text_, tree(interrupt), options, &interrupt, &next.context);
        stats_.reanalysed = std::max<size_t>(next.units.size(), 1);
      }
    } catch (const AnalysisInterrupted& stop) {
      // Out of time here is the parse's (check_parsed turns the analysis's into a result).
      if (stop.reason == InterruptReason::Cancelled) return std::nullopt;
      next.units.clear();
      next.context.clear();
      next.result = out_of_time_result(interrupt);
    }
    stats_.units = next.units.size();
    if (next.result.status != FileStatus::Analyzed || !next.result.syntax_errors.empty()) next.units.clear();
  }
  previous_ = std::move(next);
  broken_.reset();
  return previous_->result;
}

// The units of the current text and what the last check knew of them.
struct DocumentAnalysis::Slicing {
  const std::string& text;
  const Previous* previous;  // null: nothing to reuse
  TextShift shift;
  std::vector<UnitFacts>& units;
  std::vector<int> was;      // per unit: its index in previous->units when clean, else -1
  std::vector<char> in_slice;
  bool removed_any = false;  // a unit of the previous text has no counterpart now
  bool removed_other_than_methods = false;  // ... and one of those was not a method

  // Units of the current tree: clean ones keep their facts, the rest are read afresh.
  void read_units(TSNode root) {
    std::vector<UnitSpan> spans = unit_spans(root);
    was.assign(spans.size(), -1);
    std::vector<bool> wanted(spans.size(), true);
    for (size_t u = 0; u < spans.size() && previous; ++u)
      if (auto before = shift.unmap(spans[u].range)) {
        was[u] = unit_with_range(previous->units, *before);
        if (was[u] >= 0 && previous->units[was[u]].role != spans[u].role) was[u] = -1;
        wanted[u] = was[u] < 0;
      }
    if (previous) keep_members_with_their_class(spans, wanted);
    units = unit_facts(root, spans, wanted, text);
    for (size_t u = 0; u < spans.size(); ++u)
      if (was[u] >= 0) {
        units[u] = previous->units[was[u]];
        units[u].range = spans[u].range;
        units[u].start = spans[u].start;
      }
  }

  // A member is clean only when its class's header is, and was its header before (its facts
  // name the class): the members of a changed header are read afresh.
  void keep_members_with_their_class(const std::vector<UnitSpan>& spans, std::vector<bool>& wanted) {
    std::vector<int> old_header = class_headers(previous->units);
    int header = -1;
    for (size_t u = 0; u < spans.size(); ++u) {
      if (spans[u].role == UnitRole::ClassHeader) header = static_cast<int>(u);
      if (!is_member(spans[u].role) || was[u] < 0) continue;
      if (header < 0 || was[header] < 0 || old_header[was[u]] != was[header]) {
        was[u] = -1;
        wanted[u] = true;
      }
    }
  }

  // The units of the current text without a tree of all of it: the previous units whose lines
  // the edit left alone keep their place (moved by the edit), and the lines between them —
  // from the line after the last untouched unit before the edit to the first untouched unit
  // after it — are parsed on their own. Sound because the parser's state at the start of a
  // top-level line is the same wherever it is: a region that parses without errors, starts
  // and ends on line starts, and does not run into the next unit's line is parsed as the whole
  // text would parse it. False (and nothing changed) when those conditions do not hold. The
  // argument has a hole (a region can parse cleanly where the whole text has an error: round
  // 52's `train_set,# comment` before a line one column in), so check_slice also asks the kept
  // tree, reparsed against the edits, whether the whole text has a syntax error.
  bool read_region_units(std::string_view parsed, const Interrupt& interrupt) {
    const std::vector<UnitFacts>& old = previous->units;
    std::string_view before = previous->text;  // the previous text (its parse view: same line breaks)
    size_t n = old.size(), first = 0, last = n;  // old units [first, last) are replaced
    while (first < n && next_line_start(before, old[first].range.end) <= shift.prefix) ++first;
    // A region starts and ends outside any split class (a member's line is not parsed alone).
    if (first < n && is_member(old[first].role)) return false;
    while (last > first && old[last - 1].range.begin > shift.old_suffix &&
           (old[last - 1].start.column == 0 || is_member(old[last - 1].role)))
      --last;
    while (last < n && is_member(old[last].role)) ++last;  // the rest of a class whose header is replaced
    size_t old_begin = first > 0 ? next_line_start(before, old[first - 1].range.end) : 0;
    size_t old_end = last < n ? old[last].range.begin : before.size();
    if (old_begin > shift.prefix || old_end < shift.old_suffix) return false;
    size_t new_begin = old_begin, new_end = static_cast<size_t>(static_cast<int64_t>(old_end) + shift.delta);
    if (new_end < new_begin || new_end > parsed.size()) return false;
    // A region parse costs what the region costs (about 0.12 ms a KiB); the kept tree's
    // incremental reparse about 1-5 ms whatever the size. An edit inside a 3,000-line class
    // would parse the whole class on every keystroke: past this size, reparse the tree.
    if (new_end - new_begin > kMaxRegionBytes) return false;
    TSPoint begin_point = first > 0 ? point_after(parsed, old[first - 1].range.begin, old[first - 1].start, new_begin)
                                    : point_after(parsed, 0, TSPoint{0, 0}, new_begin);
    TSPoint end_point = point_after(parsed, new_begin, begin_point, new_end);
    std::vector<UnitFacts> fresh;
    if (new_end > new_begin) {
      SyntaxTree region = SyntaxTree::parse_ranges(
          parsed, {TSRange{begin_point, end_point, static_cast<uint32_t>(new_begin), static_cast<uint32_t>(new_end)}},
          &interrupt);
      if (has_syntax_error(region.root())) return false;
      std::vector<UnitSpan> spans = unit_spans(region.root());
      for (const UnitSpan& s : spans)
        if (s.range.begin < new_begin || s.range.end > new_end || (!is_member(s.role) && s.start.column != 0))
          return false;
      fresh = unit_facts(region.root(), spans, std::vector<bool>(spans.size(), true), text);
    }
    int64_t rows = static_cast<int64_t>(end_point.row) - (last < n ? static_cast<int64_t>(old[last].start.row) : 0);
    units.clear();
    was.clear();
    for (size_t i = 0; i < first; ++i) units.push_back(old[i]), was.push_back(static_cast<int>(i));
    for (UnitFacts& f : fresh) units.push_back(std::move(f)), was.push_back(-1);
    for (size_t i = last; i < n; ++i) {
      UnitFacts moved = old[i];
      moved.range = *shift.map(old[i].range);
      moved.start.row = static_cast<uint32_t>(static_cast<int64_t>(old[i].start.row) + rows);
      units.push_back(std::move(moved));
      was.push_back(static_cast<int>(i));
    }
    return true;
  }

  // Steps 2 and 3 of the header comment. False when the slice cannot be formed.
  bool choose_slice(std::string& why_not) {
    UnitFacts changed;  // what dirty and removed units define, and units that read them
    std::vector<char> matched(previous->units.size(), 0);
    in_slice.assign(units.size(), 0);
    for (size_t u = 0; u < units.size(); ++u) {
      if (was[u] >= 0) matched[was[u]] = 1;
      else add_defines(changed, units[u]), in_slice[u] = 1;
    }
    for (size_t p = 0; p < matched.size(); ++p)
      if (!matched[p]) {
        add_defines(changed, previous->units[p]);
        removed_any = true;
        removed_other_than_methods = removed_other_than_methods || previous->units[p].role != UnitRole::Method;
      }
    // A changed header or class code (one scope with every method) changes the whole class.
    std::vector<int> header = class_headers(units);
    for (size_t u = 0; u < units.size(); ++u)
      if (header[u] >= 0 && units[u].role != UnitRole::Method && was[u] < 0)
        for (size_t m = header[u]; m < units.size() && header[m] == header[u]; ++m)
          if (!in_slice[m]) add_defines(changed, units[m]), in_slice[m] = 1;
    for (bool grew = true; grew;) {  // readers of what changed, transitively
      grew = false;
      for (size_t u = 0; u < units.size(); ++u)
        if (!in_slice[u] && reads(units[u], changed)) {
          in_slice[u] = 1;
          grew = true;
          add_defines(changed, units[u]);
        }
    }
    for (size_t u = 0; u < units.size(); ++u)
      if (units[u].pinned) in_slice[u] = 1;
    for (const ContextFact& fact : previous->context) {
      if (!fact.placed) continue;
      std::optional<ByteRange> now = shift.map(fact.range);
      if (!now) {  // the edit touched a fact's site: the slice would decide it
        why_not = "the edit touched the site of a context fact (" + fact.what + ")";
        return false;
      }
      // Every unit the fact's range covers (a fact on a class reads all of it).
      for (int u = std::max(unit_holding(units, now->begin), 0); u < static_cast<int>(units.size()); ++u) {
        if (units[u].range.begin > now->end || (units[u].range.begin == now->end && now->end > now->begin)) break;
        if (units[u].range.end >= now->begin) in_slice[u] = 1;
      }
    }
    close_over_reads();
    return true;
  }

  // Merges what `unit` defines into `into` (kept sorted).
  static void add_defines(UnitFacts& into, const UnitFacts& unit) {
    auto merge = [](std::vector<std::string>& to, const std::vector<std::string>& from) {
      to.insert(to.end(), from.begin(), from.end());
      std::sort(to.begin(), to.end());
      to.erase(std::unique(to.begin(), to.end()), to.end());
    };
    merge(into.defines, unit.defines);
    merge(into.attributes, unit.attributes);
  }

  // Adds what the slice reads (transitively), and for module code every module-level unit
  // before it.
  void close_over_reads() {
    std::unordered_map<std::string_view, std::vector<int>> definers, keepers;
    for (size_t u = 0; u < units.size(); ++u) {
      for (const std::string& name : units[u].defines) definers[name].push_back(static_cast<int>(u));
      for (const std::string& name : units[u].attributes) keepers[name].push_back(static_cast<int>(u));
    }
    std::vector<int> work;
    for (size_t u = 0; u < units.size(); ++u)
      if (in_slice[u]) work.push_back(static_cast<int>(u));
    size_t module_code_upto = 0;  // units before this index that are module code are in
    auto add = [&](int u) {
      if (!in_slice[u]) {
        in_slice[u] = 1;
        work.push_back(u);
      }
    };
    std::vector<int> header = class_headers(units);
    for (;;) {
      close(work, definers, keepers, header, module_code_upto, add);
      // A header whose class has no member in the slice (an import or a fact reached only the
      // header): a class without a body does not parse, so its smallest member comes too,
      // analysed with what it reads like any other.
      for (size_t u = 0; u < units.size(); ++u)
        if (units[u].role == UnitRole::ClassHeader && in_slice[u])
          if (int m = smallest_member_if_none_in_slice(header, u); m >= 0) add(m);
      if (work.empty()) break;
    }
  }

  int smallest_member_if_none_in_slice(const std::vector<int>& header, size_t h) const {
    int smallest = -1;
    for (size_t m = h + 1; m < units.size() && header[m] == static_cast<int>(h); ++m) {
      if (in_slice[m]) return -1;
      if (smallest < 0 || units[m].range.end - units[m].range.begin < units[smallest].range.end - units[smallest].range.begin)
        smallest = static_cast<int>(m);
    }
    return smallest;
  }

  template <typename Add>
  void close(std::vector<int>& work, const std::unordered_map<std::string_view, std::vector<int>>& definers,
             const std::unordered_map<std::string_view, std::vector<int>>& keepers, const std::vector<int>& header,
             size_t& module_code_upto, Add& add) {
    while (!work.empty()) {
      int u = work.back();
      work.pop_back();
      if (header[u] >= 0) {  // a member is analysed inside its class: the header and class code come too
        for (size_t m = header[u]; m < units.size() && header[m] == header[u]; ++m)
          if (units[m].role != UnitRole::Method) add(static_cast<int>(m));
      }
      for (const std::string& name : units[u].uses)
        if (auto it = definers.find(name); it != definers.end())
          for (int d : it->second) add(d);
      for (const std::string& name : units[u].attribute_uses)
        if (auto it = keepers.find(name); it != keepers.end())
          for (int d : it->second) add(d);
      if (units[u].module_code)
        for (; module_code_upto < static_cast<size_t>(u); ++module_code_upto)
          if (units[module_code_upto].module_code) add(static_cast<int>(module_code_upto));
    }
  }

  // Every edited (dirty) unit is a method of a split class: the slice grew through what the
  // method shares with the rest of its class (units.h: `self` attributes are read symmetrically).
  bool edited_a_method_only() const {
    bool any = false;
    for (size_t u = 0; u < units.size(); ++u)
      if (was[u] < 0) {
        if (units[u].role != UnitRole::Method) return false;
        any = true;
      }
    return any && !removed_other_than_methods;
  }

  size_t slice_size() const { return static_cast<size_t>(std::count(in_slice.begin(), in_slice.end(), 1)); }
  size_t slice_bytes() const {
    size_t bytes = 0;
    for (size_t u = 0; u < units.size(); ++u)
      if (in_slice[u]) bytes += units[u].range.end - units[u].range.begin;
    return bytes;
  }

  // The previous result's items outside the slice, moved into `out`. False when one of them
  // cannot be placed or moved.
  template <typename T, typename Start>
  bool reuse(const std::vector<T>& items, std::vector<T>& out, Start start) const {
    std::vector<int> now(previous->units.size(), -1);
    for (size_t u = 0; u < units.size(); ++u)
      if (was[u] >= 0) now[was[u]] = static_cast<int>(u);
    for (const T& item : items) {
      int p = unit_holding(previous->units, start(item));
      if (p < 0) return false;
      int u = now[p];
      if (u >= 0 && in_slice[u]) continue;  // the slice found it again (or not)
      if (u < 0) continue;                  // its unit was edited or removed
      T moved = item;
      Mover mover{shift};
      mover.move(moved);
      if (!mover.ok) return false;
      out.push_back(std::move(moved));
    }
    return true;
  }
};

// The incremental reparse (about 1 ms on 5,000 lines, against 25 ms for a fresh parse) shows
// whether the text has a syntax error, and where. A tree can carry an error cost without an
// ERROR or MISSING node, and check_source then reports no syntax error: only a reported error
// keeps the last good findings (stats_.kept_while_broken is then set).
std::optional<CheckResult> DocumentAnalysis::keep_if_broken(const CheckOptions& options, const Interrupt& interrupt) {
  TSNode reparsed = reparsed_tree(interrupt).root();
  if (!has_syntax_error(reparsed)) return std::nullopt;
  bool analysable = false;
  CheckResult screened = check_syntax_only(text_, reparsed, options, analysable, &interrupt);
  if (screened.syntax_errors.empty() || !analysable) return std::nullopt;
  stats_.kept_while_broken = true;
  return kept_while_broken(std::move(screened));
}

// Typing `sum(` in a 3,000-line trainer leaves a text tree-sitter recovers from only by
// re-reading the rest of the file inside the bracket: its incremental reparse took about 200 ms
// a keystroke there (4 times a fresh parse). A bracket the edited lines leave open (or close
// without an opener) makes the text unparsable whatever follows, since the text after them
// was balanced on its own in the last good check and is lexed the same: the last good
// findings are kept on the scan's word, with the one syntax error at that bracket, and the
// kept tree waits, its edits recorded, for a text that may parse.
std::optional<CheckResult> DocumentAnalysis::keep_if_unbalanced(const CheckOptions& options) {
  const Previous& good = *previous_;
  // The scan cannot tell what a fresh parse's guards would say of a text this large (the
  // node budget) or of one whose last good tree was already half as deep as they allow.
  if (parsed_.size() * 4 >= options.max_nodes) return std::nullopt;
  for (const UnitFacts& u : good.units)
    if (u.depth * 2 > kMaxDepth) return std::nullopt;
  TextShift shift = text_shift(good.text, text_);
  // From the start of the last unit that starts before the edit to the start of the first
  // unit after it: units start a line of the last good text, outside any string, comment and
  // bracket. The end must start a line of this text too (an edit that joins lines would
  // carry a comment or a string prefix into the untouched text).
  size_t begin = 0, old_end = good.text.size();
  for (const UnitFacts& u : good.units) {
    if (u.range.begin <= shift.prefix) begin = std::max<size_t>(begin, u.range.begin);
    if (u.range.begin >= shift.old_suffix) old_end = std::min<size_t>(old_end, u.range.begin);
  }
  size_t end = static_cast<size_t>(static_cast<int64_t>(old_end) + shift.delta);
  if (end < begin || end > parsed_.size()) return std::nullopt;
  size_t line = end;
  while (line > 0 && (parsed_[line - 1] == ' ' || parsed_[line - 1] == '\t')) --line;
  if (line > 0 && parsed_[line - 1] != '\n') return std::nullopt;
  std::optional<uint32_t> at = analysis::unbalanced_bracket(parsed_, begin, end);
  // A `# preflight: skip-file` typed there would change the status a check reports.
  if (!at || std::string_view(parsed_).substr(begin, end - begin).find("preflight") != std::string_view::npos)
    return std::nullopt;
  CheckResult screened;
  screened.syntax_errors.push_back({ByteRange{*at, *at + 1}, "syntax error"});
  stats_.kept_while_broken = true;
  return kept_while_broken(std::move(screened));
}

CheckResult DocumentAnalysis::kept_while_broken(CheckResult result) const {
  const Previous& good = *previous_;
  // Gaps say how a text that parses only through them was read; nothing is read here.
  result.grammar_gaps.clear();
  TextShift shift = text_shift(good.text, text_);
  std::vector<char> touched = units_touched(good.text, good.units, shift);
  const CheckResult& before = good.result;
  keep_untouched(before.findings, good.units, touched, shift, result.findings,
                 [](const Finding& f) { return f.range.begin; });
  keep_untouched(before.silences, good.units, touched, shift, result.silences,
                 [](const Silence& s) { return s.range.begin; });
  keep_untouched(before.unused_suppressions, good.units, touched, shift, result.unused_suppressions,
                 [](const UnusedSuppression& u) { return u.comment.begin; });
  sort_result(result);
  return result;
}

std::optional<CheckResult> DocumentAnalysis::check_slice(const CheckOptions& options, const Interrupt& interrupt,
                                                         std::vector<UnitFacts>& units,
                                                         std::vector<ContextFact>& context) {
  const Previous* previous = previous_ && !previous_->units.empty() ? &*previous_ : nullptr;
  Slicing slicing{text_, previous, previous ? text_shift(previous->text, text_) : TextShift{}, units, {}, {}};
  bool sliceable = previous && previous->options == options && options.target_gpu.empty();
  auto whole_file = [&](std::string why) -> std::optional<CheckResult> {
    stats_.whole_file_because = std::move(why);
    return std::nullopt;
  };
  if (sliceable)
    if (std::optional<CheckResult> kept = keep_if_unbalanced(options)) return kept;
  if (sliceable && slicing.read_region_units(parsed_, interrupt)) {
    stats_.region_parse = true;
    // A region can parse cleanly on its own where the whole text does not (round 52's corpus:
    // `train_set,# comment` and then ` val_set = ...` one column in): the whole text, reparsed
    // against the edits, decides whether it has a syntax error, and then the last good
    // findings are kept as for any broken text.
    if (std::optional<CheckResult> kept = keep_if_broken(options, interrupt)) return kept;
  } else {
    // The text does not parse (the usual reason the region did not).
    if (sliceable)
      if (std::optional<CheckResult> kept = keep_if_broken(options, interrupt)) return kept;
    TSNode root = tree(interrupt).root();
    if (has_syntax_error(root)) return whole_file("the text has syntax errors");
    slicing.read_units(root);
  }
  if (!previous) return whole_file("nothing to reuse");
  if (previous->options != options) return whole_file("the options changed");
  if (!options.target_gpu.empty()) return whole_file("TG010 projects the whole file");
  size_t nodes = 1;
  uint32_t depth = 0;
  for (const UnitFacts& u : units) nodes += u.nodes, depth = std::max(depth, u.depth);
  if (nodes > options.max_nodes || depth > kMaxDepth) return whole_file("over a size guard");
  if (std::string why; !slicing.choose_slice(why)) return whole_file(why);
  if (static_cast<double>(slicing.slice_bytes()) > max_slice_share_ * text_.size())
    return whole_file(slicing.edited_a_method_only()
                          ? "the edit reaches most of the file (the edited method shares self attributes or names "
                            "with most of its class)"
                          : "the edit reaches most of the file");

  std::vector<ContextFact> expected;
  for (const ContextFact& fact : previous->context) {
    ContextFact moved = fact;
    if (fact.placed) moved.range = *slicing.shift.map(fact.range);  // mappable: choose_slice checked
    expected.push_back(std::move(moved));
  }
  CheckResult result;
  if (slicing.slice_size() == 0) {
    // Only the space between units changed: every unit and every fact is what it was.
    // (A removed unit may have fed a file-wide fact, which only an analysis would show.)
    if (slicing.removed_any) return whole_file("a unit was removed and nothing else changed");
    context = expected;
  } else {
    TSPoint end = point_after(parsed_, units.back().range.begin, units.back().start, parsed_.size());
    SyntaxTree slice_tree =
        SyntaxTree::parse_ranges(parsed_, slice_ranges(parsed_, end, units, slicing.in_slice), &interrupt);
    if (has_syntax_error(slice_tree.root())) return whole_file("the slice does not parse on its own");
    result = check_parsed_root(text_, slice_tree.root(), options, &interrupt, &context);
    if (result.status != FileStatus::Analyzed || !result.syntax_errors.empty())
      return whole_file("the slice was not analysed");
    std::vector<ContextFact> found = context;
    std::sort(expected.begin(), expected.end(), context_order);
    std::sort(found.begin(), found.end(), context_order);
    if (expected != found) return whole_file("the edit changed a file-wide fact");
  }

  const CheckResult& before = previous->result;
  if (!slicing.reuse(before.findings, result.findings, [](const Finding& f) { return f.range.begin; }) ||
      !slicing.reuse(before.silences, result.silences, [](const Silence& s) { return s.range.begin; }) ||
      !slicing.reuse(before.unused_suppressions, result.unused_suppressions,
                     [](const UnusedSuppression& u) { return u.comment.begin; }))
    return whole_file("a reused result overlaps the edit");
  sort_result(result);
  stats_.reanalysed = slicing.slice_size();
  stats_.sliced = true;
  return result;
}

}  // namespace preflight::rules
