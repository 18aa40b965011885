//! The scripted answers for trawl's LLM tasks. Every function here is a pure function of the
//! prompt text, so the same prompt always gets the same JSON.
//!
//! Prompt lines are matched after trimming, with case-sensitive prefixes:
//! * `query_analysis`: `Question: <q>` (if absent, the prompt's first non-empty line).
//! * `relevance`: `Question: <q>`, `Title: <t>`, `URL: <u>`, `Snippet: <s>`.
//! * `select`: `Question: <q>`, a line containing `Pick at most N`, and candidate lines
//!   `<n>. <title> | <url> | <snippet>`.

use serde_json::{json, Value};

/// Value of the first line starting with `key` (e.g. `"Question:"`), trimmed.
pub fn field<'a>(prompt: &'a str, key: &str) -> Option<&'a str> {
    prompt
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix(key))
        .map(str::trim)
}

/// Words of `text`: split on whitespace, outer punctuation trimmed, possessive `'s` dropped.
fn words(text: &str) -> Vec<&str> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .map(|w| {
            w.strip_suffix("'s")
                .or_else(|| w.strip_suffix("\u{2019}s"))
                .unwrap_or(w)
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// The question's subject names: its capitalised words other than the first word.
pub fn subject_words(question: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in words(question).into_iter().skip(1) {
        if w.chars().next().is_some_and(char::is_uppercase) && !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    }
    out
}

/// Subject names (from [`subject_words`]) that occur as whole words, case-insensitively, in
/// `text`.
pub fn mentioned(subjects: &[String], text: &str) -> Vec<String> {
    let lower: Vec<String> = words(text).iter().map(|w| w.to_lowercase()).collect();
    subjects
        .iter()
        .filter(|s| lower.contains(&s.to_lowercase()))
        .cloned()
        .collect()
}

/// Agent noun for the verb after "who": "designed" → "designer", "created" → "creator".
fn agent_noun(verb: &str) -> String {
    let v = verb.to_lowercase();
    match v.as_str() {
        "invented" => return "inventor".into(),
        "captained" => return "captain".into(),
        "wrote" | "written" => return "author".into(),
        "built" => return "builder".into(),
        "won" => return "winner".into(),
        _ => {}
    }
    if let Some(stem) = v.strip_suffix("ated") {
        format!("{stem}ator")
    } else if let Some(stem) = v.strip_suffix("ed") {
        format!("{stem}er")
    } else {
        format!("person who {v}")
    }
}

const SKIP: &[&str] = &["first", "originally", "actually", "really", "also"];

/// Short noun phrases naming what the question asks for, one per clause:
/// "the <x> of" → x; "who [first] <verb>" → agent noun; "when" → "date"; "where" → "location";
/// "how long/tall/many/much" → "length"/"height"/"number"/"amount"; "which/what <noun> does"
/// and "in what <noun>" → noun. Falls back to the subject names, then to the question.
pub fn data_points(question: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |p: String| {
        if !p.is_empty() && !out.contains(&p) {
            out.push(p);
        }
    };
    let lower = question.to_lowercase();
    for clause in lower.split([',', ';', '?']).flat_map(|c| c.split(" and ")) {
        let w = words(clause);
        let mut i = 0;
        while i < w.len() {
            match w[i] {
                "the" => {
                    if let Some(of) = w[i + 1..].iter().position(|x| *x == "of") {
                        if (1..=3).contains(&of) {
                            push(w[i + 1..i + 1 + of].join(" "));
                            break;
                        }
                    }
                }
                "who" => {
                    if let Some(verb) = w[i + 1..].iter().find(|x| !SKIP.contains(x)) {
                        push(agent_noun(verb));
                        break;
                    }
                }
                "when" => {
                    push("date".into());
                    break;
                }
                "where" => {
                    push("location".into());
                    break;
                }
                "how" => {
                    let p = match w.get(i + 1).copied() {
                        Some("long") => "length",
                        Some("tall" | "high") => "height",
                        Some("many") => "number",
                        Some("much") => "amount",
                        Some("old") => "age",
                        _ => "method",
                    };
                    push(p.into());
                    break;
                }
                "which" | "what" => {
                    if let Some(n) = w
                        .get(i + 1)
                        .filter(|n| !["is", "are", "was", "were", "does", "did", "do"].contains(n))
                    {
                        push((*n).to_string());
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
    if out.is_empty() {
        out = subject_words(question);
    }
    if out.is_empty() {
        out.push(question.trim().to_string());
    }
    out
}

/// `{"intent", "sub_queries", "info_type", "target_data_points", "search_strategy"}`.
/// `follow_up`: one search per `- ` line under "Missing:", the question's subject words and
/// what the line says is missing ("no source read states the density" → "… density").
pub fn follow_up(prompt: &str) -> Value {
    let question = field(prompt, "Question:").unwrap_or("");
    let subject = subject_words(question).join(" ");
    let queries: Vec<String> = (prompt.lines())
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|line| {
            let what = ["states the ", "covers "]
                .iter()
                .find_map(|k| line.split_once(k).map(|(_, w)| w))
                .unwrap_or(line);
            let what = what.trim_matches(|c| c == '“' || c == '”');
            format!("{subject} {what}").trim().to_owned()
        })
        .take(3)
        .collect();
    json!({ "queries": queries })
}

pub fn query_analysis(prompt: &str) -> Value {
    let question = field(prompt, "Question:")
        .or_else(|| prompt.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("")
        .to_string();
    let subjects = subject_words(&question);
    let points = data_points(&question);
    let lower = question.to_lowercase();
    let info_type = if lower.contains("latest") || lower.contains("news") {
        "news"
    } else {
        "facts"
    };
    // Sub-queries: the question, then each " and "-clause with "it" replaced by the subject.
    let mut sub_queries = vec![question.clone()];
    let body = question.trim_end_matches('?').trim();
    let clauses: Vec<&str> = body
        .split(" and ")
        .map(|c| c.trim().trim_matches(','))
        .filter(|c| c.split_whitespace().count() >= 3)
        .collect();
    if clauses.len() > 1 {
        let subject = subjects.join(" ");
        for c in clauses.iter().take(2) {
            let replaced: Vec<&str> = c
                .split_whitespace()
                .map(|w| {
                    if w == "it" && !subject.is_empty() {
                        subject.as_str()
                    } else {
                        w
                    }
                })
                .collect();
            let mut q = replaced.join(" ");
            if let Some(first) = q.get(..1) {
                q = first.to_uppercase() + &q[1..];
            }
            sub_queries.push(format!("{q}?"));
        }
    }
    let about = if subjects.is_empty() {
        "the question".to_string()
    } else {
        subjects.join(" ")
    };
    json!({
        "intent": format!("Find the {} of {about}", points.join(", ")),
        "sub_queries": sub_queries,
        "info_type": info_type,
        "target_data_points": points,
        "search_strategy": if info_type == "news" {
            format!("Search recent news about {about} and prefer the newest reports")
        } else {
            format!("Search for {about} and confirm each data point on an authoritative page")
        },
    })
}

/// `{"relevant", "reasoning", "confidence"}`: relevant iff the title or snippet names a subject.
pub fn relevance(prompt: &str) -> Value {
    let question = field(prompt, "Question:").unwrap_or("");
    let title = field(prompt, "Title:").unwrap_or("");
    let snippet = field(prompt, "Snippet:").unwrap_or("");
    let subjects = subject_words(question);
    let hits = mentioned(&subjects, &format!("{title}\n{snippet}"));
    if hits.is_empty() {
        json!({
            "relevant": false,
            "reasoning": format!("The result does not mention {}", if subjects.is_empty() { "the question's subject".to_string() } else { subjects.join(", ") }),
            "confidence": 0.8,
        })
    } else {
        json!({
            "relevant": true,
            "reasoning": format!("The result mentions {}", hits.join(", ")),
            "confidence": 0.9,
        })
    }
}

/// `{"selected": [n, …]}`: up to N candidate numbers naming a subject, in prompt order.
pub fn select(prompt: &str) -> Value {
    let question = field(prompt, "Question:").unwrap_or("");
    let subjects = subject_words(question);
    let limit = prompt
        .lines()
        .find_map(|l| l.split_once("Pick at most ").map(|(_, rest)| rest))
        .and_then(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<usize>().ok()
        })
        .unwrap_or(usize::MAX);
    let selected: Vec<u64> = prompt
        .lines()
        .filter_map(|l| {
            let (n, rest) = l.trim().split_once(". ")?;
            let n: u64 = n.parse().ok()?;
            let mut parts = rest.splitn(3, " | ");
            let title = parts.next().unwrap_or("");
            let _url = parts.next();
            let snippet = parts.next().unwrap_or("");
            (!mentioned(&subjects, &format!("{title}\n{snippet}")).is_empty()).then_some(n)
        })
        .take(limit)
        .collect();
    json!({ "selected": selected })
}

/// `report`: a short cited answer written from the context blocks. The prompt has
/// `Question: <q>` and blocks starting `[<n>] <title> — <url>`; for each part of the question,
/// the prose sentence naming its subject that shares most words with that part is quoted with
/// `[<n>]` (from three sources at most).
/// `simweb:fakecite` plants citations to sources that do not exist (`[99]`, `[S2]`).
pub fn report(prompt: &str) -> String {
    let question = field(prompt, "Question:").unwrap_or_default();
    let subjects = subject_words(question);
    let mut out = String::from("## Answer\n\n");
    let mut cited = 0;
    let mut current: Option<(String, Vec<&str>)> = None;
    let mut blocks: Vec<(String, Vec<&str>)> = Vec::new();
    for line in prompt.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix('[') {
            let header = (rest.split_once("] "))
                .filter(|(n, title)| n.parse::<u32>().is_ok() && title.contains(" — "));
            if let Some((n, _)) = header {
                if let Some(b) = current.take() {
                    blocks.push(b);
                }
                current = Some((n.to_string(), Vec::new()));
                continue;
            }
        }
        if let Some((_, lines)) = current.as_mut() {
            lines.push(t);
        }
    }
    blocks.extend(current);
    // Each block's prose sentences naming the subject, as a model reads them: not the Data,
    // Lookup or Relevance labels, headings or table rows, which no source states as written.
    let mut candidates: Vec<(&str, &str)> = Vec::new();
    for (n, lines) in &blocks {
        let prose = (lines.iter())
            .filter(|l| {
                !["Data:", "Lookup:", "Relevance:", "#", "|"]
                    .iter()
                    .any(|p| l.starts_with(p))
            })
            .map(|l| l.trim_start_matches("- "));
        candidates.extend(
            prose
                .flat_map(|l| l.split_inclusive(". "))
                .map(str::trim)
                .filter(|s| !mentioned(&subjects, s).is_empty() && s.len() > 20)
                .map(|s| (n.as_str(), s)),
        );
    }
    // One sentence for each part of the question ("How long is it and when did it open?"),
    // the first that shares most of that part's words (a number counts as one), from at most
    // three sources: what a model answering each part would quote.
    let parts: Vec<Vec<String>> = (question
        .split(" and ")
        .chain(question.split(", along with")))
    .map(|part| {
        (words(part).into_iter())
            .filter(|w| w.len() > 3 && !subjects.iter().any(|s| s == w))
            .map(str::to_lowercase)
            .collect()
    })
    .collect();
    let mut quoted: Vec<&str> = Vec::new();
    let mut sources: Vec<&str> = Vec::new();
    for part in &parts {
        let score = |s: &str| {
            let lower = s.to_lowercase();
            part.iter().filter(|w| lower.contains(w.as_str())).count()
                + usize::from(s.contains(|c: char| c.is_ascii_digit()))
        };
        let best = (candidates.iter())
            .filter(|(n, s)| !quoted.contains(s) && (sources.len() < 3 || sources.contains(n)))
            .enumerate()
            .max_by_key(|(i, (_, s))| (score(s), std::cmp::Reverse(*i)))
            .map(|(_, c)| *c);
        if let Some((n, sentence)) = best {
            out.push_str(&format!("{} [{n}]. ", sentence.trim_end_matches('.')));
            quoted.push(sentence);
            if !sources.contains(&n) {
                sources.push(n);
            }
            cited += 1;
        }
    }
    if cited == 0 {
        out.push_str("The sources do not answer this question.");
    }
    if prompt.contains("simweb:fakecite") {
        out.push_str("It is also said to glow in the dark [99], as reported elsewhere [S2].");
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: &str = "What is the melting point of Zorblium and who first isolated it?";

    #[test]
    fn subjects_skip_the_first_word() {
        assert_eq!(subject_words(Q), vec!["Zorblium"]);
        assert_eq!(
            subject_words("Who created the Quill programming language at Vantor Labs?"),
            vec!["Quill", "Vantor", "Labs"]
        );
        assert!(subject_words("What is water?").is_empty());
    }

    #[test]
    fn data_points_are_short_phrases() {
        assert_eq!(data_points(Q), vec!["melting point", "isolator"]);
        assert_eq!(
            data_points("Which port does the Frell protocol use and who designed it?"),
            vec!["port", "designer"]
        );
        assert_eq!(
            data_points(
                "When and where is the Ostra Festival held, and how many visitors does it attract?"
            ),
            vec!["date", "location", "number"]
        );
        assert_eq!(data_points("Who discovered Kelvar?"), vec!["discoverer"]);
    }

    #[test]
    fn query_analysis_shape() {
        let v = query_analysis(&format!("Analyse this.\nQuestion: {Q}\n"));
        assert_eq!(v["sub_queries"][0], Q);
        let subs = v["sub_queries"].as_array().expect("array");
        assert!((1..=3).contains(&subs.len()), "{v}");
        assert_eq!(subs[1], "What is the melting point of Zorblium?");
        assert_eq!(subs[2], "Who first isolated Zorblium?");
        assert_eq!(v["info_type"], "facts");
        assert_eq!(
            v["target_data_points"],
            json!(["melting point", "isolator"])
        );
        assert!(v["intent"].as_str().is_some_and(|s| s.contains("Zorblium")));
        assert!(v["search_strategy"].is_string());
        let news = query_analysis("Question: What is the latest on Zorblium?");
        assert_eq!(news["info_type"], "news");
        assert_eq!(
            news["sub_queries"],
            json!(["What is the latest on Zorblium?"])
        );
    }

    #[test]
    fn relevance_by_subject_name() {
        let p = |title: &str, snippet: &str| {
            format!("Question: {Q}\nTitle: {title}\nURL: http://a.test/x\nSnippet: {snippet}")
        };
        let yes = relevance(&p("All about zorblium", "Metals."));
        assert_eq!(yes["relevant"], true);
        assert!(yes["confidence"]
            .as_f64()
            .is_some_and(|c| (0.0..=1.0).contains(&c)));
        assert_eq!(
            relevance(&p("Metals", "Zorblium's melting point"))["relevant"],
            true
        );
        // "What" is the first word, so it does not count; nor do partial words.
        assert_eq!(relevance(&p("What is it", "Zorbliums"))["relevant"], false);
    }

    #[test]
    fn report_cites_blocks_that_name_the_subject() {
        let prompt = "Question: How long is the Brimomir Bridge?\nSources:\n[1] A — http://a.test/\nThe Brimomir Bridge is 1,156 metres long. It is grey.\n[12] A footnote, not a source.\n\n[5] B — http://b.test/\nTomatoes need sun.\n";
        let r = report(prompt);
        assert!(
            r.contains("The Brimomir Bridge is 1,156 metres long [1]"),
            "{r}"
        );
        assert!(!r.contains("[5]") && !r.contains("[12]"), "{r}");
        assert!(report(&format!("{prompt} simweb:fakecite")).contains("[99]"));
    }

    #[test]
    fn select_in_order_up_to_n() {
        let prompt = format!(
            "Question: {Q}\nPick at most 2 results.\n1. Zorblium facts | http://a.test/1 | x\n\
             2. Other | http://a.test/2 | nothing\n3. Metals | http://a.test/3 | zorblium melts\n\
             4. Zorblium again | http://a.test/4 | y\n"
        );
        assert_eq!(select(&prompt), json!({"selected": [1, 3]}));
        let all = prompt.replace("Pick at most 2", "Pick at most 10");
        assert_eq!(select(&all), json!({"selected": [1, 3, 4]}));
    }
}
