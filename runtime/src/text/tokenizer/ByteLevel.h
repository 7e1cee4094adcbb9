//===- ByteLevel.h - GPT-2's map between bytes and printable characters ---===//
//
// Byte-level BPE works on bytes, but its vocab and merges are written as
// text: each byte b is written as one printable character, itself for the
// printable bytes '!'..'~', 0xA1..0xAC and 0xAE..0xFF, and U+0100 + n for
// the n-th of the others in byte order (so ' ' is U+0120 'Ġ'). This is
// openai/gpt-2's bytes_to_unicode (src/encoder.py), which tokenizers' ByteLevel
// pre-tokenizer and decoder use (pre_tokenizers/byte_level.rs, bytes_char).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_TOKENIZER_BYTELEVEL_H
#define COHERE2C_TEXT_TOKENIZER_BYTELEVEL_H

#include <cstdint>
#include <string>
#include <string_view>

namespace cohere2c::text::byte_level {

/// The character that stands for byte `b`, as UTF-8 (1 or 2 bytes).
std::string_view charOf(uint8_t b);

/// `bytes` written as the characters that stand for them.
std::string encode(std::string_view bytes);

/// The bytes a token of the vocab stands for, as tokenizers' ByteLevel
/// decoder reads it: when every character of `token` stands for a byte,
/// those bytes; otherwise the token's own UTF-8 (so an added token such as
/// "<|END_OF_TURN_TOKEN|>" decodes to itself).
std::string decodeToken(std::string_view token);

} // namespace cohere2c::text::byte_level

#endif // COHERE2C_TEXT_TOKENIZER_BYTELEVEL_H
