//===- SpecialCasing.h - Case mappings that change a string's length -----===//
//
// The unconditional entries of Unicode's SpecialCasing.txt (Unicode
// 14.0.0, the tables of Python 3.11, which transformers' renders use): the
// characters whose str.upper(), str.lower() or str.title() is more than one
// character ('ß'.upper() is "SS", 'ﬁ'.upper() is "FI"). Generated with
//   [c for c in map(chr, range(0x110000)) if max(len(c.upper()),
//    len(c.lower()), len(c.title())) > 1]
// utf8proc's simple mappings cover every other character.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_SPECIALCASING_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_SPECIALCASING_H

namespace cohere2c::text::jinja {

struct SpecialCase {
  char32_t codePoint;
  const char32_t *upper;
  const char32_t *lower;
  const char32_t *title;
};

/// Sorted by code point.
inline constexpr SpecialCase kSpecialCases[] = {
    {0x00DF, U"SS", U"\u00DF", U"Ss"},
    {0x0130, U"\u0130", U"i\u0307", U"\u0130"},
    {0x0149, U"\u02BCN", U"\u0149", U"\u02BCN"},
    {0x01F0, U"J\u030C", U"\u01F0", U"J\u030C"},
    {0x0390, U"\u0399\u0308\u0301", U"\u0390", U"\u0399\u0308\u0301"},
    {0x03B0, U"\u03A5\u0308\u0301", U"\u03B0", U"\u03A5\u0308\u0301"},
    {0x0587, U"\u0535\u0552", U"\u0587", U"\u0535\u0582"},
    {0x1E96, U"H\u0331", U"\u1E96", U"H\u0331"},
    {0x1E97, U"T\u0308", U"\u1E97", U"T\u0308"},
    {0x1E98, U"W\u030A", U"\u1E98", U"W\u030A"},
    {0x1E99, U"Y\u030A", U"\u1E99", U"Y\u030A"},
    {0x1E9A, U"A\u02BE", U"\u1E9A", U"A\u02BE"},
    {0x1F50, U"\u03A5\u0313", U"\u1F50", U"\u03A5\u0313"},
    {0x1F52, U"\u03A5\u0313\u0300", U"\u1F52", U"\u03A5\u0313\u0300"},
    {0x1F54, U"\u03A5\u0313\u0301", U"\u1F54", U"\u03A5\u0313\u0301"},
    {0x1F56, U"\u03A5\u0313\u0342", U"\u1F56", U"\u03A5\u0313\u0342"},
    {0x1F80, U"\u1F08\u0399", U"\u1F80", U"\u1F88"},
    {0x1F81, U"\u1F09\u0399", U"\u1F81", U"\u1F89"},
    {0x1F82, U"\u1F0A\u0399", U"\u1F82", U"\u1F8A"},
    {0x1F83, U"\u1F0B\u0399", U"\u1F83", U"\u1F8B"},
    {0x1F84, U"\u1F0C\u0399", U"\u1F84", U"\u1F8C"},
    {0x1F85, U"\u1F0D\u0399", U"\u1F85", U"\u1F8D"},
    {0x1F86, U"\u1F0E\u0399", U"\u1F86", U"\u1F8E"},
    {0x1F87, U"\u1F0F\u0399", U"\u1F87", U"\u1F8F"},
    {0x1F88, U"\u1F08\u0399", U"\u1F80", U"\u1F88"},
    {0x1F89, U"\u1F09\u0399", U"\u1F81", U"\u1F89"},
    {0x1F8A, U"\u1F0A\u0399", U"\u1F82", U"\u1F8A"},
    {0x1F8B, U"\u1F0B\u0399", U"\u1F83", U"\u1F8B"},
    {0x1F8C, U"\u1F0C\u0399", U"\u1F84", U"\u1F8C"},
    {0x1F8D, U"\u1F0D\u0399", U"\u1F85", U"\u1F8D"},
    {0x1F8E, U"\u1F0E\u0399", U"\u1F86", U"\u1F8E"},
    {0x1F8F, U"\u1F0F\u0399", U"\u1F87", U"\u1F8F"},
    {0x1F90, U"\u1F28\u0399", U"\u1F90", U"\u1F98"},
    {0x1F91, U"\u1F29\u0399", U"\u1F91", U"\u1F99"},
    {0x1F92, U"\u1F2A\u0399", U"\u1F92", U"\u1F9A"},
    {0x1F93, U"\u1F2B\u0399", U"\u1F93", U"\u1F9B"},
    {0x1F94, U"\u1F2C\u0399", U"\u1F94", U"\u1F9C"},
    {0x1F95, U"\u1F2D\u0399", U"\u1F95", U"\u1F9D"},
    {0x1F96, U"\u1F2E\u0399", U"\u1F96", U"\u1F9E"},
    {0x1F97, U"\u1F2F\u0399", U"\u1F97", U"\u1F9F"},
    {0x1F98, U"\u1F28\u0399", U"\u1F90", U"\u1F98"},
    {0x1F99, U"\u1F29\u0399", U"\u1F91", U"\u1F99"},
    {0x1F9A, U"\u1F2A\u0399", U"\u1F92", U"\u1F9A"},
    {0x1F9B, U"\u1F2B\u0399", U"\u1F93", U"\u1F9B"},
    {0x1F9C, U"\u1F2C\u0399", U"\u1F94", U"\u1F9C"},
    {0x1F9D, U"\u1F2D\u0399", U"\u1F95", U"\u1F9D"},
    {0x1F9E, U"\u1F2E\u0399", U"\u1F96", U"\u1F9E"},
    {0x1F9F, U"\u1F2F\u0399", U"\u1F97", U"\u1F9F"},
    {0x1FA0, U"\u1F68\u0399", U"\u1FA0", U"\u1FA8"},
    {0x1FA1, U"\u1F69\u0399", U"\u1FA1", U"\u1FA9"},
    {0x1FA2, U"\u1F6A\u0399", U"\u1FA2", U"\u1FAA"},
    {0x1FA3, U"\u1F6B\u0399", U"\u1FA3", U"\u1FAB"},
    {0x1FA4, U"\u1F6C\u0399", U"\u1FA4", U"\u1FAC"},
    {0x1FA5, U"\u1F6D\u0399", U"\u1FA5", U"\u1FAD"},
    {0x1FA6, U"\u1F6E\u0399", U"\u1FA6", U"\u1FAE"},
    {0x1FA7, U"\u1F6F\u0399", U"\u1FA7", U"\u1FAF"},
    {0x1FA8, U"\u1F68\u0399", U"\u1FA0", U"\u1FA8"},
    {0x1FA9, U"\u1F69\u0399", U"\u1FA1", U"\u1FA9"},
    {0x1FAA, U"\u1F6A\u0399", U"\u1FA2", U"\u1FAA"},
    {0x1FAB, U"\u1F6B\u0399", U"\u1FA3", U"\u1FAB"},
    {0x1FAC, U"\u1F6C\u0399", U"\u1FA4", U"\u1FAC"},
    {0x1FAD, U"\u1F6D\u0399", U"\u1FA5", U"\u1FAD"},
    {0x1FAE, U"\u1F6E\u0399", U"\u1FA6", U"\u1FAE"},
    {0x1FAF, U"\u1F6F\u0399", U"\u1FA7", U"\u1FAF"},
    {0x1FB2, U"\u1FBA\u0399", U"\u1FB2", U"\u1FBA\u0345"},
    {0x1FB3, U"\u0391\u0399", U"\u1FB3", U"\u1FBC"},
    {0x1FB4, U"\u0386\u0399", U"\u1FB4", U"\u0386\u0345"},
    {0x1FB6, U"\u0391\u0342", U"\u1FB6", U"\u0391\u0342"},
    {0x1FB7, U"\u0391\u0342\u0399", U"\u1FB7", U"\u0391\u0342\u0345"},
    {0x1FBC, U"\u0391\u0399", U"\u1FB3", U"\u1FBC"},
    {0x1FC2, U"\u1FCA\u0399", U"\u1FC2", U"\u1FCA\u0345"},
    {0x1FC3, U"\u0397\u0399", U"\u1FC3", U"\u1FCC"},
    {0x1FC4, U"\u0389\u0399", U"\u1FC4", U"\u0389\u0345"},
    {0x1FC6, U"\u0397\u0342", U"\u1FC6", U"\u0397\u0342"},
    {0x1FC7, U"\u0397\u0342\u0399", U"\u1FC7", U"\u0397\u0342\u0345"},
    {0x1FCC, U"\u0397\u0399", U"\u1FC3", U"\u1FCC"},
    {0x1FD2, U"\u0399\u0308\u0300", U"\u1FD2", U"\u0399\u0308\u0300"},
    {0x1FD3, U"\u0399\u0308\u0301", U"\u1FD3", U"\u0399\u0308\u0301"},
    {0x1FD6, U"\u0399\u0342", U"\u1FD6", U"\u0399\u0342"},
    {0x1FD7, U"\u0399\u0308\u0342", U"\u1FD7", U"\u0399\u0308\u0342"},
    {0x1FE2, U"\u03A5\u0308\u0300", U"\u1FE2", U"\u03A5\u0308\u0300"},
    {0x1FE3, U"\u03A5\u0308\u0301", U"\u1FE3", U"\u03A5\u0308\u0301"},
    {0x1FE4, U"\u03A1\u0313", U"\u1FE4", U"\u03A1\u0313"},
    {0x1FE6, U"\u03A5\u0342", U"\u1FE6", U"\u03A5\u0342"},
    {0x1FE7, U"\u03A5\u0308\u0342", U"\u1FE7", U"\u03A5\u0308\u0342"},
    {0x1FF2, U"\u1FFA\u0399", U"\u1FF2", U"\u1FFA\u0345"},
    {0x1FF3, U"\u03A9\u0399", U"\u1FF3", U"\u1FFC"},
    {0x1FF4, U"\u038F\u0399", U"\u1FF4", U"\u038F\u0345"},
    {0x1FF6, U"\u03A9\u0342", U"\u1FF6", U"\u03A9\u0342"},
    {0x1FF7, U"\u03A9\u0342\u0399", U"\u1FF7", U"\u03A9\u0342\u0345"},
    {0x1FFC, U"\u03A9\u0399", U"\u1FF3", U"\u1FFC"},
    {0xFB00, U"FF", U"\uFB00", U"Ff"},
    {0xFB01, U"FI", U"\uFB01", U"Fi"},
    {0xFB02, U"FL", U"\uFB02", U"Fl"},
    {0xFB03, U"FFI", U"\uFB03", U"Ffi"},
    {0xFB04, U"FFL", U"\uFB04", U"Ffl"},
    {0xFB05, U"ST", U"\uFB05", U"St"},
    {0xFB06, U"ST", U"\uFB06", U"St"},
    {0xFB13, U"\u0544\u0546", U"\uFB13", U"\u0544\u0576"},
    {0xFB14, U"\u0544\u0535", U"\uFB14", U"\u0544\u0565"},
    {0xFB15, U"\u0544\u053B", U"\uFB15", U"\u0544\u056B"},
    {0xFB16, U"\u054E\u0546", U"\uFB16", U"\u054E\u0576"},
    {0xFB17, U"\u0544\u053D", U"\uFB17", U"\u0544\u056D"},
};

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_SPECIALCASING_H
