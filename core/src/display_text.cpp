// Text from outside made fit to show on one line (gpumem.h: display_text). The lowest layer: the
// field readers, the model reader and every front end quote outside values through it.

#include <string>
#include <utility>

#include <gpumem/gpumem.h>

namespace gpumem {

namespace {

// The code point of the UTF-8 sequence at text[i] and its length, or length 0 when the bytes there
// are not well-formed UTF-8 (a stray continuation byte, a truncated or overlong sequence, a
// surrogate, past U+10FFFF).
std::pair<char32_t, std::size_t> decode_utf8(const std::string& text, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    if (lead < 0x80) return {lead, 1};
    std::size_t n = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
    if (n == 0 || lead > 0xF4 || i + n > text.size()) return {0, 0};
    char32_t cp = lead & (0x7F >> n);
    for (std::size_t k = 1; k < n; k++) {
        if ((byte(i + k) & 0xC0) != 0x80) return {0, 0};
        cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    const char32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {0, 0};
    return {cp, n};
}

// Characters that move, hide or break the text around them when shown: the controls, and the
// format characters of bidirectional text and zero-width joining.
bool hides_or_moves_text(char32_t cp) {
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || (cp >= 0x200B && cp <= 0x200F) ||
           (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF;
}

}  // namespace

std::string display_text(const std::string& text, std::size_t max_chars) {
    static const char* const hex = "0123456789abcdef";
    std::string out;
    std::size_t shown = 0;  // characters written so far
    for (std::size_t i = 0; i < text.size();) {
        const auto [cp, length] = decode_utf8(text, i);
        std::string piece;
        if (length == 0) {
            const unsigned char b = static_cast<unsigned char>(text[i]);
            piece = std::string("\\x") + hex[b >> 4] + hex[b & 15];
        } else if (cp == '\n') {
            piece = "\\n";
        } else if (cp == '\r') {
            piece = "\\r";
        } else if (cp == '\t') {
            piece = "\\t";
        } else if (cp < 0x80 && hides_or_moves_text(cp)) {
            piece = std::string("\\x") + hex[cp >> 4] + hex[cp & 15];
        } else if (hides_or_moves_text(cp)) {
            piece = "\\u";
            for (int shift = 12; shift >= 0; shift -= 4) piece += hex[(cp >> shift) & 15];
        } else {
            piece = text.substr(i, length);
        }
        const std::size_t width = length == 0 || hides_or_moves_text(cp) ? piece.size() : 1;
        if (shown + width > max_chars) return out + "...";
        out += piece;
        shown += width;
        i += length == 0 ? 1 : length;
    }
    return out;
}

}  // namespace gpumem
