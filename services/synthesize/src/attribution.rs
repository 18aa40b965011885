//! Claim-level attribution: every claim of a report is checked against the text of the sources
//! it cites, whoever wrote it.
//!
//! A report's body is split into claims: the sentences of its paragraphs, its list items and
//! its table rows (headings, code and table headers are not claims, nor is text without a
//! content word). A source supports a claim when one passage of its read text (a sentence, two
//! adjacent ones, or a table row) holds every number and name of the claim and enough of its
//! content words ([`SUPPORT`]). Then:
//!
//! - a citation whose source supports its claim stays;
//! - a citation whose source does not is dropped, and the best-supporting readable source takes
//!   its place if one clears the bar (`replaced`);
//! - a claim without a citation gets the best-supporting source when one clears the bar
//!   (`attached`);
//! - a claim no source supports is removed, or kept under an "Unverified" heading without a
//!   citation when `report.unverified = "keep"`.
//!
//! Only sources whose text the writer was given are citable. Citations are renumbered in order
//! of first use, so the sources list holds exactly the cited sources. Every claim goes to
//! `claims.json` with its verdict, support and supporting passage.

use serde::Serialize;
use trawl_config::Unverified;
use trawl_messages::AnalysedDoc;
use trawl_text::{sentence_spans, strip_links, terms, terms_in, Lang};

use crate::context::FULL_MAX_CHARS;

/// Share of a claim's content words a passage must hold (numbers and names must all be there).
pub const SUPPORT: f64 = 0.5;

/// What became of a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every citation it kept supports it.
    Supported,
    /// It had no citation; the best-supporting source was attached.
    Attached,
    /// Its citations did not support it; the best-supporting source replaced them.
    Replaced,
    /// No source supports it: kept, uncited, under "Unverified".
    Unverified,
    /// No source supports it: left out of the report.
    Removed,
}

/// One claim as `claims.json` lists it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Claim {
    /// The claim's text without citation markers.
    pub text: String,
    pub verdict: Verdict,
    /// The sources (by `idx`) it cites in the report, best first.
    pub sources: Vec<u32>,
    /// Sources it cited that did not support it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<u32>,
    /// How well its best source supports it (0 to 1).
    pub support: f64,
    /// The best source's supporting passage.
    pub passage: String,
}

/// An attributed report body.
#[derive(Debug, Default)]
pub struct Attributed {
    /// The body with citations renumbered `[n]` in order of first use.
    pub body: String,
    /// The cited sources' `idx`, numbered from 1 in this order.
    pub cited: Vec<u32>,
    pub claims: Vec<Claim>,
    /// Claims no source supports, kept (`report.unverified = "keep"`) for their own section.
    pub unverified: Vec<String>,
}

/// Attributes `body`, whose `[n]` citations name `numbered[n - 1]` (a source `idx`); `citable`
/// are the documents whose text the writer was given.
pub fn attribute(
    body: &str,
    numbered: &[u32],
    citable: &[&AnalysedDoc],
    unverified: Unverified,
    lang: Lang,
) -> Attributed {
    let mut a = Attributor {
        lang,
        numbered,
        docs: citable,
        evidence: citable.iter().map(|_| None).collect(),
        unverified,
        out: Renumber::default(),
        claims: Vec::new(),
        kept: Vec::new(),
    };
    let mut lines: Vec<String> = Vec::new();
    let mut in_code = false;
    let mut table_header = false;
    let mut paragraph: Vec<&str> = Vec::new();
    for line in body.lines() {
        let t = line.trim();
        let prose =
            !in_code && !t.is_empty() && !t.starts_with(['#', '|']) && !t.starts_with("```");
        if !prose || list_item(line).is_some() {
            if let Some(p) = a.paragraph(&paragraph.join(" ")) {
                lines.push(p);
            }
            paragraph.clear();
        }
        if t.starts_with("```") {
            in_code = !in_code;
            lines.push(line.to_owned());
        } else if in_code || t.is_empty() || t.starts_with('#') {
            lines.push(line.to_owned());
            table_header = false;
        } else if t.starts_with('|') {
            let is_rule = t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '));
            // The first row of a table is its header; the rule under it says so.
            if is_rule || !table_header {
                table_header = true;
                lines.push(line.to_owned());
            } else if let Some(row) = a.judge(t.trim_end_matches('|')) {
                lines.push(format!("{row} |"));
            }
        } else if let Some((marker, item)) = list_item(line) {
            table_header = false;
            if let Some(item) = a.judge(item) {
                lines.push(format!("{marker}{item}"));
            }
        } else {
            table_header = false;
            paragraph.push(t);
        }
    }
    if let Some(p) = a.paragraph(&paragraph.join(" ")) {
        lines.push(p);
    }
    Attributed {
        body: tidy(&lines).trim().to_owned(),
        cited: a.out.cited,
        claims: a.claims,
        unverified: a.kept,
    }
}

