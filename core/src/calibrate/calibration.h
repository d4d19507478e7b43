#pragma once

namespace gpumem::detail {

// The version of the calibration file format calibrate() writes and apply_calibration() reads
// ("gpumem_calibration").
constexpr int kCalibrationFormat = 1;

}  // namespace gpumem::detail
