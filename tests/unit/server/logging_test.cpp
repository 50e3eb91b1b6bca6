// Log setup and formats: json lines that parse, with fields as members; the text line shape;
// a clear error for a log file that cannot be opened; level changes.

#include "server/logging.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace parley::server::tests {
namespace {

namespace fs = std::filesystem;

class logging_test : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "parley-log-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
        file_ = (dir_ / "parley.log").string();
    }
    void TearDown() override {
        setup_logging({});  // back to stderr, text, info
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }

    void use(config::log_format format, std::string level = "debug") {
        log_options o;
        o.level = std::move(level);
        o.format = format;
        o.file = file_;
        setup_logging(o);
    }

    std::vector<std::string> lines() {
        spdlog::default_logger()->flush();
        std::ifstream in(file_);
        std::vector<std::string> out;
        std::string line;
        while (std::getline(in, line)) {
            out.push_back(line);
        }
        return out;
    }

    std::vector<nlohmann::json> json_lines() {
        std::vector<nlohmann::json> out;
        for (const std::string& line : lines()) {
            auto j = nlohmann::json::parse(line, nullptr, false);
            EXPECT_FALSE(j.is_discarded()) << line;
            EXPECT_TRUE(j.is_object()) << line;
            out.push_back(j);
        }
        return out;
    }

    fs::path dir_;
    std::string file_;
};

// "2026-11-30T20:15:03.123Z": digits where the pattern has '9', the other characters as written.
bool is_timestamp(std::string_view s) {
    constexpr std::string_view shape = "9999-99-99T99:99:99.999Z";
    if (s.size() != shape.size()) {
        return false;
    }
    for (std::size_t i = 0; i < s.size(); ++i) {
        bool ok = shape[i] == '9' ? (s[i] >= '0' && s[i] <= '9') : s[i] == shape[i];
        if (!ok) {
            return false;
        }
    }
    return true;
}

TEST_F(logging_test, json_lines_parse_and_escape_the_message) {
    use(config::log_format::json);
    spdlog::info("say \"hi\"\nback\\slash {}", std::string("\x01\t"));
    spdlog::warn("bad utf-8: \xff\xc3( ok: h\xc3\xa9llo \xe2\x82\xac");

    auto got = json_lines();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0]["level"], "info");
    EXPECT_EQ(got[0]["logger"], "parley");
    EXPECT_EQ(got[0]["msg"], "say \"hi\"\nback\\slash \x01\t");
    std::string ts = got[0]["ts"];
    EXPECT_TRUE(is_timestamp(ts)) << ts;
    EXPECT_EQ(got[1]["level"], "warn");
    EXPECT_EQ(got[1]["msg"], "bad utf-8: \xef\xbf\xbd\xef\xbf\xbd( ok: h\xc3\xa9llo \xe2\x82\xac");
}

TEST_F(logging_test, the_json_connection_closed_line_carries_its_fields_as_members) {
    use(config::log_format::json, "info");
    log_connection_closed({.connection = "c1.42",
                           .peer = "203.0.113.5:40122",
                           .user = "alice",
                           .duration_ms = 1234,
                           .close_code = 1008,
                           .reason = "slow consumer \"x\" peer=1.1.1.1:1"});
    log_connection_closed({.connection = "c0.7",
                           .peer = "[2001:db8::1]:9",
                           .user = "",
                           .duration_ms = 3,
                           .close_code = 0,
                           .reason = "close timeout"});

    auto got = json_lines();
    ASSERT_EQ(got.size(), 2u);
    const auto& j = got[0];
    EXPECT_EQ(j["level"], "info");
    EXPECT_EQ(j["msg"], "connection closed") << "the fields are members, not text in msg";
    EXPECT_EQ(j["peer"], "203.0.113.5:40122");
    EXPECT_EQ(j["user"], "alice");
    EXPECT_EQ(j["duration_ms"], 1234);
    EXPECT_TRUE(j["duration_ms"].is_number_unsigned());
    EXPECT_EQ(j["close_code"], 1008);
    EXPECT_EQ(j["reason"], "slow consumer \"x\" peer=1.1.1.1:1") << "text from a reason cannot forge a field";
    EXPECT_EQ(j["conn"], "c1.42");
    EXPECT_EQ(j.size(), 10u) << j.dump();  // ts level logger msg + six fields

    EXPECT_EQ(got[1]["user"], "-") << "before a login";
    EXPECT_EQ(got[1]["close_code"], 0);
    EXPECT_EQ(got[1]["reason"], "close timeout");
}

