// Server message encoders: complete text frames whose payload is the JSON of protocol v1.

#include "protocol/frame_encoder.hpp"
#include "protocol/json_text.hpp"
#include "protocol/server_messages.hpp"
#include "protocol/utf8.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace parley::protocol {
namespace {

using json = nlohmann::json;

// Checks the frame header (FIN, text, unmasked, exact length) and returns the payload's JSON.
json decode(const shared_frame& frame) {
    std::string_view bytes = frame.view();
    EXPECT_GE(bytes.size(), 2u);
    if (bytes.size() < 2) {
        return json();
    }
    EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x81) << "FIN + text";
    EXPECT_EQ(static_cast<unsigned char>(bytes[1]) & 0x80, 0) << "server frames are not masked";
    std::string_view payload = frame_payload(bytes);
    EXPECT_EQ(frame_header_size(payload.size()) + payload.size(), bytes.size());
    EXPECT_TRUE(is_valid_utf8(payload));
    return json::parse(payload);
}

std::string_view raw_payload(const shared_frame& frame) { return frame_payload(frame.view()); }

TEST(server_messages, welcome) {
    EXPECT_EQ(decode(encode_welcome("alice", "")), (json{{"type", "welcome"}, {"user", "alice"}}));
    EXPECT_EQ(decode(encode_welcome("alice", "\"l1\"")), (json{{"type", "welcome"}, {"user", "alice"}, {"re", "l1"}}));
    EXPECT_EQ(decode(encode_welcome("alice", "17")), (json{{"type", "welcome"}, {"user", "alice"}, {"re", 17}}));
}

TEST(server_messages, message_dm_presence_typing_system) {
    EXPECT_EQ(decode(encode_message("lobby", "bob", "hi", 7, 1700000000123)),
              (json{{"type", "message"}, {"room", "lobby"}, {"from", "bob"}, {"text", "hi"}, {"seq", 7},
                    {"ts", 1700000000123}}));
    EXPECT_EQ(decode(encode_dm("bob", "carol", "psst", 5)),
              (json{{"type", "dm"}, {"from", "bob"}, {"to", "carol"}, {"text", "psst"}, {"ts", 5}}));
    EXPECT_EQ(decode(encode_presence("lobby", "bob", true)),
              (json{{"type", "presence"}, {"room", "lobby"}, {"user", "bob"}, {"event", "join"}}));
    EXPECT_EQ(decode(encode_presence("lobby", "bob", false)),
              (json{{"type", "presence"}, {"room", "lobby"}, {"user", "bob"}, {"event", "leave"}}));
    EXPECT_EQ(decode(encode_typing("lobby", "bob")), (json{{"type", "typing"}, {"room", "lobby"}, {"user", "bob"}}));
    EXPECT_EQ(decode(encode_system("bob disconnected")), (json{{"type", "system"}, {"text", "bob disconnected"}}));
}

TEST(server_messages, joined_embeds_history_and_recovered_when_given) {
    std::vector<shared_frame> history{encode_message("r", "a", "one", 1, 10), encode_message("r", "b", "two", 2, 20)};
    json j = decode(encode_joined("r", 99, member_list{{"a", "b"}, 2, false}, history, std::nullopt, "\"j\""));
    EXPECT_EQ(j["type"], "joined");
    EXPECT_EQ(j["room"], "r");
    EXPECT_EQ(j["epoch"], 99);
    EXPECT_EQ(j["members"], (json{"a", "b"}));
    EXPECT_EQ(j["member_count"], 2);
    EXPECT_FALSE(j.contains("members_truncated"));
    ASSERT_EQ(j["history"].size(), 2u);
    EXPECT_EQ(j["history"][0], decode(history[0]));
    EXPECT_EQ(j["history"][1], decode(history[1]));
    EXPECT_FALSE(j.contains("recovered"));
    EXPECT_EQ(j["re"], "j");

    json recovered = decode(encode_joined("r", 1, member_list{{"a"}, 1, false}, {}, true, ""));
    EXPECT_EQ(recovered["recovered"], true);
    EXPECT_EQ(recovered["history"], json::array());
    EXPECT_FALSE(recovered.contains("re"));
    EXPECT_EQ(decode(encode_joined("r", 1, {}, {}, false, ""))["recovered"], false);
    EXPECT_EQ(decode(encode_joined("r", 1, {}, {}, false, ""))["members"], json::array());
}

TEST(server_messages, a_big_room_joined_lists_the_start_with_the_count) {
    json j = decode(encode_joined("big", 1, member_list{{"a", "b"}, 20000, true}, {}, std::nullopt, ""));
    EXPECT_EQ(j["members"], (json{"a", "b"}));
    EXPECT_EQ(j["member_count"], 20000);
    EXPECT_EQ(j["members_truncated"], true);
}

