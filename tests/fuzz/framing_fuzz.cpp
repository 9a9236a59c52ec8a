// Fuzz target: protocol::FrameReader, the server's Content-Length framing. The input is the
// byte stream a client sends. It is fed in chunks whose sizes come from a generator seeded
// by the input (so one input always replays the same way), and the frames must be the same
// as when the whole stream is fed at once. Every frame must respect the body limit, carry
// either a body or an error, re-frame to itself, and classify without throwing.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fuzz_check.h"
#include "protocol/jsonrpc.h"

namespace {

using preflight::protocol::FrameReader;
namespace fuzz = preflight::fuzz;

struct Seen {
  std::string body, error;
  bool operator==(const Seen&) const = default;
};

void check_frame(const FrameReader::Frame& f) {
  fuzz::require(f.body.size() <= FrameReader::kMaxBody, "frame body exceeds kMaxBody");
  fuzz::require(f.error.empty() || f.body.empty(), "a framing error carries a body");
}

std::vector<Seen> drain(FrameReader& reader, std::size_t fed_so_far) {
  std::vector<Seen> out;
  while (auto f = reader.next()) {
    check_frame(*f);
    out.push_back({f->body, f->error});
  }
  fuzz::require(reader.pending() <= fed_so_far, "pending() exceeds the bytes fed");
  return out;
}

std::vector<Seen> whole(std::string_view stream) {
  FrameReader reader;
  reader.feed(stream);
  return drain(reader, stream.size());
}

std::vector<Seen> chunked(std::string_view stream) {
  uint32_t state = 2166136261u;  // FNV-1a of the input: the chunk sizes are part of the input
  for (unsigned char c : stream) state = (state ^ c) * 16777619u;
  FrameReader reader;
  std::vector<Seen> out;
  std::size_t fed = 0;
  while (fed < stream.size()) {
    state = state * 1103515245u + 12345u;
    std::size_t n = std::min<std::size_t>(stream.size() - fed, 1 + (state >> 16) % 64);
    reader.feed(stream.substr(fed, n));
    fed += n;
    for (Seen& s : drain(reader, fed)) out.push_back(std::move(s));
  }
  return out;
}

// A body the reader produced, framed again by protocol::frame's header, reads back as itself.
void check_reframes(const std::string& body) {
  FrameReader reader;
  reader.feed("Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
  auto f = reader.next();
  fuzz::require(f && f->error.empty() && f->body == body, "a re-framed body does not read back as itself");
  fuzz::require(!reader.next() && reader.pending() == 0, "a re-framed body leaves bytes behind");
}

// Classification of any body, and the reply the server would build from it, never throw.
void check_classifies(const std::string& body) {
  using namespace preflight::protocol;
  Message m = parse_message(body);
  if (auto* invalid = std::get_if<Invalid>(&m)) {
    std::string reply = frame(make_error(invalid->id, invalid->code, invalid->message));
    fuzz::require(!reply.empty(), "an error reply frames to nothing");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view stream(reinterpret_cast<const char*>(data), size);
  std::vector<Seen> at_once = whole(stream);
  // Every framing decision rests on the bytes alone (a header block is refused at 64 KiB
  // however it arrived): the split never matters.
  fuzz::require(chunked(stream) == at_once, "frames depend on how the stream was split");
  for (const Seen& s : at_once)
    if (s.error.empty()) {
      check_reframes(s.body);
      check_classifies(s.body);
    }
  return 0;
}
