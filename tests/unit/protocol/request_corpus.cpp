#include "tests/unit/protocol/request_corpus.hpp"

#include <array>
#include <cstdio>

namespace parley::protocol::corpus {
namespace {

using namespace std::string_literals;

// Numbers at every boundary of nlohmann::json's classification (unsigned, integer, float) and
// of the request rules (non-negative counts up to INT64_MAX, ids of at most 18 digits).
const std::vector<std::string>& edge_numbers() {
    static const std::vector<std::string> numbers = [] {
        std::vector<std::string> n = {
            "0", "-0", "1", "-1", "7", "17", "42", "-7",
            "0.0", "-0.0", "1.0", "2.5", "1e2", "1E2", "1e+2", "1e-2", "0e0", "-0e-0", "1.5E+10",
            "999999999999999999", "-999999999999999999", "1000000000000000000", "-1000000000000000000",
            "9223372036854775807", "9223372036854775808", "-9223372036854775807", "-9223372036854775808",
            "-9223372036854775809", "18446744073709551615", "18446744073709551616", "-18446744073709551616",
            "123456789012345678901234567890", "1e308", "1e309", "-1e309", "1.7976931348623157e308",
            "1.7976931348623159e308", "1e-400", "-1e-400", "4.9e-324", "0.000000000000000000001",
            "1E400", "1e0000000000000000000000001", "1e-0000000000000000000000001",
        };
        n.push_back("1" + std::string(308, '0'));          // 1e308 written out: finite
        n.push_back("2" + std::string(308, '0'));          // 2e308: overflows to infinity
        n.push_back("-2" + std::string(308, '0'));
        n.push_back("9" + std::string(307, '0') + ".5");  // 308 integer digits and a fraction
        n.push_back("17" + std::string(307, '0') + ".5");  // 309 integer digits, still finite
        n.push_back("0." + std::string(400, '0') + "1");
        return n;
    }();
    return numbers;
}

const std::vector<std::string>& bad_numbers() {
    static const std::vector<std::string> numbers = {
        "01", "-01", "00", "-", "+1", "1.", ".5", "-.5", "1e", "1e+", "1e-", "1.e5", "--1", "0x10", "1.5.2",
        "Infinity", "-Infinity", "NaN", "1_000", "1 2", "0-", "2e3.5", "1ee2",
    };
    return numbers;
}

void add_string_byte_tests(std::vector<std::string>& out) {
    // Special bytes at every offset of the first few 8-byte words of a string, so the word-wise
    // scan meets them everywhere, including right at and after a word boundary.
    const std::array<std::string, 9> specials = {
        "\\n"s, "\\u00e9"s, "\x01"s, "\x1f"s, "\xc3\xa9"s, "\xff"s, "\xc3"s, "\x7f"s, "\"\""s,
    };
    for (std::size_t length = 0; length <= 20; ++length) {
        for (std::size_t at = 0; at <= length; ++at) {
            for (const auto& special : specials) {
                std::string text(length, 'a');
                text.insert(at, special);
                out.push_back(R"({"type":"say","room":"r","text":")" + text + R"("})");
            }
        }
    }
    for (int c = 0; c < 0x20; ++c) {
        const std::string control(1, static_cast<char>(c));
        out.push_back(R"({"type":"say","room":"r","text":"a)" + control + R"(b"})");
        out.push_back(R"({"type":"users","x)" + control + R"(":1})");
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
        out.push_back(R"({"type":"users","id":"a)" + std::string(escaped) + R"(b"})");
        std::snprintf(escaped, sizeof escaped, "\\u%04X", c);
        out.push_back(R"({"type":"users","id":")" + std::string(escaped) + R"("})");
    }
}

void add_escape_tests(std::vector<std::string>& out) {
    const std::vector<std::string> bodies = {
        R"(a\"b\\c\/d\be\ff\ng\rh\ti)", R"(\u0041)", R"(\u00e9)", R"(\u00E9)", R"(\u20AC)", R"(\uFFFF)",
        R"(\uD83D\uDE00)", R"(\ud83d\ude00)", R"(\uDBFF\uDFFF)", R"(\uD800\uDC00)", R"(\uD800)", R"(\uD800x)",
        R"(\uD800\u0041)", R"(\uD800\uD800)", R"(\uDC00)", R"(\uDFFF\uD800)", R"(\uD83D\\uDE00)",
        R"(\uD83D\u)", R"(\uD83D\uDE0)", R"(\u12)", R"(\u12G4)", R"(\u)", R"(\x41)", R"(\a)", R"(\')",
        R"(\U0041)", R"(\0)", R"(\ )", R"(\u0000)", R"(a\u0000b)", R"(\u001f)", R"(\u007f)", R"(\u0022)",
        R"(\u005c)", R"(\u002F)", "\\\xc3\xa9", "\\",
    };
    for (const auto& body : bodies) {
        out.push_back(R"({"type":"say","room":"r","text":")" + body + R"("})");
        out.push_back(R"({"type":"users","id":")" + body + R"("})");
        out.push_back(R"({"type":"login","user":")" + body + R"("})");
        out.push_back(R"({"type":"users",")" + body + R"(":1})");
    }
}

void add_utf8_tests(std::vector<std::string>& out) {
    const std::vector<std::string> sequences = {
        "\x80"s, "\xbf"s, "\xc0\x80"s, "\xc1\xbf"s, "\xc2"s, "\xc2\x41"s, "\xc2\x80"s, "\xdf\xbf"s,
        "\xe0\x80\x80"s, "\xe0\x9f\xbf"s, "\xe0\xa0\x80"s, "\xed\x9f\xbf"s, "\xed\xa0\x80"s, "\xed\xbf\xbf"s,
        "\xee\x80\x80"s, "\xef\xbf\xbf"s, "\xef\xbf"s, "\xf0\x8f\xbf\xbf"s, "\xf0\x90\x80\x80"s,
        "\xf4\x8f\xbf\xbf"s, "\xf4\x90\x80\x80"s, "\xf5\x80\x80\x80"s, "\xf8\x88\x80\x80\x80"s, "\xfe"s,
        "\xff"s, "\xc3\\n"s, "\xe2\x82"s, "\xf0\x9f\x98"s,
    };
    for (const auto& sequence : sequences) {
        out.push_back(R"({"type":"say","room":"r","text":"x)" + sequence + R"("})");
        out.push_back(R"({"type":"say","room":"r","text":"12345678)" + sequence + R"(12345678"})");
        out.push_back(R"({"type":"users","id":")" + sequence + R"("})");
        out.push_back(R"({"type":"users",")" + sequence + R"(":1})");
        out.push_back(R"({"type":"users"})" + sequence);
        out.push_back(R"({"type":"users", )" + sequence + R"(})");
    }
}

void add_number_tests(std::vector<std::string>& out) {
    std::vector<std::string> numbers = edge_numbers();
    numbers.insert(numbers.end(), bad_numbers().begin(), bad_numbers().end());
    for (const auto& n : numbers) {
        out.push_back(R"({"type":"users","id":)" + n + "}");
        out.push_back(R"({"type":"join","room":"r","after":)" + n + "}");
        out.push_back(R"({"type":"join","room":"r","epoch":)" + n + R"(,"id":1})");
        out.push_back(R"({"type":"history","room":"r","limit":)" + n + "}");
        out.push_back(R"({"type":"users","x":)" + n + "}");
        out.push_back(R"({"type":"users","x":[)" + n + "]}");
        out.push_back(R"({"type":"users","x":{"y":)" + n + "}}");
        out.push_back(R"({"type":)" + n + "}");
    }
}

void add_id_tests(std::vector<std::string>& out) {
    auto with_id = [&](const std::string& id_json) { out.push_back(R"({"type":"users","id":)" + id_json + "}"); };
    for (std::size_t n : {0, 1, 63, 64, 65, 100}) {
        with_id('"' + std::string(n, 'x') + '"');
    }
    std::string escapes;
    for (int i = 0; i < 32; ++i) {
        escapes += "\\n";  // 64 bytes as sent, 32 as meant
    }
    with_id('"' + escapes + '"');
    with_id('"' + escapes + escapes + escapes + '"');
    std::string unicode_64;
    std::string unicode_65;
    for (int i = 0; i < 64; ++i) {
        unicode_64 += "\\u0041";
    }
    unicode_65 = unicode_64 + "\\u0041";
    with_id('"' + unicode_64 + '"');
    with_id('"' + unicode_65 + '"');
    std::string two_byte_64;
    for (int i = 0; i < 32; ++i) {
        two_byte_64 += "\xc3\xa9";
    }
    with_id('"' + two_byte_64 + '"');
    with_id('"' + two_byte_64 + "\xc3\xa9\"");
    with_id('"' + two_byte_64 + "\\u00e9\"");
    with_id('"' + std::string(62, 'x') + "\\u00e9\"");
    with_id('"' + std::string(61, 'x') + "\\uD83D\\uDE00\"");
    with_id('"' + std::string(60, 'x') + "\\uD83D\\uDE00\"");
    for (const char* id : {R"("q\"b\\")", R"("a/b")", R"("a\/b")", R"("\u0000")", "true", "false", "null", "[]",
                           "{}", "[1]", R"({"a":1})", "007", "+1", "1.", "-"}) {
        with_id(id);
    }
    // Both ids are fine: the last one counts; a bad one after a good one fails.
    out.push_back(R"({"type":"users","id":1,"id":"x"})");
    out.push_back(R"({"type":"users","id":"x","id":[1]})");
    out.push_back(R"({"type":"users","id":1,"id":null})");
    out.push_back(R"({"type":"users","id":null,"id":2})");
    out.push_back(R"({"type":"users","id":1e2,"id":3})");
    out.push_back(R"({"type":"shout","id":"abc"})");
    out.push_back(R"({"type":7,"id":"abc"})");
    out.push_back(R"({"id":"abc"})");
}

void add_type_tests(std::vector<std::string>& out) {
    for (const char* type : {"login", "join", "leave", "say", "dm", "users", "rooms", "history", "typing",
                             "dm_history", "read", "kick", "ban", "unban", "mute", "unmute", "set_role",
                             "set_topic", "set_slow_mode", "edit", "delete", "members", "shout",
                             "", "Login", "users ", " users", "user", "usersx"}) {
        out.push_back(R"({"type":")" + std::string(type) + R"(","id":5})");
    }
    std::vector<std::string> long_types = {
        std::string(32, 'a'),
        std::string(33, 'a'),
        std::string(100, 'a'),
        std::string(31, 'a') + "\xc3\xa9\xc3\xa9",
        std::string(32, 'a') + "\xc3\xa9",
        std::string(30, 'a') + "\xe2\x82\xac\xe2\x82\xac",
        std::string(31, 'a') + "\xe2\x82\xac",
        std::string(29, 'a') + "\xf0\x9f\x98\x80\xf0\x9f\x98\x80",
        std::string(30, 'a') + "\xf0\x9f\x98\x80",
        std::string(31, 'a') + "\xf0\x9f\x98\x80",
        std::string(28, 'a') + "\xf0\x9f\x98\x80",
        std::string(31, 'a') + "\\u00e9\\u00e9",
        std::string(30, 'a') + "\\uD83D\\uDE00",
        "\xc3\xa9" + std::string(40, 'b'),
    };
    for (const auto& type : long_types) {
        out.push_back(R"({"type":")" + type + R"("})");
    }
    for (const char* type : {R"("ty\"pe")", R"("a\u0000b")", R"("\n")", R"("us\u0065rs")", R"("\u0075sers")",
                             R"("us\/ers")", "1", "null", "true", "[]", "{}", R"(["users"])"}) {
        out.push_back(R"({"id":"i","type":)" + std::string(type) + "}");
    }
}