TEST(server_messages, members_pages_and_presence_count) {
    EXPECT_EQ(decode(encode_members("big", member_list{{"c", "d"}, 7, false}, true, "5")),
              (json{{"type", "members"}, {"room", "big"}, {"members", {"c", "d"}}, {"member_count", 7}, {"more", true},
                    {"re", 5}}));
    EXPECT_EQ(decode(encode_members("big", member_list{{}, 7, false}, false, "")),
              (json{{"type", "members"}, {"room", "big"}, {"members", json::array()}, {"member_count", 7},
                    {"more", false}}));
    EXPECT_EQ(decode(encode_presence_count("big", 12345)),
              (json{{"type", "presence_count"}, {"room", "big"}, {"count", 12345}}));
}

TEST(server_messages, left) {
    EXPECT_EQ(decode(encode_left("r", "")), (json{{"type", "left"}, {"room", "r"}}));
    EXPECT_EQ(decode(encode_left("r", "3")), (json{{"type", "left"}, {"room", "r"}, {"re", 3}}));
}

TEST(server_messages, users_and_rooms) {
    EXPECT_EQ(decode(encode_users({}, "")), (json{{"type", "users"}, {"users", json::array()}}));
    EXPECT_EQ(decode(encode_users({"a", "b"}, "\"u\"")),
              (json{{"type", "users"}, {"users", {"a", "b"}}, {"re", "u"}}));
    EXPECT_EQ(decode(encode_rooms({}, "")), (json{{"type", "rooms"}, {"rooms", json::array()}}));
    EXPECT_EQ(decode(encode_rooms({{"a", 1}, {"b", 250000}}, "1")),
              (json{{"type", "rooms"},
                    {"rooms", {{{"name", "a"}, {"members", 1}}, {{"name", "b"}, {"members", 250000}}}},
                    {"re", 1}}));
}

TEST(server_messages, history) {
    std::vector<shared_frame> messages{encode_message("r", "a", "x", 3, 30)};
    json j = decode(encode_history("r", messages, "\"h\""));
    EXPECT_EQ(j, (json{{"type", "history"}, {"room", "r"}, {"messages", {decode(messages[0])}}, {"re", "h"}}));
    EXPECT_EQ(decode(encode_history("r", {}, "")),
              (json{{"type", "history"}, {"room", "r"}, {"messages", json::array()}}));
}

TEST(server_messages, ack_for_say_and_for_dm) {
    EXPECT_EQ(decode(encode_ack("\"s1\"", "r", 12)), (json{{"type", "ack"}, {"re", "s1"}, {"room", "r"}, {"seq", 12}}));
    EXPECT_EQ(decode(encode_ack("4", "", 0)), (json{{"type", "ack"}, {"re", 4}}));
}

TEST(server_messages, welcome_with_conversations) {
    std::vector<conversation_summary> list = {{false, "bob", 12, 9, 3}, {true, "lobby", 340, 340, 0}};
    EXPECT_EQ(decode(encode_welcome("alice", "1", list)),
              (json{{"type", "welcome"}, {"user", "alice"},
                    {"conversations", json::array({{{"with", "bob"}, {"seq", 12}, {"read", 9}, {"unread", 3}},
                                                   {{"room", "lobby"}, {"seq", 340}, {"read", 340}, {"unread", 0}}})},
                    {"re", 1}}));
    EXPECT_EQ(decode(encode_welcome("alice", "", {})),
              (json{{"type", "welcome"}, {"user", "alice"}, {"conversations", json::array()}}));
}

TEST(server_messages, stored_dm_its_ack_history_and_read_markers) {
    shared_frame dm = encode_dm("bob", "carol", "psst", 5, 4);
    EXPECT_EQ(decode(dm), (json{{"type", "dm"}, {"from", "bob"}, {"to", "carol"}, {"text", "psst"}, {"seq", 4},
                                {"ts", 5}}));
    // A cluster completes the text around the seq it assigns: the same bytes.
    message_text_around_seq around = encode_dm_around_seq("bob", "carol", "p\"s\nst", 5);
    EXPECT_EQ(around.before + "4" + around.after,
              std::string(frame_payload(encode_dm("bob", "carol", "p\"s\nst", 5, 4).view())));
    EXPECT_EQ(decode(encode_dm_ack("\"d\"", "carol", 4)),
              (json{{"type", "ack"}, {"re", "d"}, {"with", "carol"}, {"seq", 4}}));
    json page = decode(encode_dm_history("carol", 1700, {dm}, "3"));
    EXPECT_EQ(page, (json{{"type", "dm_history"}, {"with", "carol"}, {"epoch", 1700},
                          {"messages", json::array({decode(dm)})}, {"re", 3}}));
    EXPECT_EQ(decode(encode_dm_history("carol", std::nullopt, {}, "")),
              (json{{"type", "dm_history"}, {"with", "carol"}, {"messages", json::array()}}));
    EXPECT_EQ(decode(encode_read(true, "lobby", 7, "")), (json{{"type", "read"}, {"room", "lobby"}, {"seq", 7}}));
    EXPECT_EQ(decode(encode_read(false, "bob", 2, "9")),
              (json{{"type", "read"}, {"with", "bob"}, {"seq", 2}, {"re", 9}}));
}

