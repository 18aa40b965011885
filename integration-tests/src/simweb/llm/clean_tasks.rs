//! The scripted answers for the clean stage's LLM tasks, pure functions of the prompt:
//!
//! * `judge`: the prompt's first line is `Text sample (…):`, the rest the sample. The score is
//!   the share of non-empty lines without a [`BOILERPLATE`] phrase (two decimals), the problems
//!   name those lines. `simweb:dirty` in the sample scores 0.2.
//! * `clean`: the markdown is everything after the line ending `Markdown:`. The answer is that
//!   markdown without its lines holding a boilerplate phrase (or `simweb:dirty`).
//!   `simweb:drop-code` (anywhere in the prompt) also drops fenced code blocks, fences and all,
//!   so the stage's guard must keep the original; `simweb:clean-short` answers only the first
//!   40 characters.
//! * `analysis`, `analysis_news`: reads `Question:`, `Data points:` (a JSON array) and the
//!   source after the line `Source:`. Relevant iff the source names one of the question's
//!   subject words ([`super::tasks::subject_words`]; with none, iff the source is not empty).
//!   The summary is the first source sentence naming a subject (`Latest: ` before it for
//!   `analysis_news`); each data point's value is the first number in the first sentence naming
//!   the data point (with the word after it if that looks like a unit), else that sentence,
//!   else null; the key points are up to three sentences naming a subject, copied exactly.
//!   `simweb:extra-key` adds a data point nobody asked for, so validation fails on every turn.

use serde_json::{json, Map, Value};

use super::tasks::{field, mentioned, subject_words};

/// Phrases the scripted judge and cleaner treat as page furniture (lower case).
pub const BOILERPLATE: &[&str] = &[
    "cookie",
    "subscribe",
    "newsletter",
    "share on",
    "sign in",
    "accept all",
    "advertisement",
    "all rights reserved",
    "follow us",
];

fn is_boilerplate(line: &str) -> bool {
    let lower = line.to_lowercase();
    BOILERPLATE.iter().any(|p| lower.contains(p)) || lower.contains("simweb:dirty")
}

/// The text after the first line that ends with `marker` (all of `prompt` if none does).
fn after_line<'a>(prompt: &'a str, marker: &str) -> &'a str {
    let mut at = 0;
    for line in prompt.split_inclusive('\n') {
        at += line.len();
        if line.trim_end().ends_with(marker) {
            return &prompt[at..];
        }
    }
    prompt
}

pub fn judge(prompt: &str) -> Value {
    let sample = after_line(prompt, ":");
    if sample.contains("simweb:dirty") {
        return json!({"score": 0.2, "problems": ["marked dirty by simweb:dirty"]});
    }
    let lines: Vec<&str> = sample.lines().filter(|l| !l.trim().is_empty()).collect();
    let bad: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| is_boilerplate(l))
        .collect();
    let score = if lines.is_empty() {
        1.0
    } else {
        1.0 - bad.len() as f64 / lines.len() as f64
    };
    let problems: Vec<String> = bad
        .iter()
        .take(5)
        .map(|l| format!("boilerplate line: {}", l.trim()))
        .collect();
    json!({"score": (score * 100.0).round() / 100.0, "problems": problems})
}

pub fn clean(prompt: &str) -> String {
    let markdown = after_line(prompt, "Markdown:");
    if prompt.contains("simweb:clean-short") {
        return markdown.chars().take(40).collect();
    }
    let drop_code = prompt.contains("simweb:drop-code");
    let mut out = Vec::new();
    let mut in_code = false;
    for line in markdown.lines() {
        let fence = line.trim_start().starts_with("```");
        if fence {
            in_code = !in_code;
        }
        if drop_code && (fence || in_code) {
            continue;
        }
        if !in_code && !fence && is_boilerplate(line) {
            continue;
        }
        out.push(line);
    }
    out.join("\n")
}

/// Sentences of markdown prose, each an exact substring of one line.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || t.is_empty() || t.starts_with('#') || t.starts_with('|') {
            continue;
        }
        let t = t.trim_start_matches(['-', '*', '>']).trim_start();
        let mut rest = t;
        while let Some(end) = rest.find(". ") {
            out.push(&rest[..=end]);
            rest = rest[end + 2..].trim_start();
        }
        if !rest.is_empty() {
            out.push(rest);
        }
    }
    out
}

/// The first number in `sentence` with the word after it, if any.
fn number_in(sentence: &str) -> Option<String> {
    let words: Vec<&str> = sentence.split_whitespace().collect();
    let i = words
        .iter()
        .position(|w| w.chars().any(|c| c.is_ascii_digit()))?;
    let number = words[i].trim_end_matches(['.', ',', ';']);
    match words.get(i + 1) {
        Some(next)
            if number == words[i]
                && next.len() > 3
                && next.chars().all(char::is_alphabetic)
                && !["that", "this", "with", "from", "into", "when"].contains(next) =>
        {
            Some(format!("{number} {next}"))
        }
        _ => Some(number.to_owned()),
    }
}

