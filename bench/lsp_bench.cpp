// preflight_lsp_bench: edit latency of the language server's document path (issue 9, program
// 2). A report, not a test: nothing here asserts a time.
//
// On a 5,000-line training file (generated, or --file PY), 1,000 one-character edits spread
// over the file (function bodies, module level, the training loop; each edit is undone by the
// next, so the file stays what it was) are measured three ways:
//   1. through the real `preflight lsp` binary over pipes, debounce 0: from didChange sent to
//      the publishDiagnostics of that version received (the user's wait, minus the debounce);
//   2. in process through rules::DocumentAnalysis: edit() (ts_tree_edit) + check() (a parse of
//      the edited region, or an incremental reparse of the whole tree when it cannot slice),
//      the document path's own cost without pipes, JSON or conversion to LSP positions;
//   3. against a from-scratch analysis of the same text: rules::check_source in process, and
//      didOpen -> publishDiagnostics of a fresh document in the server. These are taken after
//      every K edits (K even: the text is then the original again), interleaved with the
//      edits, so a ratio compares times taken under the same load of a shared machine.
// Usage: preflight_lsp_bench PREFLIGHT_EXE [--edits N] [--scratch-every K] [--file PY]
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "lsp_client.h"
#include "rules/engine.h"
#include "rules/incremental.h"

namespace {

using json = nlohmann::json;
using preflight::testing::LspProcess;
namespace pb = preflight::bench;

struct Options {
  std::string exe;
  int edits = 1000;
  int scratch_every = 10;  // edits between two from-scratch samples; even
  std::string file;  // empty: the generated file
};

// ~5,000 lines: 250 helper functions and one training loop with a retained graph.
std::string generated_file() {
  std::ostringstream out;
  out << "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n";
  for (int i = 0; i < 250; ++i) {
    out << "def helper_" << i << "(model, batch, scale=1.0):\n"
        << "    x, y = batch\n"
        << "    logits = model(x)\n"
        << "    loss = F.cross_entropy(logits, y)\n"
        << "    total = 0.0\n"
        << "    for k in range(4):\n"
        << "        total += float(k) * scale\n"
        << "    if total > 10:\n"
        << "        total = total / 2\n"
        << "    stats = {'loss': loss.item(), 'total': total}\n"
        << "    values = [v for v in stats.values()]\n"
        << "    names = sorted(stats)\n"
        << "    message = ' '.join(names)\n"
        << "    assert message\n"
        << "    result = sum(values)\n"
        << "    result = result + 0\n"
        << "    return loss, result\n"
        << "\n\n\n";
  }
  out << "def train(model, loader, optimizer):\n"
      << "    losses = []\n"
      << "    for xb, yb in loader:\n"
      << "        optimizer.zero_grad()\n"
      << "        loss = F.cross_entropy(model(xb), yb)\n"
      << "        loss.backward()\n"
      << "        optimizer.step()\n"
      << "        losses.append(loss)\n"
      << "    return losses\n";
  return out.str();
}

// --- the edit script ------------------------------------------------------------------------

// One single-character change: bytes [begin, begin + removed) of the text before it become
// `inserted`. `where` names the part of the file it is in, for the per-place figures.
struct Edit {
  size_t begin = 0, removed = 0;
  std::string inserted;
  std::string where;
  int line = 0, character = 0, end_character = 0;  // the same range as an LSP position (ASCII lines)
};

// The byte offset just after the first occurrence of `needle` at or after `from`.
size_t after(const std::string& text, const std::string& needle, size_t from = 0) {
  size_t at = text.find(needle, from);
  if (at == std::string::npos) throw std::logic_error("generated file lacks " + needle);
  return at + needle.size();
}

size_t line_end(const std::string& text, size_t offset) { return text.find('\n', offset); }

// A change and the change that undoes it, at `offset` of `text`.
std::pair<Edit, Edit> change_and_undo(const std::string& text, size_t offset, size_t removed, std::string inserted,
                                      std::string where) {
  Edit change{offset, removed, inserted, where};
  Edit undo{offset, inserted.size(), text.substr(offset, removed), where};
  return {change, undo};
}

// Pair j of the generated file: j % 3 chooses the place, (j / 3) % 2 the kind of change; the
// helper is spread over all 250 with a stride coprime to 250.
std::pair<Edit, Edit> generated_pair(const std::string& text, int j) {
  int helper = (j * 97) % 250;
  size_t def = after(text, "def helper_" + std::to_string(helper) + "(") - 1;  // at the '('
  bool first_kind = (j / 3) % 2 == 0;
  switch (j % 3) {
    case 0:  // a function body: change a literal, or type a space after a statement
      if (first_kind) return change_and_undo(text, after(text, "range(", def), 1, "5", "function body");
      return change_and_undo(text, line_end(text, after(text, "total = 0.0", def)), 0, " ", "function body");
    case 1:  // module level: rename a function while typing, or start a comment between two
      if (first_kind) return change_and_undo(text, def, 0, "x", "module level");
      return change_and_undo(text, after(text, "return loss, result\n", def), 0, "#", "module level");
    default: {  // the training loop: edit the retained loss (TG001's evidence), or type a space
      size_t loop = after(text, "def train(");
      if (first_kind) return change_and_undo(text, after(text, "losses.append(los", loop), 1, "", "training loop");
      return change_and_undo(text, line_end(text, after(text, "optimizer.step()", loop)), 0, " ", "training loop");
    }
  }
}

bool ascii_line(std::string_view line) {
  return std::none_of(line.begin(), line.end(), [](char c) { return static_cast<unsigned char>(c) & 0x80; });
}

// Pair j of a real file: a space typed at the end of a line and removed, over lines spread
// through the file. Only non-empty ASCII lines that do not continue with a backslash (a space
// after it would be a syntax error), so the byte column is also the UTF-16 column.
std::pair<Edit, Edit> real_file_pair(const std::string& text, const std::vector<size_t>& line_ends, int j) {
  const size_t stride = 7919;  // prime: visits every candidate line before repeating
  size_t end = line_ends[(static_cast<size_t>(j) * stride) % line_ends.size()];
  return change_and_undo(text, end, 0, " ", "line ends");
}

std::vector<size_t> editable_line_ends(const std::string& text) {
  std::vector<size_t> ends;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) break;
    std::string_view line(text.data() + start, end - start);
    if (!line.empty() && line.back() != '\\' && line.back() != '\r' && ascii_line(line)) ends.push_back(end);
    start = end + 1;
  }
  if (ends.empty()) throw std::runtime_error("the file has no ASCII line to edit");
  return ends;
}

