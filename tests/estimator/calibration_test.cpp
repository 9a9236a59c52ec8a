// The calibration table as a regression test: against every measured peak of estimator.md,
// mean absolute error at most 3 % and interval coverage at least 90 % (the targets),
// and the allocator factor equal to its least-squares fit on these runs (so the constant in
// terms.cpp cannot drift from what the data say). bench/estimator_calibration.cpp prints
// the table and the leave-one-out errors.
#include <gtest/gtest.h>

#include <cmath>

#include "estimator/calibration.h"
#include "estimator/compat.h"
#include "test_support.h"

namespace preflight::estimator {
namespace {

TEST(Calibration, ErrorAndCoverageAgainstMeasuredPeaks) {
  const Target t4 = testing::target("t4");
  double abs_error = 0;
  int inside = 0;
  for (const CalibrationPoint& p : calibration_points()) {
    const Estimate e = estimate(calibration_job(p, Attention::Eager), t4);
    ASSERT_TRUE(e.known) << p.model;
    EXPECT_TRUE(e.widenings.empty()) << p.model << ": every field of a calibration run is stated";
    abs_error += std::fabs(double(e.total) / double(p.measured_bytes) - 1.0);
    inside += p.measured_bytes >= e.low && p.measured_bytes <= e.high;
  }
  const double n = double(calibration_points().size());
  EXPECT_EQ(n, 8);
  EXPECT_LE(abs_error / n, 0.03);
  EXPECT_GE(inside / n, 0.90);
}

TEST(Calibration, ReferenceRecomputesToItsPublishedError) {
  const Target t4 = testing::target("t4");
  double abs_error = 0;
  for (const CalibrationPoint& p : calibration_points()) {
    JobSpec j = calibration_job(p, Attention::Eager);
    j.frozen_fraction = JobSpec{}.frozen_fraction;  // the reference knows nothing of BERT's pooler
    abs_error += std::fabs(double(compat_estimate(j, t4).total) / double(p.measured_bytes) - 1.0);
  }
  EXPECT_NEAR(abs_error / 8 * 100, 3.70, 0.01);  // estimator.md §9.5
}

TEST(Calibration, AllocatorFactorIsTheLeastSquaresFit) {
  const Target t4 = testing::target("t4");
  double xy = 0, xx = 0;
  for (const CalibrationPoint& p : calibration_points()) {
    const Estimate e = estimate(calibration_job(p, Attention::Eager), t4);
    const double x = double(e.peak()->allocated) / double(p.measured_bytes);
    const double y = 1.0 - double(e.term_bytes("CUDA_context")) / double(p.measured_bytes);
    xy += x * y;
    xx += x * x;
  }
  EXPECT_NEAR(allocator_factor(), xy / xx, 0.0005);
}

}  // namespace
}  // namespace preflight::estimator
