//! The generated corpus: hosts with their robots.txt policy and layout, pages placed on
//! them, and the questions whose answers the pages hold. Generation is a pure function
//! of a fixed seed so every test run sees the same web.

use std::collections::BTreeMap;

use super::comparison;
use super::content::{answer_doc, distractor_doc, generic_doc, generic_subject};
use super::follow_up;
use super::hosts::{article_path, make_hosts};
pub use super::hosts::{Host, Robots};
use super::languages::{self, Role};
use super::multilingual;
pub use super::page::{FollowUp, Page, PageKind, Question};
use super::render::{render, Doc, Frame};
use super::rng::Rng;
use super::topics::{make_topic, Topic};
use super::words::{slug, Namer};

const SEED: u64 = 0x7472_6177_6c00_0001;
const TOPICS: usize = 60;
/// Every host gets at least this many article pages.
const MIN_PAGES_PER_HOST: usize = 6;

/// A question of the languages or multilingual family ([`Corpus::generate_with_languages`],
/// [`Corpus::generate_multilingual`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LanguageQuestion {
    /// ISO 639-1 code.
    pub lang: &'static str,
    pub query: String,
    /// The answer as its pages write it.
    pub value: String,
    pub answer_urls: Vec<String>,
    /// Pages stating another value (the multilingual family, one subject of each kind).
    pub disagreeing_urls: Vec<String>,
    /// Pages naming the subject without the answer.
    pub distractor_urls: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Corpus {
    hosts: Vec<Host>,
    topics: Vec<Topic>,
    pages: Vec<Page>,
    by_url: BTreeMap<String, usize>,
    /// By topic id; empty unless built by [`Corpus::generate_with_follow_ups`].
    follow_ups: BTreeMap<String, FollowUp>,
    /// The languages and multilingual families' questions, as (language, topic id, question,
    /// value); empty unless built with either.
    asked_in_languages: Vec<(&'static str, String, String, String)>,
}

/// A page before rendering: rendering needs the whole site map (nav, related links).
struct Draft {
    host: usize,
    path: String,
    kind: PageKind,
    doc: Doc,
}

impl Corpus {
    /// The one corpus every test sees.
    pub fn generate() -> Corpus {
        Self::generate_with_seed(SEED)
    }

    pub fn generate_with_seed(seed: u64) -> Corpus {
        let root = Rng::new(seed);
        let hosts = make_hosts(&mut root.fork(1));
        let mut namer = Namer::default();
        let mut trng = root.fork(2);
        let topics: Vec<Topic> = (0..TOPICS)
            .map(|i| make_topic(i, &mut trng, &mut namer))
            .collect();
        let drafts = place_pages(&hosts, &topics, &mut root.fork(3));
        let pages = render_all(&hosts, drafts, &mut root.fork(4));
        let by_url = pages
            .iter()
            .enumerate()
            .map(|(i, p)| (p.url.clone(), i))
            .collect();
        Corpus {
            hosts,
            topics,
            pages,
            by_url,
            follow_ups: BTreeMap::new(),
            asked_in_languages: Vec::new(),
        }
    }

    /// [`Corpus::generate`] plus the follow-up family (see [`FollowUp`] and the
    /// `follow_up` module): four more topics whose pages are appended on hosts that allow
    /// trawl everything. What `generate` builds stays as it is: the new pages draw on their
    /// own random streams and no existing page is rendered again (older pages do not link to
    /// the new ones).
    pub fn generate_with_follow_ups() -> Corpus {
        let mut corpus = Self::generate();
        corpus.add_follow_ups(&Rng::new(SEED).fork(5));
        corpus
    }

    /// [`Corpus::generate_with_follow_ups`] plus the comparison family (the `comparison`
    /// module): a page per measured topic stating other topics' values beside its own.
    pub fn generate_with_families() -> Corpus {
        let mut corpus = Self::generate_with_follow_ups();
        let root = Rng::new(SEED).fork(6);
        let docs = comparison::docs(&corpus.topics, &mut root.fork(1));
        let mut rng = root.fork(2);
        let mut drafts: Vec<Draft> = Vec::new();
        for (kind, doc) in docs {
            let draft = corpus.draft_on_open_host(kind, doc, &mut rng, &drafts);
            drafts.push(draft);
        }
        corpus.append(drafts, &mut root.fork(0));
        corpus
    }

    /// [`Corpus::generate`] plus the languages family (the `languages` module): a question in
    /// each of German, French, Spanish, Chinese, Japanese, Russian and Arabic, with two answer
    /// pages, a distractor and an unrelated page in its language, each page's `<html>` saying
    /// which (and Arabic's `dir="rtl"`). What `generate` builds stays as it is.
    pub fn generate_with_languages() -> Corpus {
        let mut corpus = Self::generate();
        let root = Rng::new(SEED).fork(8);
        let mut rng = root.fork(1);
        let (mut drafts, mut langs) = (Vec::new(), Vec::new());
        for spec in languages::SPECS {
            let topic = format!("lang-{}", spec.lang);
            corpus.asked_in_languages.push((
                spec.lang,
                topic.clone(),
                spec.question.to_owned(),
                spec.value.to_owned(),
            ));
            for (variant, (role, doc)) in languages::docs(spec).into_iter().enumerate() {
                let kind = match role {
                    Role::Answer => PageKind::Answer {
                        topic: topic.clone(),
                        variant,
                    },
                    Role::Distractor => PageKind::Distractor {
                        topic: topic.clone(),
                    },
                    Role::Other => PageKind::Generic,
                };
                drafts.push(corpus.draft_on_open_host(kind, doc, &mut rng, &drafts));
                langs.push(spec.lang);
            }
        }
        corpus.append_in_languages(drafts, &langs, &mut root.fork(0));
        corpus
    }

    /// [`Corpus::generate`] plus the multilingual family (the `multilingual` module): the same
    /// 20 questions in each of English, German, French, Spanish, Chinese, Japanese, Russian and
    /// Arabic, for measuring reports by language. What `generate` builds stays as it is.
    pub fn generate_multilingual() -> Corpus {
        let mut corpus = Self::generate();
        let root = Rng::new(SEED).fork(9);
        // Names the English pages use are not handed out again: a page about the Darsa
        // Protocol is not about the metal Darsa.
        let texts: Vec<String> = (corpus.pages.iter())
            .map(|p| p.text.to_lowercase())
            .collect();
        let taken = |name: &str| {
            let name = name.to_lowercase();
            texts.iter().any(|t| t.contains(&name))
        };
        let (items, others) = multilingual::items(&mut root.fork(1), taken);
        let mut rng = root.fork(2);
        let (mut drafts, mut langs) = (Vec::new(), Vec::new());
        for item in items {
            corpus.asked_in_languages.push((
                item.lang,
                item.topic.clone(),
                item.question.clone(),
                item.value.clone(),
            ));
            let mut answers = 0;
            for (role, doc) in item.docs {
                let kind = match role {
                    multilingual::Role::Answer | multilingual::Role::Disagrees => {
                        answers += 1;
                        PageKind::Answer {
                            topic: item.topic.clone(),
                            variant: answers - 1,
                        }
                    }
                    multilingual::Role::Mention => PageKind::Distractor {
                        topic: item.topic.clone(),
                    },
                };
                drafts.push(corpus.draft_on_open_host(kind, doc, &mut rng, &drafts));
                langs.push(item.lang);
            }
        }
        for (lang, doc) in others {
            drafts.push(corpus.draft_on_open_host(PageKind::Generic, doc, &mut rng, &drafts));
            langs.push(lang);
        }
        corpus.append_in_languages(drafts, &langs, &mut root.fork(0));
        corpus
    }

    /// [`Corpus::append`] for pages in other languages than English: each page's `<html>` says
    /// its language, and Arabic's its direction.
    fn append_in_languages(&mut self, drafts: Vec<Draft>, langs: &[&str], rng: &mut Rng) {
        let first = self.pages.len();
        self.append(drafts, rng);
        for (page, &lang) in self.pages[first..].iter_mut().zip(langs) {
            let dir = if lang == "ar" { " dir=\"rtl\"" } else { "" };
            page.html = (page.html).replacen(
                "<html lang=\"en\">",
                &format!("<html lang=\"{lang}\"{dir}>"),
                1,
            );
        }
    }

    /// The questions of the languages and multilingual families, those this corpus holds
    /// ([`Corpus::generate_with_languages`], [`Corpus::generate_multilingual`]).
    pub fn language_questions(&self) -> Vec<LanguageQuestion> {
        let urls = |topic: &str, want: fn(&PageKind) -> bool| -> Vec<String> {
            (self.pages.iter())
                .filter(|p| want(&p.kind) && p.kind.topic() == Some(topic))
                .map(|p| p.url.clone())
                .collect()
        };
        let answer = |k: &PageKind| matches!(k, PageKind::Answer { variant: 0 | 1, .. });
        let disagreeing = |k: &PageKind| matches!(k, PageKind::Answer { variant: 2, .. });
        let mention = |k: &PageKind| matches!(k, PageKind::Distractor { .. });
        let question =
            |lang: &'static str, topic: &str, query: &str, value: &str| LanguageQuestion {
                lang,
                query: query.to_owned(),
                value: value.to_owned(),
                answer_urls: urls(topic, answer),
                disagreeing_urls: urls(topic, disagreeing),
                distractor_urls: urls(topic, mention),
            };
        (self.asked_in_languages.iter())
            .map(|(lang, topic, query, value)| question(lang, topic, query, value))
            .filter(|q| !q.answer_urls.is_empty())
            .collect()
    }

    /// Questions about invented entities no page names, worded as the topics' own questions
    /// are (one per topic kind): nothing in the corpus answers them, while their other words
    /// ("melting point", "bridge") match many pages.
    pub fn unanswerable(&self) -> Vec<String> {
        let mut namer = Namer::default();
        let mut rng = Rng::new(SEED).fork(7);
        let mut kinds: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        for t in &self.topics[..super::topics::KINDS * 2] {
            if kinds.contains(&t.kind) {
                continue;
            }
            kinds.push(t.kind);
            let unknown = loop {
                let w = namer.word(&mut rng);
                let lower = w.to_lowercase();
                if !self
                    .pages
                    .iter()
                    .any(|p| p.text.to_lowercase().contains(&lower))
                {
                    break w;
                }
            };
            out.push(t.question.replace(&t.key, &unknown));
        }
        out
    }

    /// [`Corpus::draft_on`] a random host that allows trawl everything.
    fn draft_on_open_host(
        &self,
        kind: PageKind,
        doc: Doc,
        rng: &mut Rng,
        pending: &[Draft],
    ) -> Draft {
        let open: Vec<usize> = (0..self.hosts.len())
            .filter(|&h| self.hosts[h].robots == Robots::AllowAll)
            .collect();
        let host = open[rng.index(open.len())];
        self.draft_on(host, kind, doc, rng, pending)
    }

    /// A page for `doc` on host `host`, its path suffixed as `dedupe_paths` does should the
    /// title repeat one on the host. `pending` are drafts not yet appended.
    fn draft_on(
        &self,
        host: usize,
        kind: PageKind,
        doc: Doc,
        rng: &mut Rng,
        pending: &[Draft],
    ) -> Draft {
        let first = article_path(host, &doc.title, rng.range(2015, 2024));
        let taken = |p: &str| {
            self.by_url
                .contains_key(&format!("http://{}{p}", self.hosts[host].name))
                || pending.iter().any(|d| d.host == host && d.path == p)
        };
        let mut path = first.clone();
        let mut n = 1;
        while taken(&path) {
            n += 1;
            path = match first.strip_suffix(".html") {
                Some(base) => format!("{base}-{n}.html"),
                None => format!("{first}-{n}"),
            };
        }
        Draft {
            host,
            path,
            kind,
            doc,
        }
    }

    /// Renders `drafts` and adds them to the corpus; pages already there are not rendered
    /// again, so they do not link to the new ones.
    fn append(&mut self, drafts: Vec<Draft>, rng: &mut Rng) {
        let mut per_host: Vec<Vec<(String, String)>> = vec![Vec::new(); self.hosts.len()];
        for p in &self.pages {
            if let Some(h) = self.hosts.iter().position(|h| h.name == p.host) {
                per_host[h].push((p.path.clone(), p.title.clone()));
            }
        }
        for d in &drafts {
            per_host[d.host].push((d.path.clone(), d.doc.title.clone()));
        }
        for d in drafts {
            let page = render_page(&self.hosts, &per_host[d.host], d, rng);
            self.by_url.insert(page.url.clone(), self.pages.len());
            self.pages.push(page);
        }
    }

    fn add_follow_ups(&mut self, root: &Rng) {
        let open: Vec<usize> = (0..self.hosts.len())
            .filter(|&h| self.hosts[h].robots == Robots::AllowAll)
            .collect();
        let mut drafts: Vec<Draft> = Vec::new();
        for (i, spec) in follow_up::SPECS.iter().enumerate() {
            let mut rng = root.fork(i as u64 + 1);
            let topic = follow_up::topic(spec);
            // A topic's pages each on a host of their own, so fetching them is never held
            // up by per-host politeness.
            let mut order = open.clone();
            rng.shuffle(&mut order);
            for (k, (kind, doc)) in follow_up::docs(spec, &topic, &mut rng)
                .into_iter()
                .enumerate()
            {
                let draft = self.draft_on(order[k % order.len()], kind, doc, &mut rng, &drafts);
                drafts.push(draft);
            }
            self.topics.push(topic);
        }
        self.append(drafts, &mut root.fork(0));
        for (spec, topic) in follow_up::SPECS
            .iter()
            .zip(&self.topics[self.topics.len() - follow_up::SPECS.len()..])
        {
            let buried = self
                .pages
                .iter()
                .find(|p| matches!(&p.kind, PageKind::Buried { topic: t } if *t == topic.id))
                .expect("every follow-up topic has its buried page");
            let follow_up = FollowUp {
                answered: spec.answered.to_string(),
                answered_value: spec.answered_value.to_string(),
                data_point: spec.wanted.to_string(),
                url: buried.url.clone(),
                query: follow_up::follow_up_query(spec.question, spec.wanted),
                value: spec.wanted_value.to_string(),
            };
            self.follow_ups.insert(topic.id.clone(), follow_up);
        }
    }

    pub fn pages(&self) -> &[Page] {
        &self.pages
    }

    pub fn hosts(&self) -> Vec<String> {
        self.hosts.iter().map(|h| h.name.clone()).collect()
    }

    pub fn host_info(&self) -> &[Host] {
        &self.hosts
    }

    pub fn host(&self, name: &str) -> Option<&Host> {
        self.hosts.iter().find(|h| h.name == name)
    }

    pub fn robots(&self, host: &str) -> Option<Robots> {
        self.host(host).map(|h| h.robots)
    }

    pub fn topics(&self) -> &[Topic] {
        &self.topics
    }

    /// Looks a page up by `http://host.test/path` (an `https` scheme is accepted too).
    pub fn page(&self, url: &str) -> Option<&Page> {
        let key = match url.strip_prefix("https://") {
            Some(rest) => format!("http://{rest}"),
            None => url.to_string(),
        };
        self.by_url.get(&key).map(|&i| &self.pages[i])
    }

    pub fn page_at(&self, host: &str, path: &str) -> Option<&Page> {
        self.page(&format!("http://{host}{path}"))
    }

    pub fn host_pages<'a>(&'a self, host: &'a str) -> impl Iterator<Item = &'a Page> + 'a {
        self.pages.iter().filter(move |p| p.host == host)
    }

    pub fn questions(&self) -> Vec<Question> {
        self.topics
            .iter()
            .map(|t| {
                let answers: Vec<&Page> = self
                    .pages
                    .iter()
                    .filter(|p| matches!(&p.kind, PageKind::Answer { topic, .. } if *topic == t.id))
                    .collect();
                Question {
                    query: t.question.clone(),
                    topic: t.id.clone(),
                    answer_urls: answers.iter().map(|p| p.url.clone()).collect(),
                    fetchable_answer_urls: answers
                        .iter()
                        .filter(|p| p.allowed_for_trawl())
                        .map(|p| p.url.clone())
                        .collect(),
                    facts: t.facts.clone(),
                    disagrees: t.disagrees(),
                    follow_up: self.follow_ups.get(&t.id).cloned(),
                }
            })
            .collect()
    }
}

