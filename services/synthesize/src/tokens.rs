//! Token counting for the report writer's context budget.
//!
//! OpenAI-style model names get the real BPE their models use (`o200k_base` for gpt-4o,
//! gpt-4.1, gpt-5, gpt-oss and the o-series; `cl100k_base` for gpt-4, gpt-3.5 and
//! text-embedding-3), loaded from the vocabularies embedded in `tiktoken-rs` and built once
//! per process. Every other model (Claude, Llama, Qwen, Mistral, unknown) gets
//! [`approx_count`], a deliberately pessimistic estimate: the budget is a hard limit, so
//! counting a few tokens too many only leaves some context unused, while counting too few
//! can overflow the model's window.

use std::fmt;

use tiktoken_rs::CoreBPE;

/// Counts tokens the way a given model would (exactly or conservatively).
#[derive(Clone, Copy)]
pub struct Tokenizer {
    kind: Kind,
}

#[derive(Clone, Copy)]
enum Kind {
    Bpe {
        bpe: &'static CoreBPE,
        name: &'static str,
    },
    Approx,
}

impl Tokenizer {
    /// The tokenizer for `model`. A provider prefix (`openai/gpt-4o`, `azure/gpt-4.1`) and case
    /// are ignored; names that are not OpenAI models get the approximation.
    pub(crate) fn for_model(model: &str) -> Tokenizer {
        let lower = model.trim().to_ascii_lowercase();
        let name = lower.rsplit('/').next().unwrap_or_default();
        const O200K: &[&str] = &[
            "gpt-4o",
            "chatgpt-4o",
            "gpt-4.1",
            "gpt-4.5",
            "gpt-5",
            "gpt-oss",
            "o1",
            "o3",
            "o4",
        ];
        const CL100K: &[&str] = &["gpt-4", "gpt-3.5", "gpt-35", "text-embedding-3"];
        let kind = if O200K.iter().any(|p| name.starts_with(p)) {
            Kind::Bpe {
                bpe: tiktoken_rs::o200k_base_singleton(),
                name: "o200k_base",
            }
        } else if CL100K.iter().any(|p| name.starts_with(p)) {
            Kind::Bpe {
                bpe: tiktoken_rs::cl100k_base_singleton(),
                name: "cl100k_base",
            }
        } else {
            Kind::Approx
        };
        Tokenizer { kind }
    }

    /// The conservative approximation, whatever the model.
    pub fn approx() -> Tokenizer {
        Tokenizer { kind: Kind::Approx }
    }

    /// Tokens in `text`. Special-token markers such as `<|endoftext|>` in the text are counted
    /// as ordinary text, as an API counts them in a prompt.
    pub fn count(&self, text: &str) -> usize {
        match self.kind {
            Kind::Bpe { bpe, .. } => bpe.encode_ordinary(text).len(),
            Kind::Approx => approx_count(text),
        }
    }

    /// Whether [`count`](Self::count) is the model's exact count (a real BPE) rather than an
    /// estimate.
    #[cfg(test)]
    fn is_exact(&self) -> bool {
        matches!(self.kind, Kind::Bpe { .. })
    }

    /// `"o200k_base"`, `"cl100k_base"` or `"approx-chars/3.5"`.
    pub fn name(&self) -> &'static str {
        match self.kind {
            Kind::Bpe { name, .. } => name,
            Kind::Approx => "approx-chars/3.5",
        }
    }
}

impl fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Tokenizer").field(&self.name()).finish()
    }
}

