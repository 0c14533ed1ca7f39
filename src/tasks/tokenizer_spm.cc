/* Subword tokens through Debian's sentencepiece (tokenizer.h): the trainer and the processor
 * behind the C interface the text task uses. Nothing here throws past the interface:
 * sentencepiece reports through util::Status, and std::bad_alloc is caught at each entry. */
#include "tasks/tokenizer.h"
extern "C" {
#include "io/utf8.h"
}

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

struct qkv__tokenizer {
    sentencepiece::SentencePieceProcessor sp;
    std::vector<std::string> bytes; /* what each piece stands for, as bytes */
    int byte_id[256];               /* the byte piece of each byte */
};

namespace {

/* sentencepiece's mark for a space inside a piece, U+2581 */
const char SPACE_MARK[] = "\xe2\x96\x81";

/* why = s (QKV_ERR_FAIL: a vocabulary that cannot be trained, read or used is known at run time) */
void say(qkv_err *why, const std::string &s) { qkv_err_set(why, QKV_ERR_FAIL, "%s", s.c_str()); }

/* where the run of text that sentencepiece may see, starting at p, ends: at a newline, an
 * ill-formed UTF-8 sequence, a NUL or a literal U+2581 (which its pieces would turn into a
 * space); those go through byte pieces */
size_t plain_run(const uint8_t *p, size_t n) {
    size_t i = 0;
    while (i < n && p[i] != '\n' && p[i] != 0) {
        if (n - i >= 3 && !std::memcmp(p + i, SPACE_MARK, 3)) break;
        const char *why;
        size_t k = qkv__utf8_seq(p + i, n - i, &why);
        if (!k) break;
        i += k;
    }
    return i;
}

/* the longest sentence the trainer is given (its max_sentence_length, in bytes of the sentence as
 * it stores it: a space as its 3-byte mark): sentencepiece's own default. A longer sentence it
 * would leave out of training without a word, so Runs cuts longer runs into chunks of at most
 * this many; and a long sentence is what makes a unigram vocabulary's training slow (its seed
 * pieces come from every substring of a sentence: one line of 960 KB of "abc def " took over 200 s
 * with 1 MiB chunks), which short chunks keep to seconds */
constexpr size_t MAX_SENTENCE = 4192;

/* the length of the longest prefix of the plain run p[0, n) whose size in the trainer (a space
 * counts 3) is at most MAX_SENTENCE, ending on a UTF-8 sequence boundary, and before a space when
 * the prefix has one after its start (a word is not cut in two where it need not be) */
size_t chunk(const uint8_t *p, size_t n) {
    size_t i = 0, cost = 0, space = 0;
    while (i < n) {
        const char *why;
        size_t k = qkv__utf8_seq(p + i, n - i, &why); /* > 0: p is a plain run */
        size_t c = p[i] == ' ' ? 3 : k;
        if (cost + c > MAX_SENTENCE) return space ? space : i;
        if (p[i] == ' ' && i > 0) space = i;
        cost += c, i += k;
    }
    return i;
}

/* a character of a plain run (its UTF-8 bytes) as the trainer counts it: a space as its mark */
std::string char_at(const uint8_t *p, size_t n, size_t *k) {
    const char *why;
    *k = qkv__utf8_seq(p, n, &why); /* > 0: p is in a plain run */
    return p[0] == ' ' ? std::string(SPACE_MARK) : std::string(reinterpret_cast<const char *>(p), *k);
}

/* the text's plain runs (plain_run), one at a time, as the trainer reads the lines of its input
 * file: it is trained on what qkv__tokenizer_encode gives it to encode, a run longer than the
 * trainer reads cut into chunks (chunk), and, when keep() gave a set of characters, cut at every
 * character outside it too (those are spelled by byte pieces) */
class Runs : public sentencepiece::SentenceIterator {
  public:
    Runs(const uint8_t *text, size_t len) : start_(text), p_(text), end_(text + len) { Next(); }
    bool done() const override { return done_; }
    void Next() override {
        done_ = true;
        while (p_ < end_) {
            size_t rest = static_cast<size_t>(end_ - p_), k = plain_run(p_, rest < MAX_SENTENCE ? rest : MAX_SENTENCE);
            size_t skip = 1, i = 0, c;
            for (; keep_ && i < k; i += c) /* the characters kept, up to the first that is not */
                if (!keep_->count(char_at(p_ + i, k - i, &c))) {
                    if (i == 0) skip = c;
                    break;
                }
            if (keep_) k = i;
            if (k) k = chunk(p_, k);
            run_.assign(reinterpret_cast<const char *>(p_), k);
            p_ += k ? k : skip; /* bytes only byte pieces stand for */
            if (k) { done_ = false; return; }
        }
    }
    const std::string &value() const override { return run_; }
    sentencepiece::util::Status status() const override { return sentencepiece::util::Status(); }
    void keep(const std::unordered_set<std::string> *chars) { keep_ = chars; p_ = start_; Next(); }

