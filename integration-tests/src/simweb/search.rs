//! BM25 search over the corpus and SearXNG's JSON response shape. Ranking only has to be
//! plausible and deterministic: the invented entity names are rare terms, so a question
//! naming an entity pulls its answer pages to the top, as a real engine would.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::corpus::Corpus;

pub const PAGE_SIZE: usize = 10;
const K1: f64 = 1.2;
const B: f64 = 0.75;

const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "how",
    "in", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "what", "when",
    "where", "which", "who", "why", "with", "year",
];

pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.is_ascii() {
            let word = word.to_ascii_lowercase();
            if !word.is_empty() && !STOPWORDS.contains(&word.as_str()) {
                out.push(word);
            }
        } else {
            // Other scripts as an engine's analyser takes them: lower-cased, and a run of
            // Chinese or Japanese cut into its words.
            trawl_text::each_word(word, |w| {
                out.push(w.to_owned());
                true
            });
        }
    }
    out
}

#[derive(Debug)]
struct DocStats {
    tf: BTreeMap<String, u32>,
    len: f64,
}

/// A prebuilt index over every corpus page (including `/private/` ones: search engines
/// index pages that robots.txt later forbids trawl to fetch).
#[derive(Debug)]
pub struct SearchIndex {
    docs: Vec<DocStats>,
    df: BTreeMap<String, u32>,
    avg_len: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Index into `Corpus::pages()`.
    pub page: usize,
    pub score: f64,
}

impl SearchIndex {
    pub fn build(corpus: &Corpus) -> SearchIndex {
        let mut docs = Vec::new();
        let mut df: BTreeMap<String, u32> = BTreeMap::new();
        for p in corpus.pages() {
            let mut tf: BTreeMap<String, u32> = BTreeMap::new();
            // The title counts twice, as title fields are boosted by real engines.
            let tokens = tokenize(&p.title).into_iter().chain(tokenize(&p.text));
            let mut len = 0.0;
            for t in tokens {
                *tf.entry(t).or_insert(0) += 1;
                len += 1.0;
            }
            for t in tf.keys() {
                *df.entry(t.clone()).or_insert(0) += 1;
            }
            docs.push(DocStats { tf, len });
        }
        let avg_len = docs.iter().map(|d| d.len).sum::<f64>() / docs.len().max(1) as f64;
        SearchIndex { docs, df, avg_len }
    }

    /// All pages with a positive score, best first; ties broken by page order.
    pub fn search(&self, query: &str) -> Vec<Hit> {
        let terms: BTreeSet<String> = tokenize(query).into_iter().collect();
        let n = self.docs.len() as f64;
        let mut hits: Vec<Hit> = Vec::new();
        for (i, d) in self.docs.iter().enumerate() {
            let mut score = 0.0;
            for t in &terms {
                let Some(&tf) = d.tf.get(t) else { continue };
                let df = f64::from(self.df.get(t).copied().unwrap_or(0));
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                let tf = f64::from(tf);
                score += idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * d.len / self.avg_len));
            }
            if score > 0.0 {
                hits.push(Hit { page: i, score });
            }
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.page.cmp(&b.page)));
        hits
    }

    fn idf(&self, term: &str) -> f64 {
        let n = self.docs.len() as f64;
        let df = f64::from(self.df.get(term).copied().unwrap_or(0));
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// ~200 characters around the sentence that best matches the query.
    pub fn snippet(&self, text: &str, query: &str) -> String {
        let terms: BTreeSet<String> = tokenize(query).into_iter().collect();
        let sentences: Vec<&str> = text
            .split_inclusive(['.', '\n'])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        let mut best = 0;
        let mut best_score = -1.0;
        for (i, s) in sentences.iter().enumerate() {
            let words: BTreeSet<String> = tokenize(s).into_iter().collect();
            let score: f64 = words.intersection(&terms).map(|t| self.idf(t)).sum();
            if score > best_score {
                best_score = score;
                best = i;
            }
        }
        let mut out = String::new();
        for s in sentences.iter().skip(best) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(s);
            if out.len() >= 160 {
                break;
            }
        }
        truncate_chars(&out, 220)
    }
}

fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max).collect();
    format!("{}…", cut.trim_end())
}

