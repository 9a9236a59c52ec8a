// Fuzz target: the incremental edit path. The input is an edit script applied to a
// DocumentAnalysis seeded from a training-loop text; after each edit, doc.check() must equal
// check_source(doc.text()) in every field whenever the text parses (rules/incremental.h
// promises byte-for-byte), and follow the documented rule for text with syntax errors
// (tests/incremental_oracle.h computes both from check_source).
//
// Script format, read from the front (exhausted input reads as zeros):
//   byte  seed     which starting text (kSeeds)
//   then, per edit: u16 begin (little-endian), byte span, byte kind (% 4: delete, snippet
//   index byte, raw bytes as a length byte then the bytes, two snippet index bytes), byte
//   whole (% 16 == 15: replace the whole text). Raw bytes may be invalid UTF-8 or NUL.
// Positions are reduced modulo the current text size, so every script is valid.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check_result.h"
#include "rules/engine.h"
#include "rules/incremental.h"
#include "tests/incremental_oracle.h"

namespace {

using preflight::fuzz::ByteReader;

// Small texts that reach the rules (graph retention, eval, zero_grad, seeding, DataLoader)
// plus an empty document, so edits start from code that has findings to move and break.
const std::vector<std::string> kSeeds = {
    "",
    "import torch\n\n"
    "def train(model, loader, optimizer):\n"
    "    total = 0\n"
    "    for x, y in loader:\n"
    "        loss = model(x).sum()\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
    "        total += loss\n"
    "    return total\n",
    "import torch\nfrom torch.utils.data import DataLoader\n\n"
    "model = torch.nn.Linear(4, 2).cuda()\n"
    "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "loader = DataLoader(range(10), batch_size=2)\n"
    "for epoch in range(3):\n"
    "    for batch in loader:\n"
    "        out = model(batch.cuda())\n"
    "        loss = out.mean()  # noqa: TG001\n"
    "        loss.backward()\n"
    "        opt.step()\n"
    "        print(loss.item())\n",
    "import torch.nn as nn\n\nclass Net(nn.Module):\n"
    "    def forward(self, x):\n        return nn.functional.softmax(x, dim=-1)\n\n"
    "def evaluate(net, data):\n    net.eval()\n    return [net(d) for d in data]\n",
};

// Snippets an edit can insert: tokens that open and close constructs, multi-byte and line
// ending characters, suppressions, and statements the rules look at.
const std::vector<std::string> kSnippets = {
    "x", "é", "中", "😀", "\r\n", "\r", "\n", "    ", "\t", "'", "\"\"\"", "#", "# noqa\n", "(", ")", "[", "]",
    ":", ",", "\\", "def ", "class ", "\ndef helper(x):\n    return x\n", "loss.backward()\n", "total += loss\n",
    "import torch\n", "with torch.no_grad():\n    ", "optimizer.zero_grad()\n", "# preflight: ignore[TG001]\n",
    "# preflight: skip-file\n", "torch.manual_seed(0)\n", ".item()", ".detach()", "model.eval()\n",
    "model.train()\n", "for i in range(3):\n    ", "lambda: ", "async ", "await ", "yield ", "@torch.no_grad()\n"};

std::string replacement(ByteReader& in, uint8_t kind) {
  switch (kind % 4) {
    case 0: return "";                                           // deletion
    case 1: return kSnippets[in.byte() % kSnippets.size()];      // a snippet
    case 2: return in.bytes(in.byte() % 32);                     // raw bytes
    default: {
      std::string first = kSnippets[in.byte() % kSnippets.size()];
      return first + kSnippets[in.byte() % kSnippets.size()];
    }
  }
}

void require_as_documented(preflight::rules::DocumentAnalysis& doc, preflight::testing::IncrementalOracle& oracle,
                          std::size_t step) {
  using namespace preflight;
  std::optional<rules::CheckResult> incremental = doc.check({});
  fuzz::require(incremental.has_value(), "DocumentAnalysis::check returned nothing without cancellation");
  bool kept = false;
  std::string want = fuzz::render(oracle.check(doc.text(), {}, &kept));
  if (kept) testing::IncrementalOracle::place_syntax_errors_as(oracle.last_syntax_errors(), *incremental);
  std::string got = fuzz::render(*incremental);
  if (got != want)
    fuzz::fail("incremental result differs from the oracle (check_source) after edit " + std::to_string(step),
               "--- incremental ---\n" + got + "--- from scratch ---\n" + want + "--- text ---\n" + doc.text());
  fuzz::check_result_invariants(doc.text(), *incremental);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace preflight;
  ByteReader in(data, size);
  std::string expected = kSeeds[in.byte() % kSeeds.size()];
  rules::DocumentAnalysis doc(expected);
  testing::IncrementalOracle oracle;
  require_as_documented(doc, oracle, 0);
  // Bounded so one input stays fast: an analysis per edit is the expensive part.
  for (std::size_t step = 1; step <= 24 && !in.empty(); ++step) {
    std::size_t begin = in.u16() % (expected.size() + 1);
    std::size_t end = std::min(expected.size(), begin + in.byte() % 48);
    uint8_t kind = in.byte();
    std::string text = replacement(in, kind);
    if (in.byte() % 16 == 15) {  // not 0: exhausted input reads zeros
      expected = text;
      doc.replace_all(text);
    } else {
      expected.replace(begin, end - begin, text);
      doc.edit(begin, end, text);
    }
    fuzz::require(doc.text() == expected, "DocumentAnalysis::text() is not the edited text");
    require_as_documented(doc, oracle, step);
  }
  return 0;
}
