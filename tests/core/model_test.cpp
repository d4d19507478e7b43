// Parameter counts from config.json: every bundled preset with a published exact total must match it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gpumem/gpumem.h>

#include "model/model.h"

using nlohmann::json;

// Each record says how its total is known (count_status): "trusted", a published exact figure
// (safetensors total, model card, paper) that the count must equal; or "derived-only", our own
// derivation where no exact figure is published, which the count must keep (a regression check, not
// a check against a publication).
namespace {

std::size_t CountPresets(const std::string& status) {
    std::size_t n = 0;
    for (const json& p : gpumem::list_presets()) {
        auto record = gpumem::find_preset(p["id"].get<std::string>());
        EXPECT_TRUE(record) << p["id"];
        if (!record) continue;
        const std::string s = record->value("count_status", "");
        EXPECT_TRUE(s == "trusted" || s == "derived-only") << p["id"] << ": count_status \"" << s << "\"";
        if (s != status) continue;
        ++n;
        gpumem::ModelRead read = gpumem::read_hf_config((*record)["config"]);
        EXPECT_TRUE(read.model) << p["id"];
        if (!read.model) continue;
        EXPECT_TRUE(read.warnings.empty()) << p["id"] << ": a bundled family must not fall back to the generic reading";
        EXPECT_EQ(gpumem::count_parameters(*read.model).total, (*record)["total_params"].get<std::uint64_t>())
            << p["id"];
    }
    return n;
}

}  // namespace

TEST(Presets, EveryTrustedModelCountsExactlyItsPublishedTotal) {
    EXPECT_EQ(gpumem::list_presets().size(), 168u);  // presets/models/ holds 168 records; losing one fails here
    EXPECT_GE(CountPresets("trusted"), 155u);        // 155 records have a published exact total
}

// The catalogue embeds each model's file without its notes for people (provenance, checkpoint,
// count notes: cmake/embed_presets.cmake keeps them apart, so the page links none of them); find_preset
// puts them back, so the record it gives is the file in presets/models/, key for key.
TEST(Presets, FindPresetGivesEachFileWhole) {
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(std::string(GPUMEM_SOURCE_DIR) + "/presets/models")) {
        std::ifstream in(entry.path());
        std::stringstream text;
        text << in.rdbuf();
        const json file = json::parse(text.str());
        const std::string id = file["model_id"].get<std::string>();
        SCOPED_TRACE(id);
        const std::optional<json> record = gpumem::find_preset(id);
        ASSERT_TRUE(record);
        EXPECT_EQ(*record, file);
        EXPECT_EQ(gpumem::preset_id(id), id);
        ++files;
    }
    EXPECT_EQ(files, 168u);
    EXPECT_EQ(gpumem::preset_id("llama3-8b"), "meta-llama/Meta-Llama-3-8B");
    EXPECT_EQ(gpumem::preset_id("https://huggingface.co/Qwen/Qwen3-8B"), "Qwen/Qwen3-8B");
    EXPECT_EQ(gpumem::preset_id("no-such/model"), std::nullopt);
}

TEST(Presets, EveryDerivedOnlyModelKeepsItsRecordedDerivation) {
    EXPECT_LE(CountPresets("derived-only"), 13u);  // 13 today; a new one needs its published figure looked for
}

// A preset's other published figures (alt_param_counts) each differ from its total for a stated
// reason; every one is recomputed here from the counted model, so none is a bare number.
TEST(Presets, EveryOtherPublishedFigureIsExplained) {
    std::size_t checked = 0;
    for (const json& p : gpumem::list_presets()) {
        json record = *gpumem::find_preset(p["id"].get<std::string>());
        if (!record.contains("alt_param_counts")) continue;
        gpumem::ModelSpec m = *gpumem::read_hf_config(record["config"]).model;
        gpumem::ParamCount c = gpumem::count_parameters(m);
        const std::uint64_t h = m.hidden_size, V = m.vocab_size;
        for (const auto& [key, value] : record["alt_param_counts"].items()) {
            std::uint64_t alt = value.get<std::uint64_t>();
            SCOPED_TRACE(p["id"].get<std::string>() + " " + key);
            ++checked;
            if (key == "hf_safetensors_total_incl_materialised_lm_head" ||
                key == "storage_count_incl_duplicate_lm_head") {
                // The checkpoint stores the tied lm_head as its own vocab x h tensor.
                EXPECT_EQ(alt, c.total + V * h);
            } else if (key == "hf_safetensors_total_incl_inv_freq_buffers") {
                // Llama-2 checkpoints keep rotary_emb.inv_freq (head_dim / 2) in every layer.
                EXPECT_EQ(alt, c.total + m.num_layers * m.head_dim / 2);
            } else if (key == "safetensors_elements_incl_attn_bias_buffers_derived") {
                // GPT-2 checkpoints keep the causal-mask buffer attn.bias (n_ctx x n_ctx) in every layer.
                EXPECT_EQ(alt, c.total + m.num_layers * m.max_position_embeddings * m.max_position_embeddings);
            } else if (key == "text_only_derived") {
                EXPECT_EQ(alt, c.language_model);
            } else if (key == "vision_tower_derived") {
                EXPECT_EQ(alt, c.vision);
            } else if (key == "projector_derived") {
                EXPECT_EQ(alt, c.projector);
            } else if (key == "mtp_unique") {
                EXPECT_EQ(alt, c.mtp);
            } else if (key == "main_plus_mtp_unique") {
                EXPECT_EQ(alt, c.total + c.mtp);
            } else if (key == "main_plus_mtp_with_dup_embed_head") {
                // The MTP layer also stores its own copies of embed_tokens and shared_head.head.
                EXPECT_EQ(alt, c.total + c.mtp + 2 * V * h);
            } else if (key == "fp8_scale_elements" || key == "hf_safetensors_total_incl_mtp_and_fp8_scales") {
                // One weight_scale_inv per 128 x 128 block of every FP8 linear (attention, MLP, experts,
                // shared experts; not the embeddings, router, norms, lm_head or the MTP eh_proj), in the
                // 61 layers and once more for the MTP layer's attention and MoE block.
                ASSERT_TRUE(m.quantization);
                ASSERT_EQ(m.quantization->weight_block_size.size(), 2u);
                const std::uint64_t br = m.quantization->weight_block_size[0],
                                    bc = m.quantization->weight_block_size[1];
                std::uint64_t scales = 0;
                for (const gpumem::detail::Tensor& t : gpumem::detail::list_tensors(m)) {
                    bool linear =
                        t.is_matrix() && t.in_layers() && t.name.rfind("router", 0) != 0 &&
                        (t.group == gpumem::detail::Group::Attention || t.group == gpumem::detail::Group::Mlp);
                    if (!linear) continue;
                    std::uint64_t blocks = (t.rows + br - 1) / br * ((t.cols + bc - 1) / bc);
                    std::uint64_t copies = gpumem::detail::layer_count(m, t.layers) +
                                           (t.layers == gpumem::detail::Layers::Dense ? 0 : m.mtp_layers);
                    scales += blocks * copies;
                }
                std::uint64_t with_copies = c.total + c.mtp + 2 * V * h;
                EXPECT_EQ(alt, key == "fp8_scale_elements" ? scales : with_copies + scales);
            } else if (key == "hf_checkpoint_bert_for_pretraining") {
                // The Hub checkpoint holds BertForPreTraining: the counted BertForMaskedLM plus the
                // pooler (h x h + h) and the next-sentence head (2h + 2).
                EXPECT_EQ(alt, c.total + h * h + h + 2 * h + 2);
            } else if (key == "bert_model_with_pooler") {
                // BertModel: the pooler (h x h + h) instead of the MLM head (transform h x h + h, its
                // LayerNorm 2h, decoder bias V; the decoder weight is the tied embedding).
                EXPECT_EQ(alt, c.total - (h * h + h + 2 * h + V) + (h * h + h));
            } else if (key == "active_params_top2") {
                // A third-party "active" figure (Mixtral); ours is total less the 6 idle experts of 8,
                // 12,879,925,248: theirs differs by 8,155,136 for a reason the table does not give.
                EXPECT_EQ(alt - c.active, 8155136u);
            } else if (const std::size_t at = key.find("_vocab"); at != std::string::npos) {
                // A sibling with another vocabulary (granite_3.3_8b_vocab49159,
                // instruct_v0.1_vocab32768_derived): the embeddings, and an untied lm_head, change by
                // (N - V) rows of h.
                const std::uint64_t n = std::stoull(key.substr(at + 6));
                ASSERT_GE(n, V);
                EXPECT_EQ(alt, c.total + (n - V) * h * (c.lm_head == 0 ? 1 : 2));
            } else {
                ADD_FAILURE() << "alt_param_counts key without an explanation in this test";
            }
        }
    }
    EXPECT_GE(checked, 15u);
}

TEST(Model, Llama31_8BCountsByComponent) {
    auto record = gpumem::find_preset("meta-llama/Llama-3.1-8B");
    ASSERT_TRUE(record);
    gpumem::ParamCount c = gpumem::count_parameters(*gpumem::read_hf_config((*record)["config"]).model);
    // embed 128256 x 4096 = 525,336,576; untied lm_head the same.
    EXPECT_EQ(c.embedding, 525336576u);
    EXPECT_EQ(c.lm_head, 525336576u);
    // per layer: q 4096² + k,v 2 x 1024 x 4096 + o 4096² = 41,943,040 attention;
    // 3 x 4096 x 14336 = 176,160,768 MLP; 2 x 4096 norms = 8,192 -> 218,112,000.
    EXPECT_EQ(c.per_layer, 218112000u);
    // 32 layers + embed + head + final norm 4096 = 8,030,261,248 (meta-llama's published total).
    EXPECT_EQ(c.total, 8030261248u);
}

TEST(Model, TiedEmbeddingsCountedOnce) {
    auto record = gpumem::find_preset("Qwen/Qwen2.5-0.5B");
    ASSERT_TRUE(record);
    gpumem::ParamCount c = gpumem::count_parameters(*gpumem::read_hf_config((*record)["config"]).model);
    EXPECT_EQ(c.lm_head, 0u);
    EXPECT_EQ(c.total, 494032768u);  // Qwen's published 0.49B (494,032,768)
}

