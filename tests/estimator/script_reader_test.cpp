// The script reader against annotated training scripts (tests/estimator/jobs/). A fixture's
// comments say what must be read:
//
//   for batch in loader:  # entry: training-loop          <- a job anchored on this line
//   loader = DataLoader(ds, batch_size=8)  # read: batch_size=8
//                                     <- every job has batch_size 8, read from this line
//   x = f(batch_size=int(os.environ["BS"]))  # unknown: batch_size
//                                     <- the field is unknown, blocked on this line
//   # check-default: gradient_checkpointing   <- nobody set it: still the default
//   # verdict: t4 FITS                        <- the band of every job on that GPU
//
// `# read[generation]: ...` restricts an entry to the jobs of one kind. Several entries on a
// line are separated by `;`. The file must have exactly the jobs its `entry:` lines name.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/line_index.h"
#include "estimator/catalog.h"
#include "estimator/hardware.h"
#include "estimator/report.h"
#include "estimator/script_reader.h"

namespace preflight::estimator {
namespace {

namespace fs = std::filesystem;

struct Expectation {
  enum class Kind { Entry, Read, Unknown, Default, Verdict } kind;
  uint32_t line = 0;  // 1-based
  std::string only_kind;  // read[<kind>]
  std::string field, value;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t\r") + 1);
  return s;
}

std::vector<Expectation> parse_expectations(const std::string& text) {
  std::vector<Expectation> out;
  std::istringstream lines(text);
  std::string line;
  for (uint32_t n = 1; std::getline(lines, line); ++n) {
    size_t hash = line.find("# ");
    if (hash == std::string::npos) continue;
    std::istringstream entries(line.substr(hash + 2));
    for (std::string entry; std::getline(entries, entry, ';');) {
      entry = trim(entry);
      size_t colon = entry.find(':');
      if (colon == std::string::npos) continue;
      std::string tag = entry.substr(0, colon), body = trim(entry.substr(colon + 1));
      Expectation e{Expectation::Kind::Read, n, "", "", ""};
      if (tag.rfind("read[", 0) == 0) e.only_kind = tag.substr(5, tag.size() - 6), tag = "read";
      if (tag == "entry") {
        e.kind = Expectation::Kind::Entry;
        e.value = body;
      } else if (tag == "read") {
        size_t eq = body.find('=');
        e.field = body.substr(0, eq);
        e.value = body.substr(eq + 1);
      } else if (tag == "unknown") {
        e.kind = Expectation::Kind::Unknown;
        e.field = body;
      } else if (tag == "verdict" || tag.rfind("verdict[", 0) == 0) {
        e.kind = Expectation::Kind::Verdict;
        if (tag != "verdict") e.only_kind = tag.substr(8, tag.size() - 9);
        size_t space = body.find(' ');
        e.field = body.substr(0, space);  // the GPU
        e.value = trim(body.substr(space + 1));  // the band
      } else if (tag == "check-default") {
        e.kind = Expectation::Kind::Default;
        e.field = body;
      } else {
        continue;
      }
      out.push_back(e);
    }
  }
  return out;
}

std::string kind_tag(EntryKind k) {
  switch (k) {
    case EntryKind::TrainingLoop: return "training-loop";
    case EntryKind::HfTrainer: return "hf-trainer";
    case EntryKind::LightningFit: return "lightning-fit";
    case EntryKind::Generation: return "generation";
  }
  return "?";
}

const FieldView* field_named(const std::vector<FieldView>& fields, const std::string& name) {
  for (const FieldView& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

// `# verdict: t4 FITS`: every job (of the kind, for `verdict[kind]`) gets that band on that GPU.
void check_verdict(const Expectation& e, const std::vector<ScriptJob>& jobs, const std::string& file) {
  std::string error;
  std::optional<Target> target = resolve_target(builtin_catalog(), e.field, std::nullopt, error);
  ASSERT_TRUE(target) << file << ":" << e.line << ": " << error;
  bool checked = false;
  for (const ScriptJob& j : jobs) {
    if (!e.only_kind.empty() && kind_tag(j.kind) != e.only_kind) continue;
    checked = true;
    const EstimateReport r = build_report(j.spec, target, /*compat_mode=*/false);
    EXPECT_EQ(band_name(report_band(r)), e.value)
        << file << ":" << e.line << " " << j.entry_point << " on " << e.field << ": " << code_lens_title(r);
  }
  EXPECT_TRUE(checked) << file << ":" << e.line << " names no job";
}

class JobFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(JobFixture, ReadsWhatTheCommentsSay) {
  const fs::path path = fs::path(PF_SOURCE_DIR) / "tests" / "estimator" / "jobs" / GetParam();
  const std::string text = read_file(path);
  const analysis::LineIndex lines(text);
  const std::vector<Expectation> expected = parse_expectations(text);
  const std::vector<ScriptJob> jobs = read_jobs(text);

  std::vector<std::string> want_entries, got_entries;
  for (const Expectation& e : expected)
    if (e.kind == Expectation::Kind::Entry) want_entries.push_back(std::to_string(e.line) + " " + e.value);
  for (const ScriptJob& j : jobs)
    got_entries.push_back(std::to_string(lines.to_line_column(j.anchor.begin, analysis::ColumnUnit::Utf8Bytes).line + 1) + " " + kind_tag(j.kind));
  EXPECT_EQ(got_entries, want_entries) << "entry points of " << GetParam();

  for (const Expectation& e : expected) {
    if (e.kind == Expectation::Kind::Entry) continue;
    if (e.kind == Expectation::Kind::Verdict) {
      check_verdict(e, jobs, GetParam());
      continue;
    }
    bool checked = false;
    for (const ScriptJob& j : jobs) {
      if (!e.only_kind.empty() && kind_tag(j.kind) != e.only_kind) continue;
      checked = true;
      const std::vector<FieldView> fields = job_fields(j.spec);
      const FieldView* f = field_named(fields, e.field);
      ASSERT_NE(f, nullptr) << "no field " << e.field;
      const std::string where = GetParam() + ":" + std::to_string(e.line) + " " + e.field + " of " + j.entry_point;
      if (e.kind == Expectation::Kind::Default) {
        EXPECT_EQ(f->source.kind, SourceKind::Default) << where << " (" << describe_source(f->source) << ")";
        continue;
      }
      const SourceKind want = e.kind == Expectation::Kind::Unknown ? SourceKind::Unknown : SourceKind::Script;
      EXPECT_EQ(f->source.kind, want) << where << " (" << describe_source(f->source) << ")";
      if (e.kind == Expectation::Kind::Read) {
        EXPECT_EQ(f->value, e.value) << where;
      } else {
        EXPECT_FALSE(f->source.blocking_expression.empty()) << where;
      }
      ASSERT_TRUE(f->source.range.has_value()) << where;
      EXPECT_EQ(lines.to_line_column(f->source.range->begin, analysis::ColumnUnit::Utf8Bytes).line + 1, e.line) << where << " read from the wrong line";
    }
    EXPECT_TRUE(checked) << GetParam() << ":" << e.line << " names no job";
  }
}

std::vector<std::string> job_fixtures() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(PF_SOURCE_DIR) / "tests" / "estimator" / "jobs"))
    if (e.path().extension() == ".py") out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param.substr(0, info.param.size() - 3);
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Scripts, JobFixture, ::testing::ValuesIn(job_fixtures()), test_name);

TEST(ScriptReader, UnparsableAndEmptyTextGiveNoJob) {
  EXPECT_TRUE(read_jobs("").empty());
  EXPECT_TRUE(read_jobs("def (:\n  ???\n").empty());
}

// Issue 26: a local module's count past int64 is unknown, naming the layer; before, the
// products wrapped (4e9 x 4e9 features read as "no layer with parameters", a 20-digit
// literal as some 4.8e18 parameters).
TEST(ScriptReader, ALocalModuleCountPastInt64IsUnknownNotWrapped) {
  const std::string loop =
      "model = Net().cuda()\nopt = torch.optim.AdamW(model.parameters())\n"
      "for x, y in loader:\n    model(x).sum().backward()\n    opt.step()\n    opt.zero_grad()\n";
  for (const char* layer : {"nn.Linear(4000000000, 4000000000)", "nn.Linear(99999999999999999999, 3)",
                            "nn.Embedding(2**40, 2**40)", "nn.Conv3d(65536, 65536, (65536, 65536, 65536))",
                            "nn.Sequential(*[nn.Linear(3037000499, 3037000499) for _ in range(4)])"}) {
    const std::string text = std::string("import torch\nimport torch.nn as nn\n\nclass Net(nn.Module):\n"
                                         "    def __init__(self):\n        super().__init__()\n        self.a = ") +
                             layer + "\n\n    def forward(self, x):\n        return self.a(x)\n\n" + loop;
    const auto jobs = read_jobs(text);
    ASSERT_EQ(jobs.size(), 1u) << layer;
    EXPECT_FALSE(jobs[0].spec.params.value) << layer << ": " << *jobs[0].spec.params.value;
    EXPECT_EQ(jobs[0].spec.params.source.kind, SourceKind::Unknown) << layer;
    EXPECT_NE(jobs[0].spec.params.source.blocking_expression, "no layer with parameters") << layer;
  }
}

TEST(ScriptReader, NamesDoNotMakeAnOptimizerOrALoader) {
  // A local class called AdamW and a local DataLoader are someone else's: nothing is read.
  const auto jobs = read_jobs(
      "class AdamW:\n    pass\n\nclass DataLoader:\n    def __init__(self, batch_size):\n        pass\n\n"
      "opt = AdamW()\nloader = DataLoader(batch_size=7)\nfor x in loader:\n    x.backward()\n");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].spec.optimizer.source.kind, SourceKind::Default);
  EXPECT_EQ(jobs[0].spec.batch_size.source.kind, SourceKind::Default);
}