TEST(server_messages, every_error_code) {
    for (std::size_t i = 0; i < error_code_count; ++i) {
        auto code = static_cast<error_code>(i);
        json j = decode(encode_error(code, default_message(code), ""));
        EXPECT_EQ(j["type"], "error");
        EXPECT_EQ(j["code"], std::string(wire_name(code)));
        EXPECT_EQ(j["message"], std::string(default_message(code)));
        EXPECT_FALSE(j.contains("re"));
        EXPECT_FALSE(default_message(code).empty());
    }
    EXPECT_EQ(wire_name(error_code::bad_json), "bad_json");
    EXPECT_EQ(wire_name(error_code::too_large), "too_large");
    EXPECT_EQ(wire_name(error_code::unavailable), "unavailable");
    EXPECT_EQ(decode(encode_error(error_code::not_in_room, "no", "\"e\""))["re"], "e");
}

TEST(server_messages, re_is_embedded_verbatim_only_when_given) {
    for (const char* re : {"\"x\"", "0", "-999999999999999999", R"("q\"b\\")", "\"\""}) {
        json j = decode(encode_left("r", re));
        EXPECT_EQ(j["re"], json::parse(re)) << re;
    }
    EXPECT_FALSE(decode(encode_users({"a"}, "")).contains("re"));
}

TEST(json_escaping, quotes_and_backslashes) {
    std::string text = R"(say "hi" \ and \" and \\)";
    shared_frame f = encode_system(text);
    EXPECT_EQ(decode(f)["text"], text);
    EXPECT_EQ(raw_payload(f), R"({"type":"system","text":"say \"hi\" \\ and \\\" and \\\\"})");
}

TEST(json_escaping, every_control_character_round_trips) {
    std::string text;
    for (int c = 0; c < 0x20; ++c) {
        text.push_back(static_cast<char>(c));
    }
    text += "\x7f end";
    shared_frame f = encode_message("r", "a", text, 1, 1);
    EXPECT_EQ(decode(f)["text"], text);
    std::string_view raw = raw_payload(f);
    for (unsigned char c : raw) {
        EXPECT_GE(c, 0x20) << "a raw control character in the JSON";
    }
    EXPECT_NE(raw.find(R"(\n)"), std::string_view::npos);
    EXPECT_NE(raw.find(R"(\t)"), std::string_view::npos);
    EXPECT_NE(raw.find(R"(\u0000)"), std::string_view::npos);
    EXPECT_NE(raw.find(R"(\u001f)"), std::string_view::npos);
}

// The byte-by-byte escaping the word-at-a-time scanner must agree with, from a table of what
// RFC 8259 asks for each byte: the short forms where JSON has one, \u00XX for other control
// characters, the byte itself for everything else.
std::string escaped_one_byte_at_a_time(std::string_view text) {
    static const std::array<std::string, 256> table = [] {
        std::array<std::string, 256> t;
        for (int c = 0; c < 256; ++c) {
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                t[static_cast<std::size_t>(c)] = buf;
            } else {
                t[static_cast<std::size_t>(c)] = std::string(1, static_cast<char>(c));
            }
        }
        const std::pair<char, const char*> short_forms[] = {
            {'"', "\\\""}, {'\\', "\\\\"}, {'\b', "\\b"}, {'\f', "\\f"}, {'\n', "\\n"}, {'\r', "\\r"}, {'\t', "\\t"}};
        for (const auto& [c, form] : short_forms) {
            t[static_cast<unsigned char>(c)] = form;
        }
        return t;
    }();
    std::string out = "\"";
    for (unsigned char c : text) {
        out += table[c];
    }
    return out + "\"";
}