// list_tensors builds the list phase by phase in module order: embeddings, attention (with qwen3's
// per-head q/k norms), MLP, the layer norms, the final norm, the head. Regrouping its phases must
// keep this order.
TEST(Model, TensorsComeInModuleOrder) {
    json c = {{"model_type", "qwen3"},    {"hidden_size", 64},        {"num_hidden_layers", 2},
              {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 16},
              {"intermediate_size", 128}, {"vocab_size", 100},        {"tie_word_embeddings", false}};
    std::vector<std::string> names;
    for (const gpumem::detail::Tensor& t : gpumem::detail::list_tensors(*gpumem::read_hf_config(c).model))
        names.push_back(t.name);
    EXPECT_EQ(names, (std::vector<std::string>{"embed_tokens", "q_proj", "k_proj", "v_proj", "o_proj", "q_norm",
                                               "k_norm", "gate_proj", "up_proj", "down_proj", "input_layernorm",
                                               "post_attention_layernorm", "final_norm", "lm_head"}));
}

TEST(Model, AliasesAndTwinsResolve) {
    EXPECT_EQ((*gpumem::find_preset("llama3-8b"))["model_id"], "meta-llama/Meta-Llama-3-8B");
    EXPECT_EQ((*gpumem::find_preset("META-LLAMA/llama-3.1-8b-instruct"))["model_id"], "meta-llama/Llama-3.1-8B");
    EXPECT_EQ((*gpumem::find_preset("https://huggingface.co/Qwen/Qwen3-8B"))["model_id"], "Qwen/Qwen3-8B");
    // Ids the validation cases use, answered by twins of the bundled record.
    EXPECT_EQ((*gpumem::find_preset("TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T"))["model_id"],
              "TinyLlama/TinyLlama-1.1B-Chat-v1.0");
    EXPECT_EQ((*gpumem::find_preset("google/gemma-2-2b"))["model_id"], "google/gemma-2-2b-it");
    EXPECT_EQ((*gpumem::find_preset("meta-llama/llama-3.2-3b-instruct"))["model_id"], "meta-llama/Llama-3.2-3B");
    // Base models answered by the bundled -Instruct file, and a pre-rename Hub id.
    EXPECT_EQ((*gpumem::find_preset("HuggingFaceTB/SmolLM2-1.7B"))["model_id"], "HuggingFaceTB/SmolLM2-1.7B-Instruct");
    EXPECT_EQ((*gpumem::find_preset("mosaicml/mpt-7b"))["model_id"], "mosaicml/mpt-7b-instruct");
    EXPECT_EQ((*gpumem::find_preset("roberta-base"))["model_id"], "FacebookAI/roberta-base");
    EXPECT_FALSE(gpumem::find_preset("no-such/model"));
}

TEST(Model, UnknownFamilyFallsBackWithAWarning) {
    json c = {{"model_type", "brand_new"}, {"hidden_size", 1024}, {"num_hidden_layers", 2},
              {"num_attention_heads", 8},  {"vocab_size", 1000},  {"intermediate_size", 4096}};
    gpumem::ModelRead read = gpumem::read_hf_config(c);
    ASSERT_TRUE(read.model);
    ASSERT_EQ(read.warnings.size(), 1u);
    EXPECT_NE(read.warnings[0].find("brand_new"), std::string::npos);
    // 2 x (4 x 1024² + 3 x 1024 x 4096 + 2 x 1024) + 2 x 1000 x 1024 + 1024
    EXPECT_EQ(gpumem::count_parameters(*read.model).total,
              2u * (4u * 1048576u + 3u * 4194304u + 2048u) + 2048000u + 1024u);
}

// A vision tower's sizes are bounded like the language model's: a depth of 10^9 (a typo) is refused
// by name instead of being counted layer by layer.
TEST(Model, AbsurdVisionTowerIsRefusedByName) {
    json c = *gpumem::find_preset("Qwen/Qwen2-VL-7B-Instruct");
    c = c["config"];
    c["vision_config"]["depth"] = 1000000000;
    gpumem::ModelRead read = gpumem::read_hf_config(c, "model.hf_config");
    EXPECT_FALSE(read.model);
    ASSERT_FALSE(read.issues.empty());
    EXPECT_EQ(read.issues[0].field, "model.hf_config.vision_config.depth");
    EXPECT_NE(read.issues[0].problem.find("from 0 to 100000"), std::string::npos);
    c["vision_config"]["depth"] = 32;
    EXPECT_TRUE(gpumem::read_hf_config(c).model) << "the real depth reads";
}

TEST(Model, MissingFieldIsNamed) {
    json c = {{"model_type", "llama"}, {"hidden_size", 1024}, {"num_attention_heads", 8}, {"vocab_size", 1000}};
    gpumem::ModelRead read = gpumem::read_hf_config(c, "model.hf_config");
    EXPECT_FALSE(read.model);
    ASSERT_FALSE(read.issues.empty());
    EXPECT_EQ(read.issues[0].field, "model.hf_config.num_hidden_layers");
}

TEST(Model, HeadsMustDivideHidden) {
    json c = {{"model_type", "llama"},
              {"hidden_size", 1000},
              {"num_hidden_layers", 2},
              {"num_attention_heads", 7},
              {"vocab_size", 1000}};
    gpumem::ModelRead read = gpumem::read_hf_config(c);
    EXPECT_FALSE(read.model);
}

TEST(Model, SizeOnlyShapeGuessStaysInTheLayerRange) {
    auto layers = [](const json& model) {
        json r = gpumem::estimate({{"model", model}});
        EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
        for (const json& d : r["defaults_applied"])
            if (d.get<std::string>().rfind("model.num_layers = ", 0) == 0)
                return std::stoull(d.get<std::string>().substr(19));
        return 0ull;
    };
    // 1M parameters: the smallest guessed width, 256, already puts 2 x 32000 x 256 = 16.4M in the
    // embeddings, so the rest is negative; one layer, not a negative count cast to 2^64 - 1.
    EXPECT_EQ(layers({{"num_parameters", 1000000}}), 1u);
    // 1e15 at hidden_size 1 (12 parameters a layer) would be 8e13 layers: the reader's maximum.
    EXPECT_EQ(layers({{"num_parameters", 1e15}, {"hidden_size", 1}}), 100000u);
}

TEST(Model, MixtureOfExpertsTotalAndActive) {
    auto count = [](const char* id) {
        auto record = gpumem::find_preset(id);
        EXPECT_TRUE(record) << id;
        return gpumem::count_parameters(*gpumem::read_hf_config((*record)["config"]).model);
    };
    // Mixtral 8x7B: per layer attention 41,943,040 + 8 experts x 3 x 4096 x 14336 + router 8 x 4096 + norms 8192
    // = 1,451,270,144; x 32 + embed and head 2 x 131,072,000 + final norm 4096.
    gpumem::ParamCount mixtral = count("mistralai/Mixtral-8x7B-v0.1");
    EXPECT_EQ(mixtral.total, 32ull * 1451270144 + 262144000 + 4096);
    // Active: 2 of 8 experts -> less 6 x 3 x 4096 x 14336 x 32 layers = 12,879,925,248 ("12.9B").
    EXPECT_EQ(mixtral.active, mixtral.total - 6ull * 3 * 4096 * 14336 * 32);
    // gpt-oss-20b: expert biases, router bias and per-head attention sinks all count.
    EXPECT_EQ(count("openai/gpt-oss-20b").total, 20914757184ull);
    // Qwen3-30B-A3B: 128 experts of width 768, top-8; OpenAI-style "3.3B active".
    gpumem::ParamCount qwen = count("Qwen/Qwen3-30B-A3B");
    EXPECT_EQ(qwen.total, 30532122624ull);
    EXPECT_EQ(qwen.active, qwen.total - 120ull * 3 * 2048 * 768 * 48);
}

TEST(Model, ExpertParallelismSplitsOnlyTheExperts) {
    json ep1 = gpumem::estimate(
        {{"model", "mixtral-8x7b"}, {"engine", {{"type", "megatron"}}}, {"parallelism", {{"data_parallel_size", 8}}}});
    json ep8 = gpumem::estimate({{"model", "mixtral-8x7b"},
                                 {"engine", {{"type", "megatron"}}},
                                 {"parallelism", {{"data_parallel_size", 8}, {"expert_parallel_size", 8}}}});
    ASSERT_TRUE(ep8["ok"].get<bool>()) << ep8.dump();
    double experts = 32.0 * 8 * 3 * 4096 * 14336;
    double w1 = ep1["per_gpu"]["components"]["weights"].get<double>(),
           w8 = ep8["per_gpu"]["components"]["weights"].get<double>();
    EXPECT_NEAR(w1 - w8, experts * 7 / 8 * 2, 2);  // bf16: 7/8 of the expert weights leave each GPU
    json bad = gpumem::estimate(
        {{"model", "mixtral-8x7b"}, {"parallelism", {{"data_parallel_size", 3}, {"expert_parallel_size", 3}}}});
    EXPECT_EQ(bad["errors"][0]["field"], "parallelism.expert_parallel_size");  // 3 does not divide 8 experts
    json no_dp = gpumem::estimate({{"model", "mixtral-8x7b"}, {"parallelism", {{"expert_parallel_size", 2}}}});
    EXPECT_EQ(no_dp["errors"][0]["field"], "parallelism.expert_parallel_size");  // needs dp x cp divisible by 2
}

// ---- Families beyond the llama-style decoder (counts per transformers' module layout) ----------

namespace {

gpumem::ParamCount count_config(const json& config, std::vector<std::string>* warnings = nullptr) {
    gpumem::ModelRead read = gpumem::read_hf_config(config);
    EXPECT_TRUE(read.model) << (read.issues.empty() ? "" : read.issues[0].message());
    if (warnings) *warnings = read.warnings;
    else EXPECT_TRUE(read.warnings.empty()) << read.warnings[0];
    return read.model ? gpumem::count_parameters(*read.model) : gpumem::ParamCount{};
}

gpumem::ParamCount count_preset(const char* id) {
    auto record = gpumem::find_preset(id);
    EXPECT_TRUE(record) << id;
    return record ? count_config((*record)["config"]) : gpumem::ParamCount{};
}

}  // namespace