TEST(ScriptReader, CheckpointingIsEnabledOnTheModelNotOnAnyReceiver) {
  const std::string loop = "\nfor b in loader:\n    model(**b).loss.backward()\n";
  const std::string head = "from transformers import AutoModelForCausalLM\n"
                           "model = AutoModelForCausalLM.from_pretrained(\"gpt2\")\n";
  auto on_model = read_jobs(head + "model.gradient_checkpointing_enable()\n" + loop);
  ASSERT_EQ(on_model.size(), 1u);
  EXPECT_TRUE(on_model[0].spec.gradient_checkpointing.value);
  auto on_other = read_jobs(head + "settings = load_settings()\nsettings.gradient_checkpointing_enable()\n" + loop);
  ASSERT_EQ(on_other.size(), 1u);
  EXPECT_EQ(on_other[0].spec.gradient_checkpointing.source.kind, SourceKind::Default);
}

// The batch size a script computes as `BATCH = <expr>`, as read (nullopt: not a known value).
std::optional<int64_t> batch_of(const std::string& expr) {
  const auto jobs = read_jobs("import torch\nfrom torch.utils.data import DataLoader\nBATCH = " + expr +
                              "\nmodel = build().cuda()\nloader = DataLoader(ds, batch_size=BATCH)\n"
                              "for x in loader:\n    model(x).sum().backward()\n");
  if (jobs.size() != 1 || jobs[0].spec.batch_size.source.kind != SourceKind::Script) return std::nullopt;
  return jobs[0].spec.batch_size.value;
}

