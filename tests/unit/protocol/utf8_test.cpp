#include "protocol/utf8.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace parley::protocol {
namespace {

using namespace std::string_literals;

// A plain decoder straight from RFC 3629, to compare the validator against.
bool reference_valid(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t length;
        std::uint32_t cp;
        if (c < 0x80) {
            ++i;
            continue;
        }
        if ((c & 0xE0) == 0xC0) {
            length = 2;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            length = 3;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            length = 4;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (i + length > s.size()) {
            return false;
        }
        for (std::size_t k = 1; k < length; ++k) {
            const auto d = static_cast<unsigned char>(s[i + k]);
            if ((d & 0xC0) != 0x80) {
                return false;
            }
            cp = cp << 6 | (d & 0x3F);
        }
        const std::uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < smallest[length] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            return false;
        }
        i += length;
    }
    return true;
}

// Feeds one byte at a time; returns the index where feed() first said false, or npos.
std::size_t first_rejected_byte(std::string_view s, bool* complete = nullptr) {
    utf8_validator v;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (!v.feed(s.substr(i, 1))) {
            if (complete != nullptr) {
                *complete = v.complete();
            }
            return i;
        }
    }
    if (complete != nullptr) {
        *complete = v.complete();
    }
    return std::string::npos;
}

TEST(Utf8, ValidStrings) {
    const std::string cases[] = {
        ""s,
        "plain ascii"s,
        "\0"s,
        "\x7F"s,
        "\xC2\x80"s,              // U+0080
        "\xDF\xBF"s,              // U+07FF
        "\xE0\xA0\x80"s,          // U+0800
        "\xED\x9F\xBF"s,          // U+D7FF
        "\xEE\x80\x80"s,          // U+E000
        "\xEF\xBF\xBD"s,          // U+FFFD
        "\xEF\xBF\xBF"s,          // U+FFFF (a noncharacter, still valid)
        "\xF0\x90\x80\x80"s,      // U+10000
        "\xF4\x8F\xBF\xBF"s,      // U+10FFFF
        "κόσμε"s,
        "Hello-µ@ßöäüàá-UTF-8!!"s,
        "\xF0\x9F\x98\x80 smiley in an ascii sentence that is long"s,
    };
    for (const auto& s : cases) {
        SCOPED_TRACE(testing::PrintToString(s));
        EXPECT_TRUE(is_valid_utf8(s));
        EXPECT_EQ(first_rejected_byte(s), std::string::npos);
    }
}

TEST(Utf8, InvalidStringsFailAtTheFirstImpossibleByte) {
    struct case_t {
        std::string bytes;
        std::size_t bad;
    };
    const case_t cases[] = {
        {"\x80", 0},
        {"\xBF", 0},
        {"\x80\xBF\x80", 0},
        {"\xC0\x20", 0},          // C0 can only start an overlong
        {"\xC1\xBF", 0},
        {"\xE0\x20", 1},
        {"\xF0\x20", 1},
        {"\xF5\x80\x80\x80", 0},  // beyond U+10FFFF at the lead byte
        {"\xF8\x88\x80\x80\x80", 0},
        {"\xFC\x84\x80\x80\x80\x80", 0},
        {"\xFE", 0},
        {"\xFF", 0},
        {"\xE0\x80\xAF", 1},      // overlong
        {"\xE0\x9F\xBF", 1},
        {"\xF0\x80\x80\xAF", 1},
        {"\xF0\x8F\xBF\xBF", 1},
        {"\xED\xA0\x80", 1},      // U+D800
        {"\xED\xAD\xBF", 1},
        {"\xED\xBF\xBF", 1},      // U+DFFF
        {"\xED\xA0\x80\xED\xB0\x80", 1},
        {"\xF4\x90\x80\x80", 1},  // U+110000
        {"\xC2\x41", 1},
        {"\xE2\x82\x41", 2},
        {"\xF0\x9F\x98\x41", 3},
        {"abcdefgh\xC2\xC2", 9},
        {"\xCE\xBA\xE1\xBD\xB9\xCF\x83\xCE\xBC\xCE\xB5\xED\xA0\x80\x65\x64\x69\x74\x65\x64", 12},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(testing::PrintToString(c.bytes));
        EXPECT_FALSE(is_valid_utf8(c.bytes));
        bool complete = true;
        EXPECT_EQ(first_rejected_byte(c.bytes, &complete), c.bad);
        EXPECT_FALSE(complete);
    }
}

TEST(Utf8, TruncatedSequenceIsIncompleteNotRejected) {
    for (std::string s : {"\xC2"s, "\xE0\xA0"s, "\xF0\x90\x80"s, "abc\xE2\x82"s, "\xF4\x8F\xBF"s}) {
        SCOPED_TRACE(testing::PrintToString(s));
        utf8_validator v;
        EXPECT_TRUE(v.feed(s));
        EXPECT_FALSE(v.complete());
        EXPECT_FALSE(is_valid_utf8(s));
    }
}