/// The state of one report's attribution.
struct Attributor<'a> {
    /// The report's language, whose stop words and stems compare claims with passages.
    lang: Lang,
    numbered: &'a [u32],
    docs: &'a [&'a AnalysedDoc],
    /// Each document's evidence, once read.
    evidence: Vec<Option<Evidence>>,
    unverified: Unverified,
    out: Renumber,
    claims: Vec<Claim>,
    /// Unsupported claims kept for the "Unverified" section.
    kept: Vec<String>,
}

impl Attributor<'_> {
    /// How well source `i` supports `claim`, and its best passage; the source's evidence is
    /// read on first use, so a report whose claims are supported as cited reads only the
    /// sources it cites.
    fn support(&mut self, i: usize, claim: &Facts) -> (u32, f64, String) {
        let doc = self.docs[i];
        let evidence = self.evidence[i].get_or_insert_with(|| Evidence::of(doc, self.lang));
        let (support, passage) = evidence.support(claim);
        (doc.source.idx, support, passage)
    }

    /// A paragraph's claims judged one by one; `None` when none is left.
    fn paragraph(&mut self, text: &str) -> Option<String> {
        let written: Vec<String> = (claim_spans(text).into_iter())
            .filter_map(|(start, end)| self.judge(&text[start..end]))
            .collect();
        (!written.is_empty()).then(|| written.join(" "))
    }

    /// One claim judged and rewritten with its citations, or `None` when it leaves the body.
    fn judge(&mut self, raw: &str) -> Option<String> {
        let (text, markers) = split_markers(raw);
        let claim = Facts::of(&text, self.lang);
        if claim.terms.is_empty() && claim.facts.is_empty() {
            // Connective text ("In short:") claims nothing.
            return (!text.is_empty()).then_some(text);
        }
        let cited: Vec<u32> = (markers.iter())
            .filter_map(|n| self.numbered.get((*n as usize).checked_sub(1)?).copied())
            .collect();
        // The cited sources first; the others only when none of those supports the claim.
        let mut scored: Vec<(u32, f64, String)> = Vec::new();
        for i in 0..self.docs.len() {
            if cited.contains(&self.docs[i].source.idx) {
                scored.push(self.support(i, &claim));
            }
        }
        let of = |scored: &[(u32, f64, String)], idx: u32| {
            (scored.iter()).any(|(i, s, _)| *i == idx && *s >= SUPPORT)
        };
        let (kept, dropped): (Vec<u32>, Vec<u32>) =
            (cited.iter()).partition(|idx| of(&scored, **idx));
        if kept.is_empty() {
            for i in 0..self.docs.len() {
                if !cited.contains(&self.docs[i].source.idx) {
                    scored.push(self.support(i, &claim));
                }
            }
        }
        let best = (scored.iter())
            .filter(|(_, s, _)| *s >= SUPPORT)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let (sources, verdict) = match (kept.is_empty(), best) {
            (false, _) => (kept, Verdict::Supported),
            (true, Some((idx, ..))) if cited.is_empty() => (vec![*idx], Verdict::Attached),
            (true, Some((idx, ..))) => (vec![*idx], Verdict::Replaced),
            (true, None) if self.unverified == Unverified::Keep => {
                (Vec::new(), Verdict::Unverified)
            }
            (true, None) => (Vec::new(), Verdict::Removed),
        };
        let top = (scored.iter())
            .filter(|(i, ..)| sources.is_empty() || sources.contains(i))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let (support, passage) = top.map_or((0.0, String::new()), |t| {
            ((t.1 * 1000.0).round() / 1000.0, t.2.clone())
        });
        let written = match verdict {
            Verdict::Removed => None,
            Verdict::Unverified => {
                self.kept.push(text.clone());
                None
            }
            _ => Some(with_citations(&text, &sources, &mut self.out)),
        };
        self.claims.push(Claim {
            dropped: dropped
                .into_iter()
                .filter(|i| !sources.contains(i))
                .collect(),
            text,
            verdict,
            sources,
            support,
            passage,
        });
        written
    }
}

