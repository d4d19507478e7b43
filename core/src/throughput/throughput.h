// Throughput estimates: the result's "throughput" object (docs/memory-model.md, "Throughput").
#pragma once

#include "memory/memory.h"

namespace gpumem::detail {

// The model of the figures, as the result's "throughput.model" states it.
extern const char* const kThroughputModel;

// Tokens per second for a read scenario and its evaluation (details on): decode and prefill for
// inference, tokens per second and MFU for training, with the figures they rest on.
json throughput_json(const Scenario& s, const Figures& f);

}  // namespace gpumem::detail