TEST(Families, BloomEmbeddingNormAndFusedBiasedQkv) {
    // bloom-560m: per layer qkv 3 x 1024² + 3072 and dense 1024² + 1024 = 4,198,400; MLP
    // 2 x 4 x 1024² + 4096 + 1024 = 8,393,728; 2 LayerNorms 4,096 -> 12,596,224 x 24 = 302,309,376;
    // word_embeddings 250880 x 1024 = 256,901,120 + word_embeddings_layernorm 2,048 + ln_f 2,048;
    // tied head. = 559,214,592 (the published total).
    gpumem::ParamCount c = count_preset("bigscience/bloom-560m");
    EXPECT_EQ(c.per_layer, 12596224u);
    EXPECT_EQ(c.lm_head, 0u);
    EXPECT_EQ(c.total, 559214592u);
    // The BigScience files' hand-written n_embed wins over hidden_size, as in BloomConfig.
    json legacy = (*gpumem::find_preset("bigscience/bloom-560m"))["config"];
    legacy.erase("hidden_size");
    legacy["n_embed"] = 1024;
    EXPECT_EQ(count_config(legacy).total, 559214592u);
    legacy["hidden_size"] = 64;  // BloomConfig's default, overridden by n_embed
    EXPECT_EQ(count_config(legacy).total, 559214592u);
}

TEST(Families, GptBigCodeMultiQuery) {
    // StarCoder's shape (bigcode/starcoder, octocoder: n_embd 6144, 40 layers, 48 heads, n_inner 24576,
    // vocab 49152, 8192 positions). Per layer ln_1 / ln_2 2 x 12,288 + c_attn (6144 + 2 x 128) x 6144 +
    // 6,400 (multi-query: one k/v head) + c_proj 6144² + 6,144 + c_fc 24576 x 6144 + 24,576 + c_proj
    // 6144 x 24576 + 6,144 = 379,128,064; x 40 + wte 49152 x 6144 + wpe 8192 x 6144 + ln_f 12,288, lm_head
    // tied = 15,517,456,384, the size a public model table gives for MultiPL-T StarCoder-15b fine-tunes.
    json c = {{"model_type", "gpt_bigcode"},
              {"architectures", {"GPTBigCodeForCausalLM"}},
              {"n_embd", 6144},
              {"n_head", 48},
              {"n_layer", 40},
              {"n_inner", 24576},
              {"n_positions", 8192},
              {"vocab_size", 49152},
              {"multi_query", true}};
    gpumem::ParamCount p = count_config(c);
    EXPECT_EQ(p.per_layer, 379128064u);
    EXPECT_EQ(p.total, 15517456384ull);
    // starcoderbase-1b's shape (2048 wide, 24 layers, 16 heads, n_inner 8192): 1,137,207,296 in the same table.
    c.update({{"n_embd", 2048}, {"n_head", 16}, {"n_layer", 24}, {"n_inner", 8192}});
    EXPECT_EQ(count_config(c).total, 1137207296ull);
    // Without multi_query c_attn is 3h x h: each layer adds 2 x (2048 - 128) x 2048 + 2 x (2048 - 128).
    c["multi_query"] = false;
    EXPECT_EQ(count_config(c).total, 1137207296ull + 24 * (2 * 1920ull * 2048 + 2 * 1920));
}

TEST(Families, FalconMultiQueryParallelAttention) {
    // falcon-7b: 71 heads x 64, multi_query -> query_key_value (4544 + 2 x 64) x 4544 = 21,229,568;
    // dense 4544² = 20,647,936; MLP 2 x 4 x 4544² = 165,183,488; one input_layernorm 9,088 (parallel
    // block) -> 207,070,080 x 32 = 6,626,242,560; embeddings 65024 x 4544 = 295,469,056 (tied) + ln_f
    // 9,088 = 6,921,720,704.
    gpumem::ParamCount c = count_preset("tiiuae/falcon-7b");
    EXPECT_EQ(c.per_layer, 207070080u);
    EXPECT_EQ(c.total, 6921720704ull);
    // new_decoder_architecture (falcon-40b's shape): num_kv_heads groups and ln_attn + ln_mlp.
    json f40 = (*gpumem::find_preset("tiiuae/falcon-7b"))["config"];
    f40.erase("n_head");
    f40.erase("n_layer");
    f40.update({{"hidden_size", 8192},
                {"num_attention_heads", 128},
                {"num_kv_heads", 8},
                {"num_hidden_layers", 60},
                {"new_decoder_architecture", true}});
    // per layer: qkv (128 + 16) x 64 x 8192 = 75,497,472; dense 67,108,864; MLP 536,870,912;
    // 2 LayerNorms 32,768 -> 679,510,016 x 60 + 65024 x 8192 + 16,384 = 41,303,293,952.
    EXPECT_EQ(count_config(f40).total, 41303293952ull);
}

TEST(Families, GptJParallelBlockAndBiasedHead) {
    // EleutherAI/gpt-j-6b (n_embd 4096, n_layer 28, n_head 16, n_inner null -> 16384, vocab 50400,
    // rotary_dim 64): per layer q/k/v/out 4 x 4096² = 67,108,864; fc_in/fc_out 2 x 4096 x 16384 +
    // 16384 + 4096 = 134,238,208; ln_1 8,192 -> 201,355,264 x 28 = 5,637,947,392; wte 206,438,400;
    // lm_head 206,438,400 + bias 50,400; ln_f 8,192 = 6,050,882,784 (published: "# of params: 6050882784").
    json c = {{"model_type", "gptj"}, {"architectures", {"GPTJForCausalLM"}},
              {"n_embd", 4096},       {"n_layer", 28},
              {"n_head", 16},         {"n_inner", nullptr},
              {"n_positions", 2048},  {"rotary_dim", 64},
              {"vocab_size", 50400},  {"tie_word_embeddings", false}};
    gpumem::ParamCount p = count_config(c);
    EXPECT_EQ(p.per_layer, 201355264u);
    EXPECT_EQ(p.total, 6050882784ull);
}

TEST(Families, OptLearnedPositionsWithOffsetAndProjection) {
    // facebook/opt-125m: embed 50272 x 768 = 38,608,896; positions (2048 + 2) x 768 = 1,574,400; per
    // layer q/k/v/out with bias 4 x 590,592 = 2,362,368, fc1/fc2 4,722,432, 2 LayerNorms 3,072 ->
    // 7,087,872 x 12; final_layer_norm 1,536; tied head. = 125,239,296 (published).
    json c = {{"model_type", "opt"},        {"architectures", {"OPTForCausalLM"}},
              {"hidden_size", 768},         {"num_hidden_layers", 12},
              {"num_attention_heads", 12},  {"ffn_dim", 3072},
              {"vocab_size", 50272},        {"max_position_embeddings", 2048},
              {"word_embed_proj_dim", 768}, {"do_layer_norm_before", true},
              {"enable_bias", true}};
    EXPECT_EQ(count_config(c).total, 125239296u);
    // opt-350m's shape: word_embed_proj_dim 512 -> embed 50272 x 512, project_in 1024 x 512 and
    // project_out 512 x 1024, tied head of width 512; post-norm, so no final_layer_norm.
    json c350 = c;
    c350.update({{"hidden_size", 1024},
                 {"num_hidden_layers", 24},
                 {"num_attention_heads", 16},
                 {"ffn_dim", 4096},
                 {"word_embed_proj_dim", 512},
                 {"do_layer_norm_before", false}});
    std::uint64_t layer = 4 * (1024ull * 1024 + 1024) + 2 * 1024ull * 4096 + 4096 + 1024 + 4 * 1024;
    EXPECT_EQ(count_config(c350).total, 24 * layer + 50272ull * 512 + 2050ull * 1024 + 2 * 512ull * 1024);
}

TEST(Families, MptWeightOnlyNormsAndNoBiases) {
    // DERIVED ONLY (no exact published total found; MosaicML says "6.7B"): mpt-7b's shape, d_model
    // 4096, n_heads 32, n_layers 32, vocab 50432. MptBlock: Wqkv 3 x 4096², out_proj 4096², up/down
    // 2 x 4 x 4096², norm_1/norm_2 weights 8,192 -> 201,334,784 x 32 + wte 206,569,472 (tied) +
    // norm_f 4,096 = 6,649,286,656.
    json c = {{"model_type", "mpt"}, {"architectures", {"MPTForCausalLM"}},
              {"d_model", 4096},     {"n_heads", 32},
              {"n_layers", 32},      {"expansion_ratio", 4},
              {"max_seq_len", 2048}, {"vocab_size", 50432}};
    EXPECT_EQ(count_config(c).total, 6649286656ull);
}

TEST(Families, CohereParallelBlockAndQkNorm) {
    // DERIVED ONLY ("35B" published): command-r-v01's shape, hidden 8192, 40 layers, 64 heads (MHA),
    // intermediate 22528, vocab 256000, tied. Per layer 4 x 8192² + 3 x 8192 x 22528 + one
    // CohereLayerNorm 8,192 = 822,091,776 x 40 + embed 2,097,152,000 + norm 8,192 = 34,980,831,232.
    json c = {{"model_type", "cohere"},    {"hidden_size", 8192},       {"num_hidden_layers", 40},
              {"num_attention_heads", 64}, {"num_key_value_heads", 64}, {"intermediate_size", 22528},
              {"vocab_size", 256000},      {"use_qk_norm", false}};
    EXPECT_EQ(count_config(c).total, 34980831232ull);
    // use_qk_norm: q_norm (heads x head_dim) + k_norm (kv heads x head_dim) per layer.
    c["use_qk_norm"] = true;
    EXPECT_EQ(count_config(c).total, 34980831232ull + 40 * 2 * 8192ull);
}

