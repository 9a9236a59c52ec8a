// Reading the job from a training script (estimator.md §10.1): which runs the file starts
// (its entry points) and, for each, the JobSpec fields the code states — every one with the
// byte range it was read from, or Unknown with the expression that could not be folded.
//
// Read from the same module model the rules use: a call is `from_pretrained`, a DataLoader
// or an optimizer because of what its callee is bound to (imports, assignments), never
// because of a variable's name. Pure: text in, jobs out.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/findings.h"
#include "analysis/module_model.h"
#include "estimator/job.h"

namespace preflight::estimator {

enum class EntryKind {
  TrainingLoop,     // a for / while loop whose body runs `.backward()`
  HfTrainer,        // `Trainer(...).train()` (transformers, trl)
  LightningFit,     // `Trainer(...).fit(...)` (Lightning)
  Generation,       // `.generate(...)` on a model, outside every training entry point
};
std::string_view entry_kind_name(EntryKind k);

/// A DeepSpeed config the script names by a literal path (`deepspeed="ds_config.json"`,
/// `deepspeed.initialize(config="...")`, an argparse `--deepspeed` default). The reader does
/// no I/O: the caller reads the file (relative to the script's directory) and applies it
/// with `apply_deepspeed_config` (estimator/deepspeed.h). A dict literal is applied here.
struct DeepSpeedReference {
  std::string path;
  analysis::ByteRange range;  // the string literal the path came from
  std::string detail;         // `deepspeed="ds_config.json"` as the script spells it
};

struct ScriptJob {
  EntryKind kind = EntryKind::TrainingLoop;
  std::string entry_point;     // "the loop in `train()`", "`trainer.train()`"
  analysis::ByteRange anchor;  // the loop header / the call: where the code lens goes
  JobSpec spec;                // script values; the rest left at their documented defaults
  std::optional<DeepSpeedReference> deepspeed_file;  // training jobs only
};

// Every entry point of the file, in source order, each with the fields read for it. A file
// with no entry point gives an empty list.
std::vector<ScriptJob> read_jobs(std::string_view text);
// The same over the module model the caller already has (the rule engine's).
std::vector<ScriptJob> read_jobs(const analysis::ModuleModel& model);

}  // namespace preflight::estimator