/// The estimate for models without a known BPE: the larger of a length estimate and a
/// lexical floor.
///
/// - Length: `ceil(ascii_chars / 3.5 + non_ascii_bytes × 2/3)`. 3.5 characters per token is
///   Anthropic's published rule of thumb for English and below what BPE vocabularies of 100k+
///   entries achieve on English prose (about four), so prose is over-counted by roughly
///   15–30%. Other scripts are counted by their UTF-8 bytes because byte-level BPEs fall back
///   to bytes for text they saw little of: cl100k_base spends 0.3–0.6 tokens per byte on
///   Cyrillic, Greek, Arabic, Devanagari, Thai, CJK and emoji, so 2/3 of a token per byte stays
///   above all of them (Chinese and Russian are over-counted by about 2×: safe, if wasteful).
/// - Floor: text dense in symbols or numbers (code, URLs, tables, hashes) has far fewer
///   characters per token, so the estimate is never below 9/8 of the pieces a BPE
///   pre-tokenizer would at least make: one per run of ASCII letters, one per group of up to
///   three digits (how the OpenAI BPEs split numbers), one per ASCII punctuation or symbol,
///   one per whitespace run other than a single space between words (newlines, indentation),
///   and one per non-ASCII character that is not a letter or digit (emoji, CJK punctuation,
///   symbols). The extra eighth covers pieces the BPE splits further (a hash's letter runs).
///
/// Random mixed-case strings (base64) remain under-counted, at about 1.3 characters per token
/// in cl100k_base; cleaned page text rarely holds them.
///
/// Both parts are subadditive over concatenation, so counting blocks separately never
/// under-counts the joined text.
pub(crate) fn approx_count(text: &str) -> usize {
    let mut ascii = 0usize;
    let mut non_ascii_bytes = 0usize;
    let mut floor = 0usize;
    let mut letters = false; // inside a run of ASCII letters
    let mut digits = 0usize; // length of the current run of ASCII digits
    let mut space = 0usize; // length of the current whitespace run
    let mut newline = false; // the current whitespace run holds a line break
    let mut started = false; // a non-whitespace character has been seen
    let end_digits = |digits: &mut usize, floor: &mut usize| {
        *floor += digits.div_ceil(3);
        *digits = 0;
    };
    // A run at either end of the text counts too, so that splitting a run between two texts
    // never counts less than the joined run.
    let end_space = |space: &mut usize, newline: &mut bool, floor: &mut usize, edge: bool| {
        if *space > 1 || *newline || (*space > 0 && edge) {
            *floor += 1;
        }
        *space = 0;
        *newline = false;
    };
    for c in text.chars() {
        if c.is_ascii() {
            ascii += 1;
        } else {
            non_ascii_bytes += c.len_utf8();
        }
        if c.is_whitespace() {
            letters = false;
            end_digits(&mut digits, &mut floor);
            space += 1;
            newline |= c == '\n' || c == '\r';
            continue;
        }
        end_space(&mut space, &mut newline, &mut floor, !started);
        started = true;
        if c.is_ascii_alphabetic() {
            end_digits(&mut digits, &mut floor);
            if !letters {
                floor += 1;
                letters = true;
            }
        } else if c.is_ascii_digit() {
            letters = false;
            digits += 1;
        } else {
            letters = false;
            end_digits(&mut digits, &mut floor);
            // ASCII punctuation, and non-ASCII characters other than letters and digits, are a
            // token each at least. Non-ASCII letters (é, ж, 中) are covered by their bytes.
            if c.is_ascii() || !c.is_alphanumeric() {
                floor += 1;
            }
        }
    }
    end_digits(&mut digits, &mut floor);
    end_space(&mut space, &mut newline, &mut floor, true);
    // ascii / 3.5 + bytes × 2/3, over the common denominator 21, in exact integers.
    let length = (6 * ascii + 14 * non_ascii_bytes).div_ceil(21);
    length.max((9 * floor).div_ceil(8))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENGLISH: &str = "The Golden Gate Bridge is a suspension bridge spanning the Golden \
        Gate, the one-mile-wide strait connecting San Francisco Bay and the Pacific Ocean. The \
        structure links the U.S. city of San Francisco, California, to Marin County, carrying \
        both U.S. Route 101 and California State Route 1 across the strait. It opened in 1937 \
        and, at 4,200 feet (1,280 m), had the longest main span of any suspension bridge.";

    const CODE: &str = r#"use std::collections::HashMap;

fn main() {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for word in "a b a c".split_whitespace() {
        *counts.entry(word).or_insert(0) += 1;
    }
    if let Some(n) = counts.get("a") {
        println!("a={n} {:?}", counts);
    }
}
"#;

    const JSON: &str = r#"{"id":"0192f3a4-7b5c-7d6e-8f90-a1b2c3d4e5f6","url":"https://example.com/a/b?x=1&y=2#frag","scores":[0.125,0.5,1e-3],"ok":true}"#;

    const MARKDOWN: &str = "## Results\n\n| Year | Value | Δ |\n|------|-------|---|\n| 2021 | 1,234.5 | +3% |\n| 2022 | 9,876.0 | −12% |\n\n- See [the report](https://www.example.org/reports/2022/annual.pdf).\n- SHA-256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n";

    const OTHER: &[&str] = &[
        "Привет, мир! Это проверка подсчёта токенов.",
        "東京は日本の首都です。人口は約1400万人です。",
        "鬱蒼とした森の奥で、麒麟と鳳凰が邂逅した。薔薇の棘、檸檬の香り、躑躅の花。",
        "中华人民共和国是位于东亚的社会主义国家，首都北京，人口超过十四亿。",
        "대한민국은 동아시아의 한반도 남부에 위치한 민주공화국이다.",
        "भारत दक्षिण एशिया में स्थित एक देश है। इसकी राजधानी नई दिल्ली है।",
        "مصر دولة عربية تقع في الركن الشمالي الشرقي من قارة أفريقيا.",
        "Ελλάδα είναι χώρα της νοτιοανατολικής Ευρώπης. Πρωτεύουσα είναι η Αθήνα.",
        "ประเทศไทยเป็นประเทศในเอเชียตะวันออกเฉียงใต้",
        "naïve café — déjà vu, señor Müller 🚀🎉👍🏽🇺🇸👨‍👩‍👧 ✓ → ∑",
        "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ];

    #[test]
    fn hello_world_is_two_tokens_in_both_bpes() {
        for model in ["gpt-4", "gpt-4o"] {
            assert_eq!(
                Tokenizer::for_model(model).count("hello world"),
                2,
                "{model}"
            );
        }
    }

    #[test]
    fn known_counts() {
        let cl = Tokenizer::for_model("gpt-4-turbo");
        let o2 = Tokenizer::for_model("gpt-4o-mini");
        assert_eq!(cl.count("Hello, world!"), 4);
        assert_eq!(o2.count("Hello, world!"), 4);
        // cl100k and o200k split numbers into groups of at most three digits.
        assert_eq!(cl.count("1234567"), 3);
        // Special-token markers are ordinary text here.
        assert!(cl.count("<|endoftext|>") > 1);
        assert!(o2.count("<|endoftext|>") > 1);
        // The vocabularies differ: o200k needs no more tokens for non-English text.
        let ru = OTHER[0];
        assert!(o2.count(ru) <= cl.count(ru));
    }

    #[test]
    fn model_names_map_to_encodings() {
        for (model, name) in [
            ("gpt-4o", "o200k_base"),
            ("gpt-4o-2024-08-06", "o200k_base"),
            ("GPT-4.1-mini", "o200k_base"),
            ("openai/gpt-5", "o200k_base"),
            ("o1-preview", "o200k_base"),
            ("o3-mini", "o200k_base"),
            ("o4-mini", "o200k_base"),
            ("gpt-4", "cl100k_base"),
            ("gpt-4-0613", "cl100k_base"),
            ("gpt-3.5-turbo", "cl100k_base"),
            ("text-embedding-3-small", "cl100k_base"),
            ("claude-sonnet-4-5", "approx-chars/3.5"),
            ("anthropic/claude-3-5-haiku", "approx-chars/3.5"),
            ("llama3.1:8b", "approx-chars/3.5"),
            ("qwen2.5:7b", "approx-chars/3.5"),
            ("", "approx-chars/3.5"),
        ] {
            let t = Tokenizer::for_model(model);
            assert_eq!(t.name(), name, "{model}");
            assert_eq!(t.is_exact(), name != "approx-chars/3.5", "{model}");
        }
    }

    #[test]
    fn empty_is_zero() {
        for model in ["gpt-4", "gpt-4o", "claude-opus-4"] {
            assert_eq!(Tokenizer::for_model(model).count(""), 0, "{model}");
        }
    }

    #[test]
    fn approximation_over_counts_both_bpes() {
        let cl = Tokenizer::for_model("gpt-4");
        let o2 = Tokenizer::for_model("gpt-4o");
        let approx = Tokenizer::for_model("claude-sonnet-4-5");
        let samples = [ENGLISH, CODE, JSON, MARKDOWN]
            .into_iter()
            .chain(OTHER.iter().copied());
        for text in samples {
            let (a, c, o) = (approx.count(text), cl.count(text), o2.count(text));
            assert!(
                a >= c && a >= o,
                "approx {a} < cl100k {c} / o200k {o}: {text}"
            );
        }
        // ...without wasting much of the budget on prose.
        let (a, c) = (approx.count(ENGLISH), cl.count(ENGLISH));
        assert!(a * 10 <= c * 15, "approx {a} vs cl100k {c}");
    }

    #[test]
    fn approximation_is_subadditive() {
        let parts = [ENGLISH, CODE, JSON, MARKDOWN, OTHER[1], "x", "12", "\n"];
        for a in parts {
            for b in parts {
                for sep in ["", "\n\n", " "] {
                    let joined = format!("{a}{sep}{b}");
                    let sum = approx_count(a) + approx_count(sep) + approx_count(b);
                    assert!(approx_count(&joined) <= sum, "{a:?} {sep:?} {b:?}");
                }
            }
        }
    }
}