TEST(Families, Gemma3TextAndTowerCountedApart) {
    // gemma-3-4b-it: text_config is minimal, so Gemma3TextConfig defaults apply (vocab 262208, 8 heads,
    // 4 kv heads, head_dim 256). Text 3,880,263,168 + SigLIP tower 416,866,032 (27 layers of
    // 15,239,504; patch 1152 x 3 x 14 x 14 + 1152; 4096 positions x 1152; post_layernorm; no head) +
    // projector 1152 x 2560 + 1152 = 2,950,272 -> 4,300,079,472 (published).
    gpumem::ParamCount c = count_preset("google/gemma-3-4b-it");
    EXPECT_EQ(c.language_model, 3880263168ull);
    EXPECT_EQ(c.vision, 416866032ull);
    EXPECT_EQ(c.projector, 2950272u);
    EXPECT_EQ(c.total, 4300079472ull);
    EXPECT_EQ(count_preset("google/gemma-3-27b-it").total, 27432406640ull);
    // Every 6th layer is global: layers 5, 11, ... are full attention, the rest a 1024-token window.
    gpumem::ModelSpec m = *gpumem::read_hf_config((*gpumem::find_preset("google/gemma-3-4b-it"))["config"]).model;
    EXPECT_EQ(m.layer_attention[5], gpumem::LayerAttention::Full);
    EXPECT_EQ(m.layer_attention[4], gpumem::LayerAttention::SlidingWindow);
    EXPECT_EQ(m.sliding_window, 1024u);
}

TEST(Families, LlavaClipTowerProjectorAndLlama) {
    // llava-1.5-7b: CLIP ViT-L/14-336 tower: class 1024 + patch 1024 x 3 x 14 x 14 + 577 positions x
    // 1024 + pre/post LayerNorm 4,096 + 24 x 12,596,224 = 303,507,456; projector 1024 x 4096 + 4096 +
    // 4096² + 4096 = 20,979,712; Llama-2-7B with vocab 32064: 6,738,939,904. Total 7,063,427,072.
    gpumem::ParamCount c = count_preset("llava-hf/llava-1.5-7b-hf");
    EXPECT_EQ(c.vision, 303507456u);
    EXPECT_EQ(c.projector, 20979712u);
    EXPECT_EQ(c.language_model, 6738939904ull);
    EXPECT_EQ(c.total, 7063427072ull);
}

TEST(Families, Mistral3PixtralTowerAndProjector) {
    // Mistral-Small-3.2-24B: Pixtral tower patch_conv 1024 x 3 x 14 x 14 = 602,112, ln_pre 1024, 24
    // layers x (q/k/v/o 4 x 1024² + gate/up/down 3 x 1024 x 4096 + two RMSNorms 2 x 1024 =
    // 16,779,264) = 403,305,472 with them; projector norm 1024 + merging_layer 4096 x 1024 +
    // linear_1 1024 x 5120 + linear_2 5120² (no biases) = 35,652,608; the Mistral-Small-24B LM
    // 23,572,403,200. Total 24,011,361,280 (keras-hub's mistral3 presets).
    gpumem::ParamCount c = count_preset("mistralai/Mistral-Small-3.2-24B-Instruct-2506");
    EXPECT_EQ(c.vision, 403305472u);
    EXPECT_EQ(c.projector, 35652608u);
    EXPECT_EQ(c.language_model, 23572403200ull);
    EXPECT_EQ(c.total, 24011361280ull);
    // The 2503 release is its twin.
    EXPECT_TRUE(gpumem::find_preset("mistralai/Mistral-Small-3.1-24B-Instruct-2503"));
}

TEST(Families, Qwen2VLTowerAndMerger) {
    // Qwen2-VL-7B-Instruct's config fields (LM at the top level, vision_config nested). Tower: patch
    // Conv3d 1280 x 3 x 2 x 14 x 14 = 1,505,280; 32 blocks of norm1/norm2 5,120 + qkv 3 x 1280² + 3,840 +
    // proj 1280² + 1,280 + fc1/fc2 2 x 1280 x 5120 + 6,400 = 19,677,440 -> 631,183,360. Merger
    // (projector): ln_q 2,560 + 5120² + 5,120 + 3584 x 5120 + 3,584 = 44,575,744. LM as Qwen2-7B
    // 7,615,616,512. Total 8,291,375,616, as published; the 2B (LM 1536 wide, tied) 2,208,985,600.
    json v = {{"depth", 32},      {"embed_dim", 1280},       {"mlp_ratio", 4},
              {"num_heads", 16},  {"in_chans", 3},           {"hidden_size", 3584},
              {"patch_size", 14}, {"spatial_merge_size", 2}, {"temporal_patch_size", 2}};
    json c = {{"model_type", "qwen2_vl"},     {"architectures", {"Qwen2VLForConditionalGeneration"}},
              {"hidden_size", 3584},          {"intermediate_size", 18944},
              {"num_hidden_layers", 28},      {"num_attention_heads", 28},
              {"num_key_value_heads", 4},     {"vocab_size", 152064},
              {"tie_word_embeddings", false}, {"vision_config", v}};
    gpumem::ParamCount p = count_config(c);
    EXPECT_EQ(p.vision, 631183360u);
    EXPECT_EQ(p.projector, 44575744u);
    EXPECT_EQ(p.total, 8291375616ull);
    v["hidden_size"] = 1536;
    c.update({{"hidden_size", 1536},
              {"intermediate_size", 8960},
              {"num_attention_heads", 12},
              {"num_key_value_heads", 2},
              {"vocab_size", 151936},
              {"tie_word_embeddings", true},
              {"vision_config", v}});
    EXPECT_EQ(count_config(c).total, 2208985600ull);
    // qwen2_5_vl: RMSNorm blocks with a biased gate/up/down MLP of intermediate_size, merger to
    // out_hidden_size. One block: 2 x 1280 + 4,919,040 + 1,639,680 + 3 x 1280 x 3420 + 2 x 3420 + 1280.
    json v25 = {{"depth", 32},   {"hidden_size", 1280}, {"intermediate_size", 3420}, {"out_hidden_size", 3584},
                {"in_chans", 3}, {"patch_size", 14},    {"spatial_merge_size", 2},   {"temporal_patch_size", 2}};
    json c25 = c;
    c25.update({{"model_type", "qwen2_5_vl"}, {"vision_config", v25}});
    gpumem::ParamCount p25 = count_config(c25);
    std::uint64_t block =
        2 * 1280 + (3 * 1280ull * 1280 + 3840) + (1280ull * 1280 + 1280) + 3 * 1280ull * 3420 + 2 * 3420 + 1280;
    EXPECT_EQ(p25.vision, 1280ull * 1176 + 32 * block);
    EXPECT_EQ(p25.projector, 1280 + 5120ull * 5120 + 5120 + 3584ull * 5120 + 3584);
}

TEST(Families, DeepSeekV3LatentAttentionExpertsAndMtp) {
    // MLA per layer: q_a 1536 x 7168 + q_a_layernorm 1536 + q_b 128 x 192 x 1536 + kv_a (512 + 64) x
    // 7168 + kv_a_layernorm 512 + kv_b 128 x 256 x 512 + o 7168 x 128 x 128 = 187,107,328.
    // Dense layers (first 3): + 3 x 7168 x 18432 + 2 norms = 583,483,392. MoE layers (58): + 256
    // experts x 3 x 7168 x 2048 + 1 shared expert of 2048 + router 256 x 7168 + e_score_correction_bias
    // 256 + norms = 11,507,286,272. + embed and head 2 x 129280 x 7168 + final norm = 671,026,419,200.
    gpumem::ParamCount c = count_preset("deepseek-ai/DeepSeek-V3");
    EXPECT_EQ(c.total, 671026419200ull);
    // MTP (checkpoint layer 61, not in transformers): one MoE layer + enorm, hnorm, shared_head.norm
    // 3 x 7168 + eh_proj 7168 x 14336 = 11,610,068,224; kept out of total.
    EXPECT_EQ(c.mtp, 11610068224ull);
    // Active: 8 of 256 routed experts -> less 248 x 44,040,192 x 58 layers.
    EXPECT_EQ(c.active, c.total - 248ull * 44040192 * 58);
    // DeepSeek-V2-Lite: q_lora_rank null (plain q_proj), no router bias; 15,706,484,224 published.
    gpumem::ParamCount lite = count_preset("deepseek-ai/DeepSeek-V2-Lite");
    EXPECT_EQ(lite.total, 15706484224ull);
    EXPECT_EQ(lite.mtp, 0u);
}