void add_field_rule_tests(std::vector<std::string>& out) {
    const std::vector<std::string> requests = {
        R"({"type":"login","user":"alice","token":"t0k"})",
        R"({"type":"login","user":"a","token":null})",
        R"({"type":"login","user":null})",
        R"({"type":"login","user":"a","token":5})",
        R"({"type":"login","user":"a","token":true})",
        R"({"type":"login","token":"t"})",
        R"({"type":"join","room":"lobby","after":12,"epoch":1700000000000})",
        R"({"type":"join","room":"r","after":null,"epoch":null})",
        R"({"type":"join","room":null})",
        R"({"type":"join","room":["r"]})",
        R"({"type":"join","room":"r","after":"1"})",
        R"({"type":"join","room":"r","after":true})",
        R"({"type":"join","room":"r","after":[]})",
        R"({"type":"join","room":"r","after":{}})",
        R"({"type":"leave","room":"r"})",
        R"({"type":"leave"})",
        R"({"type":"typing","room":3})",
        R"({"type":"say","room":"r","text":"hi"})",
        R"({"type":"say","room":"r","text":null})",
        R"({"type":"say","text":"x"})",
        R"({"type":"say","room":"a","text":"t","room":"b"})",
        R"({"type":"say","room":"a","text":"t","room":1})",
        R"({"type":"say","room":1,"text":"t","room":"a"})",
        R"({"type":"dm","to":"bob","text":"psst"})",
        R"({"type":"dm","to":"b","text":1})",
        R"({"type":"dm","text":"x"})",
        R"({"type":"users","to":5,"room":[],"text":{}})",
        R"({"type":"rooms","x":null})",
        R"({"type":"history","room":"r","before":40,"limit":10})",
        R"({"type":"dm_history","with":"bob","before":40,"limit":10})",
        R"({"type":"dm_history","with":"bob","before":5,"after":1,"id":3})",
        R"({"type":"dm_history","room":"r"})",
        R"({"type":"dm_history","with":7})",
        R"({"type":"read","room":"r","seq":4})",
        R"({"type":"read","with":"bob","seq":0,"id":"m"})",
        R"({"type":"read","room":"r","with":"bob","seq":4})",
        R"({"type":"read","room":"","with":"","seq":4})",
        R"({"type":"read","room":null,"with":"bob","seq":4})",
        R"({"type":"read","with":"bob"})",
        R"({"type":"read","with":"bob","seq":null})",
        R"({"type":"read","with":"bob","seq":"4"})",
        R"({"type":"read","with":"bob","seq":-1})",
        R"({"type":"read","with":"bob","seq":1.5})",
        R"({"type":"read","with":5,"seq":1})",
        R"({"type":"read","seq":1})",
        // Moderation, edit and delete.
        R"({"type":"kick","room":"r","user":"bob"})",
        R"({"type":"kick","room":"r","user":"bob","reason":"spam","id":2})",
        R"({"type":"kick","room":"r","user":"bob","reason":7})",
        R"({"type":"kick","room":"r"})",
        R"({"type":"ban","room":"r","user":"bob","reason":"spam","duration_s":3600})",
        R"({"type":"ban","room":"r","user":"bob","duration_s":null})",
        R"({"type":"ban","room":"r","user":"bob","duration_s":-5})",
        R"({"type":"ban","room":"r","user":"bob","duration_s":"60"})",
        R"({"type":"ban","room":"r","user":"bob","duration_s":1.5})",
        R"({"type":"mute","room":"r","user":"bob","duration_s":0})",
        R"({"type":"mute","user":"bob"})",
        R"({"type":"unban","room":"r","user":"bob"})",
        R"({"type":"unmute","room":"r","user":null})",
        R"({"type":"set_role","room":"r","user":"bob","role":"moderator"})",
        R"({"type":"set_role","room":"r","user":"bob","role":"king"})",
        R"({"type":"set_role","room":"r","user":"bob"})",
        R"({"type":"set_topic","room":"r","text":"Welcome"})",
        R"({"type":"set_topic","room":"r","text":""})",
        R"({"type":"set_topic","room":"r"})",
        R"({"type":"set_slow_mode","room":"r","interval_s":10})",
        R"({"type":"set_slow_mode","room":"r","interval_s":null})",
        R"({"type":"set_slow_mode","room":"r"})",
        R"({"type":"edit","room":"r","seq":4,"text":"fixed"})",
        R"({"type":"edit","room":"r","seq":-4,"text":"fixed"})",
        R"({"type":"edit","room":"r","text":"fixed"})",
        R"({"type":"edit","room":"r","seq":4})",
        R"({"type":"delete","room":"r","seq":4,"id":"d"})",
        R"({"type":"delete","room":"r","seq":"4"})",
        R"({"type":"delete","room":"r"})",
        R"({"type":"members","room":"r","id":"m"})",
        R"({"type":"members","room":"r","after":"bob","limit":500})",
        R"({"type":"members","room":"r","after":7})",
        R"({"type":"members","room":"r","after":null,"limit":null})",
        R"({"type":"members","room":"r","limit":-1})",
        R"({"type":"members","after":"bob"})",
        R"({"type":"history","room":"r","before":5,"after":1,"id":3})",
        R"({"type":"history","room":"r","before":0,"after":0})",
        R"({"type":"history","room":"r","before":-0,"after":null})",
        R"({"type":"history","room":"r","before":null,"after":1})",
        R"({"type":"history","room":"r","before":1,"before":null,"after":2})",
        R"({"type":"history","room":"r","before":1,"after":2,"after":null})",
        R"({"type":"history","room":"r","before":-1,"after":1})",
        R"({"type":"history","room":"r","before":1,"after":-1})",
        R"({"type":"history","room":"r","after":1,"limit":1.5})",
        R"({"type":"history"})",
        // Keys that are or are not field names once unescaped; duplicates across spellings.
        R"({"\u0074ype":"users"})",
        R"({"type":"say","t\u0079pe":"users"})",
        R"({"typ\u0065":"dm","to":"b","t\u0065xt":"x"})",
        R"({"type":"say","room":"r","text":"a","te\u0078t":"b"})",
        R"({"Type":"users"})",
        R"({"type ":"users"})",
        R"({"type\u0000":"users"})",
        R"({"":"x","type":"users"})",
        R"({"type":"say","type":"users"})",
        R"({"type":"users","type":"say","room":"r","text":"t"})",
        R"({"type":"users","type":null})",
    };
    out.insert(out.end(), requests.begin(), requests.end());
}