  private:
    const uint8_t *start_, *p_, *end_;
    const std::unordered_set<std::string> *keep_ = nullptr;
    std::string run_;
    bool done_ = true;
};

/* the pieces that are not characters: the unknown piece and the 256 byte pieces */
constexpr int META_PIECES = 1 + 256;

/* the characters a vocabulary of `pieces` can hold on these runs: sentencepiece makes a piece of
 * every character it reads (its character_coverage, below 1, cannot go under 0.98) and refuses
 * more than fit beside the meta pieces. When they all fit, all (false); otherwise (true) the most
 * frequent ones filling half the room (rounded up), in *chars (the other half is for merges; the
 * rest are spelled by byte pieces) */
bool fitting_chars(Runs &runs, int pieces, std::unordered_set<std::string> *chars) {
    std::unordered_map<std::string, int64_t> count;
    for (; !runs.done(); runs.Next()) {
        const std::string &r = runs.value();
        const uint8_t *p = reinterpret_cast<const uint8_t *>(r.data());
        for (size_t i = 0, k; i < r.size(); i += k) count[char_at(p + i, r.size() - i, &k)]++;
    }
    runs.keep(nullptr); /* from the start again */
    size_t room = pieces > META_PIECES ? static_cast<size_t>(pieces - META_PIECES) : 0;
    if (count.size() <= room) return false;
    std::vector<std::pair<int64_t, std::string>> c; /* most frequent first; ties in byte order */
    for (const auto &kv : count) c.emplace_back(-kv.second, kv.first);
    std::sort(c.begin(), c.end());
    for (size_t i = 0; i < room - room / 2 && i < c.size(); i++) chars->insert(c[i].second);
    return true;
}

} // namespace

extern "C" int qkv__tokenizer_train(const uint8_t *text, int64_t len, qkv__spm_type type, int pieces, char **model,
                                    size_t *model_len, qkv_err *why) {
    try {
        Runs runs(text, static_cast<size_t>(len));
        if (runs.done()) {
            say(why, "only newlines, NULs and ill-formed UTF-8, which byte pieces spell: no text to "
                     "train pieces on");
            return -2;
        }
        std::unordered_set<std::string> chars;
        if (fitting_chars(runs, pieces, &chars)) runs.keep(&chars);
        /* lossless pieces (see tokenizer.h); one thread, every sentence in order: deterministic */
        const std::unordered_map<std::string, std::string> args = {
            {"model_type", type == QKV__SPM_BPE ? "bpe" : "unigram"},
            {"vocab_size", std::to_string(pieces)},
            {"character_coverage", "1.0"},
            {"byte_fallback", "true"},
            {"normalization_rule_name", "identity"},
            {"remove_extra_whitespaces", "false"},
            {"add_dummy_prefix", "false"},
            {"unk_id", "0"}, {"bos_id", "-1"}, {"eos_id", "-1"}, {"pad_id", "-1"},
            {"num_threads", "1"},
            {"input_sentence_size", "0"},
            {"shuffle_input_sentence", "false"},
            {"max_sentence_length", std::to_string(MAX_SENTENCE)},
            {"minloglevel", "2"}, /* its progress lines are not qkv's output */
        };
        std::string out;
        auto st = sentencepiece::SentencePieceTrainer::Train(args, &runs, &out);
        if (!st.ok()) { say(why, st.message()); return -1; }
        char *m = static_cast<char *>(std::malloc(out.size()));
        if (!m) { say(why, "out of memory"); return -1; }
        std::memcpy(m, out.data(), out.size());
        *model = m;
        *model_len = out.size();
        return 0;
    } catch (const std::bad_alloc &) {
        say(why, "out of memory");
        return -1;
    }
}

