// sweep(): the peak at each value of one size, the capacity and the max-fit value; sweep_svg() draws it.
#include <gtest/gtest.h>

#include <gpumem/gpumem.h>

using nlohmann::json;

TEST(Sweep, SequenceLengthPointsAreEstimatesAndTheBoundaryIsMaxfits) {
    const json scenario = {{"model", "meta-llama/Llama-3.1-8B"}, {"training", {{"method", "lora"}}}};
    json r = gpumem::sweep({{"scenario", scenario}, {"field", "training.seq_len"}});
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    const json& points = r["points"];
    ASSERT_GE(points.size(), 10u);
    double last = 0;
    std::uint64_t previous = 0;
    for (const json& p : points) {
        EXPECT_GT(p["value"].get<std::uint64_t>(), previous);
        previous = p["value"];
        EXPECT_GE(p["device_total_bytes"].get<double>(), last);  // more tokens never take less memory
        last = p["device_total_bytes"];
        json at = scenario;
        at["training"]["seq_len"] = p["value"];
        EXPECT_EQ(gpumem::estimate(at)["per_gpu"]["device_total_bytes"], p["device_total_bytes"]);
    }
    json fit = gpumem::maxfit(scenario);
    EXPECT_EQ(r["max_fit"], fit["solvers"][1]["value"]);  // seq_len is maxfit's second training solver
    EXPECT_EQ(r["current"]["value"], 2048);
    // The default range ends on the power of two past twice the boundary.
    const std::uint64_t top = points.back()["value"];
    EXPECT_EQ(top & (top - 1), 0u);
    EXPECT_GE(top, 2 * r["max_fit"].get<std::uint64_t>());
}

TEST(Sweep, TheSvgHasTheCurveTheCapacityAndTheBoundary) {
    json r = gpumem::sweep({{"scenario", {{"model", "meta-llama/Llama-3.1-8B"}, {"mode", "inference"}}},
                            {"field", "inference.batch_size"}});
    ASSERT_TRUE(r["ok"].get<bool>());
    const std::string svg = gpumem::sweep_svg(r);
    EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
    EXPECT_NE(svg.find("class=\"capacity\""), std::string::npos);
    EXPECT_NE(svg.find("class=\"max-fit\""), std::string::npos);
    std::size_t circles = 0;
    for (std::size_t at = 0; (at = svg.find("class=\"point\"", at)) != std::string::npos; ++at) ++circles;
    EXPECT_EQ(circles, r["points"].size());
}

TEST(Sweep, AFieldOfTheOtherModeOrABadMaxIsAnError) {
    json training = {{"model", "meta-llama/Llama-3.1-8B"}};
    EXPECT_EQ(gpumem::sweep({{"scenario", training}, {"field", "inference.context_len"}})["errors"][0]["field"],
              "field");
    EXPECT_EQ(
        gpumem::sweep({{"scenario", training}, {"field", "training.seq_len"}, {"max", "big"}})["errors"][0]["field"],
        "max");
    EXPECT_EQ(gpumem::sweep({{"field", "training.seq_len"}})["errors"][0]["field"], "scenario");
}
