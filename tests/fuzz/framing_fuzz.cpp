// Fuzz target: protocol::FrameReader, the server's Content-Length framing. The input is the
// byte stream a client sends. It is fed in chunks whose sizes come from a generator seeded
// by the input (so one input always replays the same way), and the frames must be the same
// as when the whole stream is fed at once. Every frame must respect the body limit, carry
// either a body or an error, re-frame to itself, and classify without throwing.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fuzz_check.h"
#include "json_mutator.h"
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

// A header for `body` that the reader must refuse or misread (issue 26: a missing,
// negative, non-numeric or 2^63 length, LF-only line ends), or a well-formed one.
std::string header_for(const std::string& body, fuzz::Rng& rng) {
  std::string n = std::to_string(body.size());
  switch (fuzz::pick(rng, 16)) {
    case 0: return "";
    case 1: return "Content-Length: -" + n + "\r\n\r\n";
    case 2: return "Content-Length: abc\r\n\r\n";
    case 3: return "Content-Length: 9223372036854775808\r\n\r\n";
    case 4: return "Content-Length: 18446744073709551616\r\n\r\n";
    case 5: return "Content-Length: " + std::to_string(FrameReader::kMaxBody + 1) + "\r\n\r\n";
    case 6: return "Content-Length: " + n + "\n\n";
    case 7: return "Content-Length: " + std::to_string(body.size() + 1) + "\r\n\r\n";
    case 8: return "Content-Length: " + std::to_string(body.size() / 2) + "\r\n\r\n";
    case 9: return "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n";
    case 10: return "content-length:" + n + "\r\n\r\n";
    case 11: return "Content-Length: " + n + "\r\nContent-Length: 1\r\n\r\n";
    case 12: return "Content-Length: " + n + "\r\nX-" + std::string(70000, 'h') + "\r\n\r\n";
    case 13: return "Content-Length: 0x" + n + "\r\n\r\n";
    default: return "Content-Length: " + n + "\r\n\r\n";
  }
}

// The bodies of the stream's well-formed frames.
std::vector<std::string> frame_bodies(std::string_view stream) {
  FrameReader reader;
  reader.feed(stream);
  std::vector<std::string> bodies;
  while (auto f = reader.next())
    if (f->error.empty()) bodies.push_back(std::move(f->body));
  return bodies;
}

// The stream's frames again, one body typed-mutated (json_mutator.h), duplicated or dropped,
// one header made bad; nullopt when the stream has no frame.
[[maybe_unused]] std::optional<std::string> mutate_frames(std::string_view stream, unsigned seed, std::size_t max_size) {
  std::vector<std::string> bodies = frame_bodies(stream);
  if (bodies.empty()) return std::nullopt;
  fuzz::Rng rng(seed);
  std::size_t chosen = fuzz::pick(rng, bodies.size());
  switch (fuzz::pick(rng, 4)) {
    case 0:
    case 1:
      if (auto body = fuzz::mutate_json_body(bodies[chosen], rng(), max_size > stream.size() ? max_size - stream.size() + bodies[chosen].size() : 0))
        bodies[chosen] = std::move(*body);
      break;
    case 2: bodies.insert(bodies.begin() + static_cast<std::ptrdiff_t>(chosen), bodies[chosen]); break;
    default: if (bodies.size() > 1) bodies.erase(bodies.begin() + static_cast<std::ptrdiff_t>(chosen)); break;
  }
  std::size_t bad = rng() % 2 ? fuzz::pick(rng, bodies.size()) : bodies.size();  // none in half the cases
  std::string out;
  for (std::size_t i = 0; i < bodies.size(); ++i)
    out += (i == bad ? header_for(bodies[i], rng) : "Content-Length: " + std::to_string(bodies[i].size()) + "\r\n\r\n") + bodies[i];
  if (out.size() > max_size) return std::nullopt;
  return out;
}

}  // namespace

#ifdef PREFLIGHT_LIBFUZZER
// Frames rebuilt around typed-mutated bodies, with bad headers; one mutation in four, and
// streams without a frame, get libFuzzer's byte mutations.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::optional<std::string> mutated;
  if (fuzz::typed_mutations_on() && seed % 4 != 0)
    mutated = mutate_frames(std::string_view(reinterpret_cast<const char*>(data), size), seed, max_size);
  return fuzz::emit_or_byte_mutate(data, size, max_size, mutated);
}
#endif

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