fn place_pages(hosts: &[Host], topics: &[Topic], rng: &mut Rng) -> Vec<Draft> {
    let mut drafts: Vec<Draft> = Vec::new();
    let mut load = vec![0usize; hosts.len()];
    let blocked = |h: usize| !hosts[h].robots.allows_trawl("/");
    let mut private_left = 4;
    for (ti, topic) in topics.iter().enumerate() {
        // Least-loaded hosts first, ties broken by a per-topic shuffle.
        let mut order: Vec<usize> = (0..hosts.len()).collect();
        rng.shuffle(&mut order);
        order.sort_by_key(|&h| load[h]);
        let mut chosen: Vec<usize> = Vec::new();
        for &h in &order {
            if chosen.len() == 3 {
                break;
            }
            // At most one answer per topic may be unfetchable, so two always remain.
            if blocked(h) && chosen.iter().any(|&c| blocked(c)) {
                continue;
            }
            chosen.push(h);
        }
        let mut has_unfetchable = chosen.iter().any(|&h| blocked(h));
        for (variant, &h) in chosen.iter().enumerate() {
            let doc = answer_doc(rng, topic, variant, ti % 4 == 0 && variant == 0);
            let mut path = article_path(h, &doc.title, rng.range(2015, 2024));
            if hosts[h].robots == Robots::DisallowPrivate && !has_unfetchable && private_left > 0 {
                path = format!("/private/{}", slug(&doc.title));
                private_left -= 1;
                has_unfetchable = true;
            }
            load[h] += 1;
            drafts.push(Draft {
                host: h,
                path,
                kind: PageKind::Answer {
                    topic: topic.id.clone(),
                    variant,
                },
                doc,
            });
        }
        let Some(&dh) = order.iter().find(|h| !chosen.contains(h)) else {
            continue;
        };
        let subject = generic_subject(rng);
        let doc = distractor_doc(rng, subject, topic);
        load[dh] += 1;
        let path = article_path(dh, &doc.title, rng.range(2015, 2024));
        drafts.push(Draft {
            host: dh,
            path,
            kind: PageKind::Distractor {
                topic: topic.id.clone(),
            },
            doc,
        });
    }
    for (h, host) in hosts.iter().enumerate() {
        let extra = MIN_PAGES_PER_HOST.saturating_sub(load[h]).max(1);
        for k in 0..extra {
            let subject = generic_subject(rng);
            let doc = generic_doc(rng, subject);
            let mut path = article_path(h, &doc.title, rng.range(2015, 2024));
            // Disallowed-but-searchable pages that are not answers too.
            if host.robots == Robots::DisallowPrivate && k == 0 {
                path = format!("/private/{}", slug(&doc.title));
            }
            drafts.push(Draft {
                host: h,
                path,
                kind: PageKind::Generic,
                doc,
            });
        }
    }
    dedupe_paths(&mut drafts);
    drafts
}

