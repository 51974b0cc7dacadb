// Grouped-query attention in the 4-D layout and the score modifiers (sliding window, softcap,
// ALiBi, sinks) with each row's log-sum-exp, against PyTorch: the fixtures in
// tests/fixtures/modern/sdpa.json, written by scripts/fixtures/modern_attention.py in float64
// from float32 inputs. Tolerance, the fixtures' rule: |got - want| <= 2e-4 * max|want| per
// tensor; the lse also entry by entry within 2e-4 * max(1, |want|), so that a fully masked row's
// -1e6 does not loosen the check of the other rows. Every case runs at 1, 2, 3 and 7 threads,
// which must give the same bits.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/threads.hpp"
#include "fixtures.hpp"

using attn::Index;
using attn::Tensor3;
using fixtures::json;

namespace {

// A case's arguments. A 4-D tensor [B, H, n, d] passes as Tensor3(B * H, n, d) with
// options.heads = H (kv_heads for k and v); a 3-D case is H = Hkv = 1. The mask points into this
// object's buffers: neither copied nor moved.
struct ModernCase {
  explicit ModernCase(const fixtures::Case& c)
      : four_d(fixtures::shape_of(c.inputs.at("q")).size() == 4),
        q(tensor(c.inputs.at("q"))),
        k(tensor(c.inputs.at("k"))),
        v(tensor(c.inputs.at("v"))),
        grad_output(tensor(c.inputs.at("gradOutput"))) {
    const auto q_shape = fixtures::shape_of(c.inputs.at("q"));
    const auto k_shape = fixtures::shape_of(c.inputs.at("k"));
    batch = q_shape[0];
    heads = four_d ? q_shape[1] : 1;
    kv_heads = four_d ? k_shape[1] : 1;
    nq = q.rows;
    nk = k.rows;
    options.heads = heads;
    options.kv_heads = kv_heads;

    const json& o = c.options;
    attn::Mask& mask = options.mask;
    if (c.inputs.contains("validLens")) {
      mask.valid_lens = fixtures::data_of<int32_t>(c.inputs["validLens"]);
    }
    if (c.inputs.contains("mask")) read_mask(c.inputs["mask"]);
    if (o.contains("causal")) mask.causal = o["causal"].get<bool>();
    if (o.contains("window")) {
      mask.window_left = o["window"].at(0).get<Index>();
      mask.window_right = o["window"].at(1).get<Index>();
    }
    if (o.contains("fill")) {
      // -inf crosses as the string "-Infinity" (JSON has no infinities).
      mask.fill = o["fill"].is_string() ? std::strtof(o["fill"].get<std::string>().c_str(), nullptr)
                                        : o["fill"].get<float>();
    }
    if (o.contains("scale")) options.scale = o["scale"].get<float>();
    if (o.contains("softcap")) options.softcap = o["softcap"].get<float>();
    if (o.contains("alibiSlopes"))
      options.alibi_slopes = o["alibiSlopes"].get<std::vector<float>>();
    if (o.contains("sinks")) options.sinks = o["sinks"].get<std::vector<float>>();
  }
  ModernCase(const ModernCase&) = delete;
  ModernCase& operator=(const ModernCase&) = delete;

  // The 4-D (or 3-D) shape of `t`, a Tensor3 of B * h matrices: [B, h, rows, cols], or
  // [B, rows, cols] in a 3-D case. Requires t.batch == B * h.
  std::vector<Index> shape(const Tensor3& t, Index h) const {
    REQUIRE(t.batch == batch * h);
    if (four_d) return {batch, h, t.rows, t.cols};
    return {batch, t.rows, t.cols};
  }

  bool four_d;
  Index batch = 0, heads = 1, kv_heads = 1, nq = 0, nk = 0;
  Tensor3 q, k, v, grad_output;
  attn::AttentionOptions options;

 private:
  // [B, H, n, d] as Tensor3(B * H, n, d); [B, n, d] as it is.
  static Tensor3 tensor(const json& t) {
    const auto shape = fixtures::shape_of(t);
    if (shape.size() == 3) return fixtures::to_tensor3(t);
    REQUIRE(shape.size() == 4);
    Tensor3 out(shape[0] * shape[1], shape[2], shape[3]);
    out.data = fixtures::data_of<float>(t);
    return out;
  }

