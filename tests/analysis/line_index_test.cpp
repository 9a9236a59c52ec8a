#include "analysis/line_index.h"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <vector>
#include <ostream>
#include <string>
#include <string_view>

namespace preflight::analysis {
namespace {

}  // namespace

// Readable gtest output for positions.
void PrintTo(const LineColumn& lc, std::ostream* os) {
  *os << "{line " << lc.line << ", column " << lc.column << "}";
}

namespace {

constexpr std::array<ColumnUnit, 3> kUnits = {ColumnUnit::Utf8Bytes, ColumnUnit::Utf16Units,
                                             ColumnUnit::CodePoints};

const char* unit_name(ColumnUnit u) {
  switch (u) {
    case ColumnUnit::Utf8Bytes: return "Utf8Bytes";
    case ColumnUnit::Utf16Units: return "Utf16Units";
    case ColumnUnit::CodePoints: return "CodePoints";
  }
  return "?";
}

// Line 1 mixes ASCII, a 2-byte character (1 UTF-16 unit), a 3-byte CJK character (1 unit)
// and a 4-byte emoji (2 UTF-16 units, 1 code point).
const std::string kMixed = "x = 1\n"
                           "aé历😀b\n"
                           "end";
constexpr uint32_t kLine1 = 6;  // offset where line 1 starts

TEST(LineIndexTest, MixedLineHasExpectedByteLengths) {
  // Guards the fixture itself: the source file must be UTF-8.
  ASSERT_EQ(std::string_view("é").size(), 2u);
  ASSERT_EQ(std::string_view("历").size(), 3u);
  ASSERT_EQ(std::string_view("😀").size(), 4u);
  ASSERT_EQ(kMixed.size(), 6u + 11u + 1u + 3u);
}

TEST(LineIndexTest, CountsLinesAndReportsLineText) {
  LineIndex idx(kMixed);
  EXPECT_EQ(idx.line_count(), 3u);
  EXPECT_EQ(idx.line_start(0), 0u);
  EXPECT_EQ(idx.line_start(1), kLine1);
  EXPECT_EQ(idx.line_end(1), kLine1 + 11);
  EXPECT_EQ(idx.line_text(1), "aé历😀b");
  EXPECT_EQ(idx.line_text(2), "end");
}

struct Boundary {
  uint32_t byte;  // offset within line 1
  uint32_t utf8, utf16, cp;
};

// a | é | 历 | 😀 | b | end of line
constexpr std::array<Boundary, 6> kBoundaries = {{
    {0, 0, 0, 0},
    {1, 1, 1, 1},
    {3, 3, 2, 2},
    {6, 6, 3, 3},
    {10, 10, 5, 4},
    {11, 11, 6, 5},
}};

uint32_t expected_column(const Boundary& b, ColumnUnit u) {
  switch (u) {
    case ColumnUnit::Utf8Bytes: return b.utf8;
    case ColumnUnit::Utf16Units: return b.utf16;
    case ColumnUnit::CodePoints: return b.cp;
  }
  return 0;
}

TEST(LineIndexTest, OffsetToColumnInEveryUnitOnMixedLine) {
  LineIndex idx(kMixed);
  for (const Boundary& b : kBoundaries) {
    for (ColumnUnit u : kUnits) {
      LineColumn lc = idx.to_line_column(kLine1 + b.byte, u);
      EXPECT_EQ(lc.line, 1u) << "byte " << b.byte << " " << unit_name(u);
      EXPECT_EQ(lc.column, expected_column(b, u)) << "byte " << b.byte << " " << unit_name(u);
    }
  }
}

TEST(LineIndexTest, ColumnToOffsetInEveryUnitOnMixedLine) {
  LineIndex idx(kMixed);
  for (const Boundary& b : kBoundaries) {
    for (ColumnUnit u : kUnits) {
      EXPECT_EQ(idx.to_offset({1, expected_column(b, u)}, u), kLine1 + b.byte)
          << "column " << expected_column(b, u) << " " << unit_name(u);
    }
  }
}

TEST(LineIndexTest, RoundTripsEveryCharacterBoundary) {
  LineIndex idx(kMixed);
  for (uint32_t off = 0; off <= kMixed.size(); ++off) {
    bool boundary = off == kMixed.size() ||
                    (static_cast<unsigned char>(kMixed[off]) & 0xC0) != 0x80;
    if (!boundary) continue;
    for (ColumnUnit u : kUnits) {
      LineColumn lc = idx.to_line_column(off, u);
      EXPECT_EQ(idx.to_offset(lc, u), off) << "offset " << off << " " << unit_name(u);
    }
  }
}

TEST(LineIndexTest, OffsetInsideMultiByteCharacterCountsAsItsStart) {
  LineIndex idx(kMixed);
  // Inside `é` (starts at 1).
  EXPECT_EQ(idx.to_line_column(kLine1 + 2, ColumnUnit::CodePoints), (LineColumn{1, 1}));
  // Inside `历` (starts at 3).
  for (uint32_t b : {4u, 5u})
    EXPECT_EQ(idx.to_line_column(kLine1 + b, ColumnUnit::Utf16Units), (LineColumn{1, 2}));
  // Inside the emoji (starts at 6).
  for (uint32_t b : {7u, 8u, 9u}) {
    EXPECT_EQ(idx.to_line_column(kLine1 + b, ColumnUnit::Utf8Bytes), (LineColumn{1, 6}));
    EXPECT_EQ(idx.to_line_column(kLine1 + b, ColumnUnit::Utf16Units), (LineColumn{1, 3}));
    EXPECT_EQ(idx.to_line_column(kLine1 + b, ColumnUnit::CodePoints), (LineColumn{1, 3}));
  }
}

TEST(LineIndexTest, SplitsAtCrLfAndLoneCr) {
  const std::string text = "a\r\nbc\rd\ne";
  LineIndex idx(text);
  ASSERT_EQ(idx.line_count(), 4u);
  EXPECT_EQ(idx.line_start(1), 3u);
  EXPECT_EQ(idx.line_start(2), 6u);
  EXPECT_EQ(idx.line_start(3), 8u);
  EXPECT_EQ(idx.line_text(0), "a");
  EXPECT_EQ(idx.line_text(1), "bc");
  EXPECT_EQ(idx.line_text(2), "d");
  EXPECT_EQ(idx.line_text(3), "e");
  EXPECT_EQ(idx.line_end(0), 1u);  // before the \r of \r\n
  EXPECT_EQ(idx.line_end(1), 5u);  // before the lone \r
  for (ColumnUnit u : kUnits) {
    EXPECT_EQ(idx.to_line_column(3, u), (LineColumn{1, 0}));
    EXPECT_EQ(idx.to_line_column(5, u), (LineColumn{1, 2}));
    EXPECT_EQ(idx.to_line_column(6, u), (LineColumn{2, 0}));
    EXPECT_EQ(idx.to_line_column(9, u), (LineColumn{3, 1}));
    EXPECT_EQ(idx.to_offset({2, 0}, u), 6u);
    EXPECT_EQ(idx.to_offset({3, 1}, u), 9u);
  }
}

TEST(LineIndexTest, TrailingLineBreakOpensAnEmptyLastLine) {
  LineIndex idx("a\r\n");
  ASSERT_EQ(idx.line_count(), 2u);
  EXPECT_EQ(idx.line_text(1), "");
  EXPECT_EQ(idx.to_line_column(3, ColumnUnit::CodePoints), (LineColumn{1, 0}));
}

TEST(LineIndexTest, EmptyTextHasOneEmptyLine) {
  LineIndex idx("");
  EXPECT_EQ(idx.line_count(), 1u);
  EXPECT_EQ(idx.line_text(0), "");
  EXPECT_EQ(idx.line_start(0), 0u);
  EXPECT_EQ(idx.line_end(0), 0u);
  for (ColumnUnit u : kUnits) {
    EXPECT_EQ(idx.to_line_column(0, u), (LineColumn{0, 0}));
    EXPECT_EQ(idx.to_line_column(10, u), (LineColumn{0, 0}));
    EXPECT_EQ(idx.to_offset({0, 0}, u), 0u);
    EXPECT_EQ(idx.to_offset({0, 4}, u), 0u);
    EXPECT_EQ(idx.to_offset({3, 0}, u), 0u);
  }
}

TEST(LineIndexTest, OffsetPastEndClampsToTextEnd) {
  LineIndex idx(kMixed);
  for (ColumnUnit u : kUnits) {
    LineColumn at_end = idx.to_line_column(static_cast<uint32_t>(kMixed.size()), u);
    EXPECT_EQ(at_end, (LineColumn{2, 3})) << unit_name(u);
    EXPECT_EQ(idx.to_line_column(static_cast<uint32_t>(kMixed.size()) + 1, u), at_end);
    EXPECT_EQ(idx.to_line_column(UINT32_MAX, u), at_end);
  }
}

TEST(LineIndexTest, ColumnPastLineEndClampsToLineEnd) {
  LineIndex idx(kMixed);
  for (ColumnUnit u : kUnits) {
    uint32_t end_column = expected_column(kBoundaries.back(), u);
    EXPECT_EQ(idx.to_offset({1, end_column + 1}, u), kLine1 + 11) << unit_name(u);
    EXPECT_EQ(idx.to_offset({1, 500}, u), kLine1 + 11) << unit_name(u);
    EXPECT_EQ(idx.to_offset({2, 500}, u), kMixed.size()) << unit_name(u);
  }
  // Before the line break, also for \r\n.
  LineIndex crlf("ab\r\ncd\r\n");
  for (ColumnUnit u : kUnits) {
    EXPECT_EQ(crlf.to_offset({0, 99}, u), 2u) << unit_name(u);
    EXPECT_EQ(crlf.to_offset({1, 99}, u), 6u) << unit_name(u);
  }
}

TEST(LineIndexTest, LinePastLastLineClampsToTextEnd) {
  LineIndex idx(kMixed);
  EXPECT_EQ(idx.to_offset({7, 0}, ColumnUnit::CodePoints), kMixed.size());
  EXPECT_EQ(idx.line_start(7), kMixed.size());
  EXPECT_EQ(idx.line_end(7), kMixed.size());
}

TEST(LineIndexTest, InvalidLeadBytesAdvanceByOne) {
  // 0xFF and 0xFE can never start a UTF-8 sequence; 0x80 is a stray continuation byte.
  const std::string text = "a\xFF\xFE\x80z";
  LineIndex idx(text);
  for (ColumnUnit u : kUnits) {
    for (uint32_t off = 0; off <= text.size(); ++off) {
      EXPECT_EQ(idx.to_line_column(off, u), (LineColumn{0, off})) << unit_name(u);
      EXPECT_EQ(idx.to_offset({0, off}, u), off) << unit_name(u);
    }
  }
}

TEST(LineIndexTest, TruncatedSequenceAdvancesByOneByteInBothDirections) {
  // 0xE5 announces a 3-byte sequence but only one continuation byte follows before `x`: the
  // truncated lead is one invalid byte, the stray continuation another, then `x` and `!`.
  const std::string text = "\xE5\x8Ex!";
  LineIndex idx(text);
  for (ColumnUnit u : kUnits) {
    EXPECT_EQ(idx.to_offset({0, 2}, u), 2u) << unit_name(u);
    EXPECT_EQ(idx.to_offset({0, 3}, u), 3u) << unit_name(u);
    EXPECT_EQ(idx.to_line_column(3, u), (LineColumn{0, 3})) << unit_name(u);
    EXPECT_EQ(idx.to_line_column(4, u), (LineColumn{0, 4})) << unit_name(u);
    for (uint32_t off = 0; off <= text.size(); ++off)
      EXPECT_EQ(idx.to_offset(idx.to_line_column(off, u), u), off)
          << "offset " << off << " " << unit_name(u);
  }
}

TEST(LineIndexTest, TruncatedSequenceAtEndOfTextDoesNotReadPastIt) {
  const std::string text = "ab\xF0\x9F";  // first half of an emoji, then the text ends
  LineIndex idx(text);
  EXPECT_EQ(idx.to_offset({0, 100}, ColumnUnit::CodePoints), text.size());
  LineColumn end = idx.to_line_column(static_cast<uint32_t>(text.size()), ColumnUnit::Utf8Bytes);
  EXPECT_EQ(end.line, 0u);
  EXPECT_EQ(end.column, 4u);
}

}  // namespace
// Line starts as Python reads line breaks (\n, \r\n, a lone \r), one byte at a time: the
// index must agree on every text, with or without carriage returns (it takes a faster path
// when there are none).
std::vector<uint32_t> reference_line_starts(std::string_view text) {
  std::vector<uint32_t> starts{0};
  for (uint32_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    if (text[i] == '\n' || text[i] == '\r') starts.push_back(i + 1);
  }
  return starts;
}

TEST(LineIndexTest, LineStartsAgreeWithAByteByByteReadingOnRandomTexts) {
  std::mt19937 rng(7);
  const std::string alphabet[] = {"a", "\n", "\r", "\r\n", " ", "\xc3\xa9", "\n\n"};
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    bool with_cr = round % 2 == 0;
    for (std::size_t n = rng() % 40; n > 0; --n) {
      const std::string& piece = alphabet[rng() % std::size(alphabet)];
      if (!with_cr && piece.find('\r') != std::string::npos) continue;
      text += piece;
    }
    LineIndex index(text);
    std::vector<uint32_t> expected = reference_line_starts(text);
    ASSERT_EQ(index.line_count(), expected.size()) << round;
    for (uint32_t line = 0; line < expected.size(); ++line)
      ASSERT_EQ(index.line_start(line), expected[line]) << round << " line " << line;
  }
}