/// Two pages on one host can draw the same title; suffix later ones.
fn dedupe_paths(drafts: &mut [Draft]) {
    let mut seen: BTreeMap<(usize, String), usize> = BTreeMap::new();
    for d in drafts.iter_mut() {
        let n = seen.entry((d.host, d.path.clone())).or_insert(0);
        *n += 1;
        if *n > 1 {
            d.path = match d.path.strip_suffix(".html") {
                Some(base) => format!("{base}-{n}.html"),
                None => format!("{}-{n}", d.path),
            };
        }
    }
}

fn render_all(hosts: &[Host], drafts: Vec<Draft>, rng: &mut Rng) -> Vec<Page> {
    let mut per_host: Vec<Vec<(String, String)>> = vec![Vec::new(); hosts.len()];
    for d in &drafts {
        per_host[d.host].push((d.path.clone(), d.doc.title.clone()));
    }
    drafts
        .into_iter()
        .map(|d| {
            let site = &per_host[d.host];
            render_page(hosts, site, d, rng)
        })
        .collect()
}

/// Dresses draft `d` in its host's frame; `site` is every (path, title) on that host, for the
/// navigation and related links.
fn render_page(hosts: &[Host], site: &[(String, String)], d: Draft, rng: &mut Rng) -> Page {
    let host = &hosts[d.host];
    let mut nav: Vec<(String, String)> = vec![("/".into(), "Home".into())];
    for s in [
        "World", "Science", "Culture", "Travel", "Opinion", "Archive",
    ] {
        nav.push((format!("/section/{}", s.to_lowercase()), s.into()));
    }
    let next = &hosts[(d.host + 1) % hosts.len()].name;
    nav.push((format!("http://{next}/"), "Partner site".into()));
    nav.extend(site.iter().take(4).cloned());
    let related: Vec<(String, String)> = site
        .iter()
        .filter(|(p, _)| *p != d.path)
        .take(5)
        .cloned()
        .collect();
    let frame = Frame {
        host: &host.name,
        layout: host.layout,
        nav: &nav,
        related: &related,
    };
    let html = render(&frame, &d.doc, rng);
    Page {
        url: format!("http://{}{}", host.name, d.path),
        host: host.name.clone(),
        allowed: host.robots.allows_trawl(&d.path),
        path: d.path,
        title: d.doc.title.clone(),
        kind: d.kind,
        text: d.doc.plain_text(),
        html,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn generation_is_deterministic() {
        assert!(Corpus::generate() == Corpus::generate());
        assert!(Corpus::generate() != Corpus::generate_with_seed(1));
    }

    /// FNV-1a: a hash whose value no Rust release can change, unlike std's.
    fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        h
    }

    /// Dozens of tests and benchmarks expect this exact web, so it is pinned: every page's URL,
    /// HTML and indexed text, and the questions as the simweb binary writes them. Additions
    /// belong in opt-in constructors such as [`Corpus::generate_with_follow_ups`].
    #[test]
    fn generate_is_pinned() {
        let c = Corpus::generate();
        let mut h = 0xcbf2_9ce4_8422_2325;
        for p in c.pages() {
            for part in [&p.url, &p.html, &p.text] {
                h = fnv1a(h, part.as_bytes());
                h = fnv1a(h, b"\n");
            }
        }
        let questions = serde_json::to_string_pretty(&c.questions()).expect("questions serialise");
        h = fnv1a(h, questions.as_bytes());
        assert_eq!(
            (c.pages().len(), c.topics().len(), c.hosts().len()),
            (300, 60, 50)
        );
        assert_eq!(
            c.pages()[0].url,
            "http://daily-observer.test/articles/nefikoium-the-essential-facts"
        );
        assert_eq!(
            c.pages()[299].url,
            "http://paper-journal.test/blog/2015/notes-on-sea-kayaking"
        );
        assert!(!questions.contains("follow_up"));
        assert_eq!(h, 516_851_775_727_407_752, "Corpus::generate() changed");
    }

    #[test]
    fn counts() {
        let c = Corpus::generate();
        assert!(c.pages().len() >= 240, "{} pages", c.pages().len());
        assert!(c.hosts().len() >= 45);
        assert!(c.questions().len() >= 60);
        for h in c.hosts() {
            assert!(c.host_pages(&h).count() >= 5, "{h} has too few pages");
            assert!(h.ends_with(".test") && h.contains('-'), "{h}");
        }
        let urls: BTreeSet<&str> = c.pages().iter().map(|p| p.url.as_str()).collect();
        assert_eq!(urls.len(), c.pages().len(), "duplicate urls");
    }

    #[test]
    fn questions_have_fetchable_answers_and_distinctive_facts() {
        let c = Corpus::generate();
        let queries: BTreeSet<String> = c.questions().iter().map(|q| q.query.clone()).collect();
        assert_eq!(queries.len(), c.questions().len());
        for q in c.questions() {
            assert_eq!(q.answer_urls.len(), 3, "{}", q.query);
            assert!(q.fetchable_answer_urls.len() >= 2, "{}", q.query);
            let topic = c.topics().iter().find(|t| t.id == q.topic).expect("topic");
            for f in &q.facts {
                assert!(f.contains(&topic.key), "{f}");
            }
            for url in &q.answer_urls {
                let page = c.page(url).expect("answer page exists");
                assert!(page.text.contains(&topic.key));
            }
        }
    }

    #[test]
    fn robots_variants_present() {
        let c = Corpus::generate();
        let robots: Vec<Robots> = c.host_info().iter().map(|h| h.robots).collect();
        for r in [
            Robots::AllowAll,
            Robots::DisallowPrivate,
            Robots::CrawlDelay,
            Robots::NotFound,
            Robots::ServerError,
            Robots::TrawlDisallowAll,
        ] {
            assert!(robots.contains(&r), "{r:?} missing");
        }
        assert!(robots.iter().filter(|r| **r == Robots::ServerError).count() <= 2);
        let private: Vec<&Page> = c
            .pages()
            .iter()
            .filter(|p| p.path.starts_with("/private/"))
            .collect();
        assert!(private.len() >= 2);
        assert!(private.iter().all(|p| !p.allowed_for_trawl()));
        assert!(private
            .iter()
            .any(|p| matches!(p.kind, PageKind::Answer { .. })));
    }

    #[test]
    fn pages_look_real() {
        let c = Corpus::generate();
        let layouts: BTreeSet<String> = c
            .host_info()
            .iter()
            .map(|h| format!("{:?}", h.layout))
            .collect();
        assert_eq!(layouts.len(), 3);
        assert!(
            c.pages()
                .iter()
                .filter(|p| p.html.len() > 20 * 1024)
                .count()
                >= 5
        );
        for p in c.pages() {
            for needle in [
                "<meta charset=\"utf-8\">",
                "<title>",
                "<h1>",
                "cookie-banner",
                "class=\"ad",
                "id=\"comments\"",
                "<footer",
                "<nav",
            ] {
                assert!(p.html.contains(needle), "{} lacks {needle}", p.url);
            }
        }
        let has = |s: &str| c.pages().iter().any(|p| p.html.contains(s));
        assert!(has("<table>") && has("<pre><code>") && has("<ul>\n<li>"));
        assert!(has("class=\"post-content\"") && has("id=\"main-text\""));
    }
}