extern "C" qkv__tokenizer *qkv__tokenizer_load(const char *model, size_t len, qkv_err *why) {
    qkv__tokenizer *tk = nullptr;
    try {
        tk = new qkv__tokenizer;
        auto st = tk->sp.LoadFromSerializedProto(std::string(model, len));
        if (!st.ok()) {
            say(why, "not a sentencepiece model");
            delete tk;
            return nullptr;
        }
        int n = tk->sp.GetPieceSize();
        tk->bytes.resize(static_cast<size_t>(n));
        for (int b = 0; b < 256; b++) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", b);
            int id = tk->sp.PieceToId(name);
            if (!tk->sp.IsByte(id)) {
                say(why, "a model without byte fallback (no piece for byte " + std::string(name) +
                             "), which cannot encode every text");
                delete tk;
                return nullptr;
            }
            tk->byte_id[b] = id;
            tk->bytes[static_cast<size_t>(id)] = std::string(1, static_cast<char>(b));
        }
        for (int id = 0; id < n; id++) {
            if (tk->sp.IsByte(id)) continue;
            if (tk->sp.IsControl(id) || tk->sp.IsUnknown(id)) continue; /* stand for no bytes */
            std::string p = tk->sp.IdToPiece(id), s;
            for (size_t k = 0; k < p.size();) {
                if (!p.compare(k, 3, SPACE_MARK)) { s += ' '; k += 3; }
                else s += p[k++];
            }
            tk->bytes[static_cast<size_t>(id)] = s;
        }
        return tk;
    } catch (const std::bad_alloc &) {
        delete tk;
        say(why, "out of memory");
        return nullptr;
    }
}

extern "C" void qkv__tokenizer_free(qkv__tokenizer *tk) { delete tk; }

extern "C" int qkv__tokenizer_size(const qkv__tokenizer *tk) { return static_cast<int>(tk->bytes.size()); }

extern "C" const char *qkv__tokenizer_piece(const qkv__tokenizer *tk, int id, int *len) {
    const std::string &s = tk->bytes[static_cast<size_t>(id)];
    *len = static_cast<int>(s.size());
    return s.data();
}

extern "C" int qkv__tokenizer_encode(const qkv__tokenizer *tk, const uint8_t *text, int64_t len, int32_t **ids,
                                     int64_t *n_ids, qkv_err *why) {
    try {
        std::vector<int32_t> out;
        std::vector<int> run;
        size_t at = 0, n = static_cast<size_t>(len);
        while (at < n) {
            size_t k = plain_run(text + at, n - at);
            if (k == 0) { /* one byte through its byte piece */
                out.push_back(tk->byte_id[text[at++]]);
                continue;
            }
            run.clear();
            auto st = tk->sp.Encode(std::string(reinterpret_cast<const char *>(text + at), k), &run);
            if (!st.ok()) { say(why, st.message()); return -1; }
            size_t off = at;
            for (size_t j = 0; j < run.size(); j++) { /* the pieces must spell the run, byte for byte */
                int id = run[j];
                /* a space the vocabulary has no piece for: sentencepiece spells its mark, U+2581,
                 * in byte pieces; it is the space's own byte piece */
                if (text[off] == ' ' && j + 2 < run.size() && id == tk->byte_id[0xe2] &&
                    run[j + 1] == tk->byte_id[0x96] && run[j + 2] == tk->byte_id[0x81])
                    id = tk->byte_id[' '], j += 2;
                const std::string &s = tk->bytes[static_cast<size_t>(id)];
                if (s.empty() || off + s.size() > at + k || std::memcmp(text + off, s.data(), s.size())) {
                    say(why, "the tokenizer's pieces do not reproduce the text at byte " + std::to_string(off) +
                                 " (a model that normalizes text or adds a dummy prefix)");
                    return -1;
                }
                off += s.size();
                out.push_back(id);
            }
            if (off != at + k) {
                say(why, "the tokenizer's pieces do not reproduce the text at byte " + std::to_string(off));
                return -1;
            }
            at += k;
        }
        int32_t *m = static_cast<int32_t *>(std::malloc((out.size() ? out.size() : 1) * sizeof(int32_t)));
        if (!m) { say(why, "out of memory"); return -1; }
        if (!out.empty()) std::memcpy(m, out.data(), out.size() * sizeof(int32_t));
        *ids = m;
        *n_ids = static_cast<int64_t>(out.size());
        return 0;
    } catch (const std::bad_alloc &) {
        say(why, "out of memory");
        return -1;
    }
}