  // A bool or additive mask [nq, nk] (broadcast), [B, nq, nk] or [B, H, nq, nk]. The core takes
  // one block for all score matrices or one per matrix (B * heads): a [B, nq, nk] mask of a
  // case with several heads is repeated for each head of its batch row.
  void read_mask(const json& t) {
    const auto shape = fixtures::shape_of(t);
    const bool additive = t.value("dtype", "bool") == "float32";
    const auto values = fixtures::data_of<float>(t);
    const size_t block = static_cast<size_t>(nq * nk);
    REQUIRE(values.size() % block == 0);
    Index blocks = static_cast<Index>(values.size() / block);
    std::vector<float> expanded;
    if (shape.size() == 3 && heads > 1) {
      for (Index b = 0; b < batch; ++b) {
        for (Index h = 0; h < heads; ++h) {
          expanded.insert(expanded.end(), values.begin() + static_cast<std::ptrdiff_t>(b * block),
                          values.begin() + static_cast<std::ptrdiff_t>((b + 1) * block));
        }
      }
      blocks = batch * heads;
    } else {
      expanded = values;
    }
    if (additive) {
      additive_ = expanded;
      options.mask.additive = additive_.data();
      options.mask.additive_batch = blocks;
    } else {
      REQUIRE(
          std::all_of(expanded.begin(), expanded.end(), [](float x) { return x == 0 || x == 1; }));
      bool_mask_.assign(expanded.begin(), expanded.end());
      options.mask.bool_mask = bool_mask_.data();
      options.mask.bool_mask_batch = blocks;
    }
  }

  std::vector<uint8_t> bool_mask_;
  std::vector<float> additive_;
};

struct Results {
  attn::AttentionResult forward;
  attn::AttentionGradients backward;
};

Results run(const ModernCase& m, bool need_weights) {
  return {attn::scaled_dot_product_attention(m.q, m.k, m.v, m.options, need_weights, true),
          attn::scaled_dot_product_attention_backward(m.q, m.k, m.v, m.grad_output, m.options)};
}

// The fixtures' rule on a result of B * h matrices (h: the query or the K/V heads).
void check(const ModernCase& m, const Tensor3& got, Index h, const json& want, const json& expected,
           const std::string& what) {
  INFO(what);
  fixtures::check(got.data.data(), m.shape(got, h), want, expected, what);
}

// The lse: the fixtures' rule, then entry by entry |got - want| <= 2e-4 * max(1, |want|).
void check_lse(const std::vector<float>& got, const std::vector<Index>& shape, const json& want,
               const json& expected) {
  INFO("lse");
  Index size = 1;
  for (Index n : shape) size *= n;
  REQUIRE(static_cast<Index>(got.size()) == size);
  fixtures::check(got.data(), shape, want, expected, "lse");
  const auto values = fixtures::data_of<double>(want);
  size_t mismatches = 0, first = 0;
  for (size_t i = values.size(); i-- > 0;) {
    if (!(std::abs(got[i] - values[i]) <= 2e-4 * std::max(1.0, std::abs(values[i])))) {
      ++mismatches;
      first = i;
    }
  }
  if (mismatches > 0) {
    INFO(mismatches << " of " << values.size() << " lse entries beyond 2e-4 * max(1, |want|); the "
                    << "first, at " << first << ": got " << got[first] << ", want "
                    << values[first]);
    CHECK(mismatches == 0);
  }
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

void check_same_bits(const Results& got, const Results& first) {
  CHECK(same_bits(got.forward.output.data, first.forward.output.data));
  CHECK(same_bits(got.forward.weights.data, first.forward.weights.data));
  CHECK(same_bits(got.forward.lse, first.forward.lse));
  CHECK(same_bits(got.backward.dq.data, first.backward.dq.data));
  CHECK(same_bits(got.backward.dk.data, first.backward.dk.data));
  CHECK(same_bits(got.backward.dv.data, first.backward.dv.data));
  CHECK(same_bits(got.backward.dsinks, first.backward.dsinks));
}

// Restores the single-threaded default when a test section ends, passing or failing.
struct SingleThreadAfter {
  ~SingleThreadAfter() { attn::set_threads(1); }
};

}  // namespace

TEST_CASE("grouped-query attention with score modifiers matches PyTorch", "[modern]") {
  const SingleThreadAfter restore;
  // Read once: Catch2 runs this body once per section.
  static const std::vector<fixtures::Case> cases = fixtures::load("modern/sdpa.json");
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      const ModernCase m(c);
      const json& e = c.expected;
      const bool need_weights = e.contains("weights");

      attn::set_threads(1);
      const Results first = run(m, need_weights);
      const auto& forward = first.forward;
      check(m, forward.output, m.heads, e["output"], e, "output");
      if (need_weights) check(m, forward.weights, m.heads, e["weights"], e, "weights");
      check_lse(
          forward.lse,
          m.four_d ? std::vector<Index>{m.batch, m.heads, m.nq} : std::vector<Index>{m.batch, m.nq},
          e["lse"], e);

      const auto& grads = first.backward;
      check(m, grads.dq, m.heads, e["dq"], e, "dq");
      // dk, dv: one per K/V head, each the sum over its group of query heads.
      check(m, grads.dk, m.kv_heads, e["dk"], e, "dk");
      check(m, grads.dv, m.kv_heads, e["dv"], e, "dv");
      if (e.contains("dsinks")) {
        fixtures::check(grads.dsinks.data(), {static_cast<Index>(grads.dsinks.size())}, e["dsinks"],
                        e, "dsinks");
      } else {
        CHECK(grads.dsinks.empty());
      }

      for (int threads : {2, 3, 7}) {
        INFO(threads << " threads");
        attn::set_threads(threads);
        check_same_bits(run(m, need_weights), first);
      }
      attn::set_threads(1);
    }
  }
}