TEST_F(logging_test, the_text_connection_closed_line_is_logfmt) {
    use(config::log_format::text, "info");
    log_connection_closed({.connection = "c1.42",
                           .peer = "203.0.113.5:40122",
                           .user = "alice",
                           .duration_ms = 1234,
                           .close_code = 1000,
                           .reason = "closed by client"});
    auto got = lines();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_NE(got[0].find(" info parley: connection closed peer=203.0.113.5:40122 user=alice duration_ms=1234 "
                          "close_code=1000 reason=\"closed by client\" conn=c1.42"),
              std::string::npos)
        << got[0];
}

TEST_F(logging_test, the_connection_closed_line_is_written_at_info) {
    use(config::log_format::json, "warn");
    log_connection_closed(
        {.connection = "c0.1", .peer = "203.0.113.5:1", .user = "a", .duration_ms = 1, .close_code = 1000, .reason = "x"});
    EXPECT_TRUE(lines().empty());
}

TEST_F(logging_test, json_fields_become_members) {
    use(config::log_format::json);
    std::string user = "alice \"the\" great";
    spdlog::info("{}", fields("connection closed")
                           .add("peer", std::string("1.2.3.4:5678"))
                           .add("user", user)
                           .add("duration_ms", 1234)
                           .add("bytes_in", std::uint64_t{18446744073709551615ULL})
                           .add("delta", -5)
                           .add("ratio", 0.5)
                           .add("clean", true)
                           .add("reason", "slow consumer")
                           .add("msg", "a reserved key"));

    auto got = json_lines();
    ASSERT_EQ(got.size(), 1u);
    const auto& j = got[0];
    EXPECT_EQ(j["msg"], "connection closed");
    EXPECT_EQ(j["peer"], "1.2.3.4:5678");
    EXPECT_EQ(j["user"], user);
    EXPECT_EQ(j["duration_ms"], 1234);
    EXPECT_EQ(j["bytes_in"].get<std::uint64_t>(), 18446744073709551615ULL);
    EXPECT_EQ(j["delta"], -5);
    EXPECT_DOUBLE_EQ(j["ratio"].get<double>(), 0.5);
    EXPECT_EQ(j["clean"], true);
    EXPECT_EQ(j["reason"], "slow consumer");
    EXPECT_EQ(j["_msg"], "a reserved key");
    EXPECT_EQ(j["level"], "info");
}

TEST_F(logging_test, json_fields_cannot_be_forged_and_degrade_to_text) {
    use(config::log_format::json);
    spdlog::info("{}", "hello user=evil");                               // plain text that looks like fields
    spdlog::info("before {} after", fields("inner").add("k", 1));        // fields as part of a message
    std::string stale = fmt::format("{}", fields("stale").add("x", 2));  // formatted, never logged
    spdlog::info("{}", "stale");

    auto got = json_lines();
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0]["msg"], "hello user=evil");
    EXPECT_FALSE(got[0].contains("user"));
    EXPECT_EQ(got[1]["msg"], "before inner k=1 after");
    EXPECT_FALSE(got[1].contains("k"));
    EXPECT_EQ(stale, "stale x=2");
    EXPECT_EQ(got[2]["msg"], "stale");
    EXPECT_FALSE(got[2].contains("x"));
}

