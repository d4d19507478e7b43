// What the estimate tests share: an estimate that must succeed, and the model most of them use.
#pragma once

#include <gtest/gtest.h>

#include <gpumem/gpumem.h>

namespace gpumem::test {

// estimate() of `scenario`, failing the test (with the result) when it is not ok.
inline nlohmann::json run(const nlohmann::json& scenario) {
    nlohmann::json r = gpumem::estimate(scenario);
    EXPECT_TRUE(r["ok"].get<bool>()) << r.dump(2);
    return r;
}

// meta-llama/Llama-3.1-8B as a scenario's "model".
inline const nlohmann::json kLlama8B = {{"preset", "meta-llama/Llama-3.1-8B"}};

}  // namespace gpumem::test