fn names_point(point: &str, sentence: &str) -> bool {
    let lower = sentence.to_lowercase();
    point
        .to_lowercase()
        .split_whitespace()
        .filter(|w| w.len() >= 3)
        .any(|w| lower.contains(w))
}

pub fn analysis(prompt: &str, news: bool) -> Value {
    let question = field(prompt, "Question:").unwrap_or("");
    let points: Vec<String> = field(prompt, "Data points:")
        .and_then(|p| serde_json::from_str(p).ok())
        .unwrap_or_default();
    let source = after_line(prompt, "Source:");
    let subjects = subject_words(question);
    let all = sentences(source);
    let naming: Vec<&str> = all
        .iter()
        .copied()
        .filter(|s| !mentioned(&subjects, s).is_empty())
        .collect();
    let is_relevant = if subjects.is_empty() {
        !source.trim().is_empty()
    } else {
        !naming.is_empty()
    };
    let first = naming
        .first()
        .or(all.first())
        .map(|s| s.chars().take(300).collect::<String>())
        .unwrap_or_else(|| "The source says nothing.".into());
    let summary = if news {
        format!("Latest: {first}")
    } else {
        first
    };
    let mut data = Map::new();
    for p in &points {
        let value = all
            .iter()
            .find(|s| names_point(p, s))
            .map(|s| number_in(s).unwrap_or_else(|| s.chars().take(120).collect()));
        data.insert(p.clone(), value.map_or(Value::Null, Value::String));
    }
    if prompt.contains("simweb:extra-key") {
        data.insert("unrequested".into(), json!("surprise"));
    }
    json!({
        "is_relevant": is_relevant,
        "summary": summary,
        "extracted_data": data,
        "key_points": naming.iter().take(3).collect::<Vec<_>>(),
    })
}