TEST_F(logging_test, text_line_shape_and_fields) {
    use(config::log_format::text);
    spdlog::info("hello {}", 42);
    spdlog::error("{}", fields("connection closed")
                            .add("peer", "1.2.3.4:5678")
                            .add("user", "alice")
                            .add("duration_ms", 1234)
                            .add("reason", "slow consumer")
                            .add("quote", "a\"b\\c")
                            .add("empty", "")
                            .add("eq", "a=b")
                            .add("nl", "x\ny"));
    spdlog::warn("two\nlines");

    auto got = lines();
    ASSERT_EQ(got.size(), 3u);
    std::size_t space = got[0].find(' ');
    EXPECT_TRUE(is_timestamp(got[0].substr(0, space))) << got[0];
    EXPECT_EQ(got[0].substr(space + 1), "info parley: hello 42");
    std::string rest = got[1].substr(got[1].find(' ') + 1);
    EXPECT_EQ(rest,
              "error parley: connection closed peer=1.2.3.4:5678 user=alice duration_ms=1234 "
              "reason=\"slow consumer\" quote=\"a\\\"b\\\\c\" empty=\"\" eq=\"a=b\" nl=\"x\\ny\"");
    EXPECT_EQ(got[2].substr(got[2].find(' ') + 1), "warn parley: two\\nlines");
}

TEST_F(logging_test, file_is_appended_to) {
    use(config::log_format::text);
    spdlog::info("first");
    use(config::log_format::text);
    spdlog::info("second");
    auto got = lines();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_NE(got[0].find("first"), std::string::npos);
    EXPECT_NE(got[1].find("second"), std::string::npos);
}

TEST_F(logging_test, unopenable_file_is_a_clear_error) {
    log_options o;
    o.file = (dir_ / "missing-dir" / "parley.log").string();
    try {
        setup_logging(o);
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "cannot open log file " + o.file + ": No such file or directory");
    }
    EXPECT_FALSE(fs::exists(dir_ / "missing-dir"));  // no directory created behind the user's back

    o.file = dir_.string();  // a directory
    EXPECT_THROW(setup_logging(o), std::runtime_error);
}

// The format is an enumeration, read and checked by the config loader (tests/unit/config).
TEST_F(logging_test, bad_level_is_a_clear_error) {
    log_options o;
    o.level = "loud";
    try {
        setup_logging(o);
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("unknown log level 'loud'"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(valid_log_level("warn"));
    EXPECT_FALSE(valid_log_level("warning"));
}

TEST_F(logging_test, level_changes_take_effect) {
    use(config::log_format::json, "info");
    spdlog::debug("hidden 1");
    spdlog::debug("{}", fields("hidden 2").add("k", "v"));
    spdlog::info("shown 1");
    set_log_level("debug");
    spdlog::debug("shown 2");
    set_log_level("error");
    spdlog::warn("hidden 3");
    spdlog::error("shown 3");
    EXPECT_THROW(set_log_level("chatty"), std::runtime_error);
    spdlog::info("hidden 4");  // still at error

    auto got = json_lines();
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0]["msg"], "shown 1");
    EXPECT_EQ(got[1]["msg"], "shown 2");
    EXPECT_EQ(got[1]["level"], "debug");
    EXPECT_EQ(got[2]["msg"], "shown 3");
}

TEST(fields, text_and_json_members) {
    std::string owned = "owned value";
    auto f = fields("msg here").add("a", 1).add("b", "two words").add("c", owned).add("level", false);
    EXPECT_EQ(f.text(), "msg here a=1 b=\"two words\" c=\"owned value\" level=false");
    EXPECT_EQ(f.json_members(), R"(,"a":1,"b":"two words","c":"owned value","_level":false)");
    EXPECT_EQ(fields("nothing").text(), "nothing");
    EXPECT_EQ(fields("nothing").json_members(), "");
}

}  // namespace
}  // namespace parley::server::tests