void add_syntax_tests(std::vector<std::string>& out) {
    const std::string users = R"({"type":"users"})";
    const std::vector<std::string> texts = {
        "", " ", "\n\t\r ", "{", "}", "{}", "{ }", "{\n}", "[]", "[{\"type\":\"users\"}]", "null", "1", "\"users\"",
        "true", users, " \t\r\n" + users + " \t\r\n", "\f" + users, "\v" + users, users + "\f", "\xc2\xa0" + users,
        R"( { "type" : "users" , "id" : 1 } )", "{\"type\"\n:\n\"users\"\n,\n\"id\"\n:\n1\n}",
        // A byte order mark is skipped only as the very first bytes.
        "\xEF\xBB\xBF" + users, "\xEF\xBB\xBF \n" + users, " \xEF\xBB\xBF" + users, "\xEF\xBB" + users,
        "\xEF" + users, "\xEF\xBB\xBF", "\xEF\xBB\xBF\xEF\xBB\xBF" + users, users + "\xEF\xBB\xBF",
        // A NUL where a token may start ends the input.
        users + "\0"s, users + "\0garbage\xff"s, users + " \0 x"s, users + "\n\0{"s, "\0"s + users,
        "{\"type\":\"users\"\0}"s, "{\"type\":\"users\",\0}"s, "{\"type\":\0\"users\"}"s, "{\"type\":\"us\0ers\"}"s,
        "{\0\"type\":\"users\"}"s, "{\"type\":\"users\",\"x\":[1,\0]}"s,
        users + "x", users + "{}", users + ",", users + " }", users + "]", users + "1", users + "\"",
        R"({"type":"users",})", R"({,"type":"users"})", R"({"type":"users",,"id":1})", R"({"type" "users"})",
        R"({"type"::"users"})", R"({type:"users"})", R"({'type':'users'})", R"({"type":"users"  "id":1})",
        R"({"type":"users","x":[1,]})", R"({"type":"users","x":[,1]})", R"({"type":"users","x":[,]})",
        R"({"type":"users","x":{"a":1,}})", R"({"type":"users","x":{"a"}})", R"({"type":"users","x":{1:2}})",
        R"({"type":"users","x":[})", R"({"type":"users","x":[1}])", R"({"type":"users","x":{]})",
        R"({"type":"users","x":{"a":1]})", R"({"type":"users","x":[1]]})", R"({"type":"users","x":[[1]})",
        R"({"type":"users","x":[[[[]]]]})", R"({"type":"users","x":{"a":{"b":[1,{"c":null}]}}})",
        R"({"type":"users","x":[ 1 , "a" , true , false , null , { } , [ ] ]})",
        R"({"type":"users","x":{ "a" : [ { "b" : { } } ] , "c" : 2 }})", R"({"type":"users","x":{"a":1 "b":2}})",
        R"({"type":"users","x":true})", R"({"type":"users","x":false})", R"({"type":"users","x":null})",
        R"({"type":"users","x":tru})", R"({"type":"users","x":nul})", R"({"type":"users","x":True})",
        R"({"type":"users","x":NULL})", R"({"type":"users","x":nulll})", R"({"type":"users","x":truefalse})",
        R"({"type":"users","x":true1})", R"({"type":"users","x":fals})", R"({"type":"users","x":})",
        R"({"type":"users","x":[true,false,null]})", R"({"type":"users","x":[tru]})", R"({"type":"users","x")",
        R"({"type":"users","x":"a)", R"({"type":"users","x":[)", R"({"type":"users","x":{)", R"({"type":"users")",
        R"({"type":"users",)", R"({"type":"users","x":{"a")", R"({"type":"users","x":{"a":)",
        R"({"type":"users","x":/*c*/1})", R"({"type":"users"}//)",
    };
    out.insert(out.end(), texts.begin(), texts.end());
}

void add_nesting_tests(std::vector<std::string>& out) {
    for (std::size_t depth : {1, 63, 64, 65, 511, 512, 513, 600, 5000}) {
        std::string open;
        std::string close;
        for (std::size_t i = 0; i < depth; ++i) {
            // Alternate arrays and objects so every level's kind must be remembered.
            open += i % 3 == 1 ? "{\"k\":" : "[";
            close.insert(0, i % 3 == 1 ? "}" : "]");
        }
        out.push_back(R"({"type":"users","x":)" + open + "1" + close + "}");
        out.push_back(R"({"type":"users","x":)" + open + close + "}");
        out.push_back(R"({"type":"users","x":)" + open + "1" + close + R"(,"id":"n"})");
        out.push_back(open + close);
        // One closer of the wrong kind, deep inside.
        std::string wrong = close;
        const std::size_t at = wrong.size() / 2;
        wrong[at] = wrong[at] == ']' ? '}' : ']';
        out.push_back(R"({"type":"users","x":)" + open + "1" + wrong + "}");
        out.push_back(R"({"type":"users","x":)" + open + "1" + close.substr(1) + "}");
        out.push_back(R"({"type":"users","x":)" + open + "1" + close + "]}");
    }
    const std::string deep(40'000, '[');
    out.push_back(R"({"type":"users","x":)" + deep + std::string(40'000, ']') + "}");
    out.push_back(R"({"type":"users","x":)" + deep + std::string(39'999, ']') + "}");
    std::string objects;
    for (int i = 0; i < 20'000; ++i) {
        objects += "{\"a\":";
    }
    out.push_back(R"({"type":"users","x":)" + objects + "0" + std::string(20'000, '}') + "}");
    out.push_back(R"({"type":"users","x":)" + objects + "0" + std::string(19'999, '}') + "]}");
}

void add_size_tests(std::vector<std::string>& out) {
    out.push_back(R"({"type":"say","room":"r","text":")" + std::string(60'000, 'w') + R"("})");
    std::string mixed;
    for (int i = 0; i < 5'000; ++i) {
        mixed += "ab\xc3\xa9\\n\xe2\x82\xac\\u00e9\\uD83D\\uDE00 ";
    }
    out.push_back(R"({"type":"say","room":"r","text":")" + mixed + R"("})");
    out.push_back(R"({"type":"say","room":"r","text":")" + mixed + "\xc3\"}");
    std::string many_members = R"({"type":"users")";
    for (int i = 0; i < 2'000; ++i) {
        many_members += R"(,"k)" + std::to_string(i) + R"(":[)" + std::to_string(i) + "]";
    }
    out.push_back(many_members + "}");
}

}  // namespace

std::vector<std::string> tricky_inputs() {
    std::vector<std::string> out;
    add_syntax_tests(out);
    add_string_byte_tests(out);
    add_escape_tests(out);
    add_utf8_tests(out);
    add_number_tests(out);
    add_id_tests(out);
    add_type_tests(out);
    add_field_rule_tests(out);
    add_nesting_tests(out);
    add_size_tests(out);
    return out;
}

std::uint64_t generator::next() {
    // splitmix64: tiny, fast, and the same sequence on every platform.
    state_ += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::string generator::whitespace() {
    static const std::vector<std::string> spaces = {"", "", "", "", " ", "\n", "\t", "\r\n  ", "  "};
    return pick(spaces);
}

std::string generator::string_body(std::size_t pieces) {
    static const std::vector<std::string> escapes = {
        "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u0000", "\\u001f", "\\u0041", "\\u00e9",
        "\\u00E9", "\\u20ac", "\\uFFFF", "\\uD83D\\uDE00", "\\udbff\\udfff", "\\u007f",
    };
    static const std::vector<std::string> raw = {
        "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf", "\x7f", "/", "'", " ",
    };
    std::string body;
    for (std::size_t i = 0; i < pieces; ++i) {
        switch (below(4)) {
        case 0: body += pick(escapes); break;
        case 1: body += pick(raw); break;
        default: body.append(1 + below(12), static_cast<char>('a' + below(26))); break;
        }
    }
    return body;
}

std::string generator::string_value() {
    if (one_in(3)) {
        return '"' + std::string(below(20), static_cast<char>('a' + below(26))) + '"';
    }
    return '"' + string_body(below(8)) + '"';
}

std::string generator::number_value() {
    if (one_in(2)) {
        return pick(edge_numbers());
    }
    std::string n = one_in(4) ? "-" : "";
    n += std::to_string(next() >> below(64));
    if (one_in(6)) {
        n += "." + std::to_string(below(1000));
    }
    if (one_in(6)) {
        n += (one_in(2) ? "e" : "E") + std::string(one_in(2) ? "-" : "") + std::to_string(below(400));
    }
    return n;
}

std::string generator::id_value() {
    switch (below(5)) {
    case 0: return '"' + std::string(58 + below(10), 'i') + '"';
    case 1: return '"' + string_body(below(12)) + '"';
    case 2: return number_value();
    case 3: return std::to_string(next() % 2'000'000'000'000'000'000ULL);
    default: return any_value(1);
    }
}

std::string generator::count_value() {
    switch (below(4)) {
    case 0: return std::to_string(below(100));
    case 1: return number_value();
    case 2: return "null";
    default: return any_value(1);
    }
}

std::string generator::any_value(int depth) {
    switch (below(depth > 2 ? 6 : 8)) {
    case 0: return string_value();
    case 1: return number_value();
    case 2: return "null";
    case 3: return one_in(2) ? "true" : "false";
    case 4: return string_value();
    case 5: return number_value();
    case 6: {
        std::string array = "[" + whitespace();
        const std::size_t n = below(4);
        for (std::size_t i = 0; i < n; ++i) {
            array += (i > 0 ? "," + whitespace() : "") + any_value(depth + 1) + whitespace();
        }
        return array + "]";
    }
    default: {
        std::string object = "{" + whitespace();
        const std::size_t n = below(4);
        for (std::size_t i = 0; i < n; ++i) {
            object += (i > 0 ? "," + whitespace() : "") + key_for(one_in(2) ? "k" : "type") + whitespace() + ":" +
                      whitespace() + any_value(depth + 1) + whitespace();
        }
        return object + "}";
    }
    }
}

// The key as JSON text, now and then spelled with an escape that still means the same name.
std::string generator::key_for(std::string_view name) {
    std::string key(name);
    if (!key.empty() && one_in(12)) {
        const std::size_t at = below(key.size());
        char escape[8];
        std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned char>(key[at]));
        key.replace(at, 1, escape);
    }
    return '"' + key + '"';
}

std::string generator::request() {
    static const std::vector<std::string> types = {
        "login", "join", "leave", "say", "dm", "users", "rooms", "history", "typing", "shout", "", "Say",
    };
    static const std::vector<std::string> string_fields = {"user", "token", "room", "to", "text"};
    static const std::vector<std::string> count_fields = {"after", "before", "epoch", "limit"};
    static const std::vector<std::string> other_fields = {"x", "color", "", "ids", "\xc3\xa9", "Type"};

    // Members as (key text, value text); most requests get what their type needs.
    std::vector<std::pair<std::string, std::string>> members;
    const std::string& type = pick(types);
    if (!one_in(10)) {
        std::string type_text = '"' + type + '"';
        if (one_in(10)) {
            type_text = one_in(2) ? any_value(1) : '"' + std::string(25 + below(15), 'z') + string_body(2) + '"';
        }
        members.emplace_back(key_for("type"), type_text);
    }
    if (one_in(2)) {
        members.emplace_back(key_for("id"), id_value());
    }
    for (const auto& field : string_fields) {
        if (one_in(2)) {
            members.emplace_back(key_for(field), one_in(8) ? any_value(1) : string_value());
        }
    }
    for (const auto& field : count_fields) {
        if (one_in(3)) {
            members.emplace_back(key_for(field), count_value());
        }
    }
    for (std::size_t extra = below(3); extra > 0; --extra) {
        members.emplace_back(key_for(pick(other_fields)), any_value(1));
    }
    if (!members.empty() && one_in(5)) {
        // A duplicate key, with a value of its own.
        auto duplicate = pick(members);
        duplicate.second = one_in(2) ? any_value(1) : string_value();
        members.push_back(duplicate);
    }
    for (std::size_t i = members.size(); i > 1; --i) {
        std::swap(members[i - 1], members[below(i)]);
    }

    std::string text = one_in(50) ? "\xEF\xBB\xBF" : "";
    text += whitespace() + "{" + whitespace();
    for (std::size_t i = 0; i < members.size(); ++i) {
        if (i > 0) {
            text += "," + whitespace();
        }
        text += members[i].first + whitespace() + ":" + whitespace() + members[i].second + whitespace();
    }
    text += "}" + whitespace();
    if (one_in(50)) {
        text += "\0tail"s;
    }
    return text;
}

std::string generator::mutate(std::string text) {
    static const std::vector<std::string> insertions = {
        "\"", "\\", "{", "}", "[", "]", ",", ":", " ", "0", "1", "-", "+", ".", "e", "u", "n", "t",
        "\0"s, "\x01", "\x1f", "\x7f", "\x80", "\xbf", "\xc3", "\xe2", "\xed", "\xf0", "\xf4", "\xff", "\xef",
        "\\u", "\\uD83D", "\\uDE00", "\\u00", "null", "1e999", "-0", "\"\":", ",\"id\":", "\xEF\xBB\xBF", "\xc3\xa9",
    };
    const std::size_t edits = 1 + below(3);
    for (std::size_t e = 0; e < edits; ++e) {
        const std::size_t at = text.empty() ? 0 : below(text.size() + 1);
        switch (below(6)) {
        case 0:
            if (at < text.size()) {
                text[at] = static_cast<char>(next());
            }
            break;
        case 1:
            if (at < text.size()) {
                text[at] = pick(insertions)[0];
            }
            break;
        case 2: text.insert(at, pick(insertions)); break;
        case 3: text.erase(at, 1 + below(3)); break;
        case 4: text.resize(at); break;
        default: {
            const std::size_t length = std::min<std::size_t>(text.size() - std::min(at, text.size()), 1 + below(8));
            text.insert(below(text.size() + 1), text.substr(std::min(at, text.size()), length));
            break;
        }
        }
    }
    return text;
}

std::string generator::fragment_request() {
    static const std::string alphabet = "{}[]\",:0123456789-+.eEtrufalsn \\u\0\x7f\x80\xc3\xa9\n"s;
    static const std::vector<std::string> frames = {
        R"({"type":"users","x":@})", R"({"type":"join","room":"r","after":@})", R"({"type":"users","id":@})",
        R"({"type":@})", R"({"type":"users","x":"@"})", "@",
    };
    std::string fragment;
    for (std::size_t n = below(10); n > 0; --n) {
        fragment.push_back(alphabet[below(alphabet.size())]);
    }
    std::string text = pick(frames);
    text.replace(text.find('@'), 1, fragment);
    return text;
}

std::string printable(std::string_view bytes) {
    std::string out;
    for (std::size_t i = 0; i < bytes.size() && out.size() < 400; ++i) {
        const auto c = static_cast<unsigned char>(bytes[i]);
        if (c >= 0x20 && c < 0x7f) {
            out.push_back(static_cast<char>(c));
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        }
    }
    if (out.size() >= 400) {
        out += "... (" + std::to_string(bytes.size()) + " bytes)";
    }
    return out;
}

}  // namespace parley::protocol::corpus
