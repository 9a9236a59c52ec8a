#include "rules/fix_builder.h"

namespace preflight::rules {

using namespace preflight::analysis;

bool is_primary_expression(TSNode e) {
  const Kinds& k = kinds();
  TSSymbol s = sym(e);
  return s == k.identifier || s == k.attribute || s == k.call || s == k.subscript ||
         s == k.parenthesized_expression || s == k.list || s == k.dictionary ||
         s == k.list_comprehension || s == k.dictionary_comprehension ||
         s == k.set_comprehension || s == k.set;
}

TextEdit append_method(TSNode e, std::string_view suffix, std::string_view src) {
  ByteRange r = range_of(e);
  if (is_primary_expression(e)) return {{r.end, r.end}, std::string(suffix)};
  std::string text = "(" + std::string(text_of(e, src)) + ")" + std::string(suffix);
  return {r, std::move(text)};
}

TextEdit insert_line_before(uint32_t offset, std::string_view line, std::string_view src) {
  uint32_t start = offset;
  while (start > 0 && src[start - 1] != '\n' && src[start - 1] != '\r') --start;
  uint32_t indent_end = start;
  while (indent_end < src.size() && (src[indent_end] == ' ' || src[indent_end] == '\t')) ++indent_end;
  std::string_view indent = src.substr(start, indent_end - start);
  // Keep the line ending style of the line we insert before.
  size_t brk = src.find_first_of("\r\n", offset);
  std::string eol = "\n";
  if (brk != std::string_view::npos && src[brk] == '\r')
    eol = brk + 1 < src.size() && src[brk + 1] == '\n' ? "\r\n" : "\r";
  return {{start, start}, std::string(indent) + std::string(line) + eol};
}

std::optional<TextEdit> unwrap_call(TSNode call, std::string_view src) {
  TSNode arg = positional_arg(call, 0);
  if (is_null(arg)) return std::nullopt;
  std::string inner(text_of(arg, src));
  if (!is_primary_expression(arg)) inner = "(" + inner + ")";
  return TextEdit{range_of(call), std::move(inner)};
}

}  // namespace preflight::rules
