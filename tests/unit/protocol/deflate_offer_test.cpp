#include "protocol/deflate_offer.hpp"

#include <gtest/gtest.h>

namespace parley::protocol {
namespace {

constexpr std::string_view always = "permessage-deflate; server_no_context_takeover; client_no_context_takeover";

TEST(DeflateOfferTest, APlainOfferIsAnsweredWithoutContextTakeoverBothWays) {
    deflate_agreement a = negotiate_deflate("permessage-deflate");
    ASSERT_TRUE(a.agreed);
    EXPECT_EQ(a.response, always);
    EXPECT_EQ(a.server_window_bits, 15);
}

TEST(DeflateOfferTest, WhatBrowsersSendIsAccepted) {
    // Chromium and Firefox offer this; the client's window is its own business.
    deflate_agreement a = negotiate_deflate("permessage-deflate; client_max_window_bits");
    ASSERT_TRUE(a.agreed);
    EXPECT_EQ(a.response, always);
    a = negotiate_deflate("permessage-deflate; client_max_window_bits=10; client_no_context_takeover");
    ASSERT_TRUE(a.agreed);
    EXPECT_EQ(a.response, always);
}

TEST(DeflateOfferTest, AServerWindowLimitIsHonouredAndNamed) {
    for (int bits = 8; bits <= 15; ++bits) {
        SCOPED_TRACE(bits);
        deflate_agreement a = negotiate_deflate("permessage-deflate; server_max_window_bits=" + std::to_string(bits));
        ASSERT_TRUE(a.agreed);
        EXPECT_EQ(a.server_window_bits, bits);
        EXPECT_EQ(a.response, std::string(always) + "; server_max_window_bits=" + std::to_string(bits));
    }
    deflate_agreement quoted = negotiate_deflate("permessage-deflate; server_max_window_bits=\"9\"");
    ASSERT_TRUE(quoted.agreed);
    EXPECT_EQ(quoted.server_window_bits, 9);
}

TEST(DeflateOfferTest, SpacingAndCaseOfNamesDoNotMatter) {
    deflate_agreement a = negotiate_deflate("  Permessage-Deflate ;Server_No_Context_Takeover;  client_max_window_bits = 12 ");
    ASSERT_TRUE(a.agreed);
    EXPECT_EQ(a.server_window_bits, 15);
}

TEST(DeflateOfferTest, BadOffersAreDeclined) {
    for (std::string_view offer : {
             "",
             "x-webkit-deflate-frame",
             "permessage-deflate; server_max_window_bits",      // a value is required
             "permessage-deflate; server_max_window_bits=7",
             "permessage-deflate; server_max_window_bits=16",
             "permessage-deflate; server_max_window_bits=010",  // no leading zeros
             "permessage-deflate; server_max_window_bits=1a",
             "permessage-deflate; client_max_window_bits=0",
             "permessage-deflate; client_max_window_bits=99",
             "permessage-deflate; server_no_context_takeover=1",
             "permessage-deflate; client_no_context_takeover=yes",
             "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
             "permessage-deflate; server_max_window_bits=10; server_max_window_bits=11",
             "permessage-deflate; mystery_parameter",
         }) {
        SCOPED_TRACE(offer);
        deflate_agreement a = negotiate_deflate(offer);
        EXPECT_FALSE(a.agreed);
        EXPECT_TRUE(a.response.empty());
    }
}

TEST(DeflateOfferTest, TheFirstAcceptableOfferWins) {
    deflate_agreement a = negotiate_deflate(
        "permessage-deflate; unknown=1, permessage-deflate; server_max_window_bits=11, permessage-deflate");
    ASSERT_TRUE(a.agreed);
    EXPECT_EQ(a.server_window_bits, 11);
    a = negotiate_deflate("foo; bar=2, permessage-deflate; client_max_window_bits");
    ASSERT_TRUE(a.agreed);
    EXPECT_EQ(a.response, always);
}

}  // namespace
}  // namespace parley::protocol