/// SearXNG's `format=json` response for page `pageno` (1-based).
pub fn searxng_json(corpus: &Corpus, index: &SearchIndex, query: &str, pageno: usize) -> Value {
    let hits = index.search(query);
    let start = pageno.saturating_sub(1) * PAGE_SIZE;
    let results: Vec<Value> = hits
        .iter()
        .enumerate()
        .skip(start)
        .take(PAGE_SIZE)
        .filter_map(|(rank, hit)| {
            let page = corpus.pages().get(hit.page)?;
            Some(result_json(
                &page.url,
                &page.host,
                &page.path,
                &page.title,
                &index.snippet(&page.text, query),
                rank,
                hit.score,
            ))
        })
        .collect();
    searxng_response(query, hits.len(), results)
}

/// One entry of SearXNG's `results`; `rank` counts from 0.
pub(crate) fn result_json(
    url: &str,
    host: &str,
    path: &str,
    title: &str,
    content: &str,
    rank: usize,
    score: f64,
) -> Value {
    json!({
        "url": url,
        "title": title,
        "content": content,
        "engine": "simweb",
        "engines": ["simweb"],
        "template": "default.html",
        "parsed_url": ["http", host, path, "", "", ""],
        "img_src": "",
        "thumbnail": "",
        "priority": "",
        "positions": [rank + 1],
        "score": (score * 1000.0).round() / 1000.0,
        "category": "general",
        "publishedDate": null,
    })
}

/// SearXNG's whole `format=json` body around one page of `results`.
pub(crate) fn searxng_response(query: &str, total: usize, results: Vec<Value>) -> Value {
    json!({
        "query": query,
        "number_of_results": total,
        "results": results,
        "answers": [],
        "corrections": [],
        "infoboxes": [],
        "suggestions": [],
        "unresponsive_engines": [],
    })
}

/// The HTML results page served when `format=json` is absent.
pub fn results_html(corpus: &Corpus, index: &SearchIndex, query: &str, pageno: usize) -> String {
    use super::render::escape;
    let mut body = String::new();
    let start = pageno.saturating_sub(1) * PAGE_SIZE;
    for hit in index.search(query).iter().skip(start).take(PAGE_SIZE) {
        if let Some(p) = corpus.pages().get(hit.page) {
            body.push_str(&format!(
                "<article class=\"result\"><h3><a href=\"{}\">{}</a></h3><p class=\"content\">{}</p></article>\n",
                escape(&p.url),
                escape(&p.title),
                escape(&index.snippet(&p.text, query))
            ));
        }
    }
    super::render::simple_page(&format!("{query} - SearXNG"), &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_question_ranks_two_fetchable_answers_in_top_five() {
        let corpus = Corpus::generate();
        let index = SearchIndex::build(&corpus);
        let mut fails = 0;
        for q in corpus.questions() {
            let top: Vec<&str> = index
                .search(&q.query)
                .iter()
                .take(5)
                .map(|h| corpus.pages()[h.page].url.as_str())
                .collect();
            let good = top
                .iter()
                .filter(|u| q.fetchable_answer_urls.iter().any(|a| a == *u))
                .count();
            if good < 2 {
                fails += 1;
                eprintln!("{}: top5 {top:?} answers {:?}", q.query, q.answer_urls);
            }
        }
        assert_eq!(fails, 0);
    }

    #[test]
    fn json_shape_and_paging() {
        let corpus = Corpus::generate();
        let index = SearchIndex::build(&corpus);
        let q = &corpus.questions()[0].query;
        let v = searxng_json(&corpus, &index, q, 1);
        let results = v["results"].as_array().expect("results array");
        assert_eq!(results.len(), PAGE_SIZE);
        let first = &results[0];
        for key in [
            "url",
            "title",
            "content",
            "engine",
            "engines",
            "score",
            "category",
            "positions",
            "parsed_url",
        ] {
            assert!(!first[key].is_null(), "missing {key}");
        }
        let content = first["content"].as_str().unwrap_or_default();
        assert!(
            !content.is_empty() && content.chars().count() <= 221,
            "{content}"
        );
        let p2 = searxng_json(&corpus, &index, q, 2);
        assert_ne!(p2["results"][0]["url"], first["url"]);
        assert_eq!(p2["results"][0]["positions"][0], 11);
    }
}
