// Typed (structure-aware) mutations of JSON-RPC message bodies, for the protocol targets'
// LLVMFuzzerCustomMutator (dispatcher, framing). Byte-level mutation of a JSON body almost
// always breaks its syntax, so it rarely reaches a handler with a member of the wrong type,
// a huge number or deep nesting (issue 26: a codeAction/resolve whose data.version was a
// string aborted the server; params nested 60,000 deep overflowed the stack). Here the body
// is parsed, one or two typed mutations are applied, and it is serialised again:
//   - a value replaced by one of another JSON type (huge / negative / out-of-range numbers,
//     NaN-like strings, lone surrogate escapes, invalid UTF-8, empty and long strings);
//   - a member or element deleted, or a member added;
//   - a subtree (of params when there are any) duplicated elsewhere;
//   - a value wrapped in deep nesting (511 to 300,000 levels of arrays or objects);
//   - the method swapped for another one the server handles.
// Shapes nlohmann cannot hold (a lone surrogate, 1e999, deep nesting that a recursive dump
// must not meet) are spliced into the text after serialisation. Every choice comes from
// the seed libFuzzer passes: one (input, seed) always gives the same output.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace preflight::fuzz {

using json = nlohmann::json;
using Rng = std::mt19937;

// Every method the server dispatches (server/lsp/server.cpp: on_request, on_notification,
// receive's $/cancelRequest) and the client's answers it expects, plus two it does not know.
inline const std::vector<std::string>& lsp_methods() {
  static const std::vector<std::string> methods = {
      "initialize", "initialized", "shutdown", "exit", "$/cancelRequest",
      "textDocument/didOpen", "textDocument/didChange", "textDocument/didClose", "textDocument/didSave",
      "textDocument/diagnostic", "textDocument/codeAction", "textDocument/hover", "textDocument/codeLens",
      "codeAction/resolve", "workspace/diagnostic", "workspace/executeCommand",
      "workspace/didChangeConfiguration", "workspace/didChangeWatchedFiles",
      "workspace/didChangeWorkspaceFolders", "textDocument/unknown", "$/unknown"};
  return methods;
}

// Member names the server reads (the keys an added member gets).
inline const std::vector<std::string>& lsp_keys() {
  static const std::vector<std::string> keys = {
      "jsonrpc", "id", "method", "params", "result", "error", "textDocument", "uri", "version", "text",
      "languageId", "contentChanges", "range", "start", "end", "line", "character", "position", "context",
      "diagnostics", "only", "data", "edit", "title", "kind", "command", "arguments", "job", "settings",
      "initializationOptions", "capabilities", "workspaceFolders", "rootUri", "rootPath", "event", "added",
      "removed", "changes", "previousResultId", "previousResultIds", "partialResultToken", "workDoneToken",
      "identifier", "value", "processId", "positionEncodings", "select", "ignore", "severity", "targetGpu"};
  return keys;
}

inline std::size_t pick(Rng& rng, std::size_t n) { return n == 0 ? 0 : rng() % n; }

// The body as JSON when it parses and nests no deeper than `max_depth`; deeper bodies are
// left to byte mutations (the walk and the dump below recurse).
inline std::optional<json> parse_shallow(std::string_view body, int max_depth = 256) {
  bool too_deep = false;
  json::parser_callback_t within = [&](int depth, json::parse_event_t, json&) {
    if (depth > max_depth) too_deep = true;
    return !too_deep;
  };
  json value = json::parse(body, within, /*allow_exceptions=*/false);
  if (value.is_discarded() || too_deep) return std::nullopt;
  return value;
}

// Raw texts to put where a placeholder string was: what a json value cannot hold.
class Splices {
 public:
  json raw(std::string text) {
    std::string key = "@@pf-splice-" + std::to_string(texts_.size()) + "@@";
    texts_.push_back(std::move(text));
    return key;
  }
  std::string serialise(const json& value) const {
    std::string out = value.dump(-1, ' ', false, json::error_handler_t::replace);
    // The last first: a later text (deep nesting) may hold an earlier placeholder.
    for (std::size_t i = texts_.size(); i-- > 0;) {
      std::string quoted = "\"@@pf-splice-" + std::to_string(i) + "@@\"";
      for (std::size_t at = out.find(quoted); at != std::string::npos; at = out.find(quoted, at + texts_[i].size()))
        out.replace(at, quoted.size(), texts_[i]);
    }
    return out;
  }
  std::size_t raw_bytes() const {
    std::size_t n = 0;
    for (const auto& t : texts_) n += t.size();
    return n;
  }

