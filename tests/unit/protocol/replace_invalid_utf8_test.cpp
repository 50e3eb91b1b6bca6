// replace_invalid_utf8: valid text unchanged, each maximal ill-formed subpart one U+FFFD.

#include "protocol/utf8.hpp"

#include <gtest/gtest.h>

#include <string>

namespace parley::protocol {
namespace {

const std::string fffd = "\xef\xbf\xbd";

TEST(replace_invalid_utf8, valid_text_comes_back_unchanged) {
    for (std::string_view s : {std::string_view(""), std::string_view("plain ascii\n\t\x7f"),
                               std::string_view("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80")}) {
        EXPECT_EQ(replace_invalid_utf8(s), s);
        EXPECT_TRUE(is_valid_utf8(replace_invalid_utf8(s)));
    }
}

TEST(replace_invalid_utf8, each_maximal_subpart_becomes_one_replacement_character) {
    EXPECT_EQ(replace_invalid_utf8("\xff"), fffd);
    EXPECT_EQ(replace_invalid_utf8("a\x80z"), "a" + fffd + "z");                 // a lone continuation byte
    EXPECT_EQ(replace_invalid_utf8("\xff\xc3("), fffd + fffd + "(");             // a lead cut short by ASCII
    EXPECT_EQ(replace_invalid_utf8("\xe2\x82"), fffd);                           // cut off at the end: one
    EXPECT_EQ(replace_invalid_utf8("\xe2\x82x"), fffd + "x");
    EXPECT_EQ(replace_invalid_utf8("\xc0\xaf"), fffd + fffd);                    // overlong: each byte
    EXPECT_EQ(replace_invalid_utf8("\xe0\x80\x80"), fffd + fffd + fffd);         // overlong three-byte
    EXPECT_EQ(replace_invalid_utf8("\xed\xa0\x80"), fffd + fffd + fffd);         // a surrogate
    EXPECT_EQ(replace_invalid_utf8("\xf4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // above U+10FFFF
    EXPECT_EQ(replace_invalid_utf8("\xf0\x9f\x98"), fffd);
    EXPECT_EQ(replace_invalid_utf8("\xf0\x9f\x98\xc3\xa9"), fffd + "\xc3\xa9");
}

TEST(replace_invalid_utf8, the_result_is_always_valid) {
    std::string all;
    for (int b = 0; b < 256; ++b) {
        all += static_cast<char>(b);
        all += static_cast<char>(255 - b);
    }
    EXPECT_TRUE(is_valid_utf8(replace_invalid_utf8(all)));
}

}  // namespace
}  // namespace parley::protocol
