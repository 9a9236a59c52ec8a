// The project's calls, summarised per file and joined (see project_index.h).
#include "analysis/project_index.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "analysis/grad_switch.h"
#include "analysis/names.h"

namespace preflight::analysis {

namespace {

int grad_switch(TSNode e, std::string_view src, bool bare_ok) {
  return analysis::grad_switch(e, src, bare_ok, names::names_a_no_grad_wrapper);
}

// Decorators that hand back the routine itself, still called by its own name.
bool transparent_decorator(std::string_view leaf) {
  static constexpr std::string_view kNames[] = {"staticmethod", "classmethod", "property", "abstractmethod",
                                                "overload", "compile", "script", "lru_cache", "cache",
                                                "override", "final"};
  return std::find(std::begin(kNames), std::end(kNames), leaf) != std::end(kNames);
}

std::string_view decorator_leaf(TSNode expr, std::string_view src) {
  const Kinds& k = kinds();
  expr = unparenthesize(expr);
  if (is(expr, k.call)) return callee_leaf(expr, src);
  if (is(expr, k.identifier)) return text_of(expr, src);
  if (is(expr, k.attribute)) return text_of(field(expr, k.f_attribute), src);
  return {};
}

bool is_identifier(std::string_view s) {
  if (s.empty() || s.size() > 64 || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// The content of a one-word string literal (`"inference"`), or empty.
std::string_view string_word(TSNode s, std::string_view src) {
  std::string_view t = text_of(s, src);
  size_t open = t.find_first_of("'\"");
  if (open == std::string_view::npos || open > 2 || t.size() < open + 2) return {};
  char q = t[open];
  if (t.back() != q) return {};
  std::string_view inner = t.substr(open + 1, t.size() - open - 2);
  return is_identifier(inner) ? inner : std::string_view{};
}

uint32_t line_of(TSNode n) { return ts_node_start_point(n).row + 1; }

class Summarizer {
 public:
  Summarizer(std::string_view src, FileCalls& out) : src_(src), out_(out) {}

  void run(TSNode root) {
    for_each_node(root, [&](TSNode n, uint32_t depth) { visit(n, depth); });
    for (size_t i = 0; i < out_.calls.size(); ++i) {
      const std::string& name = out_.calls[i].name;
      out_.calls[i].local = (receivers_[i] == Receiver::Bare && top_level_.count(name)) ||
                            (receivers_[i] == Receiver::Self && methods_.count(name));
    }
  }

 private:
  enum class FrameKind { Routine, Class, NoGradBlock, GradBlock, Lambda };
  struct Frame {
    uint32_t depth;
    FrameKind kind;
    std::string name;       // Routine
    bool no_grad = false;   // Routine: decorated no_grad
    bool handed_off = false;  // Routine: a decorator may call it from anywhere
  };

  void visit(TSNode n, uint32_t depth) {
    while (!frames_.empty() && frames_.back().depth >= depth) frames_.pop_back();
    if (auto it = pending_.find(node_id(n)); it != pending_.end()) {
      Frame f = std::move(it->second);
      pending_.erase(it);
      f.depth = depth;
      frames_.push_back(std::move(f));
    }
    TSSymbol s = sym(n);
    if (s == k.call) return record_call(n);
    if (s == k.function_definition) return enter_function(n);
    if (s == k.class_definition) return enter_class(n);
    if (s == k.decorated_definition) return note_decorators(n);
    if (s == k.with_statement) return enter_with(n);
    if (s == k.lambda) {
      frames_.push_back({depth, FrameKind::Lambda, {}});
      return;
    }
    record_passed_values(n, s);
  }

  void note_decorators(TSNode n) {
    TSNode def = field(n, k.f_definition);
    if (!is(def, k.function_definition)) return;
    Frame f{0, FrameKind::Routine, std::string(text_of(field(def, k.f_name), src_))};
    for (TSNode d : named_children(n)) {
      if (!is(d, k.decorator)) continue;
      TSNode e = ts_node_named_child(d, 0);
      int sw = grad_switch(e, src_, /*bare_ok=*/true);
      if (sw != 0) {
        f.no_grad = sw < 0;
        continue;
      }
      if (!transparent_decorator(decorator_leaf(e, src_))) f.handed_off = true;
    }
    // A routine a decorator registers or wraps leaves as a value.
    if (f.handed_off) out_.escapes.emplace_back(f.name, line_of(def));
    decorated_[node_id(def)] = std::move(f);
  }

  void enter_class(TSNode cls) {
    std::string name(text_of(field(cls, k.f_name), src_));
    if (innermost_scope() == nullptr) top_level_.insert(name);
    TSNode body = field(cls, k.f_body);
    if (!is_null(body)) pending_[node_id(body)] = {0, FrameKind::Class, std::move(name)};
  }

  void enter_function(TSNode def) {
    Frame f{0, FrameKind::Routine, std::string(text_of(field(def, k.f_name), src_))};
    note_definition(f.name);
    if (auto it = decorated_.find(node_id(def)); it != decorated_.end()) {
      f = std::move(it->second);
      decorated_.erase(it);
    }
    TSNode body = field(def, k.f_body);
    if (!is_null(body)) pending_[node_id(body)] = std::move(f);
  }

  // The innermost routine or class body the walk is in; null at module scope (which the
  // blocks of a top-level `if` / `with` / `try` are too).
  const Frame* innermost_scope() const {
    for (auto f = frames_.rbegin(); f != frames_.rend(); ++f)
      if (f->kind == FrameKind::Routine || f->kind == FrameKind::Class || f->kind == FrameKind::Lambda) return &*f;
    return nullptr;
  }

  // Where a `def` binds its name: the module's scope, or a class body (a method).
  void note_definition(const std::string& name) {
    const Frame* scope = innermost_scope();
    if (!scope) top_level_.insert(name);
    else if (scope->kind == FrameKind::Class) methods_.insert(name);
  }

  void enter_with(TSNode w) {
    int sw = 0;
    for (TSNode c : named_children(w)) {
      if (!is(c, k.with_clause)) continue;
      for (TSNode item : named_children(c)) {
        if (!is(item, k.with_item)) continue;
        TSNode v = field(item, k.f_value);
        if (is(v, k.as_pattern)) v = ts_node_named_child(v, 0);
        if (int one = grad_switch(v, src_, false); one != 0) sw = one;
      }
    }
    TSNode body = field(w, k.f_body);
    if (sw != 0 && !is_null(body)) pending_[node_id(body)] = {0, sw < 0 ? FrameKind::NoGradBlock : FrameKind::GradBlock, {}};
  }

  void record_call(TSNode call) {
    std::string_view name = callee_leaf(call, src_);
    if (name.empty()) return;
    // `getattr(model, "infer")`: the routine leaves by its name. Only there: a word in any
    // string would take metric names (`"eval_loss"`) for routines.
    if (name == "getattr" || name == "attrgetter" || name == "methodcaller") {
      for (TSNode a : named_children(field(call, k.f_arguments)))
        if (is(a, k.string))
          if (std::string_view w = string_word(a, src_); !w.empty()) out_.escapes.emplace_back(std::string(w), line_of(a));
    }
    ProjectCall c{std::string(name), CallSite::Module, {}, line_of(call), false};
    TSNode callee = field(call, k.f_function);
    Receiver r = Receiver::Other;
    if (is(callee, k.identifier)) r = Receiver::Bare;
    else if (is(callee, k.attribute)) {
      std::string_view obj = text_of(field(callee, k.f_object), src_);
      if (obj == "self" || obj == "cls") r = Receiver::Self;
    }
    receivers_.push_back(r);
    if (uint8_t g = seeded_generators(callee, name); g != 0) out_.seeds.emplace_back(g, c.line);
    bool forced_on = false;
    for (auto f = frames_.rbegin(); f != frames_.rend(); ++f) {
      if (f->kind == FrameKind::Lambda) {
        c.site = CallSite::Unknown;
        break;
      }
      if (f->kind == FrameKind::Class) continue;  // class code runs where the class statement does
      if (f->kind == FrameKind::GradBlock) forced_on = true;
      if (f->kind == FrameKind::NoGradBlock && !forced_on) {
        c.site = CallSite::NoGrad;
        break;
      }
      if (f->kind == FrameKind::Routine) {
        if (f->no_grad && !forced_on) c.site = CallSite::NoGrad;
        else if (f->handed_off) c.site = CallSite::Unknown;
        else c.site = CallSite::Routine, c.enclosing = f->name;
        break;
      }
    }
    out_.calls.push_back(std::move(c));
  }

  // `torch.manual_seed(s)` (not the CUDA-only one), `np.random.seed(s)`, `random.seed(s)`, or
  // a seed-everything helper by its name.
  uint8_t seeded_generators(TSNode callee, std::string_view leaf) const {
    if (names::is_seed_everything_helper(leaf)) return kSeedsTorch | kSeedsNumpy | kSeedsRandom;
    if (!is(callee, k.attribute)) return 0;
    std::string_view recv = text_of(field(callee, k.f_object), src_);
    if (leaf == "manual_seed") return recv.find("cuda") == std::string_view::npos ? kSeedsTorch : 0;
    if (leaf != "seed") return 0;
    if (recv == "random") return kSeedsRandom;
    if (recv == "np.random" || recv == "numpy.random") return kSeedsNumpy;
    return 0;
  }

  // A name or attribute in a place that hands its value on: an argument, an element, the
  // right side of an assignment, a returned value, a dict value.
  void record_passed_values(TSNode n, TSSymbol s) {
    auto passed = [&](TSNode v) {
      v = unparenthesize(v);
      if (is(v, k.identifier)) out_.escapes.emplace_back(std::string(text_of(v, src_)), line_of(v));
      else if (is(v, k.attribute))
        out_.escapes.emplace_back(std::string(text_of(field(v, k.f_attribute), src_)), line_of(v));
    };
    if (s == k.argument_list || s == k.list || s == k.tuple || s == k.set || s == k.expression_list ||
        s == k.return_statement) {
      for (TSNode c : named_children(n)) passed(c);
    } else if (s == k.keyword_argument || s == k.pair) {
      passed(field(n, k.f_value));
    } else if (s == k.assignment) {
      passed(field(n, k.f_right));
    }
  }

  enum class Receiver : uint8_t { Bare, Self, Other };

  const Kinds& k = kinds();
  std::string_view src_;
  FileCalls& out_;
  std::vector<Receiver> receivers_;  // per call of out_.calls
  std::unordered_set<std::string> top_level_;  // routines and classes defined at the top level
  std::unordered_set<std::string> methods_;    // methods of this file's classes
  std::vector<Frame> frames_;
  std::unordered_map<const void*, Frame> pending_;    // a body's frame, pushed when it is reached
  std::unordered_map<const void*, Frame> decorated_;  // a decorated routine's frame, by its def
};

}  // namespace

FileCalls summarize_calls(std::string_view text, TSNode root, std::string path) {
  FileCalls out;
  out.path = std::move(path);
  Summarizer(text, out).run(root);
  return out;
}

FileCalls summarize_calls(std::string_view text, std::string path) {
  if (text.find('\0') != std::string_view::npos) {
    FileCalls out;
    out.path = std::move(path);
    out.parsed = false;
    return out;
  }
  std::string view = parse_view(text);
  SyntaxTree tree = SyntaxTree::parse(view);
  return summarize_calls(view, tree.root(), std::move(path));
}

ProjectIndex::ProjectIndex(std::vector<FileCalls> files) {
  files_.reserve(files.size());
  for (FileCalls& f : files) files_.push_back(std::make_shared<const FileCalls>(std::move(f)));
  build();
}

ProjectIndex::ProjectIndex(std::vector<std::shared_ptr<const FileCalls>> files) : files_(std::move(files)) {
  build();
}

void ProjectIndex::build() {
  for (uint32_t f = 0; f < files_.size(); ++f) {
    const FileCalls& fc = summary(f);
    file_of_path_.emplace(fc.path, f);
    if (!fc.parsed) unparsed_.push_back(f);
    for (uint32_t c = 0; c < fc.calls.size(); ++c) calls_by_name_[fc.calls[c].name].push_back({f, c});
    for (const auto& [name, line] : fc.escapes) escapes_by_name_[name].emplace_back(f, line);
  }
}

bool ProjectIndex::has_other_files(std::string_view path) const {
  auto it = file_of_path_.find(std::string(path));
  return files_.size() > (it == file_of_path_.end() ? 0u : 1u);
}

std::string ProjectIndex::where(uint32_t file_index, uint32_t line) const {
  return summary(file_index).path + ":" + std::to_string(line);
}

std::string ProjectIndex::seeded_elsewhere(uint8_t generator, std::string_view except_path) const {
  for (uint32_t f = 0; f < files_.size(); ++f) {
    if (summary(f).path == except_path) continue;
    for (const auto& [mask, line] : summary(f).seeds)
      if (mask & generator) return where(f, line);
  }
  return {};
}

ProjectCallers ProjectIndex::callers(std::string_view name, std::string_view except_path) const {
  auto it = file_of_path_.find(std::string(except_path));
  uint32_t except = it == file_of_path_.end() ? UINT32_MAX : it->second;
  std::vector<std::string> visiting;
  return resolve(name, except, except, 0, visiting);
}

ProjectCallers ProjectIndex::resolve(std::string_view name, uint32_t home, uint32_t except, int depth,
                                     std::vector<std::string>& visiting) const {
  ProjectCallers out;
  std::string key(name);
  if (auto e = escapes_by_name_.find(key); e != escapes_by_name_.end())
    for (const auto& [file, line] : e->second)
      if (file != except) {
        out.why = "`" + key + "` leaves as a value at " + where(file, line);
        return out;
      }
  for (uint32_t f : unparsed_)
    if (f != except) {
      out.why = summary(f).path + " could not be read for its calls";
      return out;
    }
  auto found = calls_by_name_.find(key);
  bool any = false;
  out.kind = ProjectCallers::Kind::NoGrad;
  if (found != calls_by_name_.end()) {
    visiting.push_back(key);
    for (const Entry& e : found->second) {
      const ProjectCall& c = summary(e.file).calls[e.call];
      if (e.file == except || (c.local && e.file != home)) continue;
      any = true;
      std::string at = where(e.file, c.line);
      std::string other;
      if (c.site == CallSite::Module) other = "`" + key + "()` runs with autograd on at " + at;
      else if (c.site == CallSite::Unknown) other = "where `" + key + "()` at " + at + " runs cannot be told";
      else if (c.site == CallSite::Routine) {
        bool cyclic = std::find(visiting.begin(), visiting.end(), c.enclosing) != visiting.end();
        if (cyclic || depth >= 3) {
          other = "the callers of `" + c.enclosing + "()` (" + at + ") are not followed further";
        } else {
          ProjectCallers up = resolve(c.enclosing, e.file, except, depth + 1, visiting);
          if (up.kind == ProjectCallers::Kind::NoCall)
            other = "`" + c.enclosing + "()`, which calls `" + key + "()` at " + at + ", is called nowhere else";
          else if (up.kind == ProjectCallers::Kind::Other)
            other = up.why;
        }
      }
      if (!other.empty()) {
        visiting.pop_back();
        return {ProjectCallers::Kind::Other, {}, std::move(other)};
      }
      if (out.no_grad_calls.size() < 4) out.no_grad_calls.push_back(at);
    }
    visiting.pop_back();
  }
  if (!any) out.kind = ProjectCallers::Kind::NoCall;
  return out;
}

}  // namespace preflight::analysis