TEST(Families, MoeFamiliesDbrxPhimoeOlmoeGranitemoe) {
    // allenai/OLMoE-1B-7B-0924: per layer q/k/v/o 4 x 2048² + q_norm 2048 + k_norm 2048 + 64 experts x 3
    // x 2048 x 1024 + router 64 x 2048 + 2 norms = 419,569,664 x 16 + untied embed/head 2 x 50304 x
    // 2048 + final norm = 6,919,161,856 (HF safetensors parameterCount).
    json olmoe = {{"model_type", "olmoe"},
                  {"architectures", {"OlmoeForCausalLM"}},
                  {"vocab_size", 50304},
                  {"hidden_size", 2048},
                  {"intermediate_size", 1024},
                  {"num_hidden_layers", 16},
                  {"num_attention_heads", 16},
                  {"num_key_value_heads", 16},
                  {"max_position_embeddings", 4096},
                  {"tie_word_embeddings", false},
                  {"num_experts", 64},
                  {"num_experts_per_tok", 8}};
    EXPECT_EQ(count_config(olmoe).total, 6919161856ull);
    // DERIVED ONLY ("132B" published): databricks/dbrx-instruct (d_model 6144, 48 heads, kv_n_heads 8,
    // 40 layers, ffn_hidden_size 10752, 16 experts top 4, vocab 100352, untied). Per layer Wqkv 6144 x
    // (6144 + 2 x 1024) + out_proj 6144² = 88,080,384; experts 16 x 3 x 6144 x 10752 = 3,170,893,824;
    // router 98,304; norm_1/norm_2 weights 12,288 -> 3,259,084,800 x 40 + 2 x 616,562,688 + 6,144.
    json dbrx = {{"model_type", "dbrx"},
                 {"architectures", {"DbrxForCausalLM"}},
                 {"d_model", 6144},
                 {"n_heads", 48},
                 {"n_layers", 40},
                 {"max_seq_len", 32768},
                 {"vocab_size", 100352},
                 {"tie_word_embeddings", false},
                 {"attn_config", {{"kv_n_heads", 8}, {"clip_qkv", 8}, {"rope_theta", 500000}}},
                 {"ffn_config", {{"ffn_hidden_size", 10752}, {"moe_num_experts", 16}, {"moe_top_k", 4}}}};
    gpumem::ParamCount d = count_config(dbrx);
    EXPECT_EQ(d.total, 131596523520ull);
    EXPECT_EQ(d.active, d.total - 12ull * 3 * 6144 * 10752 * 40);  // "36B active"
    // DERIVED ONLY ("41.9B" published): Phi-3.5-MoE (4096 hidden, 32 layers, 32/8 heads, 16 experts of
    // 6400, vocab 32064, attention_bias and lm_head_bias true). Per layer q/k/v/o with bias 41,953,280 +
    // experts 1,258,291,200 + router 65,536 + 2 LayerNorms 16,384 = 1,300,326,400 x 32 + embed
    // 131,334,144 + head 131,334,144 + 32,064 + final LayerNorm 8,192 = 41,873,153,344.
    json phimoe = {{"model_type", "phimoe"},    {"vocab_size", 32064},     {"hidden_size", 4096},
                   {"intermediate_size", 6400}, {"num_hidden_layers", 32}, {"num_attention_heads", 32},
                   {"num_key_value_heads", 8},  {"num_local_experts", 16}, {"num_experts_per_tok", 2},
                   {"attention_bias", true},    {"lm_head_bias", true},    {"tie_word_embeddings", false}};
    EXPECT_EQ(count_config(phimoe).total, 41873153344ull);
    // DERIVED ONLY ("1.3B" published): granite-3.0-1b-a400m (1024 hidden, 24 layers, 16/8 heads, 32
    // experts of 512, top 8, vocab 49155, tied). Per layer 3,145,728 + 50,331,648 + router 32,768 +
    // 2,048 = 53,512,192 x 24 + embed 50,334,720 + 1,024 = 1,334,628,352.
    json granitemoe = {{"model_type", "granitemoe"}, {"vocab_size", 49155},     {"hidden_size", 1024},
                       {"intermediate_size", 512},   {"num_hidden_layers", 24}, {"num_attention_heads", 16},
                       {"num_key_value_heads", 8},   {"num_local_experts", 32}, {"num_experts_per_tok", 8},
                       {"tie_word_embeddings", true}};
    EXPECT_EQ(count_config(granitemoe).total, 1334628352ull);
}

TEST(Families, BertAndRobertaCountTheirClass) {
    // BertModel: embeddings 30522 x 768 + 512 x 768 + 2 x 768 + LayerNorm 1,536 = 23,837,184; 12 layers
    // of 7,087,872; pooler 590,592 -> 109,482,240 (published).
    auto bert = gpumem::find_preset("google-bert/bert-base-uncased");
    ASSERT_TRUE(bert);
    EXPECT_EQ(count_config((*bert)["config"]).total, 109482240u);
    // BertForMaskedLM: no pooler; transform dense 590,592 + LayerNorm 1,536 + decoder bias 30,522.
    json mlm = (*bert)["config"];
    mlm["architectures"] = {"BertForMaskedLM"};
    EXPECT_EQ(count_config(mlm).total, 109482240u - 590592 + 590592 + 1536 + 30522);
    // roberta-base (RobertaForMaskedLM; vocab 50265, 514 positions incl. the padding offset, 1 token
    // type): embeddings 39,000,576 + 12 x 7,087,872 + lm_head 590,592 + 1,536 + 50,265 = 124,697,433,
    // the F32 parameter count of its safetensors.
    json roberta = {{"model_type", "roberta"},   {"architectures", {"RobertaForMaskedLM"}},
                    {"vocab_size", 50265},       {"hidden_size", 768},
                    {"num_hidden_layers", 12},   {"num_attention_heads", 12},
                    {"intermediate_size", 3072}, {"max_position_embeddings", 514},
                    {"type_vocab_size", 1}};
    EXPECT_EQ(count_config(roberta).total, 124697433u);
    roberta["architectures"] = {"RobertaModel"};  // with the pooler instead: 124,645,632
    EXPECT_EQ(count_config(roberta).total, 124645632u);
}

TEST(Families, T5EncoderDecoder) {
    // t5-small: encoder layer q/k/v/o 4 x 512² + wi/wo 2 x 512 x 2048 + 2 norms = 3,146,752; decoder
    // layer adds EncDecAttention 1,048,576 + a norm = 4,195,840; relative_attention_bias 32 x 8 per stack;
    // a final norm per stack; shared 32128 x 512 counted once, lm_head tied -> 60,506,624 (published).
    auto record = gpumem::find_preset("google-t5/t5-small");
    ASSERT_TRUE(record);
    gpumem::ModelSpec m = *gpumem::read_hf_config((*record)["config"]).model;
    EXPECT_EQ(m.num_layers, 12u);
    EXPECT_EQ(m.encoder_layers, 6u);
    EXPECT_EQ(gpumem::count_parameters(m).total, 60506624u);
    // t5 v1.1 / flan-t5 shape: gated-gelu adds wi_1 (2048 x 512) to all 12 layers; an untied lm_head
    // adds 32128 x 512.
    json v11 = (*record)["config"];
    v11.update({{"feed_forward_proj", "gated-gelu"}, {"tie_word_embeddings", false}});
    EXPECT_EQ(count_config(v11).total, 60506624u + 12 * 2048u * 512 + 32128u * 512);
    // mt5 is the same module with MT5Config's defaults: without the two keys it is the v1.1 shape.
    json mt5 = (*record)["config"];
    mt5.erase("feed_forward_proj");
    mt5.erase("tie_word_embeddings");
    mt5["model_type"] = "mt5";
    EXPECT_EQ(count_config(mt5).total, count_config(v11).total);
}

TEST(Families, MllamaTiledTowerAndGatedCrossAttention) {
    // Llama-3.2-11B-Vision's fields (text: Llama-3.1-8B's shape with 8 cross-attention layers; vision:
    // 1280 wide, 32 + 8 global layers, 560 px tiles of 14 px patches, 4 tiles, 8 aspect ratios).
    // Vision: patch 1280 x 3 x 14 x 14 = 752,640 + class 1,280 + positions (1600 + 1) x 1280 = 2,049,280
    // + tile positions 9 x 4 x 1601 x 1280 = 73,774,080 + its gate 1 + pre/post tile embeddings 2 x (9 x 4 x 1280 +
    // gate 1)
    // + layernorm_pre/post 5,120 + 32 layers of 19,672,320 + 8 gated layers of 19,672,322
    // = 863,567,379. Projector 7680 x 4096 + 4096 = 31,461,376. Text: embed (128256 + 8) x 4096 +
    // lm_head 128256 x 4096 + 40 llama layers of 218,112,000 + 8 x (q_norm, k_norm 2 x 128 + 2 gates) +
    // norm = 9,775,192,080. Total 10,670,220,835, the Hub's safetensors count for
    // meta-llama/Llama-3.2-11B-Vision(-Instruct).
    json v = {{"model_type", "mllama_vision_model"},
              {"hidden_size", 1280},
              {"intermediate_size", 5120},
              {"num_hidden_layers", 32},
              {"num_global_layers", 8},
              {"attention_heads", 16},
              {"num_channels", 3},
              {"image_size", 560},
              {"patch_size", 14},
              {"max_num_tiles", 4},
              {"vision_output_dim", 7680},
              {"supported_aspect_ratios", {{1, 1}, {1, 2}, {1, 3}, {1, 4}, {2, 1}, {2, 2}, {3, 1}, {4, 1}}}};
    json t = {{"model_type", "mllama_text_model"},
              {"vocab_size", 128256},
              {"hidden_size", 4096},
              {"intermediate_size", 14336},
              {"num_hidden_layers", 40},
              {"num_attention_heads", 32},
              {"num_key_value_heads", 8},
              {"tie_word_embeddings", false},
              {"cross_attention_layers", {3, 8, 13, 18, 23, 28, 33, 38}}};
    json c = {{"model_type", "mllama"},
              {"architectures", {"MllamaForConditionalGeneration"}},
              {"text_config", t},
              {"vision_config", v}};
    gpumem::ParamCount p = count_config(c);
    EXPECT_EQ(p.vision, 863567379u);
    EXPECT_EQ(p.projector, 31461376u);
    EXPECT_EQ(p.embedding, (128256u + 8) * 4096);
    EXPECT_EQ(p.lm_head, 128256u * 4096);
    EXPECT_EQ(p.language_model, 9775192080ull);
    EXPECT_EQ(p.total, 10670220835ull);
    gpumem::ModelSpec m = *gpumem::read_hf_config(c).model;
    EXPECT_EQ(m.cross_attention_layers.size(), 8u);
    EXPECT_EQ(m.vision_shape.heads, 16u);
    EXPECT_EQ(m.vision_shape.patches, 4u * 1601);
}

TEST(Families, UnfinishedMultimodalFallsBackWithAWarning) {
    // A wrapper whose tower is not modelled: a warning, never a silent count.
    json c = {{"model_type", "idefics3"},
              {"text_config",
               {{"model_type", "llama"},
                {"hidden_size", 4096},
                {"num_hidden_layers", 32},
                {"num_attention_heads", 32},
                {"vocab_size", 128259}}},
              {"vision_config", {{"model_type", "idefics3_vision"}, {"hidden_size", 1152}}}};
    std::vector<std::string> warnings;
    count_config(c, &warnings);
    EXPECT_EQ(warnings.size(), 1u);
    // MLA without kv_lora_rank is an issue naming the field.
    json ds = {{"model_type", "deepseek_v2"}, {"hidden_size", 1024}, {"num_hidden_layers", 2},
               {"num_attention_heads", 8},    {"vocab_size", 1000},  {"qk_nope_head_dim", 64},
               {"qk_rope_head_dim", 32},      {"v_head_dim", 64},    {"n_routed_experts", 4},
               {"num_experts_per_tok", 2}};
    gpumem::ModelRead read = gpumem::read_hf_config(ds);
    ASSERT_FALSE(read.model);
    EXPECT_EQ(read.issues[0].field, "kv_lora_rank");
}

