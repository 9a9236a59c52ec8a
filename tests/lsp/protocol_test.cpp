// JSON-RPC framing and classification, the URI mapping and the pure LSP helpers.
#include <gtest/gtest.h>

#include "protocol/jsonrpc.h"
#include "server/lsp/client_capabilities.h"
#include "server/lsp/convert.h"
#include "server/lsp/settings.h"
#include "server/lsp/uri.h"

namespace preflight {
namespace {

using protocol::FrameReader;
using protocol::json;

TEST(FrameReader, ReassemblesHeadersAndBodiesSplitAtEveryByte) {
  std::string stream = protocol::frame({{"jsonrpc", "2.0"}, {"method", "a"}}) +
                       "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" +
                       protocol::frame({{"jsonrpc", "2.0"}, {"method", "b"}});
  FrameReader reader;
  std::vector<std::string> bodies;
  for (char c : stream) {
    reader.feed(std::string_view(&c, 1));
    while (auto f = reader.next()) {
      ASSERT_TRUE(f->error.empty()) << f->error;
      bodies.push_back(f->body);
    }
  }
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(json::parse(bodies[0])["method"], "a");
  EXPECT_EQ(json::parse(bodies[1])["method"], "b");
  EXPECT_EQ(reader.pending(), 0u);
}

TEST(FrameReader, HeaderNamesAreCaseInsensitive) {
  FrameReader reader;
  reader.feed("content-length: 2\r\n\r\n{}");
  auto f = reader.next();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->body, "{}");
}

TEST(FrameReader, MissingLengthIsReportedAndReadingResumes) {
  FrameReader reader;
  reader.feed("X-Nothing: 1\r\n\r\n" + protocol::frame(json::object()));
  auto bad = reader.next();
  ASSERT_TRUE(bad);
  EXPECT_FALSE(bad->error.empty());
  auto good = reader.next();
  ASSERT_TRUE(good);
  EXPECT_EQ(good->body, "{}");
}

// Every frame of `stream` (a body, or "error: ..."), fed whole or one byte at a time.
std::vector<std::string> frames_of(const std::string& stream, bool bytewise) {
  FrameReader reader;
  std::vector<std::string> out;
  auto drain = [&] {
    while (auto f = reader.next()) out.push_back(f->error.empty() ? f->body : "error: " + f->error);
  };
  if (bytewise) {
    for (char c : stream) {
      reader.feed(std::string_view(&c, 1));
      drain();
    }
  } else {
    reader.feed(stream);
    drain();
  }
  return out;
}

TEST(FrameReader, OversizeLengthIsRefusedWithoutSwallowingWhatFollows) {
  FrameReader reader;
  reader.feed("Content-Length: 9223372036854775808\r\n\r\n");
  auto bad = reader.next();
  ASSERT_TRUE(bad);
  EXPECT_NE(bad->error.find("limit"), std::string::npos);
  reader.feed(std::string(100'000, 'x'));
  EXPECT_FALSE(reader.next());
  EXPECT_LT(reader.pending(), 16u);  // garbage is dropped, not buffered
  reader.feed(protocol::frame(json::object()));
  auto good = reader.next();
  ASSERT_TRUE(good);
  EXPECT_EQ(good->body, "{}");
}

TEST(FrameReader, NonNumericLengthIsAFramingError) {
  FrameReader reader;
  reader.feed("Content-Length: 12abc\r\n\r\n");
  auto bad = reader.next();
  ASSERT_TRUE(bad);
  EXPECT_FALSE(bad->error.empty());
}

TEST(FrameReader, EachBadHeaderIsOneErrorAndTheNextFrameIsRead) {
  const std::string good = protocol::frame({{"n", 1}});
  const std::string body = R"({"jsonrpc":"2.0","method":"x"})";
  for (const std::string& bad :
       {"X-Nothing: 1\r\n\r\n" + body, "Content-Length: -5\r\n\r\n" + body, "Content-Length: abc\r\n\r\n" + body,
        "Content-Length: 99999999999999999999999\r\n\r\n" + body, "Content-Length: 268435457\r\n\r\n" + body,
        std::string("hello there\r\n"), body, "Content-Length: 5 5\r\n\r\n" + body, std::string(70'000, 'a')}) {
    for (bool bytewise : {false, true}) {
      std::vector<std::string> frames = frames_of(bad + good + good, bytewise);
      ASSERT_EQ(frames.size(), 3u) << bad.substr(0, 40);
      EXPECT_TRUE(frames[0].starts_with("error: ")) << frames[0];
      EXPECT_EQ(frames[1], R"({"n":1})");
      EXPECT_EQ(frames[2], R"({"n":1})");
    }
  }
}

TEST(FrameReader, LfOnlyLineEndsAndLineEndsBetweenFramesAreAccepted) {
  const std::string body = R"({"a":1})";
  std::string stream = "Content-Length: 7\n\n" + body + "\r\n" + "Content-Type: x\nContent-Length: 7\r\n\n" + body + "\n";
  for (bool bytewise : {false, true})
    EXPECT_EQ(frames_of(stream, bytewise), (std::vector<std::string>{body, body}));
}

TEST(ParseMessage, ClassifiesEveryShape) {
  using namespace protocol;
  EXPECT_TRUE(std::holds_alternative<Request>(parse_message(R"({"jsonrpc":"2.0","id":1,"method":"x"})")));
  EXPECT_TRUE(std::holds_alternative<Request>(parse_message(R"({"jsonrpc":"2.0","id":"a","method":"x","params":{}})")));
  EXPECT_TRUE(std::holds_alternative<Notification>(parse_message(R"({"jsonrpc":"2.0","method":"x"})")));
  EXPECT_TRUE(std::holds_alternative<Response>(parse_message(R"({"jsonrpc":"2.0","id":3,"result":null})")));
  auto parse_error = std::get<Invalid>(parse_message("{not json"));
  EXPECT_EQ(parse_error.code, error_code::kParseError);
  EXPECT_TRUE(parse_error.id.is_null());
  EXPECT_EQ(std::get<Invalid>(parse_message("[1,2]")).code, error_code::kInvalidRequest);
  auto bad_method = std::get<Invalid>(parse_message(R"({"id":7,"method":5})"));
  EXPECT_EQ(bad_method.code, error_code::kInvalidRequest);
  EXPECT_EQ(bad_method.id, 7);
  EXPECT_EQ(std::get<Invalid>(parse_message(R"({"id":{"x":1},"method":"m"})")).code, error_code::kInvalidRequest);
  EXPECT_EQ(std::get<Invalid>(parse_message(R"({"id":1,"method":"m","params":3})")).code, error_code::kInvalidRequest);
}

// `depth` arrays around 1, as the params of a request whose id comes `id_first` or last.
std::string nested_request(std::size_t depth, bool id_first) {
  std::string params = "{\"x\":" + std::string(depth - 1, '[') + "1" + std::string(depth - 1, ']') + "}";
  return id_first ? R"({"jsonrpc":"2.0","id":9,"method":"m","params":)" + params + "}"
                  : R"({"jsonrpc":"2.0","method":"m","params":)" + params + R"(,"id":"nine"})";
}

TEST(ParseMessage, NestingPastTheLimitIsRefusedUnderTheRequestsId) {
  using namespace protocol;
  // The message object is level 1, params level 2: params may hold kMaxNesting - 1 levels.
  auto ok = std::get<Request>(parse_message(nested_request(kMaxNesting - 1, true)));
  EXPECT_EQ(ok.id, 9);
  auto refused = std::get<Invalid>(parse_message(nested_request(kMaxNesting, true)));
  EXPECT_EQ(refused.code, error_code::kInvalidRequest);
  EXPECT_EQ(refused.id, 9);
  EXPECT_NE(refused.message.find("nested deeper than 512"), std::string::npos);
  // The id after the deep params is still found; a deep body that is not JSON is a parse error.
  EXPECT_EQ(std::get<Invalid>(parse_message(nested_request(100'000, false))).id, "nine");
  std::string broken = nested_request(100'000, true);
  broken.pop_back();
  EXPECT_EQ(std::get<Invalid>(parse_message(broken)).code, error_code::kParseError);
  EXPECT_TRUE(std::get<Invalid>(parse_message(std::string(1'000'000, '['))).id.is_null());
}

// Found by the dispatcher fuzz target's typed mutator: a deep answer to the server's
// workspace/configuration was refused as an invalid request, and the server sent an error
// under the id of its own request (answering no request of the client's) while that request
// stayed pending for good.
TEST(ParseMessage, AResponseNestedPastTheLimitIsAFailedResponseNotAnInvalidRequest) {
  using namespace protocol;
  std::string deep = std::string(kMaxNesting, '[') + "1" + std::string(kMaxNesting, ']');
  for (const std::string& body : {R"({"jsonrpc":"2.0","id":"preflight-1","result":)" + deep + "}",
                                  R"({"jsonrpc":"2.0","result":)" + deep + R"(,"id":"preflight-1"})",
                                  R"({"jsonrpc":"2.0","id":"preflight-1","error":{"code":1,"message":"m","data":)" + deep + "}}"}) {
    auto response = std::get<Response>(parse_message(body));
    EXPECT_EQ(response.id, "preflight-1");
    EXPECT_TRUE(response.result.is_null());
    EXPECT_EQ(response.error["code"], error_code::kInvalidRequest);
    EXPECT_NE(response.error["message"].get<std::string>().find("nested deeper than 512"), std::string::npos);
  }
  // With a method it is a request: refused under its id as before.
  EXPECT_TRUE(std::holds_alternative<Invalid>(
      parse_message(R"({"jsonrpc":"2.0","id":2,"method":"m","result":1,"params":{"x":)" + deep + "}}")));
}

TEST(ParseMessage, LoneSurrogateEscapesAreReadAsReplacementCharacters) {
  using namespace protocol;
  auto text_of = [](std::string_view escaped) {
    std::string body = R"({"jsonrpc":"2.0","method":"m","params":{"text":")" + std::string(escaped) + R"("}})";
    auto note = std::get<Notification>(parse_message(body));
    return note.params["text"].get<std::string>();
  };
  EXPECT_EQ(text_of(R"(a\ud800b)"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(text_of(R"(\uDC00)"), "\xEF\xBF\xBD");
  EXPECT_EQ(text_of(R"(\ud800\ud83d\ude00)"), "\xEF\xBF\xBD\xF0\x9F\x98\x80");  // a lone one, then a pair
  EXPECT_EQ(text_of(R"(\ud800\u0041)"), "\xEF\xBF\xBD" "A");
  EXPECT_EQ(text_of(R"(\\ud800 \" \ud800)"), "\\ud800 \" \xEF\xBF\xBD");  // an escaped backslash is no escape
  // Outside strings nothing is repaired: still a parse error.
  EXPECT_EQ(std::get<Invalid>(parse_message(R"({"a":\ud800})")).code, error_code::kParseError);
}

TEST(Frame, InvalidUtf8InStringsIsReplacedNotThrown) {
  json m = {{"message", std::string("bad \xff byte")}};
  std::string framed;
  EXPECT_NO_THROW(framed = protocol::frame(m));
  EXPECT_NE(framed.find("\xEF\xBF\xBD"), std::string::npos);
}

TEST(Uri, RoundTripsPercentEncodedPaths) {
  std::filesystem::path p = "/tmp/my project/train é#1.py";
  std::string uri = lsp::path_to_uri(p);
  EXPECT_EQ(uri, "file:///tmp/my%20project/train%20%C3%A9%231.py");
  EXPECT_EQ(lsp::uri_to_path(uri), p);
  EXPECT_EQ(lsp::uri_to_path("file://localhost/a/b.py"), std::filesystem::path("/a/b.py"));
  EXPECT_FALSE(lsp::uri_to_path("untitled:Untitled-1"));
  EXPECT_FALSE(lsp::uri_to_path("file://server/share/a.py"));
}

TEST(ClientCapabilities, Utf8WinsWhenOfferedAndUtf16IsTheDefault) {
  EXPECT_EQ(lsp::parse_client_capabilities({{"capabilities", json::object()}}).encoding,
            analysis::ColumnUnit::Utf16Units);
  json offered = {{"capabilities", {{"general", {{"positionEncodings", {"utf-16", "utf-8"}}}}}}};
  EXPECT_EQ(lsp::parse_client_capabilities(offered).encoding, analysis::ColumnUnit::Utf8Bytes);
}

TEST(PositionMap, CountsUtf16UnitsAcrossSurrogatePairs) {
  std::string text = "a = \"é日😀\"; b\nnext\n";
  lsp::PositionMap utf16(text, analysis::ColumnUnit::Utf16Units);
  uint32_t b = static_cast<uint32_t>(text.find("; b") + 2);
  EXPECT_EQ(utf16.position(b), (json{{"line", 0}, {"character", 12}}));  // 😀 counts 2
  EXPECT_EQ(utf16.offset({{"line", 0}, {"character", 12}}), b);
  lsp::PositionMap utf8(text, analysis::ColumnUnit::Utf8Bytes);
  EXPECT_EQ(utf8.position(b), (json{{"line", 0}, {"character", b}}));
  EXPECT_EQ(utf16.offset({{"line", 99}, {"character", 0}}), text.size());
  EXPECT_FALSE(utf16.offset({{"line", -1}, {"character", 0}}));
}

TEST(ClientSettings, ReadsTheSectionOrTheWrappedTreeAndReportsBadValues) {
  std::vector<std::string> problems;
  auto s = lsp::parse_client_settings(
      {{"preflight", {{"select", {"tg001", "TG999"}}, {"severity", {{"TG001", "note"}}}, {"targetGpu", "A100-80GB"}}}},
      problems);
  ASSERT_TRUE(s.select);
  EXPECT_EQ(*s.select, std::vector<std::string>{"TG001"});
  EXPECT_EQ(s.severity.at("TG001"), analysis::Severity::Note);
  EXPECT_EQ(s.target_gpu, "A100-80GB");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("TG999"), std::string::npos);
}

TEST(ClientSettings, LaterLayersWin) {
  server::Config project;
  project.select = {"TG001", "TG002"};
  project.ignore = {"TG002"};
  lsp::ClientSettings init, workspace;
  init.ignore = std::vector<std::string>{"TG004"};
  workspace.select = std::vector<std::string>{"TG003"};
  workspace.target_gpu = "T4";
  auto e = lsp::merge(project, init, workspace);
  EXPECT_EQ(e.options.select, (std::set<std::string>{"TG003"}));
  EXPECT_EQ(e.options.ignore, (std::set<std::string>{"TG002", "TG004"}));
  EXPECT_EQ(e.target_gpu, "T4");
}

}  // namespace
}  // namespace preflight
