// json_layout puts a document together from pieces rendered at their depth; the bytes must be
// exactly what dump(2) writes for the whole document, or the streamed JSON and SARIF reports
// would differ from the reference layout (and their goldens).
#include "server/cli/json_layout.h"

#include <gtest/gtest.h>

namespace preflight::server::json_layout {
namespace {

std::string whole(const Json& j) { return j.dump(2, ' ', false, Json::error_handler_t::replace); }

Json entry(int i) {
  return Json{{"code", "TG00" + std::to_string(i)},
              {"message", "line one\nline \"two\"\t\u00e9"},
              {"related", Json::array({Json{{"line", i}}, Json::array(), Json::object()})},
              {"fix", nullptr},
              {"empty", Json::array()}};
}

TEST(JsonLayout, NestedValuesIndentLikeTheWholeDocument) {
  Json doc{{"version", 1}, {"summary", Json{{"errors", 2}, {"notes", Json::array({1, 2})}}}};
  std::string pieced = object({{"version", nested(doc["version"], 1)},
                               {"summary", nested(doc["summary"], 1)}},
                              0);
  EXPECT_EQ(pieced, whole(doc));
}

TEST(JsonLayout, ArraysOfPrerenderedEntries) {
  Json doc{{"diagnostics", Json::array()}, {"failures", Json::array({entry(1)})}};
  std::vector<std::string> none, one{nested(entry(1), 2)};
  EXPECT_EQ(object({{"diagnostics", array(none, 1)}, {"failures", array(one, 1)}}, 0), whole(doc));

  Json deep{{"runs", Json::array({Json{{"tool", "x"}, {"results", Json::array({entry(1), entry(2)})}}})}};
  std::vector<std::string> results{nested(entry(1), 4), nested(entry(2), 4)};
  std::string run = object({{"tool", nested("x", 3)}, {"results", array(results, 3)}}, 2);
  EXPECT_EQ(object({{"runs", array({run}, 1)}}, 0), whole(deep));
}

TEST(JsonLayout, EmptyObjectAndKeysThatNeedEscaping) {
  EXPECT_EQ(object({}, 0), "{}");
  Json doc{{"a\"b", "c"}};
  EXPECT_EQ(object({{"a\"b", nested("c", 1)}}, 0), whole(doc));
}

TEST(JsonLayout, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  EXPECT_EQ(nested(Json("bad \xff byte"), 3), "\"bad \xEF\xBF\xBD byte\"");
}

}  // namespace
}  // namespace preflight::server::json_layout