/// The claim's text followed by its citations, numbered in order of first use.
fn with_citations(text: &str, idxs: &[u32], out: &mut Renumber) -> String {
    let mut s = text.to_owned();
    let trailing = s
        .chars()
        .last()
        .filter(|c| matches!(c, '.' | '!' | '?' | ':' | ';'));
    if trailing.is_some() && !idxs.is_empty() {
        s.pop();
    }
    for idx in idxs {
        s.push_str(&format!(" [{}]", out.number(*idx)));
    }
    if let Some(c) = trailing.filter(|_| !idxs.is_empty()) {
        s.push(c);
    }
    s
}

#[derive(Default)]
struct Renumber {
    cited: Vec<u32>,
}

impl Renumber {
    fn number(&mut self, idx: u32) -> usize {
        match self.cited.iter().position(|i| *i == idx) {
            Some(at) => at + 1,
            None => {
                self.cited.push(idx);
                self.cited.len()
            }
        }
    }
}

/// What a claim asserts: its content words, and the numbers and names a passage must hold.
struct Facts {
    terms: Vec<String>,
    /// The stems of `terms` ([`Lang::stem`]), which passages' stems are compared with.
    stems: Vec<String>,
    facts: Vec<String>,
}

impl Facts {
    fn of(text: &str, lang: Lang) -> Facts {
        let mut facts = Vec::new();
        for (i, word) in text
            .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | '"' | '“' | '”' | '|'))
            .filter(|w| !w.is_empty())
            .enumerate()
        {
            let w = word.trim_matches(|c: char| !c.is_alphanumeric());
            if w.is_empty() {
                continue;
            }
            let number = w.chars().any(|c| c.is_ascii_digit());
            // A capitalised word past the first is a name ("Brimomir", "Strand"), where
            // capitals mark names (not German's nouns).
            let name = i > 0
                && lang.capitals_mark_names()
                && w.chars().next().is_some_and(char::is_uppercase)
                && w.chars().count() > 1
                && !terms(w).is_empty();
            if number {
                facts.push(normal_number(w));
            } else if name {
                facts.push(w.to_lowercase());
            }
        }
        facts.dedup();
        let terms = terms_in(text, lang);
        Facts {
            stems: terms.iter().map(|t| lang.stem(t).into_owned()).collect(),
            terms,
            facts,
        }
    }
}

/// A number as written without thousands separators: "1,284" and "1284" agree.
fn normal_number(w: &str) -> String {
    w.chars()
        .filter(|c| *c != ',')
        .collect::<String>()
        .to_lowercase()
}

/// One unit of a source's read text (a sentence or a table row): its text, the stems of its
/// content words, and its text lower-cased with numbers unformatted, for the facts.
struct Unit {
    text: String,
    stems: Vec<String>,
    normal: String,
}

/// A source's read text as units; a passage is one unit, or two adjacent ones (a claim may
/// draw on both).
struct Evidence {
    units: Vec<Unit>,
    /// Every unit's normal text: a fact the source never states rules it out at once.
    whole: String,
}

impl Evidence {
    fn of(doc: &AnalysedDoc, lang: Lang) -> Evidence {
        // What a writer is given of a source: at most the context's share of its text (the
        // extractive writer quotes key points, which come next).
        let cut = (doc.markdown.char_indices().nth(FULL_MAX_CHARS))
            .map_or(doc.markdown.len(), |(at, _)| at);
        let text = strip_links(&doc.markdown[..cut]);
        let mut texts: Vec<String> = Vec::new();
        for block in text.split("\n\n") {
            let block = block.trim();
            if block.starts_with('|') {
                texts.extend(block.lines().map(|l| l.replace('|', " ")));
                continue;
            }
            let flat = block
                .lines()
                .map(|l| {
                    l.trim()
                        .trim_start_matches(['#', '-', '*', '>', '+'])
                        .trim()
                })
                .collect::<Vec<_>>()
                .join(" ");
            texts.extend(
                sentence_spans(&flat)
                    .into_iter()
                    .map(|(s, e)| flat[s..e].trim().to_owned()),
            );
        }
        texts.extend(doc.key_points.iter().cloned());
        texts.retain(|u| !u.trim().is_empty());
        let units: Vec<Unit> = (texts.into_iter())
            .map(|text| Unit {
                stems: (terms_in(&text, lang).iter())
                    .map(|w| lang.stem(w).into_owned())
                    .collect(),
                normal: normal_number(&text.to_lowercase()),
                text,
            })
            .collect();
        let whole = (units.iter().map(|u| u.normal.as_str()))
            .collect::<Vec<_>>()
            .join("\n");
        Evidence { units, whole }
    }