TEST(Families, QuantizationConfigIsRead) {
    json c = (*gpumem::find_preset("deepseek-ai/DeepSeek-V3"))["config"];
    gpumem::ModelSpec m = *gpumem::read_hf_config(c).model;
    ASSERT_TRUE(m.quantization);
    EXPECT_EQ(m.quantization->method, "fp8");
    EXPECT_EQ(m.quantization->weight_block_size, (std::vector<std::uint64_t>{128, 128}));
    EXPECT_EQ(m.checkpoint_dtype, "bf16");
    c["quantization_config"] = {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}, {"desc_act", false}};
    m = *gpumem::read_hf_config(c).model;
    EXPECT_EQ(m.quantization->bits, 4u);
    EXPECT_EQ(m.quantization->group_size, 128u);
    c["quantization_config"] = {
        {"load_in_4bit", true}, {"bnb_4bit_quant_type", "nf4"}, {"bnb_4bit_use_double_quant", true}};
    m = *gpumem::read_hf_config(c).model;
    EXPECT_EQ(m.quantization->method, "bitsandbytes");
    EXPECT_EQ(m.quantization->quant_type, "nf4");
    EXPECT_TRUE(m.quantization->double_quant);
    c["quantization_config"] = {{"quant_method", "mxfp4"},
                                {"modules_to_not_convert", {"model.layers.*.self_attn", "lm_head"}}};
    m = *gpumem::read_hf_config(c).model;
    EXPECT_EQ(m.quantization->bits, 4u);
    EXPECT_EQ(m.quantization->modules_not_converted.size(), 2u);
}

// Quantized checkpoints: the bytes their safetensors store, tensor by tensor (model/quantized.cpp).
// Llama-3.1-8B's Linear layers per decoder layer ([out, in]): q 4096x4096, k and v 1024x4096,
// o 4096x4096, gate and up 14336x4096, down 4096x14336: 218,103,808 weights, x 32 layers =
// 6,979,321,856; their output rows sum to 43,008 a layer and their input columns to 38,912. The rest
// (embeddings 525,336,576, the untied lm_head as many, 65 norms of 4096 = 266,240) is 1,050,939,392
// parameters, 2,101,878,784 bytes in bf16.
namespace {

constexpr std::uint64_t kLinear = 6979321856, kRestBytes = 2101878784;

json llama31_8b_with(const json& quantization_config) {
    json c = (*gpumem::find_preset("meta-llama/Llama-3.1-8B"))["config"];
    c["quantization_config"] = quantization_config;
    return c;
}

gpumem::ParamCount counted(const json& config) {
    gpumem::ModelRead read = gpumem::read_hf_config(config);
    EXPECT_TRUE(read.model);
    return read.model ? gpumem::count_parameters(*read.model) : gpumem::ParamCount{};
}

// compressed-tensors' config as llm-compressor writes it: one group targeting Linear.
json compressed(const std::string& format, const json& weights, const json& inputs) {
    return {{"quant_method", "compressed-tensors"},
            {"format", format},
            {"config_groups",
             {{"group_0", {{"targets", {"Linear"}}, {"weights", weights}, {"input_activations", inputs}}}}},
            {"ignore", {"lm_head"}}};
}

}  // namespace

TEST(Quantized, UnquantizedCheckpointIsItsDtype) {
    gpumem::ParamCount c = counted((*gpumem::find_preset("meta-llama/Llama-3.1-8B"))["config"]);
    EXPECT_TRUE(c.checkpoint_bytes_exact);
    EXPECT_EQ(c.checkpoint_bytes, 8030261248u * 2);  // bf16
}

TEST(Quantized, CompressedTensorsFp8DynamicPerChannel) {
    // RedHatAI ...-FP8-dynamic: weight e4m3 (1 B) + a bf16 weight_scale per output row; inputs
    // dynamic per token (nothing stored); lm_head ignored:
    // 6,979,321,856 x 1 + 43,008 x 32 scales x 2 B + the rest in bf16.
    json w = {{"num_bits", 8}, {"type", "float"}, {"strategy", "channel"}, {"symmetric", true}, {"dynamic", false}};
    json a = {{"num_bits", 8}, {"type", "float"}, {"strategy", "token"}, {"symmetric", true}, {"dynamic", true}};
    gpumem::ParamCount c = counted(llama31_8b_with(compressed("float-quantized", w, a)));
    EXPECT_TRUE(c.checkpoint_bytes_exact);
    EXPECT_EQ(c.total, 8030261248u);  // the logical count is the model's
    EXPECT_EQ(c.checkpoint_bytes, kLinear + 43008u * 32 * 2 + kRestBytes);
    // Static per-tensor weight and input scales (FP8 static): one bf16 value each per Linear (7 x 32).
    w["strategy"] = "tensor";
    a = {{"num_bits", 8}, {"type", "float"}, {"strategy", "tensor"}, {"dynamic", false}};
    EXPECT_EQ(counted(llama31_8b_with(compressed("float-quantized", w, a))).checkpoint_bytes,
              kLinear + 7u * 32 * (2 + 2) + kRestBytes);
}

TEST(Quantized, CompressedTensorsW4A16GroupsPacked) {
    // quantized.w4a16: 8 int4 per int32 (weight_packed out x in / 8 x 4 B = n / 2), a weight_shape
    // int64[2] (16 B) per Linear, a bf16 scale per 128 inputs (n / 128 x 2 B); symmetric: no zero point.
    json w = {{"num_bits", 4}, {"type", "int"}, {"strategy", "group"}, {"group_size", 128}, {"symmetric", true}};
    gpumem::ParamCount c = counted(llama31_8b_with(compressed("pack-quantized", w, nullptr)));
    EXPECT_TRUE(c.checkpoint_bytes_exact);
    EXPECT_EQ(c.checkpoint_bytes, kLinear / 2 + 16u * 7 * 32 + kLinear / 128 * 2 + kRestBytes);
    // Asymmetric: weight_zero_point int32-packed along the output rows, out x 4 / 32 x 4 B per group.
    w["symmetric"] = false;
    EXPECT_EQ(counted(llama31_8b_with(compressed("pack-quantized", w, nullptr))).checkpoint_bytes,
              kLinear / 2 + 16u * 7 * 32 + kLinear / 128 * 2 + kLinear / 128 / 8 * 4 + kRestBytes);
    // Group act-order stores an int32 weight_g_idx per input column (38,912 x 32 x 4 B).
    w["symmetric"] = true;
    w["actorder"] = "group";
    EXPECT_EQ(counted(llama31_8b_with(compressed("pack-quantized", w, nullptr))).checkpoint_bytes,
              kLinear / 2 + 16u * 7 * 32 + kLinear / 128 * 2 + 38912u * 32 * 4 + kRestBytes);
    // W8A16 per channel: 4 int8 per int32 (n x 1 B) and a bf16 scale per output row.
    w = {{"num_bits", 8}, {"type", "int"}, {"strategy", "channel"}, {"symmetric", true}};
    EXPECT_EQ(counted(llama31_8b_with(compressed("pack-quantized", w, nullptr))).checkpoint_bytes,
              kLinear + 16u * 7 * 32 + 43008u * 32 * 2 + kRestBytes);
}

TEST(Quantized, CompressedTensorsW8A8Int8) {
    // quantized.w8a8 (int-quantized): int8 weight (n x 1 B), a bf16 scale per output row; dynamic tokens.
    json w = {{"num_bits", 8}, {"type", "int"}, {"strategy", "channel"}, {"symmetric", true}};
    json a = {{"num_bits", 8}, {"type", "int"}, {"strategy", "token"}, {"dynamic", true}};
    EXPECT_EQ(counted(llama31_8b_with(compressed("int-quantized", w, a))).checkpoint_bytes,
              kLinear + 43008u * 32 * 2 + kRestBytes);
}

TEST(Quantized, CompressedTensorsNvfp4AndMxfp4) {
    // NVFP4 (W4A4): two e2m1 per byte (n / 2), an e4m3 scale per 16 (n / 16 x 1 B), an fp32
    // weight_global_scale and input_global_scale per Linear (8 B x 7 x 32).
    json w = {{"num_bits", 4}, {"type", "float"}, {"strategy", "tensor_group"}, {"group_size", 16}};
    json a = {
        {"num_bits", 4}, {"type", "float"}, {"strategy", "tensor_group"}, {"group_size", 16}, {"dynamic", "local"}};
    gpumem::ParamCount c = counted(llama31_8b_with(compressed("nvfp4-pack-quantized", w, a)));
    EXPECT_TRUE(c.checkpoint_bytes_exact);
    EXPECT_EQ(c.checkpoint_bytes, kLinear / 2 + kLinear / 16 + 8u * 7 * 32 + kRestBytes);
    // NVFP4A16: no input global scale.
    EXPECT_EQ(counted(llama31_8b_with(compressed("nvfp4-pack-quantized", w, nullptr))).checkpoint_bytes,
              kLinear / 2 + kLinear / 16 + 4u * 7 * 32 + kRestBytes);
    // MXFP4: two e2m1 per byte and an e8m0 byte per 32.
    w = {{"num_bits", 4}, {"type", "float"}, {"strategy", "group"}, {"group_size", 32}};
    EXPECT_EQ(counted(llama31_8b_with(compressed("mxfp4-pack-quantized", w, nullptr))).checkpoint_bytes,
              kLinear / 2 + kLinear / 32 + kRestBytes);
}