TEST(Utf8, CharacterSplitAcrossFeeds) {
    const std::string smiley = "\xF0\x9F\x98\x80";
    for (std::size_t cut = 0; cut <= smiley.size(); ++cut) {
        utf8_validator v;
        EXPECT_TRUE(v.feed(smiley.substr(0, cut)));
        EXPECT_EQ(v.complete(), cut == 0 || cut == smiley.size());
        EXPECT_TRUE(v.feed(smiley.substr(cut)));
        EXPECT_TRUE(v.complete());
    }
}

TEST(Utf8, RejectionIsFinalUntilReset) {
    utf8_validator v;
    EXPECT_FALSE(v.feed("\xFF"));
    EXPECT_FALSE(v.feed("fine"));
    EXPECT_FALSE(v.complete());
    v.reset();
    EXPECT_TRUE(v.feed("fine"));
    EXPECT_TRUE(v.complete());
}

TEST(Utf8, ResetForgetsAPartialSequence) {
    utf8_validator v;
    EXPECT_TRUE(v.feed("\xE2\x82"));
    v.reset();
    EXPECT_TRUE(v.complete());
    EXPECT_TRUE(v.feed("a"));
    EXPECT_TRUE(v.complete());
}

// The word-at-a-time ASCII path must not skip over a bad byte or a sequence at any position.
TEST(Utf8, AsciiFastPathAtEveryOffset) {
    for (std::size_t length = 1; length <= 40; ++length) {
        for (std::size_t at = 0; at < length; ++at) {
            std::string s(length, 'a');
            s[at] = '\x80';
            EXPECT_FALSE(is_valid_utf8(s)) << length << " " << at;
            EXPECT_EQ(first_rejected_byte(s), at);
            s[at] = '\xFF';
            EXPECT_FALSE(is_valid_utf8(s)) << length << " " << at;

            std::string with_char = std::string(at, 'a') + "\xE2\x82\xAC" + std::string(length - at, 'b');
            EXPECT_TRUE(is_valid_utf8(with_char)) << length << " " << at;
            std::string cut_at_end = std::string(length, 'a') + "\xE2\x82";
            EXPECT_FALSE(is_valid_utf8(cut_at_end));
            std::string surrogate = std::string(at, 'a') + "\xED\xA0\x80" + std::string(length - at, 'b');
            EXPECT_FALSE(is_valid_utf8(surrogate)) << length << " " << at;
        }
    }
}

TEST(Utf8, AllTwoByteStringsMatchReference) {
    for (unsigned a = 0; a < 256; ++a) {
        for (unsigned b = 0; b < 256; ++b) {
            const std::string s{static_cast<char>(a), static_cast<char>(b)};
            ASSERT_EQ(is_valid_utf8(s), reference_valid(s)) << std::hex << a << " " << b;
        }
    }
}

TEST(Utf8, AllThreeAndFourByteSequencesFromEachLeadMatchReference) {
    // Every lead byte with every second byte, then a third and fourth byte from a set that
    // covers the boundaries of each range.
    const unsigned tails[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xE0, 0xF0, 0xFF};
    for (unsigned a = 0xC0; a < 256; ++a) {
        for (unsigned b = 0; b < 256; ++b) {
            for (unsigned c : tails) {
                const std::string three{static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)};
                ASSERT_EQ(is_valid_utf8(three), reference_valid(three)) << std::hex << a << " " << b << " " << c;
                for (unsigned d : tails) {
                    const std::string four = three + static_cast<char>(d);
                    ASSERT_EQ(is_valid_utf8(four), reference_valid(four))
                        << std::hex << a << " " << b << " " << c << " " << d;
                }
            }
        }
    }
}

TEST(Utf8, RandomStringsMatchReferenceInAnySplit) {
    std::mt19937 rng{12345};
    const unsigned char interesting[] = {'a', ' ', 0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF,
                                         0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
    // Valid characters too, so that long valid strings occur.
    const std::string pieces[] = {"a", "hello world ", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xED\x9F\xBF"};
    int valid_seen = 0;
    for (int round = 0; round < 20000; ++round) {
        std::string s;
        const std::size_t parts = rng() % 12;
        for (std::size_t i = 0; i < parts; ++i) {
            if (rng() % 3 == 0) {
                s.push_back(static_cast<char>(interesting[rng() % std::size(interesting)]));
            } else {
                s += pieces[rng() % std::size(pieces)];
            }
        }
        const bool expected = reference_valid(s);
        valid_seen += expected ? 1 : 0;
        ASSERT_EQ(is_valid_utf8(s), expected) << testing::PrintToString(s);
        utf8_validator v;
        bool fed = true;
        std::size_t at = 0;
        while (at < s.size()) {
            const std::size_t n = std::min<std::size_t>(rng() % 10, s.size() - at);
            fed = v.feed(std::string_view{s}.substr(at, n)) && fed;
            at += n;
        }
        ASSERT_EQ(fed && v.complete(), expected) << testing::PrintToString(s);
    }
    EXPECT_GT(valid_seen, 1000);
}

}  // namespace
}  // namespace parley::protocol