void set_position(const std::string& text, Edit& e) {
  size_t line_start = text.rfind('\n', e.begin == 0 ? 0 : e.begin - 1);
  line_start = line_start == std::string::npos || e.begin == 0 ? 0 : line_start + 1;
  e.line = static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(line_start), '\n'));
  e.character = static_cast<int>(e.begin - line_start);
  e.end_character = e.character + static_cast<int>(e.removed);
}

void apply_edit(std::string& text, const Edit& e) { text.replace(e.begin, e.removed, e.inserted); }

// `count` edits; positions are computed against the text each one applies to.
std::vector<Edit> edit_script(const std::string& original, bool generated, int count) {
  std::vector<Edit> script;
  std::string text = original;
  std::vector<size_t> line_ends = generated ? std::vector<size_t>{} : editable_line_ends(original);
  for (int j = 0; static_cast<int>(script.size()) < count; ++j) {
    auto [change, undo] = generated ? generated_pair(text, j) : real_file_pair(text, line_ends, j);
    for (Edit* e : {&change, &undo}) {
      if (static_cast<int>(script.size()) == count) break;
      set_position(text, *e);
      apply_edit(text, *e);
      script.push_back(*e);
    }
  }
  return script;
}

// --- measuring ------------------------------------------------------------------------------

struct Samples {
  std::vector<double> all;
  std::map<std::string, std::vector<double>> by_place;
  void add(const std::string& where, double ms) {
    all.push_back(ms);
    by_place[where].push_back(ms);
  }
};

void print_distribution(const char* label, const std::vector<double>& v) {
  std::printf("  %-28s n=%-5zu p50 %7.2f ms  p90 %7.2f ms  p99 %7.2f ms  max %7.2f ms\n", label, v.size(),
              pb::percentile(v, 0.5), pb::percentile(v, 0.9), pb::percentile(v, 0.99), *std::max_element(v.begin(), v.end()));
}

void print_samples(const Samples& s) {
  print_distribution("all edits", s.all);
  for (const auto& [where, v] : s.by_place) print_distribution(where.c_str(), v);
}