// An edit's range is read through an index that stops after its last line: every position on
// the lines up to it converts to the same offset as through the whole index, in every unit,
// and the scan stops (line_count) instead of covering the rest of the text.
TEST(LineIndexTest, AnIndexUpToALineConvertsItsPositionsLikeTheWholeIndex) {
  std::mt19937 rng(11);
  const std::string alphabet[] = {"ab", "\n", "\r", "\r\n", " ", "\xc3\xa9", "\xf0\x9f\x98\x80", "\n\n"};
  for (int round = 0; round < 1000; ++round) {
    std::string text;
    for (std::size_t n = rng() % 60; n > 0; --n) text += alphabet[rng() % std::size(alphabet)];
    LineIndex whole(text);
    uint32_t last = rng() % (whole.line_count() + 2);
    LineIndex part(text, last);
    ASSERT_LE(part.line_count(), whole.line_count()) << round;
    if (last + 2 <= whole.line_count()) {
      ASSERT_EQ(part.line_count(), last + 2) << round;
    }
    for (ColumnUnit unit : {ColumnUnit::Utf8Bytes, ColumnUnit::Utf16Units, ColumnUnit::CodePoints})
      for (uint32_t line = 0; line <= last && line < whole.line_count(); ++line)
        for (uint32_t column = 0; column < 12; ++column)
          ASSERT_EQ(part.to_offset({line, column}, unit), whole.to_offset({line, column}, unit))
              << round << " line " << line << " column " << column;
  }
}

}  // namespace preflight::analysis