TEST(Quantized, ModelOptFp8AndNvfp4) {
    // ModelOpt FP8: e4m3 weights, fp32 weight_scale and input_scale per Linear (7 x 32 x 8 B); an FP8
    // KV cache adds an fp32 k_scale and v_scale per layer (32 x 8 B). lm_head excluded.
    json q = {
        {"quant_method", "modelopt"},
        {"quantization", {{"quant_algo", "FP8"}, {"kv_cache_quant_algo", "FP8"}, {"exclude_modules", {"lm_head"}}}}};
    gpumem::ParamCount c = counted(llama31_8b_with(q));
    EXPECT_TRUE(c.checkpoint_bytes_exact);
    EXPECT_EQ(c.checkpoint_bytes, kLinear + 7u * 32 * 8 + 32u * 8 + kRestBytes);
    // NVFP4 (flat fields, as config.json's quantization_config has them): n / 2 packed, an e4m3 scale
    // per 16 (n / 16), fp32 weight_scale_2 and input_scale per Linear; no KV scales.
    q = {{"quant_method", "modelopt"}, {"quant_algo", "NVFP4"}, {"group_size", 16}, {"exclude_modules", {"lm_head"}}};
    EXPECT_EQ(counted(llama31_8b_with(q)).checkpoint_bytes, kLinear / 2 + kLinear / 16 + 7u * 32 * 8 + kRestBytes);
}

TEST(Quantized, GptqAndAwqPackedWithZerosScalesAndGIdx) {
    // GPTQ 4-bit, group 128: qweight n / 2, qzeros (in / 128) x (out / 8) x 4 B = n / 256, fp16
    // scales (in / 128) x out x 2 B = n / 64, g_idx int32 per input column (38,912 x 32 x 4 B).
    gpumem::ParamCount c = counted(llama31_8b_with(
        {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}, {"desc_act", false}, {"sym", true}}));
    EXPECT_TRUE(c.checkpoint_bytes_exact);
    EXPECT_EQ(c.checkpoint_bytes, kLinear / 2 + kLinear / 256 + kLinear / 64 + 38912u * 32 * 4 + kRestBytes);
    // 8-bit per channel (group_size -1): qweight n, qzeros out / 4 x 4 B = out B, scales out x 2 B.
    EXPECT_EQ(counted(llama31_8b_with({{"quant_method", "gptq"}, {"bits", 8}, {"group_size", -1}})).checkpoint_bytes,
              kLinear + 43008u * 32 * (1 + 2) + 38912u * 32 * 4 + kRestBytes);
    // AWQ GEMM 4-bit, group 128: the same qweight, qzeros and scales, no g_idx.
    EXPECT_EQ(
        counted(
            llama31_8b_with(
                {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"zero_point", true}, {"version", "gemm"}}))
            .checkpoint_bytes,
        kLinear / 2 + kLinear / 256 + kLinear / 64 + kRestBytes);
}

namespace {

// The bytes vLLM holds once it has loaded a checkpoint (model/quantized.cpp, Residency::Vllm).
std::uint64_t vllm_bytes(const json& config) {
    gpumem::ModelSpec m = *gpumem::read_hf_config(config).model;
    std::uint64_t total = 0;
    for (std::uint64_t b :
         gpumem::detail::checkpoint_tensor_bytes(m, gpumem::detail::list_tensors(m), gpumem::detail::Residency::Vllm))
        total += b;
    return total;
}

}  // namespace

TEST(Quantized, VllmMarlinDropsGptqZerosAndGIdx) {
    // gptq_marlin: symmetric qzeros (n / 256) and, without act-order, g_idx (38,912 x 32 x 4 B) are
    // replaced by empty tensors; qweight and scales keep their size.
    json gptq = {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}, {"desc_act", false}, {"sym", true}};
    EXPECT_EQ(vllm_bytes(llama31_8b_with(gptq)), kLinear / 2 + kLinear / 64 + kRestBytes);
    // With act-order g_idx stays and g_idx_sort_indices (int32 per input column) joins it.
    gptq["desc_act"] = true;
    EXPECT_EQ(vllm_bytes(llama31_8b_with(gptq)), kLinear / 2 + kLinear / 64 + 2 * 38912u * 32 * 4 + kRestBytes);
    // Asymmetric GPTQ is not Marlin's: vLLM's exllama kernel keeps every stored tensor.
    gptq["sym"] = false;
    EXPECT_EQ(vllm_bytes(llama31_8b_with(gptq)), counted(llama31_8b_with(gptq)).checkpoint_bytes);
    // compressed-tensors fp8 channel scales load as fp32: 43,008 x 32 rows x 4 B instead of 2 B.
    json w = {{"num_bits", 8}, {"type", "float"}, {"strategy", "channel"}, {"symmetric", true}};
    json a = {{"num_bits", 8}, {"type", "float"}, {"strategy", "token"}, {"dynamic", true}};
    EXPECT_EQ(vllm_bytes(llama31_8b_with(compressed("float-quantized", w, a))), kLinear + 43008u * 32 * 4 + kRestBytes);
    // compressed-tensors W4A16 with group act-order through Marlin: weight_g_idx stays and
    // g_idx_sort_indices (int32 per input column) joins it.
    json w4 = {{"num_bits", 4}, {"type", "int"}, {"strategy", "group"}, {"group_size", 128}, {"actorder", "group"}};
    const json ct = llama31_8b_with(compressed("pack-quantized", w4, nullptr));
    EXPECT_EQ(vllm_bytes(ct), counted(ct).checkpoint_bytes + 38912u * 32 * 4);
    // gpt-oss-20b's experts under vLLM's Triton mxfp4 backend: the loaded scales stay and a swizzled
    // copy joins them, w13 (2 x 2880 = 5760 rows, padded to 5888) and w2 (2880 rows, to 3072) with
    // 90 scales a row; the expert biases (5760 + 2880 a expert) become fp32: 24 x 32 x ((5888 + 3072)
    // x 90 + 8640 x 2) B more than stored. vLLM 0.11 on an H100 logged 13.47 GiB for the load.
    const json oss = (*gpumem::find_preset("openai/gpt-oss-20b"))["config"];
    const std::uint64_t extra = std::uint64_t{24} * 32 * ((5888 + 3072) * 90 + 8640 * 2);
    EXPECT_EQ(vllm_bytes(oss), counted(oss).checkpoint_bytes + extra);
    EXPECT_NEAR(static_cast<double>(vllm_bytes(oss)) / (1ull << 30), 13.47, 13.47 * 0.01);
    // AWQ through awq_marlin keeps its sizes.
    json awq = {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"zero_point", true}};
    EXPECT_EQ(vllm_bytes(llama31_8b_with(awq)), counted(llama31_8b_with(awq)).checkpoint_bytes);
}

TEST(Quantized, SglangAndTgiMarlinResidencyIsGptqOnly) {
    // Residency::Marlin (SGLang, TGI): GPTQ's conversion to Marlin as vLLM's, with and without act-order ...
    auto marlin_bytes = [](const json& config) {
        gpumem::ModelSpec m = *gpumem::read_hf_config(config).model;
        std::uint64_t total = 0;
        for (std::uint64_t b : gpumem::detail::checkpoint_tensor_bytes(m, gpumem::detail::list_tensors(m),
                                                                       gpumem::detail::Residency::Marlin))
            total += b;
        return total;
    };
    json gptq = {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}, {"desc_act", false}, {"sym", true}};
    EXPECT_EQ(marlin_bytes(llama31_8b_with(gptq)), kLinear / 2 + kLinear / 64 + kRestBytes);
    gptq["desc_act"] = true;
    EXPECT_EQ(marlin_bytes(llama31_8b_with(gptq)), vllm_bytes(llama31_8b_with(gptq)));
    gptq["sym"] = false;  // asymmetric GPTQ is not Marlin's in either
    EXPECT_EQ(marlin_bytes(llama31_8b_with(gptq)), counted(llama31_8b_with(gptq)).checkpoint_bytes);
    // ... but none of vLLM's other changes: compressed-tensors' channel scales and gpt-oss's mxfp4 experts stay
    // as stored.
    json w = {{"num_bits", 8}, {"type", "float"}, {"strategy", "channel"}, {"symmetric", true}};
    json a = {{"num_bits", 8}, {"type", "float"}, {"strategy", "token"}, {"dynamic", true}};
    const json fp8 = llama31_8b_with(compressed("float-quantized", w, a));
    EXPECT_EQ(marlin_bytes(fp8), counted(fp8).checkpoint_bytes);
    EXPECT_NE(vllm_bytes(fp8), counted(fp8).checkpoint_bytes);
    const json oss = (*gpumem::find_preset("openai/gpt-oss-20b"))["config"];
    EXPECT_EQ(marlin_bytes(oss), counted(oss).checkpoint_bytes);
}

TEST(Quantized, Fp8BlockScalesAndBitsandbytes) {
    // quant_method fp8, 128 x 128 blocks: e4m3 weights and an fp32 weight_scale_inv per block; blocks a
    // layer: q 32x32, k and v 8x32, o 32x32, gate and up 112x32, down 32x112 = 13,312. lm_head kept.
    gpumem::ParamCount c = counted(llama31_8b_with(
        {{"quant_method", "fp8"}, {"activation_scheme", "dynamic"}, {"weight_block_size", {128, 128}}}));
    EXPECT_TRUE(c.checkpoint_bytes_exact);
    EXPECT_EQ(c.checkpoint_bytes, kLinear + 13312u * 32 * 4 + kRestBytes);
    // AutoFP8 static (no blocks): one fp32 weight_scale and one fp32 input_scale per Linear (7 x 32);
    // its ignored_layers is honoured like modules_to_not_convert.
    c = counted(llama31_8b_with(
        {{"quant_method", "fp8"}, {"activation_scheme", "static"}, {"ignored_layers", {"lm_head", "down_proj"}}}));
    EXPECT_EQ(c.checkpoint_bytes,
              (kLinear - 32u * 4096 * 14336) + 6u * 32 * (4 + 4) + std::uint64_t{32} * 4096 * 14336 * 2 + kRestBytes);
    // bitsandbytes nf4 saved: two values per byte, an fp32 absmax per 64, a 16-entry fp32 map per
    // Linear; its JSON quant_state is not counted, so not exact.
    c = counted(
        llama31_8b_with({{"quant_method", "bitsandbytes"}, {"load_in_4bit", true}, {"bnb_4bit_quant_type", "nf4"}}));
    EXPECT_FALSE(c.checkpoint_bytes_exact);
    EXPECT_EQ(c.checkpoint_bytes, kLinear / 2 + kLinear / 64 * 4 + 64u * 7 * 32 + kRestBytes);
}

