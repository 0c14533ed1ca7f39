/* Subword tokens through Debian's sentencepiece (tokenizer.h): the trainer and the processor
 * behind the C interface the text task uses. Nothing here throws past the interface:
 * sentencepiece reports through util::Status, and std::bad_alloc is caught at each entry. */
#include "tasks/tokenizer.h"
extern "C" {
#include "io/utf8.h"
}

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

struct qkv__tokenizer {
    sentencepiece::SentencePieceProcessor sp;
    std::vector<std::string> bytes; /* what each piece stands for, as bytes */
    int byte_id[256];               /* the byte piece of each byte */
};

namespace {

/* sentencepiece's mark for a space inside a piece, U+2581 */
const char SPACE_MARK[] = "\xe2\x96\x81";

void say(char *why, size_t n, const std::string &s) { std::snprintf(why, n, "%s", s.c_str()); }

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

/* the text's plain runs (plain_run), one at a time, as the trainer reads the lines of its input
 * file: it is trained on exactly what qkv__tokenizer_encode gives it to encode */
class Runs : public sentencepiece::SentenceIterator {
  public:
    Runs(const uint8_t *text, size_t len) : p_(text), end_(text + len) { Next(); }
    bool done() const override { return done_; }
    void Next() override {
        done_ = true;
        while (p_ < end_) {
            size_t k = plain_run(p_, static_cast<size_t>(end_ - p_));
            run_.assign(reinterpret_cast<const char *>(p_), k);
            p_ += k ? k : 1; /* a byte that only a byte piece stands for */
            if (k) { done_ = false; return; }
        }
    }
    const std::string &value() const override { return run_; }
    sentencepiece::util::Status status() const override { return sentencepiece::util::Status(); }

  private:
    const uint8_t *p_, *end_;
    std::string run_;
    bool done_ = true;
};

} // namespace

extern "C" int qkv__tokenizer_train(const uint8_t *text, int64_t len, qkv__spm_type type, int pieces, char **model,
                                    size_t *model_len, char *why, size_t why_len) {
    try {
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
            {"max_sentence_length", "1048576"},
            {"minloglevel", "2"}, /* its progress lines are not qkv's output */
        };
        Runs runs(text, static_cast<size_t>(len));
        std::string out;
        auto st = sentencepiece::SentencePieceTrainer::Train(args, &runs, &out);
        if (!st.ok()) { say(why, why_len, st.message()); return -1; }
        char *m = static_cast<char *>(std::malloc(out.size()));
        if (!m) { say(why, why_len, "out of memory"); return -1; }
        std::memcpy(m, out.data(), out.size());
        *model = m;
        *model_len = out.size();
        return 0;
    } catch (const std::bad_alloc &) {
        say(why, why_len, "out of memory");
        return -1;
    }
}

extern "C" qkv__tokenizer *qkv__tokenizer_load(const char *model, size_t len, char *why, size_t why_len) {
    qkv__tokenizer *tk = nullptr;
    try {
        tk = new qkv__tokenizer;
        auto st = tk->sp.LoadFromSerializedProto(std::string(model, len));
        if (!st.ok()) {
            say(why, why_len, "not a sentencepiece model");
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
                say(why, why_len, "a model without byte fallback (no piece for byte " + std::string(name) +
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
        say(why, why_len, "out of memory");
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
                                     int64_t *n_ids, char *why, size_t why_len) {
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
            if (!st.ok()) { say(why, why_len, st.message()); return -1; }
            size_t off = at;
            for (int id : run) { /* the pieces must spell the run, byte for byte */
                const std::string &s = tk->bytes[static_cast<size_t>(id)];
                if (s.empty() || off + s.size() > at + k || std::memcmp(text + off, s.data(), s.size())) {
                    say(why, why_len, "the tokenizer's pieces do not reproduce the text at byte " + std::to_string(off) +
                                          " (a model that normalizes text or adds a dummy prefix)");
                    return -1;
                }
                off += s.size();
                out.push_back(id);
            }
            if (off != at + k) {
                say(why, why_len, "the tokenizer's pieces do not reproduce the text at byte " + std::to_string(off));
                return -1;
            }
            at += k;
        }
        int32_t *m = static_cast<int32_t *>(std::malloc((out.size() ? out.size() : 1) * sizeof(int32_t)));
        if (!m) { say(why, why_len, "out of memory"); return -1; }
        if (!out.empty()) std::memcpy(m, out.data(), out.size() * sizeof(int32_t));
        *ids = m;
        *n_ids = static_cast<int64_t>(out.size());
        return 0;
    } catch (const std::bad_alloc &) {
        say(why, why_len, "out of memory");
        return -1;
    }
}
