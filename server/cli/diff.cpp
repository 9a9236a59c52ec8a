#include "server/cli/diff.h"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace preflight::server {
namespace {

using Lines = std::vector<std::string_view>;

// Past this many differences a minimal diff is not worth O(D²) memory: the changed region
// is then shown as one deletion plus one insertion, which is still a correct diff.
constexpr std::ptrdiff_t kMaxEditDistance = 1024;  // about 4 MiB of trace

enum class Op { Equal, Delete, Insert };

struct Step {
  Op op;
  std::size_t a;  // index into the old lines (for Insert: the old position it precedes)
  std::size_t b;  // index into the new lines (for Delete: the new position it precedes)
};

Lines split_lines(std::string_view text) {
  Lines lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

// Myers' forward search over a[lo_a, hi_a) and b[lo_b, hi_b); appends the steps in order.
// Returns false (appending nothing) if the distance exceeds kMaxEditDistance.
class Myers {
 public:
  Myers(const Lines& a, const Lines& b, std::size_t lo_a, std::size_t hi_a, std::size_t lo_b,
        std::size_t hi_b)
      : a_(a), b_(b), lo_a_(lo_a), lo_b_(lo_b),
        n_(static_cast<std::ptrdiff_t>(hi_a - lo_a)),
        m_(static_cast<std::ptrdiff_t>(hi_b - lo_b)) {}

  bool run(std::vector<Step>& out);

 private:
  bool same(std::ptrdiff_t x, std::ptrdiff_t y) const {
    return a_[lo_a_ + static_cast<std::size_t>(x)] == b_[lo_b_ + static_cast<std::size_t>(y)];
  }
  // Whether step d reached diagonal k by moving down (an insertion) from k + 1.
  static bool from_above(const std::vector<std::ptrdiff_t>& v, std::ptrdiff_t k,
                         std::ptrdiff_t d, std::ptrdiff_t offset) {
    return k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]);
  }
  std::ptrdiff_t search();
  void backtrack(std::ptrdiff_t distance, std::vector<Step>& out) const;
  void push(std::vector<Step>& out, Op op, std::ptrdiff_t x, std::ptrdiff_t y) const {
    out.push_back({op, lo_a_ + static_cast<std::size_t>(x), lo_b_ + static_cast<std::size_t>(y)});
  }

  const Lines& a_;
  const Lines& b_;
  std::size_t lo_a_, lo_b_;
  std::ptrdiff_t n_, m_;
  std::vector<std::vector<std::ptrdiff_t>> trace_;  // trace_[d][k + d]: furthest x after step d
};

std::ptrdiff_t Myers::search() {
  std::ptrdiff_t max = std::min(n_ + m_, kMaxEditDistance);
  std::ptrdiff_t offset = max + 1;
  std::vector<std::ptrdiff_t> v(static_cast<std::size_t>(2 * max + 3), 0);
  for (std::ptrdiff_t d = 0; d <= max; ++d) {
    for (std::ptrdiff_t k = -d; k <= d; k += 2) {
      std::ptrdiff_t x = from_above(v, k, d, offset) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      std::ptrdiff_t y = x - k;
      while (x < n_ && y < m_ && same(x, y)) ++x, ++y;
      v[offset + k] = x;
    }
    trace_.emplace_back(v.begin() + (offset - d), v.begin() + (offset + d + 1));
    if (v[offset + n_ - m_] >= n_ && n_ - m_ >= -d && n_ - m_ <= d) return d;
  }
  return -1;
}

void Myers::backtrack(std::ptrdiff_t distance, std::vector<Step>& out) const {
  std::vector<Step> reversed;
  std::ptrdiff_t x = n_, y = m_;
  for (std::ptrdiff_t d = distance; d > 0; --d) {
    const std::vector<std::ptrdiff_t>& prev = trace_[static_cast<std::size_t>(d - 1)];
    std::ptrdiff_t k = x - y;
    bool down = from_above(prev, k, d, d - 1);  // prev covers diagonals [-(d-1), d-1]
    std::ptrdiff_t prev_k = down ? k + 1 : k - 1;
    std::ptrdiff_t prev_x = prev[d - 1 + prev_k];
    std::ptrdiff_t prev_y = prev_x - prev_k;
    while (x > prev_x && y > prev_y) push(reversed, Op::Equal, --x, --y);
    if (down) push(reversed, Op::Insert, x, --y);
    else push(reversed, Op::Delete, --x, y);
  }
  while (x > 0 && y > 0) push(reversed, Op::Equal, --x, --y);
  out.insert(out.end(), reversed.rbegin(), reversed.rend());
}