 private:
  std::vector<std::string> texts_;
};

// A value of some JSON type, chosen to hit type checks and range checks.
inline json typed_value(Rng& rng, Splices& splices) {
  using limits64 = std::numeric_limits<int64_t>;
  switch (pick(rng, 32)) {
    case 0: return "1";
    case 1: return "";
    case 2: return std::string(1 + pick(rng, 100000), 'x');
    case 3: return 0;
    case 4: return -1;
    case 5: return limits64::min();
    case 6: return limits64::max();
    case 7: return std::numeric_limits<uint64_t>::max();
    case 8: return int64_t{std::numeric_limits<int>::max()} + 1;
    case 9: return int64_t{std::numeric_limits<int>::min()} - 1;
    case 10: return 1.5;
    case 11: return -0.0;
    case 12: return 1e308;
    case 13: return true;
    case 14: return false;
    case 15: return nullptr;
    case 16: return json::array();
    case 17: return json::object();
    case 18: return json::array({1, "a", nullptr});
    case 19: return json::object({{"a", 1}});
    case 20: return "NaN";
    case 21: return "-Infinity";
    case 22: return std::string("a\0b", 3);
    case 23: return splices.raw("1e999");
    case 24: return splices.raw("-1e999");
    case 25: return splices.raw("123456789012345678901234567890");
    case 26: return splices.raw("\"\\ud800\"");             // a lone high surrogate
    case 27: return splices.raw("\"x\\udc00\\ud83d\"");     // a lone low, then a cut pair
    case 28: return splices.raw("\"\xff\xfe\xc3\"");        // invalid UTF-8
    case 29: return "file:///train.py";
    case 30: return "file:///../../etc/passwd";
    default: return 2;
  }
}

// Paths of every value of `root` (the root first), up to a bound.
inline std::vector<json::json_pointer> value_paths(const json& root) {
  std::vector<json::json_pointer> out;
  std::function<void(const json&, const json::json_pointer&)> walk = [&](const json& v, const json::json_pointer& at) {
    if (out.size() >= 4096) return;
    out.push_back(at);
    if (v.is_object())
      for (const auto& [key, item] : v.items()) walk(item, at / key);
    else if (v.is_array())
      for (std::size_t i = 0; i < v.size(); ++i) walk(v[i], at / i);
  };
  walk(root, json::json_pointer());
  return out;
}

inline json::json_pointer pick_path(Rng& rng, const std::vector<json::json_pointer>& paths, bool allow_root) {
  if (!allow_root && paths.size() > 1) return paths[1 + pick(rng, paths.size() - 1)];
  return paths[pick(rng, paths.size())];
}

// `inner` inside `depth` arrays or objects, as raw text (never a json value: a recursive
// dump or copy of it is what issue 26's stack overflow was). Fits in `budget` bytes.
inline json deep_nesting(Rng& rng, Splices& splices, const json& inner, std::size_t budget) {
  static constexpr std::size_t kDepths[] = {511, 512, 513, 2000, 10000, 60000, 300000};
  bool arrays = rng() % 2 == 0;
  std::string open = arrays ? "[" : "{\"a\":";
  std::string inner_text = inner.dump(-1, ' ', false, json::error_handler_t::replace);
  std::size_t per_level = open.size() + 1;
  std::size_t fits = budget > inner_text.size() ? (budget - inner_text.size()) / per_level : 0;
  std::size_t depth = std::min(kDepths[pick(rng, std::size(kDepths))], fits);
  if (depth == 0) return inner;
  std::string text;
  text.reserve(depth * per_level + inner_text.size());
  for (std::size_t i = 0; i < depth; ++i) text += open;
  text += inner_text;
  text.append(depth, arrays ? ']' : '}');
  return splices.raw(std::move(text));
}