TEST(json_escaping, escapes_are_found_at_every_offset_of_a_word) {
    // The scanner checks 8 bytes at once: a character that needs escaping must be found in
    // every position of a word, next to bytes with the high bit set, and in the short tail.
    const std::string specials = std::string("\"\\\n\x01\x1f\x00", 6);
    for (std::size_t length = 1; length <= 27; ++length) {
        for (std::size_t at = 0; at < length; ++at) {
            for (char special : specials) {
                for (char filler : {'a', '\x7f', '\xc3', ' '}) {
                    std::string text(length, filler);
                    text[at] = special;
                    std::string out;
                    parley::protocol::append_json_string(out, text);
                    ASSERT_EQ(out, escaped_one_byte_at_a_time(text))
                        << "length " << length << " at " << at << " special " << static_cast<int>(special);
                }
            }
        }
    }
}

TEST(json_escaping, random_text_matches_the_byte_by_byte_escaping) {
    std::mt19937 random(7);
    const std::string alphabet = std::string("ab \"\\\n\t\x02\x1f\x20\x21\x5b\x5d\x7f\x80\xc3\xa9\xff", 18);
    for (int round = 0; round < 20000; ++round) {
        std::string text(random() % 40, 'x');
        for (char& c : text) {
            c = alphabet[random() % alphabet.size()];
        }
        std::string out;
        parley::protocol::append_json_string(out, text);
        ASSERT_EQ(out, escaped_one_byte_at_a_time(text));
    }
}

TEST(json_escaping, utf8_passes_through_unescaped) {
    std::string text = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad";
    shared_frame f = encode_dm("a", "b", text, 1);
    EXPECT_EQ(decode(f)["text"], text);
    EXPECT_NE(raw_payload(f).find(text), std::string_view::npos) << "bytes copied as they are";
    EXPECT_EQ(raw_payload(f).find("\\u"), std::string_view::npos);
}

TEST(json_escaping, names_are_escaped_too) {
    json j = decode(encode_presence("r\"1", "u\\2", true));
    EXPECT_EQ(j["room"], "r\"1");
    EXPECT_EQ(j["user"], "u\\2");
    json users = decode(encode_users({"a\"b"}, ""));
    EXPECT_EQ(users["users"][0], "a\"b");
    json rooms = decode(encode_rooms({{"x\ny", 2}}, ""));
    EXPECT_EQ(rooms["rooms"][0]["name"], "x\ny");
}

TEST(server_messages, sizes_past_the_short_length_forms) {
    for (std::size_t size : {100u, 200u, 70'000u, 300'000u}) {
        std::string text(size, 'x');
        shared_frame f = encode_message("r", "a", text, 1, 1);
        EXPECT_EQ(decode(f)["text"], text) << size;
    }
    // After a huge message the scratch buffer is released; small ones still come out right.
    EXPECT_EQ(decode(encode_system("small")), (json{{"type", "system"}, {"text", "small"}}));
}

TEST(server_messages, each_frame_owns_its_bytes) {
    shared_frame first = encode_system("first");
    shared_frame second = encode_system("second, longer than the first");
    EXPECT_NE(first.identity(), second.identity());
    EXPECT_EQ(decode(first)["text"], "first") << "the encoder's scratch buffer is not shared";
    EXPECT_EQ(first.use_count(), 1);
}

TEST(server_messages, negative_and_extreme_integers) {
    json j = decode(encode_message("r", "a", "x", INT64_MAX, -1));
    EXPECT_EQ(j["seq"], INT64_MAX);
    EXPECT_EQ(j["ts"], -1);
    EXPECT_EQ(decode(encode_joined("r", INT64_MIN, {}, {}, std::nullopt, ""))["epoch"], INT64_MIN);
}

}  // namespace
}  // namespace parley::protocol

namespace parley::protocol {
namespace {

TEST(server_messages, a_frame_around_a_seq_is_the_frame_of_the_whole_json) {
    // A message as another node sent it, its seq's digits left out: spliced into one frame, it is
    // byte for byte the frame of the complete text (headers of every length class included).
    for (const std::size_t text_size : {std::size_t{10}, std::size_t{200}, std::size_t{70000}}) {
        const auto around = encode_message_around_seq("lobby", "ann", std::string(text_size, 'x'), 1700);
        for (const std::int64_t seq : {std::int64_t{1}, std::int64_t{42}, std::int64_t{9007199254740993}}) {
            const shared_frame spliced = frame_of_json_around(around.before, seq, around.after);
            const shared_frame whole = frame_of_json(around.before + std::to_string(seq) + around.after);
            EXPECT_EQ(spliced.view(), whole.view()) << text_size << " " << seq;
            // The same message a single node sends (its fields in another order).
            EXPECT_EQ(nlohmann::json::parse(frame_payload(spliced.view())),
                      nlohmann::json::parse(
                          frame_payload(encode_message("lobby", "ann", std::string(text_size, 'x'), seq, 1700).view())));
        }
    }
}

}  // namespace
}  // namespace parley::protocol
