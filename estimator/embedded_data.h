// The estimator's data files (estimator/data/*.json), compiled into the binary by a build
// step (tools/embed_data.cpp), so nothing is read from disk at run time. Each function
// returns the file's exact bytes; the text lives for the whole program.
#pragma once

#include <string_view>

namespace preflight::estimator::embedded {

std::string_view architectures_json();
std::string_view gpus_json();
std::string_view instances_json();

}  // namespace preflight::estimator::embedded