TEST(Quantized, IgnoreListsKeepModulesInTheCheckpointDtype) {
    // An ignored module stays bf16: every layer's attention by a regex (4096x4096 x 2 + 1024x4096 x 2 =
    // 41,943,040 a layer), and one layer's down_proj by its name (4096 x 14336). The 95 other Linears
    // are e4m3 with one bf16 per-tensor scale each.
    json w = {{"num_bits", 8}, {"type", "float"}, {"strategy", "tensor"}};
    json q = compressed("float-quantized", w, nullptr);
    q["ignore"] = {"lm_head", "re:.*self_attn.*", "model.layers.3.mlp.down_proj"};
    const std::uint64_t attention = 41943040u * 32, down3 = 4096u * 14336;
    const std::uint64_t fp8 = kLinear - attention - down3;
    EXPECT_EQ(counted(llama31_8b_with(q)).checkpoint_bytes,
              fp8 + (3u * 32 - 1) * 2 + (attention + down3) * 2 + kRestBytes);
    // transformers' modules_to_not_convert matches by substring.
    json g = {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"modules_to_not_convert", {"mlp"}}};
    EXPECT_EQ(counted(llama31_8b_with(g)).checkpoint_bytes,
              attention / 2 + attention / 256 + attention / 64 + (kLinear - attention) * 2 + kRestBytes);
}

TEST(Quantized, MultimodalTowerKeptByRegexIgnore) {
    // Mistral-Small-3.2-24B in FP8-dynamic with llm-compressor's multimodal ignore list: the LM's
    // Linears per layer (q 4096x5120, k/v 1024x5120, o 5120x4096, gate/up 32768x5120, down
    // 5120x32768 = 555,745,280; output rows 81,920) x 40 = 22,229,811,200 e4m3 + 3,276,800 bf16
    // channel scales; the rest, tower and projector included, 1,781,550,080 parameters in bf16.
    json c = (*gpumem::find_preset("mistralai/Mistral-Small-3.2-24B-Instruct-2506"))["config"];
    json w = {{"num_bits", 8}, {"type", "float"}, {"strategy", "channel"}, {"symmetric", true}};
    json a = {{"num_bits", 8}, {"type", "float"}, {"strategy", "token"}, {"dynamic", true}};
    c["quantization_config"] = compressed("float-quantized", w, a);
    c["quantization_config"]["ignore"] = {"re:.*lm_head", "re:vision_tower.*", "re:multi_modal_projector.*"};
    const std::uint64_t lm = 22229811200ull, rest = 24011361280ull - lm;
    EXPECT_EQ(counted(c).checkpoint_bytes, lm + 3276800u * 2 + rest * 2);
    // Without the tower in the list, its Linears (24 x (4 x 1024² + 3 x 1024 x 4096) = 402,653,184,
    // 24 x (4 x 1024 + 2 x 4096 + 1024) = 319,488 rows) and the projector's (4096x1024, 1024x5120,
    // 5120x5120 = 35,651,584; rows 1024 + 5120 + 5120) are e4m3 too.
    c["quantization_config"]["ignore"] = {"re:.*lm_head"};
    const std::uint64_t tower = 402653184u + 35651584u, rows = 3276800u + 319488u + 11264u;
    EXPECT_EQ(counted(c).checkpoint_bytes, lm + tower + rows * 2 + (rest - tower) * 2);
}

TEST(Quantized, GptOssMxfp4ExpertsOnly) {
    // gpt-oss-20b: only the experts are MXFP4 (modules_to_not_convert names attention, router,
    // embeddings, head). 24 layers x 32 experts x (gate+up 2 x 2880x2880 + down 2880x2880) =
    // 19,110,297,600 values at 0.5 + 1/32 B (a 2880-value row: 1440 B + 90 scales); the other
    // 1,804,459,584 parameters bf16: 13,761,264,768 B, the Hub's three shards (4.79 + 4.8 + 4.17 GB).
    gpumem::ParamCount c = counted((*gpumem::find_preset("openai/gpt-oss-20b"))["config"]);
    EXPECT_TRUE(c.checkpoint_bytes_exact);
    const std::uint64_t experts = std::uint64_t{24} * 32 * 3 * 2880 * 2880;
    EXPECT_EQ(c.checkpoint_bytes, experts / 2 + experts / 32 + (20914757184u - experts) * 2);
}

// Every bundled quantized checkpoint: its layout is modelled (every stored byte follows from the
// config), it takes fewer bytes than the same weights in bf16, and where the record has the Hub's
// size for it, the derived bytes agree with that size to its rounding (3 significant figures).
TEST(Quantized, EveryBundledQuantizedCheckpointIsCountedExactly) {
    std::size_t quantized = 0;
    for (const json& p : gpumem::list_presets()) {
        json record = *gpumem::find_preset(p["id"].get<std::string>());
        const json& config = record["config"];
        if (!config.contains("quantization_config")) continue;
        ++quantized;
        SCOPED_TRACE(p["id"].get<std::string>());
        gpumem::ParamCount c = counted(config);
        // DeepSeek-V3/R1 store their multi-token-prediction layer, which the tensor list leaves out.
        EXPECT_EQ(c.checkpoint_bytes_exact, c.mtp == 0);
        EXPECT_LT(c.checkpoint_bytes, c.total * 2);
        if (record.contains("checkpoint") && record["checkpoint"].contains("bytes")) {
            const double hub = record["checkpoint"]["bytes"].get<double>();
            EXPECT_NEAR(static_cast<double>(c.checkpoint_bytes) / hub, 1.0, 0.005);
        }
    }
    EXPECT_GE(quantized, 18u);  // 14 RedHatAI / Qwen / NVIDIA checkpoints, gpt-oss-20b and -120b, DeepSeek-V3 and R1
}

// The ignore lists' regular expressions run on a linear-time NFA (model/module_pattern.cpp).
TEST(Quantized, ModulePatternsMatchAsPythonsReMatch) {
    using gpumem::detail::compile_module_pattern;
    auto match = [](const std::string& re, const std::string& name) {
        auto p = compile_module_pattern(re);
        EXPECT_TRUE(p) << re;
        return p && p->matches(name);
    };
    EXPECT_TRUE(match(".*lm_head", "lm_head"));
    EXPECT_TRUE(match(".*mlp.gate$", "model.layers.3.mlp.gate"));
    EXPECT_FALSE(match(".*mlp.gate$", "model.layers.3.mlp.gate_proj"));
    EXPECT_TRUE(match("model.layers.[0-9]+.mlp.gate", "model.layers.17.mlp.gate_proj"));  // a prefix, as re.match
    EXPECT_FALSE(match("model.layers.[0-9]+\\.mlp", "model.layers..mlp"));
    EXPECT_TRUE(match("^(vision_tower|multi_modal_projector)\\..*", "multi_modal_projector.linear_1"));
    EXPECT_FALSE(match("(vision_tower|visual)\\.", "model.visual.blocks"));  // anchored at the start
    EXPECT_TRUE(match("(?:model\\.)?visual\\.", "model.visual.blocks"));
    EXPECT_TRUE(match("[^.]+\\.layers\\.\\d+\\.self_attn\\.[qkv]_proj$", "model.layers.0.self_attn.k_proj"));
    EXPECT_FALSE(match("[^.]+\\.layers\\.\\d+\\.self_attn\\.[qkv]_proj$", "model.layers.0.self_attn.o_proj"));
    EXPECT_TRUE(match("a?b*c", "c"));
    // An ignore pattern outside the subset leaves the checkpoint's bytes inexact.
    json q = compressed("float-quantized", {{"num_bits", 8}, {"type", "float"}, {"strategy", "tensor"}}, nullptr);
    q["ignore"] = {"re:.*layers\\.[0-9]{1,2}\\.mlp"};
    EXPECT_FALSE(counted(llama31_8b_with(q)).checkpoint_bytes_exact);
    // Counted repetition, look-around and back-references are outside the subset: no pattern.
    for (const char* re : {"a{2}", "(?=a)", "(a)\\1", "[z-a]", "(abc", "a)"})
        EXPECT_FALSE(compile_module_pattern(re)) << re;
    // A pattern that makes backtracking engines exponential is one pass here.
    auto nested = compile_module_pattern("(a*)*b");
    ASSERT_TRUE(nested);
    EXPECT_FALSE(nested->matches(std::string(5000, 'a')));
    EXPECT_TRUE(nested->matches(std::string(5000, 'a') + "b"));
}

// A hostile quantization_config is read without a crash: unknown layouts count approximately.
TEST(Quantized, MalformedQuantizationConfigsAreInexactNotFatal) {
    for (const json& q :
         {json{{"quant_method", "compressed-tensors"},
               {"format", "pack-quantized"},
               {"config_groups", {{"g", {{"targets", {"Linear"}}, {"weights", {{"num_bits", 0}}}}}}}},
          json{{"quant_method", "compressed-tensors"},
               {"format", "pack-quantized"},
               {"config_groups", {{"g", {{"weights", {{"num_bits", 1u << 30}, {"group_size", 0}}}}}}}},
          json{{"quant_method", "compressed-tensors"}, {"config_groups", json::array({1, 2})}, {"ignore", "lm_head"}},
          json{{"quant_method", "gptq"}, {"bits", 0}, {"group_size", -1}},
          json{{"quant_method", "fp8"}, {"weight_block_size", {0, -4, "x"}}},
          json{{"quant_method", "modelopt"}, {"quantization", {{"quant_algo", "W4A8_AWQ"}}}},
          json{{"quant_method", "compressed-tensors"},
               {"format", "float-quantized"},
               {"config_groups", {{"g", {{"targets", {"Linear"}}, {"weights", {{"num_bits", 8}, {"type", "float"}}}}}}},
               {"ignore", {"re:(((((", "re:a{99999}", std::string(5000, '*')}}}}) {
        SCOPED_TRACE(q.dump());
        gpumem::ParamCount c = counted(llama31_8b_with(q));
        EXPECT_EQ(c.total, 8030261248u);
        EXPECT_GT(c.checkpoint_bytes, 0u);
    }
}
