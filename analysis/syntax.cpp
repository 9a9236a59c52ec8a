#include "analysis/syntax.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <utility>

namespace preflight::analysis {
namespace {

TSSymbol symbol(const TSLanguage* lang, const char* name, bool named = true) {
  TSSymbol s = ts_language_symbol_for_name(lang, name, static_cast<uint32_t>(std::strlen(name)), named);
  if (s == 0) throw std::logic_error(std::string("grammar has no node kind ") + name);
  return s;
}

TSFieldId field_id(const TSLanguage* lang, const char* name) {
  TSFieldId f = ts_language_field_id_for_name(lang, name, static_cast<uint32_t>(std::strlen(name)));
  if (f == 0) throw std::logic_error(std::string("grammar has no field ") + name);
  return f;
}

Kinds make_kinds() {
  const TSLanguage* l = tree_sitter_python();
  Kinds k{};
#define PF_KIND(member, name) k.member = symbol(l, name)
  PF_KIND(module, "module");
  PF_KIND(identifier, "identifier");
  PF_KIND(attribute, "attribute");
  PF_KIND(call, "call");
  PF_KIND(subscript, "subscript");
  PF_KIND(argument_list, "argument_list");
  PF_KIND(keyword_argument, "keyword_argument");
  PF_KIND(assignment, "assignment");
  PF_KIND(augmented_assignment, "augmented_assignment");
  PF_KIND(expression_statement, "expression_statement");
  PF_KIND(for_statement, "for_statement");
  PF_KIND(while_statement, "while_statement");
  PF_KIND(with_statement, "with_statement");
  PF_KIND(with_clause, "with_clause");
  PF_KIND(with_item, "with_item");
  PF_KIND(as_pattern, "as_pattern");
  PF_KIND(as_pattern_target, "as_pattern_target");
  PF_KIND(if_statement, "if_statement");
  PF_KIND(elif_clause, "elif_clause");
  PF_KIND(else_clause, "else_clause");
  PF_KIND(try_statement, "try_statement");
  PF_KIND(except_clause, "except_clause");
  PF_KIND(finally_clause, "finally_clause");
  PF_KIND(function_definition, "function_definition");
  PF_KIND(decorated_definition, "decorated_definition");
  PF_KIND(decorator, "decorator");
  PF_KIND(class_definition, "class_definition");
  PF_KIND(return_statement, "return_statement");
  PF_KIND(lambda, "lambda");
  PF_KIND(block, "block");
  PF_KIND(parameters, "parameters");
  PF_KIND(lambda_parameters, "lambda_parameters");
  PF_KIND(default_parameter, "default_parameter");
  PF_KIND(typed_parameter, "typed_parameter");
  PF_KIND(typed_default_parameter, "typed_default_parameter");
  PF_KIND(list_splat_pattern, "list_splat_pattern");
  PF_KIND(dictionary_splat_pattern, "dictionary_splat_pattern");
  PF_KIND(import_statement, "import_statement");
  PF_KIND(import_from_statement, "import_from_statement");
  PF_KIND(aliased_import, "aliased_import");
  PF_KIND(wildcard_import, "wildcard_import");
  PF_KIND(dotted_name, "dotted_name");
  PF_KIND(pattern_list, "pattern_list");
  PF_KIND(tuple_pattern, "tuple_pattern");
  PF_KIND(list_pattern, "list_pattern");
  PF_KIND(tuple, "tuple");
  PF_KIND(list, "list");
  PF_KIND(set, "set");
  PF_KIND(dictionary, "dictionary");
  PF_KIND(pair, "pair");
  PF_KIND(list_comprehension, "list_comprehension");
  PF_KIND(set_comprehension, "set_comprehension");
  PF_KIND(dictionary_comprehension, "dictionary_comprehension");
  PF_KIND(generator_expression, "generator_expression");
  PF_KIND(for_in_clause, "for_in_clause");
  PF_KIND(if_clause, "if_clause");
  PF_KIND(parenthesized_expression, "parenthesized_expression");
  PF_KIND(binary_operator, "binary_operator");
  PF_KIND(unary_operator, "unary_operator");
  PF_KIND(not_operator, "not_operator");
  PF_KIND(comparison_operator, "comparison_operator");
  PF_KIND(boolean_operator, "boolean_operator");
  PF_KIND(conditional_expression, "conditional_expression");
  PF_KIND(named_expression, "named_expression");
  PF_KIND(await_, "await");
  PF_KIND(string, "string");
  PF_KIND(concatenated_string, "concatenated_string");
  PF_KIND(integer, "integer");
  PF_KIND(float_, "float");
  PF_KIND(true_, "true");
  PF_KIND(false_, "false");
  PF_KIND(none, "none");
  PF_KIND(comment, "comment");
  PF_KIND(list_splat, "list_splat");
  PF_KIND(dictionary_splat, "dictionary_splat");
  PF_KIND(expression_list, "expression_list");
  PF_KIND(global_statement, "global_statement");
  PF_KIND(nonlocal_statement, "nonlocal_statement");
  PF_KIND(match_statement, "match_statement");
  PF_KIND(case_clause, "case_clause");
  PF_KIND(type, "type");
  PF_KIND(keyword_separator, "keyword_separator");
  PF_KIND(positional_separator, "positional_separator");
  PF_KIND(yield, "yield");
  PF_KIND(slice, "slice");
  PF_KIND(ellipsis, "ellipsis");
#undef PF_KIND
#define PF_FIELD(member, name) k.member = field_id(l, name)
  PF_FIELD(f_name, "name");
  PF_FIELD(f_value, "value");
  PF_FIELD(f_left, "left");
  PF_FIELD(f_right, "right");
  PF_FIELD(f_body, "body");
  PF_FIELD(f_function, "function");
  PF_FIELD(f_arguments, "arguments");
  PF_FIELD(f_object, "object");
  PF_FIELD(f_attribute, "attribute");
  PF_FIELD(f_subscript, "subscript");
  PF_FIELD(f_alternative, "alternative");
  PF_FIELD(f_condition, "condition");
  PF_FIELD(f_consequence, "consequence");
  PF_FIELD(f_parameters, "parameters");
  PF_FIELD(f_superclasses, "superclasses");
  PF_FIELD(f_definition, "definition");
  PF_FIELD(f_alias, "alias");
  PF_FIELD(f_module_name, "module_name");
  PF_FIELD(f_operator, "operator");
  PF_FIELD(f_type, "type");
  PF_FIELD(f_return_type, "return_type");
#undef PF_FIELD
  return k;
}

TSParser* new_parser() {
  TSParser* p = ts_parser_new();
  if (!ts_parser_set_language(p, tree_sitter_python())) {
    ts_parser_delete(p);
    throw std::logic_error("tree-sitter-python ABI does not match the runtime");
  }
  return p;
}

// What the parser's callbacks read: the text, and what may stop the parse.
struct ParseInput {
  std::string_view text;
  const Interrupt* interrupt;
  std::optional<InterruptReason> stopped;
};

const char* read_text(void* payload, uint32_t byte, TSPoint, uint32_t* bytes_read) {
  std::string_view text = static_cast<ParseInput*>(payload)->text;
  if (byte >= text.size()) {
    *bytes_read = 0;
    return "";
  }
  *bytes_read = static_cast<uint32_t>(text.size() - byte);
  return text.data() + byte;
}

// Called by tree-sitter every hundred parser operations; true halts the parse. C code calls
// it, so it must not throw: the reason is kept and thrown after the parser has returned.
bool parse_should_stop(TSParseState* state) {
  auto* input = static_cast<ParseInput*>(state->payload);
  input->stopped = input->interrupt->stop_reason();
  return input->stopped.has_value();
}

TSTree* parse_text(TSParser* p, const TSTree* old, std::string_view text, const Interrupt* interrupt = nullptr) {
  ParseInput input{text, interrupt, std::nullopt};
  TSInput source{&input, read_text, TSInputEncodingUTF8, nullptr};
  TSParseOptions options{&input, interrupt ? parse_should_stop : nullptr};
  TSTree* t = ts_parser_parse_with_options(p, old, source, options);
  if (!t && input.stopped) {
    ts_parser_reset(p);  // a halted parser would resume this parse on its next call
    throw AnalysisInterrupted{*input.stopped};
  }
  if (!t) throw std::runtime_error("tree-sitter failed to produce a tree");
  return t;
}

}  // namespace

const Kinds& kinds() {
  static const Kinds k = make_kinds();
  return k;
}

SyntaxTree SyntaxTree::parse(std::string_view text, const Interrupt* interrupt) {
  TSParser* p = new_parser();
  try {
    return SyntaxTree(p, parse_text(p, nullptr, text, interrupt));
  } catch (...) {
    ts_parser_delete(p);
    throw;
  }
}

SyntaxTree SyntaxTree::parse_ranges(std::string_view text, const std::vector<TSRange>& ranges,
                                    const Interrupt* interrupt) {
  TSParser* p = new_parser();
  if (!ts_parser_set_included_ranges(p, ranges.data(), static_cast<uint32_t>(ranges.size()))) {
    ts_parser_delete(p);
    throw std::invalid_argument("included ranges must be sorted and disjoint");
  }
  try {
    return SyntaxTree(p, parse_text(p, nullptr, text, interrupt));
  } catch (...) {
    ts_parser_delete(p);
    throw;
  }
}

SyntaxTree::SyntaxTree(SyntaxTree&& o) noexcept
    : parser_(std::exchange(o.parser_, nullptr)), tree_(std::exchange(o.tree_, nullptr)) {}

SyntaxTree& SyntaxTree::operator=(SyntaxTree&& o) noexcept {
  if (this != &o) {
    this->~SyntaxTree();
    parser_ = std::exchange(o.parser_, nullptr);
    tree_ = std::exchange(o.tree_, nullptr);
  }
  return *this;
}

SyntaxTree::~SyntaxTree() {
  if (tree_) ts_tree_delete(tree_);
  if (parser_) ts_parser_delete(parser_);
}

void SyntaxTree::reparse(std::string_view new_text, const Interrupt* interrupt) {
  TSTree* fresh = parse_text(parser_, tree_, new_text, interrupt);
  ts_tree_delete(tree_);
  tree_ = fresh;
}

std::vector<ByteRange> SyntaxTree::edit_and_reparse(const TSInputEdit& edit, std::string_view new_text) {
  ts_tree_edit(tree_, &edit);
  TSTree* fresh = parse_text(parser_, tree_, new_text);
  uint32_t count = 0;
  TSRange* changed = ts_tree_get_changed_ranges(tree_, fresh, &count);
  std::vector<ByteRange> out;
  out.reserve(count);
  for (uint32_t i = 0; i < count; ++i) out.push_back({changed[i].start_byte, changed[i].end_byte});
  std::free(changed);
  ts_tree_delete(tree_);
  tree_ = fresh;
  return out;
}

std::string parse_view(std::string_view text) {
  std::string copy(text);
  for (size_t i = 0; i < copy.size(); ++i)
    if (copy[i] == '\r' && (i + 1 == copy.size() || copy[i + 1] != '\n')) copy[i] = '\n';
  return copy;
}

namespace {
size_t slot_hash(const void* id, uint32_t start) {
  uint64_t h = reinterpret_cast<uintptr_t>(id) ^ (uint64_t{start} << 32);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return static_cast<size_t>(h);
}
}  // namespace

ParentIndex::ParentIndex(TSNode root) : root_(root), slots_(256) {
  if (!is_null(root)) path_.push_back(root);
}

const ParentIndex::Slot* ParentIndex::find(TSNode n) const {
  uint32_t start = ts_node_start_byte(n);
  for (size_t i = slot_hash(n.id, start) & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
    const Slot& s = slots_[i];
    if (!s.id) return nullptr;
    if (s.id == n.id && s.start == start) return &s;
  }
}

void ParentIndex::remember(TSNode child, TSNode parent) const {
  if (2 * (used_ + 1) > slots_.size()) {  // grow: rehash into twice the slots
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    used_ = 0;
    for (const Slot& s : old)
      if (s.id) place(s);
  }
  place({child.id, ts_node_start_byte(child), parent});
}

void ParentIndex::place(const Slot& slot) const {
  for (size_t i = slot_hash(slot.id, slot.start) & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
    Slot& s = slots_[i];
    if (!s.id) {
      s = slot;
      ++used_;
      return;
    }
    if (s.id == slot.id && s.start == slot.start) return;
  }
}

// Walks down from path_[from] to `n`, keeping the way in path_; null when path_[from] is not
// an ancestor of `n` after all (a node of the same range below it).
TSNode ParentIndex::descend(size_t from, TSNode n) const {
  path_.resize(from + 1);
  for (;;) {
    TSNode at = path_.back();
    TSNode child = ts_node_child_with_descendant(at, n);
    if (is_null(child)) return TSNode{};
    if (ts_node_eq(child, n)) return at;
    remember(child, at);
    path_.push_back(child);
  }
}

TSNode ParentIndex::parent(TSNode n) const {
  if (is_null(n) || path_.empty() || n.tree != root_.tree || ts_node_eq(n, root_)) return ts_node_parent(n);
  if (const Slot* s = find(n)) return s->parent;
  // The deepest kept ancestor whose range holds `n` (the root always does, for a node below it).
  // ts_node_parent walks down taking the first child whose range covers `n`: for a node with
  // bytes, siblings do not overlap, so a kept ancestor holding it is on that walk; an empty node
  // at a boundary is covered by the sibling before too, so it is walked from the root.
  uint32_t begin = ts_node_start_byte(n), end = ts_node_end_byte(n);
  size_t from = begin == end ? 0 : path_.size() - 1;
  while (from > 0 && (ts_node_start_byte(path_[from]) > begin || ts_node_end_byte(path_[from]) < end ||
                      ts_node_eq(path_[from], n)))
    --from;
  TSNode found = descend(from, n);
  if (is_null(found) && from > 0) found = descend(0, n);
  if (is_null(found)) {  // not below the root
    path_.assign(1, root_);
    return ts_node_parent(n);
  }
  remember(n, found);
  return found;
}

std::string_view text_of(TSNode n, std::string_view src) {
  if (ts_node_is_null(n)) return {};
  uint32_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
  if (e > src.size() || b > e) return {};
  return src.substr(b, e - b);
}

TSNode first_modulo(TSNode n, std::string_view src) {
  const Kinds& k = kinds();
  if (is_null(n)) return TSNode{};
  if (is(n, k.binary_operator) && text_of(field(n, k.f_operator), src) == "%" &&
      !is(unparenthesize(field(n, k.f_left)), k.string))
    return n;
  TSNode found{};
  for_each_named_child(n, [&](TSNode c) {
    if (is_null(found)) found = first_modulo(c, src);
  });
  return found;
}

TSNode unparenthesize(TSNode n) {
  const Kinds& k = kinds();
  while (is(n, k.parenthesized_expression) && ts_node_named_child_count(n) == 1) {
    TSNode inner = ts_node_named_child(n, 0);
    if (is(inner, k.comment)) break;
    n = inner;
  }
  return n;
}

std::string quote_code(std::string_view text, size_t max) {
  size_t cut = std::min(text.size(), max);
  while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  std::string s = "`";
  for (char c : text.substr(0, cut)) s += (c == '\n' || c == '\r') ? ' ' : c;
  if (cut < text.size()) s += "...";
  return s + "`";
}

std::optional<std::string> dotted_name(TSNode n, std::string_view src) {
  const Kinds& k = kinds();
  if (is(n, k.identifier)) return std::string(text_of(n, src));
  if (!is(n, k.attribute)) return std::nullopt;
  auto base = dotted_name(field(n, k.f_object), src);
  if (!base) return std::nullopt;
  *base += '.';
  *base += text_of(field(n, k.f_attribute), src);
  return base;
}

std::optional<std::string> base_name(TSNode n, std::string_view src) {
  const Kinds& k = kinds();
  for (int guard = 0; guard < 256 && !is_null(n); ++guard) {
    TSSymbol s = sym(n);
    if (s == k.identifier) return std::string(text_of(n, src));
    if (s == k.attribute) n = field(n, k.f_object);
    else if (s == k.subscript) n = field(n, k.f_value);
    else if (s == k.call) n = field(n, k.f_function);
    else if (s == k.parenthesized_expression) n = unparenthesize(n);
    else return std::nullopt;
    if (s == k.parenthesized_expression && is(n, k.parenthesized_expression)) return std::nullopt;
  }
  return std::nullopt;
}

std::string_view callee_leaf(TSNode call, std::string_view src) {
  const Kinds& k = kinds();
  TSNode f = field(call, k.f_function);
  if (is(f, k.identifier)) return text_of(f, src);
  if (is(f, k.attribute)) return text_of(field(f, k.f_attribute), src);
  return {};
}

TSNode positional_arg(TSNode call, unsigned index) {
  const Kinds& k = kinds();
  TSNode args = field(call, k.f_arguments);
  if (!is(args, k.argument_list)) return TSNode{};
  unsigned seen = 0;
  for (TSNode a : Children(args, true)) {
    TSSymbol s = sym(a);
    if (s == k.keyword_argument || s == k.list_splat || s == k.dictionary_splat || s == k.comment)
      continue;
    if (seen++ == index) return a;
  }
  return TSNode{};
}

TSNode keyword_arg(TSNode call, std::string_view name, std::string_view src) {
  const Kinds& k = kinds();
  TSNode args = field(call, k.f_arguments);
  if (!is(args, k.argument_list)) return TSNode{};
  for (TSNode a : Children(args, true))
    if (is(a, k.keyword_argument) && text_of(field(a, k.f_name), src) == name) return field(a, k.f_value);
  return TSNode{};
}

bool has_literal_true_keyword(TSNode call, std::string_view name, std::string_view src) {
  return is(keyword_arg(call, name, src), kinds().true_);
}

namespace {

// Statements that hold blocks, and the blocks: the only nodes a misindented line can be under.
bool holds_statements(TSNode n) {
  static constexpr std::string_view kHolders[] = {
      "module",         "block",           "if_statement",        "elif_clause",   "else_clause",
      "for_statement",  "while_statement", "try_statement",       "except_clause", "except_group_clause",
      "finally_clause", "with_statement",  "function_definition", "class_definition", "decorated_definition",
      "match_statement", "case_clause"};
  std::string_view type = ts_node_type(n);
  for (std::string_view h : kHolders)
    if (type == h) return true;
  return false;
}

// The statements of `block` (comments and continuations aside) that start a line at another column than the
// first one, or a first one no deeper than the header the block belongs to.
// `header`: the block's parent (the compound statement it belongs to); null for the module.
// The children are read in one pass (Children): ts_node_named_child(block, i) walks from the
// first child on every call, quadratic in a 3,000-line class.
std::optional<ByteRange> misindented_in(TSNode block, TSNode header, bool is_module) {
  std::optional<uint32_t> column;
  uint32_t last_row = 0;
  for (TSNode s : named_children(block)) {
    if (ts_node_is_extra(s)) continue;  // comments, line continuations
    TSPoint at = ts_node_start_point(s);
    if (!column) {
      // A block on its header's line (`if x: y = 1`) has no indentation of its own.
      if (!is_module && !ts_node_is_null(header) && at.row == ts_node_start_point(header).row) return std::nullopt;
      if (!is_module && !ts_node_is_null(header) && at.column <= ts_node_start_point(header).column)
        return range_of(s);
      column = at.column;
      last_row = ts_node_end_point(s).row;
      continue;
    }
    // `a = 1; b = 2`, and `(\n); b = 2` (CPython's inspect_fodder.py): a statement that starts
    // on the row where the one before it ends follows a `;`.
    if (at.row == last_row) {
      last_row = ts_node_end_point(s).row;
      continue;
    }
    if (at.column != *column) return range_of(s);
    last_row = ts_node_end_point(s).row;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ByteRange> misindented_statement(TSNode root) {
  std::vector<std::pair<TSNode, TSNode>> todo{{root, ts_node_parent(root)}};  // a node and its parent
  while (!todo.empty()) {
    auto [n, parent] = todo.back();
    todo.pop_back();
    std::string_view type = ts_node_type(n);
    if (type == "block" || type == "module")
      if (auto bad = misindented_in(n, parent, type == "module")) return bad;
    Children children = named_children(n);
    for (uint32_t i = children.size(); i-- > 0;)
      if (holds_statements(children[i])) todo.push_back({children[i], n});
  }
  return std::nullopt;
}

bool has_syntax_error(TSNode root) { return ts_node_has_error(root) || misindented_statement(root).has_value(); }

SyntaxErrorSummary find_syntax_errors(TSNode root) {
  SyntaxErrorSummary out;
  if (!ts_node_has_error(root)) {
    if (auto bad = misindented_statement(root)) out = {1, *bad};
    return out;
  }
  TSTreeCursor c = ts_tree_cursor_new(root);
  bool descend = true;
  for (;;) {
    TSNode n = ts_tree_cursor_current_node(&c);
    if (descend && (ts_node_is_error(n) || ts_node_is_missing(n))) {
      if (out.count++ == 0) out.first = range_of(n);
      descend = false;  // don't count errors nested inside an error
    }
    if (descend && ts_node_has_error(n) && ts_tree_cursor_goto_first_child(&c)) continue;
    descend = true;
    while (!ts_tree_cursor_goto_next_sibling(&c)) {
      if (!ts_tree_cursor_goto_parent(&c)) {
        ts_tree_cursor_delete(&c);
        return out;
      }
    }
  }
}

}  // namespace preflight::analysis