/// `fields`: the prompt lists the fields (`- <name> (<point>): <type>…` under `Fields:`) and
/// the sources (`[n] <title> | <url>` then their lines). Each field takes, from the first source
/// line naming its point (or, for a number asked in a unit, with a number followed by a word
/// starting as the unit does: "1,156 metres" for `m`), a value of its type: a number (the
/// first, commas dropped), a year for
/// a whole number or a date asked of a date-like point, and for text the capitalised words
/// after "by" (a name); the line is the quote. `simweb:fields-wrong` names a value no source
/// states, which trawl must refuse.
pub fn fields(prompt: &str) -> Value {
    let listed = after_line(prompt, "Fields:");
    let specs: Vec<(&str, &str, &str)> = (listed.lines())
        .take_while(|l| l.starts_with("- "))
        .filter_map(|l| {
            let (name, rest) = l[2..].split_once(" (")?;
            let (point, ty) = rest.split_once("): ")?;
            Some((name, point, ty))
        })
        .collect();
    let sources = after_line(prompt, "Sources:");
    let mut lines: Vec<(u64, &str)> = Vec::new();
    let mut current = 0;
    for line in sources.lines() {
        if let Some(n) = (line.strip_prefix('['))
            .and_then(|l| l.split_once(']'))
            .and_then(|(n, _)| n.parse().ok())
        {
            current = n;
            continue;
        }
        // "… isolated by Dr. Ada Quist.": a title's full stop ends no sentence.
        let mut start: Option<&str> = None;
        for s in sentences(line) {
            let s = match start.take() {
                Some(head) => &line[line.find(head).unwrap_or(0)..][..head.len() + 1 + s.len()],
                None => s,
            };
            if ["Dr.", "Mr.", "Mrs.", "Ms.", "Prof."]
                .iter()
                .any(|t| s.ends_with(t))
            {
                start = Some(s);
                continue;
            }
            lines.push((current, s));
        }
    }
    let mut out = Map::new();
    for (name, point, ty) in specs {
        let unit = ty
            .split(", in ")
            .nth(1)
            .map(|u| u.split(',').next().unwrap_or(u));
        let in_unit = |s: &str| {
            let words: Vec<&str> = s.split_whitespace().collect();
            unit.is_some_and(|u| {
                words.windows(2).any(|w| {
                    w[0].chars().any(|c| c.is_ascii_digit())
                        && w[1].to_lowercase().starts_with(&u.to_lowercase()[..1])
                })
            })
        };
        let found = lines.iter().find_map(|(n, s)| {
            // "designer" names a sentence saying "designed": words match by their stem.
            let lower = s.to_lowercase();
            let names = (point.split_whitespace())
                .filter(|w| w.len() >= 3)
                .any(|w| lower.contains(&w[..w.len().saturating_sub(2).max(3)]));
            if !names && !in_unit(s) {
                return None;
            }
            let value = if ty.starts_with("a number") || ty.starts_with("a whole number") {
                let year_like = ["opened", "founded", "year", "built"]
                    .iter()
                    .any(|w| point.contains(w));
                let digits = |w: &str| {
                    w.trim_matches(|c: char| !c.is_ascii_digit())
                        .replace(',', "")
                };
                let n = s
                    .split_whitespace()
                    .map(digits)
                    .find(|w| !w.is_empty() && (!year_like || w.len() == 4))?;
                json!(n.parse::<f64>().ok()?)
            } else if ty.starts_with("a date") {
                json!(s
                    .split_whitespace()
                    .map(|w| w.trim_matches(|c: char| !c.is_ascii_digit()))
                    .find(|w| w.len() == 4)?)
            } else {
                let after = s.split(" by ").nth(1)?;
                let words: Vec<&str> = (after.split_whitespace())
                    .map(|w| w.trim_end_matches(['.', ',']))
                    .skip_while(|w| {
                        !w.starts_with(char::is_uppercase)
                            || ["Dr", "Mr", "Mrs", "Ms", "Prof"].contains(w)
                    })
                    .take_while(|w| w.starts_with(char::is_uppercase))
                    .collect();
                if words.is_empty() {
                    return None;
                }
                json!(words.join(" "))
            };
            Some(json!({"value": value, "source": n, "quote": s}))
        });
        let mut answer =
            found.unwrap_or_else(|| json!({"value": null, "source": null, "quote": null}));
        if prompt.contains("simweb:fields-wrong") {
            answer["value"] = json!("Nobody Anywhere");
        }
        out.insert(name.to_owned(), answer);
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "# Frell\n\nWe use cookies. Accept all?\n\nThe Frell protocol uses port 4410. It was designed by Ada Quist.\n\n```\n$ frell --port 4410\n```\n\nSubscribe to our newsletter\n";

    #[test]
    fn fields_take_a_value_of_their_type_from_the_line_naming_them() {
        let prompt = "Question: q\nFields:\n- length (length): a number, in m\n- opened (opened): a whole number\n- designer (designer): text\n- colour (colour): text\nSources:\n[2] T | https://a.example/\nThe bridge spans 1,156 metres. It opened in 1931. The bridge was designed by engineer Ilse Strand. It was isolated by Dr. Ada Quist.\n";
        let v = fields(prompt);
        assert_eq!(v["length"]["value"], 1156.0);
        assert_eq!(v["length"]["source"], 2);
        assert_eq!(v["opened"]["value"], 1931.0);
        assert_eq!(v["designer"]["value"], "Ilse Strand");
        assert_eq!(
            v["designer"]["quote"],
            "The bridge was designed by engineer Ilse Strand."
        );
        assert_eq!(v["colour"]["value"], Value::Null);
        let isolator =
            fields(&prompt.replace("- colour (colour): text", "- isolator (isolator): text"));
        assert_eq!(isolator["isolator"]["value"], "Ada Quist");
        assert_eq!(
            isolator["isolator"]["quote"],
            "It was isolated by Dr. Ada Quist."
        );
    }

    #[test]
    fn judge_scores_the_share_of_clean_lines() {
        let v = judge(&format!("Text sample (10 of 10 characters):\n{PAGE}"));
        assert_eq!(v["score"], 0.71);
        assert_eq!(v["problems"].as_array().map(Vec::len), Some(2));
        let dirty = judge("Text sample (1 of 1 characters):\nsimweb:dirty");
        assert_eq!(dirty["score"], 0.2);
    }

    #[test]
    fn clean_drops_boilerplate_and_on_request_code() {
        let prompt = format!("Question: q\nPart 1 of 1. Markdown:\n{PAGE}");
        let c = clean(&prompt);
        assert!(!c.contains("cookies") && !c.contains("Subscribe"), "{c}");
        assert!(
            c.contains("$ frell --port 4410") && c.contains("# Frell"),
            "{c}"
        );
        let dropped = clean(&format!("Question: q simweb:drop-code\n{prompt}"));
        assert!(
            !dropped.contains("```") && !dropped.contains("$ frell"),
            "{dropped}"
        );
        assert!(dropped.contains("port 4410."), "{dropped}");
        assert_eq!(
            clean(&format!("simweb:clean-short\n{prompt}"))
                .chars()
                .count(),
            40
        );
    }

    #[test]
    fn analysis_reads_points_and_quotes_sentences() {
        let prompt = format!(
            "Question: Which port does the Frell protocol use?\nSub-queries: \nData points: [\"port\", \"colour\"]\nTitle: Frell\nSource:\n{PAGE}"
        );
        let v = analysis(&prompt, false);
        assert_eq!(v["is_relevant"], true);
        assert_eq!(v["summary"], "The Frell protocol uses port 4410.");
        assert_eq!(v["extracted_data"]["port"], "4410");
        assert_eq!(v["extracted_data"]["colour"], Value::Null);
        assert_eq!(v["key_points"][0], "The Frell protocol uses port 4410.");
        let news = analysis(&prompt, true);
        assert!(news["summary"].as_str().unwrap().starts_with("Latest: "));
        let extra = analysis(&format!("{prompt}\nsimweb:extra-key"), false);
        assert_eq!(extra["extracted_data"]["unrequested"], "surprise");
    }
}
