// Numbers read from the command line. CLI11 converts "nan", "inf" and "1e400" to doubles,
// NaN passes every range comparison, and its own messages either omit the accepted range
// ("Could not convert: --jobs = -1") or print DBL_MAX as one; these validators run on the
// text before any conversion and refuse what is not a finite number inside the option's
// range with one message: "--jobs: must be an integer from 0 to 1024 (...), not 'nan'".
// docs/numbers.md lists every number the program reads and its range.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace CLI {
class Validator;
}

namespace preflight::server {

// The whole text as an integer (an optional leading '+'), or nullopt: "nan", "1.5", "1e3",
// "0x10", a value past int64 and trailing text are not integers.
std::optional<int64_t> parse_integer(std::string_view text);

// The whole text as a finite double (an optional leading '+'), or nullopt.
std::optional<double> parse_finite(std::string_view text);

// An integer in [min, max]; `note` (e.g. "0: one per CPU") is added to the message.
CLI::Validator integer_in(int64_t min, int64_t max, std::string note = "");

// A finite number in [min, max], of `unit` ("seconds"); `note` is added to the message.
CLI::Validator number_in(double min, double max, std::string unit, std::string note = "");

}  // namespace preflight::server