// One typed mutation of `message`, in place. `budget`: bytes the output may still grow by.
inline void mutate_once(json& message, Rng& rng, Splices& splices, std::size_t budget) {
  std::vector<json::json_pointer> paths = value_paths(message);
  switch (pick(rng, 8)) {
    case 0:
    case 1:
    case 2: {  // a value of another type, most often in place of a scalar (where handlers read types)
      std::vector<json::json_pointer> scalars;
      for (const auto& p : paths)
        if (!p.empty() && !message[p].is_structured()) scalars.push_back(p);
      bool scalar = !scalars.empty() && rng() % 4 != 0;
      message[scalar ? scalars[pick(rng, scalars.size())] : pick_path(rng, paths, /*allow_root=*/false)] =
          typed_value(rng, splices);
      return;
    }
    case 3: {  // delete a member or an element
      json::json_pointer at = pick_path(rng, paths, false);
      if (at.empty()) return;
      json& parent = message[at.parent_pointer()];
      if (parent.is_object()) parent.erase(at.back());
      else if (parent.is_array()) parent.erase(std::stoul(at.back()));
      return;
    }
    case 4: {  // add a member (or an element) holding a typed value or a copy of a subtree
      json::json_pointer at = pick_path(rng, paths, true);
      json& target = message[at];
      json value = rng() % 2 ? typed_value(rng, splices) : json(message[pick_path(rng, paths, true)]);
      if (target.is_object()) target[lsp_keys()[pick(rng, lsp_keys().size())]] = std::move(value);
      else if (target.is_array()) target.push_back(std::move(value));
      else target = json::object({{lsp_keys()[pick(rng, lsp_keys().size())], std::move(value)}});
      return;
    }
    case 5: {  // duplicate a subtree of params (or of the message) somewhere else
      std::vector<json::json_pointer> sources;
      for (const auto& p : paths)
        if (!p.empty() && p.to_string().starts_with("/params")) sources.push_back(p);
      if (sources.empty()) sources = paths;
      json copy = message[sources[pick(rng, sources.size())]];
      json& target = message[pick_path(rng, paths, true)];
      if (target.is_array()) target.push_back(std::move(copy));
      else if (target.is_object()) target[lsp_keys()[pick(rng, lsp_keys().size())]] = std::move(copy);
      else target = std::move(copy);
      return;
    }
    case 6: {  // deep nesting around a value
      json::json_pointer at = pick_path(rng, paths, true);
      message[at] = deep_nesting(rng, splices, message[at], budget);
      return;
    }
    default: {  // another method (a bare params value becomes the params of a message)
      const std::string& method = lsp_methods()[pick(rng, lsp_methods().size())];
      if (!message.is_object() || !message.contains("method"))
        message = {{"jsonrpc", "2.0"}, {"id", static_cast<int>(pick(rng, 100))}, {"params", message}};
      message["method"] = method;
      return;
    }
  }
}

// `body` after one or two typed mutations, or nullopt when it is no JSON this can mutate
// or the result would exceed `max_size`.
inline std::optional<std::string> mutate_json_body(std::string_view body, unsigned seed, std::size_t max_size) {
  std::optional<json> message = parse_shallow(body);
  if (!message) return std::nullopt;
  Rng rng(seed);
  Splices splices;
  std::size_t budget = max_size > body.size() + 64 ? max_size - body.size() - 64 : 0;
  try {
    int rounds = rng() % 4 == 0 ? 2 : 1;
    for (int i = 0; i < rounds; ++i) mutate_once(*message, rng, splices, budget > splices.raw_bytes() ? budget - splices.raw_bytes() : 0);
  } catch (const json::exception&) {  // a path a previous round invalidated
    return std::nullopt;
  } catch (const std::logic_error&) {
    return std::nullopt;
  }
  std::string out = splices.serialise(*message);
  if (out.size() > max_size) return std::nullopt;
  return out;
}

// The libFuzzer side (fuzz builds only: the replay builds have no LLVMFuzzerMutate).
#ifdef PREFLIGHT_LIBFUZZER
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

// PREFLIGHT_FUZZ_BYTES_ONLY=1 in the environment turns the typed mutations off: libFuzzer's
// byte mutations only, to compare what each reaches (docs/fuzzing.md).
inline bool typed_mutations_on() {
  static const bool on = std::getenv("PREFLIGHT_FUZZ_BYTES_ONLY") == nullptr;
  return on;
}

// Writes `mutated` over the input when there is one that fits, else mutates the bytes.
inline std::size_t emit_or_byte_mutate(uint8_t* data, std::size_t size, std::size_t max_size,
                                       const std::optional<std::string>& mutated) {
  if (!mutated || mutated->size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::copy(mutated->begin(), mutated->end(), data);
  return mutated->size();
}
#endif

}  // namespace preflight::fuzz
