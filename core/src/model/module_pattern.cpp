// The module-name patterns of quantization configs ("re:.*self_attn.*", "re:model.layers.[0-9]+.mlp.gate$"),
// matched in time linear in the name: a Thompson NFA (Pike's VM without captures) instead of a
// backtracking engine, so no pattern a config carries can make the reading slow.
//
// The subset: literals, `.`, escapes (\. \d \w \s and any escaped punctuation), classes `[a-z0-9_]`
// and `[^...]`, groups `( )` and `(?: )`, alternation `|`, the quantifiers `*`, `+`, `?`, and the
// anchors `^` (at the start) and `$`. Anything else (counted repetition, look-around,
// back-references) makes the pattern unreadable: it matches nothing.

#include <cctype>
#include <utility>

#include "model/model.h"

namespace gpumem::detail {

namespace {

using Op = ModulePattern::State;

// A recursive-descent compiler over the pattern; depth bounded by kMaxDepth.
struct Compiler {
    const std::string& p;
    std::size_t i = 0;
    std::vector<Op> code;
    bool ok = true;
    int depth = 0;
    static constexpr int kMaxDepth = 32;

    explicit Compiler(const std::string& pattern) : p(pattern) {}

    bool at_end() const { return i >= p.size(); }

    std::bitset<256> escape(char c) {
        std::bitset<256> s;
        auto range = [&](char a, char b) {
            for (int ch = static_cast<unsigned char>(a); ch <= static_cast<unsigned char>(b); ++ch) s.set(ch);
        };
        if (c == 'd') {
            range('0', '9');
        } else if (c == 'w') {
            range('a', 'z');
            range('A', 'Z');
            range('0', '9');
            s.set('_');
        } else if (c == 's') {
            for (char w : {' ', '\t', '\n', '\r', '\f', '\v'}) s.set(static_cast<unsigned char>(w));
        } else if (std::isalnum(static_cast<unsigned char>(c))) ok = false;  // \b, \1, \n...: not in the subset
        else s.set(static_cast<unsigned char>(c));
        return s;
    }

    std::bitset<256> char_class() {  // after '['
        std::bitset<256> s;
        bool negate = !at_end() && p[i] == '^';
        if (negate) ++i;
        bool first = true;
        while (!at_end() && (p[i] != ']' || first)) {
            first = false;
            unsigned char a = static_cast<unsigned char>(p[i++]);
            if (a == '\\' && !at_end()) {
                s |= escape(p[i++]);
                continue;
            }
            if (i + 1 < p.size() && p[i] == '-' && p[i + 1] != ']') {
                unsigned char b = static_cast<unsigned char>(p[i + 1]);
                i += 2;
                if (b < a) ok = false;
                for (int ch = a; ch <= b; ++ch) s.set(ch);
            } else {
                s.set(a);
            }
        }
        if (at_end()) ok = false;  // no closing ']'
        else ++i;
        if (negate) s.flip();
        return s;
    }

    std::size_t emit(Op op) {
        code.push_back(op);
        return code.size() - 1;
    }

    // A fragment is a range [start, end) of `code` whose dangling exits point at `end`.
    void atom() {
        char c = p[i++];
        if (c == '(') {
            if (i + 1 < p.size() && p[i] == '?' && p[i + 1] == ':') i += 2;
            else if (!at_end() && p[i] == '?') ok = false;  // look-around, named groups
            if (++depth > kMaxDepth) ok = false;
            if (ok) alternation();
            --depth;
            if (at_end() || p[i] != ')') ok = false;
            else ++i;
            return;
        }
        Op op{Op::Char, {}, 0, 0};
        if (c == '.') op.set.set().reset('\n');
        else if (c == '\\' && !at_end()) op.set = escape(p[i++]);
        else if (c == '[') op.set = char_class();
        else if (c == '$') op.kind = Op::End;
        else if (c == '{' || c == '}' || c == ')' || c == '*' || c == '+' || c == '?') ok = false;
        else op.set.set(static_cast<unsigned char>(c));
        emit(op);
    }