    /// The best support this source gives `claim`, and its passage.
    fn support(&self, claim: &Facts) -> (f64, String) {
        if !claim.facts.iter().all(|f| holds(&self.whole, f)) {
            return (0.0, String::new());
        }
        let mut best: (f64, Option<&[Unit]>) = (0.0, None);
        for i in 0..self.units.len() {
            for end in [i + 1, i + 2] {
                let Some(passage) = self.units.get(i..end) else {
                    continue;
                };
                let holds_all = |f: &String| passage.iter().any(|u| holds(&u.normal, f));
                if !claim.facts.iter().all(holds_all) {
                    continue;
                }
                let share = if claim.stems.is_empty() {
                    1.0
                } else {
                    let found = (claim.stems.iter())
                        .filter(|t| passage.iter().any(|u| u.stems.contains(t)))
                        .count();
                    found as f64 / claim.stems.len() as f64
                };
                if share > best.0 {
                    best = (share, Some(passage));
                }
            }
        }
        let passage = best.1.map_or(String::new(), |p| {
            p.iter()
                .map(|u| u.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        });
        (best.0, passage)
    }
}

/// Whether `fact` stands in `text` as a whole word (or number).
fn holds(text: &str, fact: &str) -> bool {
    text.match_indices(fact).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + fact.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// A list item's marker (with its indentation) and text.
fn list_item(line: &str) -> Option<(&str, &str)> {
    let indent = line.len() - line.trim_start().len();
    let t = &line[indent..];
    let marker_len = if t.starts_with("- ") || t.starts_with("* ") || t.starts_with("+ ") {
        2
    } else {
        let digits = t.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && t[digits..].starts_with(". ") {
            digits + 2
        } else {
            return None;
        }
    };
    Some((&line[..indent + marker_len], &t[marker_len..]))
}

/// The claims of a paragraph: its sentences, each with the citation markers that follow its
/// full stop ("… 1931. [2] Next …" gives "[2]" to the first sentence). A marker followed by a
/// capital also ends a sentence: models leave the stop out ("… in 2017 [1] The company …").
fn claim_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans: Vec<(usize, usize)> = (sentence_spans(text).into_iter())
        .flat_map(|(start, end)| {
            let mut cuts = vec![start];
            let sentence = &text[start..end];
            for (at, _) in sentence.match_indices('[') {
                let Some(len) = marker_at(&sentence[at..]) else {
                    continue;
                };
                let after = &sentence[at + len..];
                let next = after.trim_start();
                let starts_anew = next.chars().next().is_some_and(char::is_uppercase);
                if starts_anew && next.len() < after.len() && leading_markers(after) == 0 {
                    cuts.push(start + at + len);
                }
            }
            cuts.push(end);
            cuts.windows(2).map(|w| (w[0], w[1])).collect::<Vec<_>>()
        })
        .collect();
    for i in 0..spans.len().saturating_sub(1) {
        let next = spans[i + 1];
        let rest = &text[next.0..next.1];
        let moved = leading_markers(rest);
        if moved > 0 {
            spans[i].1 = next.0 + moved;
            spans[i + 1].0 = next.0 + moved;
        }
    }
    spans.retain(|(s, e)| !text[*s..*e].trim().is_empty());
    spans
}

/// Bytes of citation markers (and the spaces among them) at the start of `s`.
fn leading_markers(s: &str) -> usize {
    let mut at = 0;
    loop {
        let rest = &s[at..];
        let trimmed = rest.trim_start();
        let skipped = rest.len() - trimmed.len();
        match marker_at(trimmed) {
            Some(len) => at += skipped + len,
            None => return at,
        }
    }
}

/// The length of a `[n]` or `[n, m]` marker at the start of `s`.
fn marker_at(s: &str) -> Option<usize> {
    let inner = s.strip_prefix('[')?;
    let close = inner.find(']')?;
    let list = &inner[..close];
    let numbers = list.split(',').map(str::trim);
    (!list.trim().is_empty() && numbers.clone().all(|n| n.parse::<u32>().is_ok()))
        .then_some(close + 2)
}

/// The text without its citation markers, and the numbers they held, in order.
pub(crate) fn split_markers(raw: &str) -> (String, Vec<u32>) {
    let mut text = String::with_capacity(raw.len());
    let mut numbers = Vec::new();
    let mut rest = raw;
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        match marker_at(&rest[open..]) {
            Some(len) => {
                let inner = &rest[open + 1..open + len - 1];
                numbers.extend(
                    inner
                        .split(',')
                        .filter_map(|n| n.trim().parse::<u32>().ok()),
                );
                rest = &rest[open + len..];
            }
            None => {
                text.push('[');
                rest = &rest[open + 1..];
            }
        }
    }
    text.push_str(rest);
    let mut seen = Vec::new();
    numbers.retain(|n| {
        !seen.contains(n) && {
            seen.push(*n);
            true
        }
    });
    (tidy_spaces(&text), numbers)
}

