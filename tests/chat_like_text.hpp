#pragma once

#include <cstddef>
#include <string>

namespace parley::tests {

// A text of exactly `size` bytes made of everyday chat words in an order set by seed: what
// compression meets in a chat, neither one repeated byte nor noise.
inline std::string chat_like_text(std::size_t size, unsigned seed = 1) {
    static const char* const words[] = {"hello", "build", "green", "again", "meeting", "at", "noon", "ok", "thanks", "see"};
    std::string text;
    unsigned state = seed * 2654435761u + 1;
    while (text.size() < size) {
        state = state * 1664525u + 1013904223u;
        text += words[(state >> 16) % 10];
        text += ' ';
    }
    text.resize(size);
    return text;
}

}  // namespace parley::tests