    // An atom with its quantifier: the atom's code is moved behind the split the quantifier needs.
    void piece() {
        const std::size_t start = code.size();
        atom();
        if (!ok || at_end()) return;
        const char q = p[i];
        if (q != '*' && q != '+' && q != '?') return;
        ++i;
        std::vector<Op> body(code.begin() + static_cast<std::ptrdiff_t>(start), code.end());
        code.resize(start);
        const std::size_t n = body.size();
        auto relocate = [&](std::size_t offset) {
            for (Op& op : body)
                if (op.kind == Op::Split || op.kind == Op::Jump) op.x += offset - start, op.y += offset - start;
        };
        if (q == '+') {  // body; split(body, next)
            relocate(start);
            code.insert(code.end(), body.begin(), body.end());
            emit({Op::Split, {}, start, start + n + 1});
        } else if (q == '*') {  // split(body, next); body; jump split
            relocate(start + 1);
            emit({Op::Split, {}, start + 1, start + n + 2});
            code.insert(code.end(), body.begin(), body.end());
            emit({Op::Jump, {}, start, 0});
        } else {  // split(body, next); body
            relocate(start + 1);
            emit({Op::Split, {}, start + 1, start + n + 1});
            code.insert(code.end(), body.begin(), body.end());
        }
    }

    void concatenation() {
        while (ok && !at_end() && p[i] != '|' && p[i] != ')') piece();
    }

    // a|b: split(a, b'); a; jump end; b. Each branch's jumps stay inside it.
    void alternation() {
        const std::size_t start = code.size();
        concatenation();
        while (ok && !at_end() && p[i] == '|') {
            ++i;
            std::vector<Op> left(code.begin() + static_cast<std::ptrdiff_t>(start), code.end());
            code.resize(start);
            for (Op& op : left)
                if (op.kind == Op::Split || op.kind == Op::Jump) ++op.x, ++op.y;
            const std::size_t split = emit({Op::Split, {}, start + 1, 0});
            code.insert(code.end(), left.begin(), left.end());
            const std::size_t jump = emit({Op::Jump, {}, 0, 0});
            code[split].y = code.size();
            concatenation();
            code[jump].x = code.size();
        }
    }
};

// Adds state `pc` and what it reaches without consuming to `list` (each state once per step).
void add_state(const std::vector<Op>& code, std::size_t pc, std::vector<std::size_t>& list,
               std::vector<std::size_t>& seen, std::size_t step, bool at_end, bool& matched,
               std::vector<std::size_t>& stack) {
    stack.assign(1, pc);
    while (!stack.empty()) {
        std::size_t s = stack.back();
        stack.pop_back();
        if (s >= code.size() || seen[s] == step) continue;
        seen[s] = step;
        const Op& op = code[s];
        if (op.kind == Op::Jump) stack.push_back(op.x);
        else if (op.kind == Op::Split) stack.push_back(op.y), stack.push_back(op.x);
        else if (op.kind == Op::End) {
            if (at_end) stack.push_back(s + 1);
        } else if (op.kind == Op::Match) matched = true;
        else list.push_back(s);
    }
}

}  // namespace

std::optional<ModulePattern> compile_module_pattern(const std::string& regex) {
    if (regex.size() > 4096) return std::nullopt;
    std::string body = regex;
    if (!body.empty() && body[0] == '^') body.erase(0, 1);  // matching starts at the name's start anyway
    Compiler c{body};
    c.alternation();
    if (!c.ok || !c.at_end()) return std::nullopt;
    c.emit({Op::Match, {}, 0, 0});
    ModulePattern out;
    out.states = std::move(c.code);
    return out;
}

// Whether the pattern matches a prefix of `name` (Python's re.match, as compressed-tensors calls it):
// one pass over the name, each step visiting every state at most once.
bool ModulePattern::matches(const std::string& name) const {
    std::vector<std::size_t> current, next, seen(states.size(), 0), stack;
    bool matched = false;
    std::size_t step = 1;
    add_state(states, 0, current, seen, step, name.empty(), matched, stack);
    for (std::size_t k = 0; k < name.size() && !matched && !current.empty(); ++k) {
        ++step;
        next.clear();
        const auto ch = static_cast<unsigned char>(name[k]);
        for (std::size_t s : current)
            if (states[s].set.test(ch))
                add_state(states, s + 1, next, seen, step, k + 1 == name.size(), matched, stack);
        current.swap(next);
    }
    return matched;
}

}  // namespace gpumem::detail
