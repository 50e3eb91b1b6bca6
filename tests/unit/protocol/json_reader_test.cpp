// read_json_object against nlohmann::json's DOM: the same accept/reject verdict, and for the keys
// asked for the same presence, kind and value (last duplicate wins, strings unescaped, numbers
// classified as unsigned, integer or floating the same way).

#include "protocol/json_reader.hpp"
#include "tests/unit/protocol/request_corpus.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <string>

namespace parley::protocol {
namespace {

using json = nlohmann::json;
using namespace std::string_literals;

const std::array<std::string_view, 15> keys = {
    "type", "id", "user", "token", "room", "to", "text", "after", "before", "epoch", "limit", "x", "", "\xc3\xa9",
    std::string_view("a\0b", 3),
};
using values_t = std::array<std::optional<json_value>, keys.size()>;

json_kind kind_of(const json& value) {
    switch (value.type()) {
    case json::value_t::null: return json_kind::null;
    case json::value_t::boolean: return json_kind::boolean;
    case json::value_t::string: return json_kind::string;
    case json::value_t::number_integer: return json_kind::integer;
    case json::value_t::number_unsigned: return json_kind::unsigned_integer;
    case json::value_t::number_float: return json_kind::floating;
    case json::value_t::array: return json_kind::array;
    default: return json_kind::object;
    }
}

::testing::AssertionResult agrees_with_nlohmann(std::string_view text) {
    const json dom = json::parse(text, nullptr, false);
    const bool expected = !dom.is_discarded() && dom.is_object();
    values_t values;
    const bool actual = read_json_object(text, keys, values);
    if (expected != actual) {
        return ::testing::AssertionFailure() << "nlohmann " << (expected ? "accepts" : "rejects")
                                             << ", the reader does not: " << corpus::printable(text);
    }
    if (!actual) {
        return ::testing::AssertionSuccess();
    }
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const auto it = dom.find(std::string(keys[i]));
        const auto where = [&] {
            return "key '" + corpus::printable(keys[i]) + "' in " + corpus::printable(text);
        };
        if ((it != dom.end()) != values[i].has_value()) {
            return ::testing::AssertionFailure() << "presence differs for " << where();
        }
        if (it == dom.end()) {
            continue;
        }
        const json_value& v = *values[i];
        if (kind_of(*it) != v.kind) {
            return ::testing::AssertionFailure() << "kind " << static_cast<int>(v.kind) << " instead of "
                                                 << static_cast<int>(kind_of(*it)) << " for " << where();
        }
        if (v.kind == json_kind::string) {
            std::string value;
            assign_string(value, v);
            if (value != it->get_ref<const std::string&>()) {
                return ::testing::AssertionFailure() << "string " << corpus::printable(value) << " for " << where();
            }
        } else if (v.kind == json_kind::integer && v.integer != it->get<std::int64_t>()) {
            return ::testing::AssertionFailure() << "integer " << v.integer << " for " << where();
        } else if (v.kind == json_kind::unsigned_integer && v.unsigned_integer != it->get<std::uint64_t>()) {
            return ::testing::AssertionFailure() << "unsigned " << v.unsigned_integer << " for " << where();
        }
    }
    return ::testing::AssertionSuccess();
}

TEST(read_json_object, tricky_inputs_match_nlohmann) {
    int failures = 0;
    for (const auto& text : corpus::tricky_inputs()) {
        const auto verdict = agrees_with_nlohmann(text);
        EXPECT_TRUE(verdict);
        if (!verdict && ++failures == 10) {
            break;
        }
    }
}

TEST(read_json_object, generated_and_mutated_inputs_match_nlohmann) {
    corpus::generator generate(77);
    int failures = 0;
    for (int i = 0; i < 20'000 && failures < 10; ++i) {
        std::string text = generate.request();
        for (int m = 0; m < 3; ++m) {
            const auto verdict = agrees_with_nlohmann(text);
            EXPECT_TRUE(verdict);
            failures += verdict ? 0 : 1;
            text = generate.mutate(text);
        }
    }
}

TEST(read_json_object, number_kinds) {
    const std::array<std::pair<std::string, json_kind>, 12> cases = {{
        {"0", json_kind::unsigned_integer},
        {"-0", json_kind::integer},
        {"18446744073709551615", json_kind::unsigned_integer},
        {"18446744073709551616", json_kind::floating},
        {"-9223372036854775808", json_kind::integer},
        {"-9223372036854775809", json_kind::floating},
        {"1.0", json_kind::floating},
        {"1e2", json_kind::floating},
        {"true", json_kind::boolean},
        {"null", json_kind::null},
        {"[1,{}]", json_kind::array},
        {"{\"a\":[]}", json_kind::object},
    }};
    for (const auto& [value_text, kind] : cases) {
        values_t values;
        ASSERT_TRUE(read_json_object(R"({"x":)" + value_text + "}", keys, values)) << value_text;
        ASSERT_TRUE(values[11].has_value());
        EXPECT_EQ(values[11]->kind, kind) << value_text;
    }
    values_t values;
    ASSERT_TRUE(read_json_object(R"({"x":-9223372036854775808,"id":18446744073709551615})", keys, values));
    EXPECT_EQ(values[11]->integer, INT64_MIN);
    EXPECT_EQ(values[1]->unsigned_integer, UINT64_MAX);
    EXPECT_FALSE(read_json_object(R"({"x":1e309})", keys, values)) << "overflows a double";
    EXPECT_FALSE(read_json_object(R"({"x":[[-2)" + std::string(308, '0') + "]]}", keys, values));
    EXPECT_TRUE(read_json_object(R"({"x":[[-1)" + std::string(308, '0') + "]]}", keys, values));
}

TEST(read_json_object, last_duplicate_wins_and_keys_are_compared_unescaped) {
    values_t values;
    ASSERT_TRUE(read_json_object(R"({"type":"a","t\u0079pe":"b","x":1,"\u0078":null})", keys, values));
    std::string type;
    assign_string(type, *values[0]);
    EXPECT_EQ(type, "b");
    EXPECT_EQ(values[11]->kind, json_kind::null);
    EXPECT_FALSE(values[1].has_value());
}

TEST(read_json_object, strings_are_unescaped_to_utf8) {
    values_t values;
    ASSERT_TRUE(read_json_object(R"({"text":"a\"\\\/\b\f\n\r\t\u0041\u00e9\u20AC\uD83D\uDE00\u0000z"})", keys, values));
    std::string text;
    assign_string(text, *values[6]);
    EXPECT_EQ(text, "a\"\\/\b\f\n\r\tA\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\0z"s);
    EXPECT_TRUE(values[6]->escaped);
    ASSERT_TRUE(read_json_object(R"({"text":"plain \u0000"})", keys, values));
    ASSERT_TRUE(read_json_object(R"({"text":"plain"})", keys, values));
    EXPECT_FALSE(values[6]->escaped);
    EXPECT_EQ(values[6]->raw, "plain");
}

TEST(read_json_object, deep_nesting_is_validated_without_recursion) {
    // Far deeper than any stack would allow recursing, with the kind of each level mattering.
    constexpr int depth = 200'000;
    std::string open;
    std::string close;
    for (int i = 0; i < depth; ++i) {
        open += i % 2 == 0 ? "[" : "{\"k\":";
        close.insert(close.end(), i % 2 == 0 ? ']' : '}');
    }
    const std::string closers(close.rbegin(), close.rend());
    values_t values;
    EXPECT_TRUE(read_json_object(R"({"x":)" + open + "0" + closers + "}", keys, values));
    EXPECT_EQ(values[11]->kind, json_kind::array);
    std::string wrong = closers;
    wrong[depth / 3] = wrong[depth / 3] == ']' ? '}' : ']';
    EXPECT_FALSE(read_json_object(R"({"x":)" + open + "0" + wrong + "}", keys, values));
    EXPECT_FALSE(read_json_object(R"({"x":)" + open + "0" + closers.substr(1) + "}", keys, values));
}

}  // namespace
}  // namespace parley::protocol
