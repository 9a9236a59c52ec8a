#include "server/cli/text_width.h"

#include <algorithm>
#include <iterator>

namespace preflight::server {
namespace {

struct Interval {
  char32_t first;
  char32_t last;
};

// Combining marks and invisible joiners (a practical subset of Unicode's Mn/Me/Cf).
constexpr Interval kZeroWidth[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A},
    {0x064B, 0x065F}, {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x1AB0, 0x1AFF},
    {0x1DC0, 0x1DFF}, {0x200B, 0x200F}, {0x2060, 0x2064}, {0x20D0, 0x20FF},
    {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF}};

// East Asian Wide and Fullwidth blocks, and the emoji blocks terminals draw two columns wide.
constexpr Interval kWide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x23E9, 0x23EC},   {0x23F0, 0x23F3},
    {0x25FD, 0x25FE},   {0x2614, 0x2615},   {0x2648, 0x2653},   {0x26A1, 0x26A1},
    {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},   {0x26D4, 0x26D4},
    {0x26EA, 0x26EA},   {0x26F2, 0x26F5},   {0x26FA, 0x26FD},   {0x2705, 0x2705},
    {0x270A, 0x270B},   {0x2728, 0x2728},   {0x274C, 0x274C},   {0x2753, 0x2755},
    {0x2757, 0x2757},   {0x2795, 0x2797},   {0x27B0, 0x27B0},   {0x27BF, 0x27BF},
    {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},   {0x2E80, 0x303E},
    {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},
    {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE10, 0xFE19},
    {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x16FE0, 0x16FE4},
    {0x17000, 0x18CFF}, {0x1B000, 0x1B2FF}, {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF},
    {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F251}, {0x1F300, 0x1F64F},
    {0x1F680, 0x1F6FF}, {0x1F7E0, 0x1F7EB}, {0x1F90C, 0x1F9FF}, {0x1FA70, 0x1FAFF},
    {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD}};

template <std::size_t N>
bool in_table(const Interval (&table)[N], char32_t cp) {
  auto it = std::upper_bound(std::begin(table), std::end(table), cp,
                             [](char32_t c, const Interval& i) { return c < i.first; });
  return it != std::begin(table) && cp <= std::prev(it)->last;
}

constexpr char32_t kReplacement = 0xFFFD;

// Bytes in the UTF-8 sequence led by `lead`; 0 for a byte that cannot lead one.
std::size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 0;
}

// Decodes the code point at `s[i]` and advances `i`; a malformed sequence counts as one
// replacement character per byte, so widths stay defined for any bytes.
char32_t decode(std::string_view s, std::size_t& i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  std::size_t len = sequence_length(byte(i));
  if (len == 0 || i + len > s.size()) {
    ++i;
    return kReplacement;
  }
  char32_t cp = len == 1 ? byte(i) : byte(i) & (0x7F >> len);
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      ++i;
      return kReplacement;
    }
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  i += len;
  return cp;
}

}  // namespace

uint32_t code_point_width(char32_t cp) {
  if (cp == U'\t') return kTabWidth;
  if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) return 0;
  if (in_table(kZeroWidth, cp)) return 0;
  return in_table(kWide, cp) ? 2 : 1;
}

uint32_t display_width(std::string_view utf8) {
  uint32_t width = 0;
  for (std::size_t i = 0; i < utf8.size();) width += code_point_width(decode(utf8, i));
  return width;
}

std::string expand_tabs(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (char c : line) {
    if (c == '\t') out.append(kTabWidth, ' ');
    else out += c;
  }
  return out;
}

}  // namespace preflight::server
