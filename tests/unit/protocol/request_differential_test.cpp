// parse_request against the nlohmann::json implementation it replaced: every result field must be
// identical, on hand-picked edge cases and on tens of thousands of generated and mutated inputs.

#include "protocol/request.hpp"
#include "tests/unit/protocol/request_corpus.hpp"
#include "tests/unit/protocol/request_reference.hpp"

#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <sstream>
#include <string>

namespace parley::protocol {
namespace {

std::string describe(const std::optional<std::int64_t>& value) {
    return value ? std::to_string(*value) : std::string("none");
}

std::string describe(const parse_result_request& r) {
    std::ostringstream out;
    if (r.value) {
        const request& q = *r.value;
        out << "ok type=" << static_cast<int>(q.type) << " id=" << corpus::printable(q.id)
            << " user=" << corpus::printable(q.user) << " token=" << corpus::printable(q.token)
            << " room=" << corpus::printable(q.room) << " to=" << corpus::printable(q.to)
            << " text=" << corpus::printable(q.text) << " after=" << describe(q.after)
            << " before=" << describe(q.before) << " epoch=" << describe(q.epoch) << " limit=" << describe(q.limit)
            << " with=" << corpus::printable(q.with) << " seq=" << describe(q.seq)
            << " reason=" << corpus::printable(q.reason) << " role=" << corpus::printable(q.role)
            << " duration_s=" << describe(q.duration_s) << " interval_s=" << describe(q.interval_s);
    } else {
        out << "value=none";
    }
    out << " error=" << wire_name(r.error) << " message=" << corpus::printable(r.message)
        << " id=" << corpus::printable(r.id);
    return out.str();
}

bool same_request(const request& a, const request& b) {
    return a.type == b.type && a.id == b.id && a.user == b.user && a.token == b.token && a.room == b.room &&
           a.to == b.to && a.text == b.text && a.after == b.after && a.before == b.before && a.epoch == b.epoch &&
           a.limit == b.limit && a.with == b.with && a.seq == b.seq && a.reason == b.reason && a.role == b.role &&
           a.duration_s == b.duration_s && a.interval_s == b.interval_s && a.after_name == b.after_name;
}

bool same_result(const parse_result_request& a, const parse_result_request& b) {
    if (a.value.has_value() != b.value.has_value()) {
        return false;
    }
    if (a.value && !same_request(*a.value, *b.value)) {
        return false;
    }
    return a.error == b.error && a.message == b.message && a.id == b.id;
}

::testing::AssertionResult agrees_with_reference(std::string_view text) {
    const auto expected = reference::parse_request_reference(text);
    const auto actual = parse_request(text);
    if (same_result(expected, actual)) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "input:     " << corpus::printable(text)
                                         << "\nreference: " << describe(expected)
                                         << "\nnew:       " << describe(actual);
}

// How the results split, so a test that only ever sees one kind of outcome fails.
struct outcome_counts {
    std::size_t accepted = 0;
    std::size_t bad_json = 0;
    std::size_t bad_request = 0;
    std::size_t unknown_type = 0;

    void add(std::string_view text) {
        const auto r = parse_request(text);
        if (r.value) {
            ++accepted;
        } else if (r.error == error_code::bad_json) {
            ++bad_json;
        } else if (r.error == error_code::bad_request) {
            ++bad_request;
        } else if (r.error == error_code::unknown_type) {
            ++unknown_type;
        }
    }
};

// Stops the run after a few disagreements: one is enough to fail, a flood helps nobody.
constexpr int max_reported = 10;

TEST(parse_request_differential, tricky_inputs_match_the_reference) {
    const auto inputs = corpus::tricky_inputs();
    ASSERT_GT(inputs.size(), 1000u);
    outcome_counts counts;
    int failures = 0;
    for (const auto& text : inputs) {
        counts.add(text);
        const auto verdict = agrees_with_reference(text);
        EXPECT_TRUE(verdict);
        if (!verdict && ++failures == max_reported) {
            break;
        }
    }
    EXPECT_GT(counts.accepted, 300u);
    EXPECT_GT(counts.bad_json, 300u);
    EXPECT_GT(counts.bad_request, 100u);
    EXPECT_GT(counts.unknown_type, 10u);
}

TEST(parse_request_differential, generated_and_mutated_inputs_match_the_reference) {
    constexpr int requests = 40'000;
    constexpr int mutations_each = 3;
    corpus::generator generate(20240611);
    outcome_counts generated;
    outcome_counts mutated;
    int failures = 0;
    for (int i = 0; i < requests && failures < max_reported; ++i) {
        const std::string text = generate.request();
        generated.add(text);
        auto verdict = agrees_with_reference(text);
        EXPECT_TRUE(verdict);
        failures += verdict ? 0 : 1;
        for (int m = 0; m < mutations_each; ++m) {
            const std::string changed = generate.mutate(text);
            mutated.add(changed);
            verdict = agrees_with_reference(changed);
            EXPECT_TRUE(verdict);
            failures += verdict ? 0 : 1;
        }
    }
    // Generated requests are well-formed apart from numbers that overflow a double and keys with
    // one byte of a character escaped, so most outcomes are request-level ones.
    EXPECT_LT(generated.bad_json, requests / 5u);
    EXPECT_GT(generated.accepted, requests / 10u);
    EXPECT_GT(generated.bad_request, requests / 10u);
    EXPECT_GT(generated.unknown_type, requests / 50u);
    // Mutations must reach both sides of the syntax check, or they test nothing.
    EXPECT_GT(mutated.bad_json, requests);
    EXPECT_GT(mutated.accepted + mutated.bad_request + mutated.unknown_type, requests / 5u);
}

TEST(parse_request_differential, short_random_fragments_match_the_reference) {
    constexpr int inputs = 200'000;
    corpus::generator generate(5);
    outcome_counts counts;
    int failures = 0;
    for (int i = 0; i < inputs && failures < max_reported; ++i) {
        const std::string text = generate.fragment_request();
        counts.add(text);
        const auto verdict = agrees_with_reference(text);
        EXPECT_TRUE(verdict);
        failures += verdict ? 0 : 1;
    }
    EXPECT_GT(counts.accepted + counts.bad_request + counts.unknown_type, inputs / 20u);
    EXPECT_GT(counts.bad_json, inputs / 2u);
}

TEST(parse_request_differential, comparison_notices_differences) {
    // The comparison itself must be able to fail: a different id, message or field counts.
    const auto base = parse_request(R"({"type":"say","room":"r","text":"t","id":1})");
    auto other = base;
    other.value->id = "2";
    EXPECT_FALSE(same_result(base, other));
    other = base;
    other.value->text = "u";
    EXPECT_FALSE(same_result(base, other));
    other = base;
    other.value->after = 0;
    EXPECT_FALSE(same_result(base, other));
    auto failed = parse_request(R"({"type":"say","id":1})");
    auto changed = failed;
    changed.message += ".";
    EXPECT_FALSE(same_result(failed, changed));
    changed = failed;
    changed.id.clear();
    EXPECT_FALSE(same_result(failed, changed));
    EXPECT_FALSE(same_result(base, failed));
}

}  // namespace
}  // namespace parley::protocol