bool Myers::run(std::vector<Step>& out) {
  std::ptrdiff_t distance = search();
  if (distance < 0) return false;
  backtrack(distance, out);
  return true;
}

std::vector<Step> diff_lines(const Lines& a, const Lines& b) {
  std::size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  std::size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix])
    ++suffix;

  std::vector<Step> steps;
  for (std::size_t i = 0; i < prefix; ++i) steps.push_back({Op::Equal, i, i});
  std::size_t hi_a = a.size() - suffix, hi_b = b.size() - suffix;
  if (!Myers(a, b, prefix, hi_a, prefix, hi_b).run(steps)) {
    for (std::size_t i = prefix; i < hi_a; ++i) steps.push_back({Op::Delete, i, prefix});
    for (std::size_t j = prefix; j < hi_b; ++j) steps.push_back({Op::Insert, hi_a, j});
  }
  for (std::size_t i = 0; i < suffix; ++i) steps.push_back({Op::Equal, hi_a + i, hi_b + i});
  return steps;
}

// "l,s" with GNU diff's conventions: a count of 1 is omitted; an empty range names the line
// before it.
std::string hunk_range(std::size_t start, std::size_t count) {
  if (count == 0) return std::to_string(start) + ",0";
  if (count == 1) return std::to_string(start + 1);
  return std::to_string(start + 1) + "," + std::to_string(count);
}

void append_line(std::string& out, char marker, std::string_view line) {
  out += marker;
  out.append(line);
  if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

void append_hunk(std::string& out, const std::vector<Step>& steps, std::size_t first,
                 std::size_t last, const Lines& a, const Lines& b) {
  std::size_t old_count = 0, new_count = 0;
  for (std::size_t i = first; i < last; ++i) {
    if (steps[i].op != Op::Insert) ++old_count;
    if (steps[i].op != Op::Delete) ++new_count;
  }
  out += "@@ -" + hunk_range(steps[first].a, old_count) + " +" +
         hunk_range(steps[first].b, new_count) + " @@\n";
  for (std::size_t i = first; i < last; ++i) {
    const Step& s = steps[i];
    if (s.op == Op::Equal) append_line(out, ' ', a[s.a]);
    if (s.op == Op::Delete) append_line(out, '-', a[s.a]);
    if (s.op == Op::Insert) append_line(out, '+', b[s.b]);
  }
}

}  // namespace

std::string unified_diff(std::string_view old_text, std::string_view new_text,
                         std::string_view old_label, std::string_view new_label, int context) {
  if (old_text == new_text) return {};
  Lines a = split_lines(old_text), b = split_lines(new_text);
  std::vector<Step> steps = diff_lines(a, b);
  std::size_t ctx = static_cast<std::size_t>(std::max(context, 0));

  std::string out = "--- " + std::string(old_label) + "\n+++ " + std::string(new_label) + "\n";
  std::size_t i = 0;
  while (i < steps.size()) {
    while (i < steps.size() && steps[i].op == Op::Equal) ++i;
    if (i == steps.size()) break;
    std::size_t first = i >= ctx ? i - ctx : 0;
    // Changes separated by at most 2·context equal lines share a hunk (their contexts touch).
    std::size_t last_change = i;
    for (std::size_t j = i; j < steps.size() && j <= last_change + 2 * ctx + 1; ++j)
      if (steps[j].op != Op::Equal) last_change = j;
    std::size_t last = std::min(steps.size(), last_change + 1 + ctx);
    append_hunk(out, steps, first, last, a, b);
    i = last;
  }
  return out;
}

}  // namespace preflight::server