TEST(ScriptReader, IntegerArithmeticFoldsAsPythonComputesIt) {
  EXPECT_EQ(batch_of("4 * 8"), 32);
  EXPECT_EQ(batch_of("2 ** 5"), 32);
  EXPECT_EQ(batch_of("100 - 36"), 64);
  EXPECT_EQ(batch_of("-65 // 2 * -1"), 33);  // floor division: -65 // 2 is -33 in Python
  EXPECT_EQ(batch_of("65 // 2"), 32);
  EXPECT_EQ(batch_of("1 ** 1000000000000000000"), 1);  // no loop of 10^18 steps
}

TEST(ScriptReader, ArithmeticPastInt64DoesNotFoldToAWrappedValue) {
  EXPECT_EQ(batch_of("9999999999 * 9999999999"), std::nullopt);
  EXPECT_EQ(batch_of("9223372036854775807 + 1"), std::nullopt);
  EXPECT_EQ(batch_of("-9223372036854775807 - 2"), std::nullopt);
  EXPECT_EQ(batch_of("3 ** 40 * 3 ** 40"), std::nullopt);
  EXPECT_EQ(batch_of("2 ** 63"), std::nullopt);
  EXPECT_EQ(batch_of("1 // 0"), std::nullopt);
}

}  // namespace
}  // namespace preflight::estimator

namespace preflight::estimator {
namespace {

// A literal path (TrainingArguments(deepspeed=...), an argparse default, deepspeed.initialize(
// config=...)) is named for the caller to read: the reader does no I/O.
TEST(ScriptReader, NamesTheDeepSpeedConfigFileTheScriptPasses) {
  for (const char* fixture : {"deepspeed_json_config.py", "deepspeed_argparse_default.py"}) {
    const std::vector<ScriptJob> jobs =
        read_jobs(read_file(fs::path(PF_SOURCE_DIR) / "tests" / "estimator" / "jobs" / fixture));
    ASSERT_EQ(jobs.size(), 1u) << fixture;
    ASSERT_TRUE(jobs[0].deepspeed_file) << fixture;
    EXPECT_EQ(jobs[0].deepspeed_file->path, "ds_zero3.json") << fixture;
  }
  const std::vector<ScriptJob> init = read_jobs(
      "import deepspeed\n"
      "engine, opt, _, _ = deepspeed.initialize(model=model, config=\"configs/z2.json\")\n"
      "for batch in loader:\n"
      "    engine.backward(engine(batch))\n");
  ASSERT_EQ(init.size(), 1u);
  ASSERT_TRUE(init[0].deepspeed_file);
  EXPECT_EQ(init[0].deepspeed_file->path, "configs/z2.json");
  EXPECT_EQ(init[0].deepspeed_file->detail, "config=\"configs/z2.json\"");
}

}  // namespace
}  // namespace preflight::estimator