/// Spaces left where markers were removed: doubled, or before punctuation that ends a clause.
/// A stop that opens a word stays apart ("the Dow Jones Industrial Average .DJI fell": a
/// ticker, as Reuters writes them), or the claim would no longer be the source's words.
fn tidy_spaces(s: &str) -> String {
    let flat = trawl_text::collapse_whitespace(s);
    let mut out = String::with_capacity(flat.len());
    let mut chars = flat.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ' ' {
            let mut ahead = chars.clone();
            let closes = ahead
                .next()
                .is_some_and(|p| matches!(p, '.' | ',' | ';' | ':' | '!' | '?'))
                && ahead.next().is_none_or(|n| !n.is_alphanumeric());
            if closes {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// Lines joined without what removed claims left: a heading whose section is now empty, and
/// runs of blank lines.
fn tidy(lines: &[String]) -> String {
    let level = |line: &str| {
        let t = line.trim_start();
        let n = t.chars().take_while(|c| *c == '#').count();
        (n > 0 && t[n..].starts_with(' ')).then_some(n)
    };
    let mut out = String::new();
    let mut blank = true;
    for (i, line) in lines.iter().enumerate() {
        if let Some(l) = level(line) {
            let next = lines[i + 1..].iter().find(|n| !n.trim().is_empty());
            if next.is_none_or(|n| level(n).is_some_and(|m| m <= l)) {
                continue;
            }
        }
        let is_blank = line.trim().is_empty();
        if is_blank && blank {
            continue;
        }
        out.push_str(line);
        out.push('\n');
        blank = is_blank;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testing::doc;

    fn docs() -> Vec<AnalysedDoc> {
        let mut a = doc(0, true, &[]);
        a.markdown = "# Brimomir Bridge\n\nThe Brimomir Bridge is 1,156 metres long. It opened \
                      in 1903 after years of delays.\n\n| span | length |\n|---|---|\n| main | 540 m |\n"
            .into();
        let mut b = doc(3, true, &[]);
        b.markdown = "The Brimomir Bridge carries two lanes of traffic over the Vell river.".into();
        vec![a, b]
    }

    fn run(body: &str, numbered: &[u32], unverified: Unverified) -> Attributed {
        let docs = docs();
        let citable: Vec<&AnalysedDoc> = docs.iter().collect();
        attribute(body, numbered, &citable, unverified, Lang::EN)
    }

    /// A claim in another language is read by its words: its stop words claim nothing, its
    /// words match the source's other forms ("Länge" of "lang", "Metern" of "Meter"), and a
    /// German noun is no name the passage must hold as written.
    #[test]
    fn claims_are_read_in_the_reports_language() {
        let mut d = doc(0, true, &[]);
        d.markdown = "Die Zorvel-Brücke ist 1175 Meter lang und trägt vier Fahrspuren.".into();
        let citable = [&d];
        let de = Lang::from_tag("de").unwrap();
        let body = "Die Zorvel-Brücke hat eine Länge von 1175 Metern [1].";
        let a = attribute(body, &[0], &citable, Unverified::Drop, de);
        assert_eq!(a.body, body, "{:?}", a.claims);
        // Read as English, "Länge" and "Metern" are names the source lacks.
        let a = attribute(body, &[0], &citable, Unverified::Drop, Lang::EN);
        assert_eq!(a.claims[0].verdict, Verdict::Removed);
        // Function words alone do not support a claim about something else.
        let other = "Die Kelmo-Brücke ist von der Stadt und dem Land gebaut worden [1].";
        let a = attribute(other, &[0], &citable, Unverified::Drop, de);
        assert_eq!(a.claims[0].verdict, Verdict::Removed, "{:?}", a.claims);
    }

    #[test]
    fn a_supported_citation_stays_and_a_wrong_one_is_replaced() {
        let a = run(
            "The Brimomir Bridge is 1,156 metres long [1]. It carries two lanes over the Vell [1].",
            &[0],
            Unverified::Drop,
        );
        assert_eq!(
            a.body,
            "The Brimomir Bridge is 1,156 metres long [1]. It carries two lanes over the Vell [2]."
        );
        assert_eq!(a.cited, vec![0, 3]);
        let verdicts: Vec<Verdict> = a.claims.iter().map(|c| c.verdict).collect();
        assert_eq!(verdicts, vec![Verdict::Supported, Verdict::Replaced]);
        assert_eq!(a.claims[1].dropped, vec![0]);
        assert!(
            a.claims[0].passage.contains("1,156 metres"),
            "{:?}",
            a.claims[0]
        );
    }

    #[test]
    fn every_number_and_name_must_stand_in_the_passage() {
        // The words match source 0, but its length is 1,156: nothing supports 1,190.
        let a = run(
            "The Brimomir Bridge is 1,190 metres long [1].",
            &[0],
            Unverified::Drop,
        );
        assert_eq!(a.claims[0].verdict, Verdict::Removed);
        assert!(a.body.is_empty() && a.cited.is_empty(), "{a:?}");
        // A name the source never gives ("Alder") is not supported either.
        let a = run(
            "The bridge was built by Alder in 1903.",
            &[],
            Unverified::Drop,
        );
        assert_eq!(a.claims[0].verdict, Verdict::Removed);
    }

    #[test]
    fn an_uncited_claim_gets_its_source_and_an_unsupported_one_can_be_kept() {
        let a = run(
            "## Length\n\nThe bridge opened in 1903. It is painted green.\n\n## Colour\n\nGreen paint was chosen in 1950.",
            &[],
            Unverified::Keep,
        );
        // The "Colour" section lost its only claim, and its heading with it.
        assert_eq!(a.body, "## Length\n\nThe bridge opened in 1903 [1].");
        assert_eq!(a.cited, vec![0]);
        assert_eq!(a.claims[0].verdict, Verdict::Attached);
        assert_eq!(
            a.unverified,
            vec!["It is painted green.", "Green paint was chosen in 1950."]
        );
    }

    #[test]
    fn list_items_and_table_rows_are_claims_and_markers_after_a_stop_belong_before_it() {
        let a = run(
            "- The bridge opened in 1903. [1]\n- It has 40 lanes. [1]\n\n| part | length |\n|---|---|\n| main span | 540 m [1] |",
            &[0],
            Unverified::Drop,
        );
        assert_eq!(
            a.body,
            "- The bridge opened in 1903 [1].\n\n| part | length |\n|---|---|\n| main span | 540 m [1] |"
        );
        assert_eq!(a.claims.len(), 3, "{:?}", a.claims);
        assert_eq!(a.claims[1].verdict, Verdict::Removed);
        // A model that leaves out the stop before its citation: the marker ends the claim, so
        // a supported claim is not lost with an unsupported one beside it.
        let a = run(
            "Reviews: 4 of 5 stars [1] The bridge opened in 1903 [1] It has 40 lanes [1]",
            &[0],
            Unverified::Drop,
        );
        assert_eq!(a.body, "The bridge opened in 1903 [1]");
        assert_eq!(a.claims.len(), 3, "{:?}", a.claims);
        // A ticker's stop is the source's word, not a space to close (Reuters: "Average
        // .DJI fell 102.2 points").
        assert_eq!(
            tidy_spaces("the Average .DJI fell 102.2 points [1] ."),
            "the Average .DJI fell 102.2 points [1]."
        );
    }
}