json open_params(const std::string& uri, const std::string& text) {
  return {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", text}}}};
}

json change_params(const std::string& uri, int version, const Edit& e) {
  json range = {{"start", {{"line", e.line}, {"character", e.character}}},
                {"end", {{"line", e.line}, {"character", e.end_character}}}};
  return {{"textDocument", {{"uri", uri}, {"version", version}}},
          {"contentChanges", json::array({{{"range", range}, {"text", e.inserted}}})}};
}

struct ServerFigures {
  Samples edits;
  std::vector<double> fresh_opens;  // didOpen -> publishDiagnostics of a new document
  size_t diagnostics_first = 0, diagnostics_changed = 0;  // on the open, and how often it changed
};

ServerFigures through_server(const Options& o, const std::string& text, const std::vector<Edit>& script) {
  LspProcess lsp({o.exe, "lsp", "--debounce-ms", "0", "--log-level", "off"});
  lsp.initialize(preflight::testing::neovim07_capabilities());
  ServerFigures f;
  const std::string uri = "file:///bench/train.py";
  lsp.notify("textDocument/didOpen", open_params(uri, text));
  f.diagnostics_first = lsp.wait_diagnostics(uri, 1, 120000).size();
  for (size_t i = 0; i < script.size(); ++i) {
    int version = static_cast<int>(i) + 2;
    auto t = pb::Clock::now();
    lsp.notify("textDocument/didChange", change_params(uri, version, script[i]));
    json diagnostics = lsp.wait_diagnostics(uri, version, 120000);
    f.edits.add(script[i].where, pb::ms_since(t));
    if (diagnostics.size() != f.diagnostics_first) ++f.diagnostics_changed;
    if ((i + 1) % static_cast<size_t>(o.scratch_every) != 0) continue;
    // The document is the original text again here: open it fresh under another name.
    std::string fresh = "file:///bench/fresh_" + std::to_string(i) + ".py";
    t = pb::Clock::now();
    lsp.notify("textDocument/didOpen", open_params(fresh, text));
    lsp.wait_diagnostics(fresh, 1, 120000);
    f.fresh_opens.push_back(pb::ms_since(t));
    lsp.notify("textDocument/didClose", {{"textDocument", {{"uri", fresh}}}});
  }
  return f;
}

struct InProcessFigures {
  Samples edit_and_check, reparse_only;
  size_t incremental_parses = 0, region_parses = 0;
  size_t sliced = 0, units_reanalysed = 0, units_total = 0;
  size_t kept_while_broken = 0;  // text with syntax errors: the last good findings kept
  std::map<std::string, size_t> whole_file_because;
  std::vector<double> from_scratch;  // check_source of the whole text
  std::vector<double> parse_from_scratch;  // a fresh parse of it, against edit()'s reparse
  size_t findings = 0;
};

InProcessFigures in_process(const Options& o, const std::string& text, const std::vector<Edit>& script) {
  InProcessFigures f;
  preflight::rules::DocumentAnalysis doc(text);
  f.findings = doc.check({})->findings.size();
  for (size_t i = 0; i < script.size(); ++i) {
    const Edit& e = script[i];
    auto t = pb::Clock::now();
    doc.edit(e.begin, e.begin + e.removed, e.inserted);
    double reparse = pb::ms_since(t);
    if (!doc.check({})) throw std::runtime_error("an uncancelled check returned nothing");
    f.edit_and_check.add(e.where, pb::ms_since(t));
    f.reparse_only.add(e.where, reparse);
    const auto& stats = doc.last_stats();
    if (stats.incremental_parse) ++f.incremental_parses;
    if (stats.region_parse) ++f.region_parses;
    if (stats.sliced) ++f.sliced;
    else if (stats.kept_while_broken) ++f.kept_while_broken;
    else ++f.whole_file_because[stats.whole_file_because];
    f.units_reanalysed += stats.reanalysed;
    f.units_total += stats.units;
    if ((i + 1) % static_cast<size_t>(o.scratch_every) != 0) continue;
    t = pb::Clock::now();
    preflight::rules::check_source(doc.text(), {});
    f.from_scratch.push_back(pb::ms_since(t));
    t = pb::Clock::now();
    preflight::analysis::SyntaxTree::parse(preflight::analysis::parse_view(doc.text()));
    f.parse_from_scratch.push_back(pb::ms_since(t));
  }
  if (doc.text() != text) throw std::logic_error("the edit script did not undo itself");
  return f;
}

void report(const std::string& label, const std::string& text, const std::vector<Edit>& script, const ServerFigures& s,
            const InProcessFigures& p) {
  auto lines = std::count(text.begin(), text.end(), '\n');
  double scratch = pb::median(p.from_scratch), fresh = pb::median(s.fresh_opens);
  double p50 = pb::percentile(s.edits.all, 0.5), p99 = pb::percentile(s.edits.all, 0.99);
  std::printf("file: %s, %ld lines, %s, %zu findings\n", label.c_str(), static_cast<long>(lines),
              pb::format_bytes(static_cast<double>(text.size())).c_str(), p.findings);
  std::printf("edits: %zu one-character edits (each undone by the next), spread over the file\n\n", script.size());
  std::printf("from scratch (median of %zu runs, one after every %d edits):\n", p.from_scratch.size(),
              static_cast<int>(script.size() / std::max<size_t>(1, p.from_scratch.size())));
  std::printf("  rules::check_source in process             %8.2f ms\n", scratch);
  std::printf("  server didOpen -> publishDiagnostics       %8.2f ms (a fresh document, %zu runs)\n\n", fresh,
              s.fresh_opens.size());
  std::printf("server: didChange sent -> publishDiagnostics of that version received (debounce 0):\n");
  print_samples(s.edits);
  std::printf("  diagnostics: %zu on open; %zu of the edits changed their count\n\n", s.diagnostics_first,
              s.diagnostics_changed);
  std::printf("in process: DocumentAnalysis edit() + check() (no pipes, no JSON):\n");
  print_samples(p.edit_and_check);
  std::printf("  of which edit() (the text and ts_tree_edit; check() reparses the whole tree only when it\n"
              "  cannot slice):\n");
  print_distribution("all edits", p.reparse_only.all);
  std::printf("  against a fresh parse_view + SyntaxTree::parse of the text: median %.2f ms\n",
              pb::median(p.parse_from_scratch));
  std::printf("  %zu of %zu checks parsed only the edited region; %zu reparsed the whole tree incrementally\n",
              p.region_parses, script.size(), p.incremental_parses);
  std::printf("  %zu of %zu checks analysed a slice and reused the other units' results; %.1f of %.1f units\n"
              "  re-analysed per check on average\n",
              p.sliced, script.size(), static_cast<double>(p.units_reanalysed) / std::max<size_t>(1, script.size()),
              static_cast<double>(p.units_total) / std::max<size_t>(1, script.size()));
  if (p.kept_while_broken)
    std::printf("  %zu checks of text with syntax errors kept the last good findings (no analysis)\n",
                p.kept_while_broken);
  for (const auto& [why, n] : p.whole_file_because) std::printf("  the whole file %zu times: %s\n", n, why.c_str());
  std::printf("\n");
  std::printf("ratios (this run):\n");
  std::printf("  server edit p50 / check_source from scratch:    %.2f\n", p50 / scratch);
  std::printf("  server edit p99 / check_source from scratch:    %.2f\n", p99 / scratch);
  std::printf("  in-process edit p50 / check_source from scratch: %.2f\n",
              pb::percentile(p.edit_and_check.all, 0.5) / scratch);
  std::printf("target: server p99 < 10 ms (debounce excluded): %.2f ms, %s\n", p99, p99 < 10.0 ? "met" : "NOT met");
}

Options parse_args(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).starts_with("-"))
    throw std::invalid_argument("usage: preflight_lsp_bench PREFLIGHT_EXE [--edits N] [--scratch-every K] [--file PY]");
  Options o;
  o.exe = argv[1];
  for (int i = 2; i < argc; i += 2) {
    std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    if (flag == "--edits") o.edits = std::stoi(argv[i + 1]);
    else if (flag == "--scratch-every") o.scratch_every = std::stoi(argv[i + 1]);
    else if (flag == "--file") o.file = argv[i + 1];
    else throw std::invalid_argument("unknown option " + flag);
  }
  if (o.edits < 1) throw std::invalid_argument("--edits wants a positive count");
  if (o.scratch_every < 2 || o.scratch_every % 2 != 0 || o.scratch_every > o.edits)
    throw std::invalid_argument("--scratch-every wants an even count from 2 to --edits");
  return o;
}

int run(int argc, char** argv) {
  Options o = parse_args(argc, argv);
  pb::print_header("preflight_lsp_bench (edit latency)", argc, argv);
  bool generated = o.file.empty();
  std::string text = generated ? generated_file() : pb::read_file(o.file);
  std::vector<Edit> script = edit_script(text, generated, o.edits);
  InProcessFigures p = in_process(o, text, script);
  ServerFigures s = through_server(o, text, script);
  report(generated ? "generated training file" : o.file, text, script, s, p);
  std::printf("\nload average at the end: %s\n", pb::load_average().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // figures survive a failure further on
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "preflight_lsp_bench: %s\n", e.what());
    return 2;
  }
}
