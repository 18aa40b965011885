//! Questions whose form asks for a particular extraction, answered per source without an LLM:
//!
//! - **count** ("how many bridges …", "the number of …"): a count the source states ("has 14
//!   stone bridges"), else the items of a list introduced as being about the subject (or the
//!   items naming it), else the rows of a table about it (or the rows naming it);
//! - **table** ("… as a table", "compare …", "list …"): the source's table whose headers and
//!   cells share most words with the question;
//! - **passage** ("what does X say about …", "quote …", "according to …"): the paragraph that
//!   ranks best against the question, preferring one holding a phrase the question quotes.
//!
//! The answer goes to [`trawl_messages::AnalysedDoc::lookup`]; a count also fills the data
//! point named like its subject when the other patterns found none.

use trawl_messages::{Lookup, Table};
use trawl_text::points::wide_unit;
use trawl_text::{coverage_of, is_hiragana, is_wide, sentences, terms, Lang};

use crate::bm25::{rank, Marks, Query};
use crate::datapoints::SMALL_NUMBERS;
use crate::judge::list_item;
use trawl_text::floor_char_boundary;

/// Words that end the subject of "how many …".
const SUBJECT_END: &[&str] = &[
    "are", "is", "was", "were", "do", "does", "did", "have", "has", "had", "can", "could", "will",
    "would", "in", "of", "on", "at", "for", "to", "there", "cross", "live", "exist",
];
/// Items kept as a count's evidence.
const EVIDENCE: usize = 20;
/// Longest passage returned, in characters.
const PASSAGE_CHARS: usize = 1_500;

/// What a question's form asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Form {
    Count { subject: String },
    Table,
    Passage,
}

/// Other languages' "how many" and "the number of": the counted noun is the next word.
const HOW_MANY: &[&[&str]] = &[
    &["wie", "viele"],
    &["anzahl", "der"],
    &["combien", "de"],
    &["combien", "d"],
    &["nombre", "de"],
    &["cuántos"],
    &["cuántas"],
    &["número", "de"],
    &["quantos"],
    &["quantas"],
    &["quanti"],
    &["quante"],
    &["сколько"],
    &["количество"],
    &["كم", "عدد"],
    &["عدد"],
];
/// Other languages' words asking for a table or a comparison, and for what a source says. A
/// word ending in `*` is a word's start ("таблиц*": "таблица", "таблицы", "таблицей"); a
/// Chinese or Japanese one is found inside the question.
const TABLE_WORDS: &[&str] = &[
    "tabelle",
    "tabellarisch",
    "vergleiche",
    "vergleich",
    "tableau",
    "comparez",
    "comparer",
    "comparaison",
    "tabla",
    "compara",
    "comparar",
    "comparación",
    "tabela",
    "tabella",
    "таблиц*",
    "сравни*",
    "表格",
    "表に",
    "比较",
    "比較",
    "جدول",
    "قارن",
];
const PASSAGE_WORDS: &[&str] = &[
    "laut",
    "selon",
    "según",
    "segundo",
    "согласно",
    "根据",
    "によると",
    "وفقا",
];

/// Chinese measure words and Japanese counters, written between a number and what it counts
/// ("14座石桥", "14本の橋"). "人" is left out: it is also a noun ("人口").
const COUNTERS: &[&str] = &[
    "か所", "ヶ所", "箇所", "个", "個", "座", "条", "家", "名", "位", "只", "种", "種", "本", "部",
    "所", "台", "辆", "輛", "架", "艘", "项", "項", "栋", "棟", "间", "間", "张", "張", "片", "颗",
    "根", "支", "件", "场", "門", "门", "道", "层", "块", "头", "頭", "匹", "棵", "枚", "基", "軒",
    "冊", "校", "社", "店", "隻", "機",
];
/// What "多少" also asks for that is not a count of things: a measure, an age, a time, money.
const NOT_COUNTED: &[&str] = &["年", "岁", "歳", "天", "日", "月", "钱", "元", "倍", "平方"];

/// The counter `text` starts with.
fn counter(text: &str) -> Option<&'static str> {
    COUNTERS.iter().copied().find(|c| text.starts_with(c))
}

/// A Chinese or Japanese noun: the wide characters `chars` starts with, up to a particle, a
/// Chinese function character or punctuation, at most four.
fn wide_noun(chars: impl Iterator<Item = char>) -> String {
    chars
        .take_while(|&c| is_wide(c) && !is_hiragana(c) && !"的在有是呢吗和与共".contains(c))
        .take(4)
        .collect()
}

/// The counted noun of a Chinese or Japanese "how many" question: "多少座桥", "几座桥",
/// "いくつの橋", "何本の橋", "橋はいくつ", "橋の数".
fn wide_count_subject(question: &str) -> Option<String> {
    let forward = |rest: &str| {
        let rest = counter(rest).map_or(rest, |c| &rest[c.len()..]);
        wide_noun(rest.trim_start_matches('の').chars())
    };
    let mut found = Vec::new();
    if let Some((_, rest)) = question.split_once("多少") {
        found.push(forward(rest));
    }
    // "几" alone is also "almost" (几乎), "何" "what" (如何, 何时): only before a counter.
    let before_counter = |how: &str| -> Vec<usize> {
        (question.match_indices(how))
            .map(|(i, _)| i + how.len())
            .filter(|&i| counter(&question[i..]).is_some())
            .filter(|&i| !question[..i - how.len()].ends_with(['如', '为', '為', '任', '奈']))
            .collect()
    };
    for how in ["几", "幾", "何"] {
        for i in before_counter(how) {
            found.push(forward(&question[i..]));
        }
    }
    if let Some((_, rest)) = question.split_once("いくつの") {
        found.push(wide_noun(rest.chars()));
    }
    // Before the question word: "橋がいくつ", "橋は何本", "橋の数".
    let asks = (question.match_indices("いくつ").map(|(i, _)| (i, true)))
        .chain(
            before_counter("何")
                .into_iter()
                .map(|i| (i - "何".len(), true)),
        )
        .chain(question.match_indices("の数").map(|(i, _)| (i, false)));
    for (at, after_particle) in asks {
        let before = question[..at].trim_end_matches(['は', 'が', 'も']);
        if after_particle && before.len() == at {
            continue;
        }
        let noun: Vec<char> = wide_noun(before.chars().rev()).chars().collect();
        found.push(noun.into_iter().rev().collect());
    }
    found.into_iter().find(|n| {
        !n.is_empty() && wide_unit(n).is_none() && !NOT_COUNTED.iter().any(|w| n.starts_with(w))
    })
}

/// A number written in digits or in Chinese numerals ("14", "十四", "一百零五").
fn wide_number(text: &str) -> Option<u64> {
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().ok();
    }
    let (mut total, mut digit) = (0u64, None);
    for c in text.chars() {
        let d = match c {
            '〇' | '零' => 0,
            '一' => 1,
            '二' | '两' | '兩' => 2,
            '三' => 3,
            '四' => 4,
            '五' => 5,
            '六' => 6,
            '七' => 7,
            '八' => 8,
            '九' => 9,
            '十' | '百' | '千' => {
                let unit = match c {
                    '十' => 10,
                    '百' => 100,
                    _ => 1000,
                };
                total += digit.take().unwrap_or(1) * unit;
                continue;
            }
            _ => return None,
        };
        digit = Some(d);
    }
    Some(total + digit.unwrap_or(0))
}

fn is_numeral(c: char) -> bool {
    c.is_ascii_digit() || "〇零一二两兩三四五六七八九十百千".contains(c)
}

/// The count a Chinese or Japanese sentence states of `noun`: a number and a counter before it
/// ("有14座石桥", "十四座桥", "14本の橋", "14の橋"), or after it ("桥梁共14座", "橋が14本ある").
fn stated_wide(sentence: &str, noun: &str) -> Option<u64> {
    for (at, _) in sentence.match_indices(noun) {
        // Before: the number, then a counter or の, then at most three more characters.
        let before: Vec<char> = sentence[..at].chars().rev().take(8).collect();
        if let Some(n) = before.iter().position(|&c| is_numeral(c)) {
            let between: String = before[..n].iter().rev().collect();
            let digits = before[n..].iter().take_while(|&&c| is_numeral(c)).count();
            let digits: String = before[n..n + digits].iter().rev().collect();
            let after_number = counter(&between)
                .map(str::len)
                .or_else(|| between.starts_with('の').then_some('の'.len_utf8()));
            if let Some(len) = after_number {
                let rest = &between[len..];
                let rest = rest.trim_start_matches('の');
                if rest.chars().count() <= 3 && rest.chars().all(is_wide) {
                    if let Some(count) = wide_number(&digits) {
                        return Some(count);
                    }
                }
            }
        }
        // After: at most five characters ("は全部で"), then the number and a counter.
        let after = &sentence[at + noun.len()..];
        let start = after
            .char_indices()
            .take(6)
            .find(|&(_, c)| is_numeral(c))
            .map(|(i, _)| i);
        if let Some(start) = start {
            if after[..start].chars().all(is_wide) {
                let run = after[start..]
                    .find(|c: char| !is_numeral(c))
                    .map_or(&after[start..], |end| &after[start..start + end]);
                if counter(&after[start + run.len()..]).is_some() {
                    if let Some(count) = wide_number(run) {
                        return Some(count);
                    }
                }
            }
        }
    }
    None
}

/// The form of `question`, if it asks for a count, a table or a passage.
pub fn form(question: &str) -> Option<Form> {
    if let Some(subject) = wide_count_subject(question) {
        return Some(Form::Count { subject });
    }
    let lower = question.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|w| !w.is_empty())
        .collect();
    let after = |pair: [&str; 2]| {
        words
            .windows(2)
            .position(|w| w == pair)
            .map(|i| &words[i + 2..])
    };
    if let Some(rest) = after(["how", "many"]).or_else(|| after(["number", "of"])) {
        let subject: Vec<&str> = rest
            .iter()
            .take_while(|w| !SUBJECT_END.contains(w))
            .take(3)
            .copied()
            .collect();
        if !subject.is_empty() {
            return Some(Form::Count {
                subject: subject.join(" "),
            });
        }
    }
    for trigger in HOW_MANY {
        let at = words.windows(trigger.len()).position(|w| w == *trigger);
        if let Some(noun) = at.and_then(|i| words.get(i + trigger.len())) {
            return Some(Form::Count {
                subject: (*noun).to_owned(),
            });
        }
    }
    let first = words.first().copied().unwrap_or("");
    let says = |list: &[&str]| {
        (words.iter()).any(|w| {
            list.iter().any(|l| match l.strip_suffix('*') {
                Some(start) => w.starts_with(start),
                None => w == l || (l.chars().any(is_wide) && w.contains(l)),
            })
        })
    };
    if words.contains(&"table")
        || matches!(first, "compare" | "list" | "tabulate")
        || words.contains(&"comparison")
        || says(TABLE_WORDS)
    {
        return Some(Form::Table);
    }
    let pairs = [["say", "about"], ["says", "about"], ["according", "to"]];
    if pairs.into_iter().any(|pair| after(pair).is_some())
        || words.contains(&"quote")
        || words.contains(&"passage")
        || after(["по", "словам"]).is_some()
        || says(PASSAGE_WORDS)
    {
        return Some(Form::Passage);
    }
    None
}

/// The extraction `question`'s form asks for, from one source.
pub fn lookup(question: &str, markdown: &str, tables: &[Table]) -> Option<Lookup> {
    lookup_in(question, Lang::UND, markdown, tables)
}

/// [`lookup`] for a question in `lang`: a count's noun is found in its other forms by the
/// language's stems ("сколько мостов" counts "моста").
pub fn lookup_in(question: &str, lang: Lang, markdown: &str, tables: &[Table]) -> Option<Lookup> {
    match form(question)? {
        Form::Count { subject } => count(question, lang, &subject, markdown, tables),
        Form::Table => best_table(question, tables).map(|index| Lookup::Table { index }),
        Form::Passage => passage(question, markdown).map(|text| Lookup::Passage { text }),
    }
}

fn small_number(word: &str) -> Option<u64> {
    let w = word.to_lowercase();
    SMALL_NUMBERS
        .iter()
        .position(|n| *n == w)
        .map(|i| i as u64 + 1)
        .or_else(|| w.replace(',', "").parse::<u64>().ok())
}

fn count(
    question: &str,
    lang: Lang,
    subject: &str,
    markdown: &str,
    tables: &[Table],
) -> Option<Lookup> {
    let head_word = subject.split_whitespace().last()?;
    let head = [head_word.to_owned()];
    // The subject's head noun (last word), in its other forms.
    let head = Marks::new(&head, lang);
    // Stated: "has 14 stone bridges", in the sentences that rank best for the question.
    let all = sentences(markdown);
    let ranking = rank(&Query::new_in(question, &[], lang), &all);
    for i in ranking.order().into_iter().take(8) {
        if head_word.chars().any(is_wide) {
            if let Some(n) = stated_wide(&all[i], head_word) {
                return Some(counted(subject, "stated", n, vec![all[i].clone()]));
            }
            continue;
        }
        let words: Vec<&str> = all[i].split_whitespace().collect();
        for (j, w) in words.iter().enumerate() {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric());
            if !head.word(&w.to_lowercase()) {
                continue;
            }
            let stated = (j.saturating_sub(3)..j).rev().find_map(|k| {
                let t = words[k].trim_matches(|c: char| !c.is_alphanumeric() && c != ',');
                // A year before the noun ("the 1903 bridges") is not a count.
                small_number(t).filter(|&n| !(1000..=2100).contains(&n) || t.contains(','))
            });
            if let Some(n) = stated {
                return Some(counted(subject, "stated", n, vec![all[i].clone()]));
            }
        }
    }
    // Counted: a list about the subject, else list items naming it.
    let lists = lists(markdown);
    let about = lists.iter().find(|(intro, _)| head.in_text(intro));
    let items: Vec<String> = match about {
        Some((_, items)) => items.clone(),
        None => lists
            .iter()
            .flat_map(|(_, items)| items.iter().filter(|i| head.in_text(i)).cloned())
            .collect(),
    };
    if !items.is_empty() {
        return Some(counted(subject, "counted_list", items.len() as u64, items));
    }
    // Counted: rows of a table about the subject, else rows naming it.
    let about = tables
        .iter()
        .find(|t| t.headers.iter().any(|h| head.in_text(h)));
    let rows: Vec<String> = match about {
        Some(t) => t.rows.iter().map(|r| r.join(" | ")).collect(),
        None => tables
            .iter()
            .flat_map(|t| t.rows.iter().map(|r| r.join(" | ")))
            .filter(|r| head.in_text(r))
            .collect(),
    };
    (!rows.is_empty()).then(|| counted(subject, "counted_rows", rows.len() as u64, rows))
}

/// A count found by `method`, with at most [`EVIDENCE`] of its items.
fn counted(subject: &str, method: &str, count: u64, evidence: Vec<String>) -> Lookup {
    Lookup::Count {
        subject: subject.to_owned(),
        count,
        method: method.into(),
        evidence: evidence.into_iter().take(EVIDENCE).collect(),
    }
}

/// The lines of `markdown` outside fenced code (fences too left out), then a blank line that
/// ends the last block.
fn outside_code(markdown: &str) -> impl Iterator<Item = &str> {
    let mut in_code = false;
    markdown
        .lines()
        .chain(std::iter::once(""))
        .filter(move |line| {
            let fence = line.trim().starts_with("```");
            in_code ^= fence;
            !fence && !in_code
        })
}

/// The markdown's lists outside code: (the line before the list, its items).
fn lists(markdown: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let (mut intro, mut current) = (String::new(), Vec::new());
    for line in outside_code(markdown) {
        let t = line.trim();
        let item = list_item(t).or_else(|| {
            let digits = t.chars().take_while(char::is_ascii_digit).count();
            (digits > 0)
                .then(|| &t[digits..])
                .and_then(|r| r.strip_prefix(". ").or_else(|| r.strip_prefix(") ")))
        });
        match item {
            Some(text) if !text.trim().is_empty() => current.push(text.trim().to_owned()),
            _ => {
                // Only a blank line or prose ends a list; an item's wrapped line does not.
                if !current.is_empty() && (t.is_empty() || !line.starts_with(' ')) {
                    out.push((std::mem::take(&mut intro), std::mem::take(&mut current)));
                }
                if !t.is_empty() {
                    intro = t.to_owned();
                }
            }
        }
    }
    out
}

/// Index of the table sharing most words with the question (more rows on a tie).
pub(crate) fn best_table(question: &str, tables: &[Table]) -> Option<usize> {
    let q = terms(question);
    tables
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut words: Vec<String> = t.headers.iter().flat_map(|h| terms(h)).collect();
            words.extend(t.rows.iter().flatten().flat_map(|c| terms(c)));
            (i, coverage_of(&q, &words), t.rows.len())
        })
        .max_by(|a, b| a.1.total_cmp(&b.1).then(a.2.cmp(&b.2)).then(b.0.cmp(&a.0)))
        .map(|(i, _, _)| i)
}

/// Prose paragraphs of `markdown` (no headings, code, tables or list markers).
fn paragraphs(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = Vec::new();
    for line in outside_code(markdown) {
        let t = line.trim();
        if t.starts_with('|') || t.starts_with('#') {
            continue;
        }
        if t.is_empty() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current).join(" "));
            }
        } else {
            current.push(t);
        }
    }
    out
}

fn passage(question: &str, markdown: &str) -> Option<String> {
    let paras = paragraphs(markdown);
    let quoted: Vec<String> = question
        .split(['"', '“', '”'])
        .skip(1)
        .step_by(2)
        .map(|q| q.trim().to_lowercase())
        .filter(|q| !q.is_empty())
        .collect();
    let holding = paras
        .iter()
        .find(|p| quoted.iter().any(|q| p.to_lowercase().contains(q.as_str())));
    let best = holding.or_else(|| {
        let ranking = rank(&Query::new(question, &[]), &paras);
        ranking.order().first().map(|&i| &paras[i])
    })?;
    let mut text = best.clone();
    if text.len() > PASSAGE_CHARS {
        text.truncate(floor_char_boundary(&text, PASSAGE_CHARS));
        text.push('…');
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(
            form("How many bridges cross the Velmora River?"),
            Some(Form::Count {
                subject: "bridges".into()
            })
        );
        assert_eq!(
            form("What is the number of stone bridges in Port Varn?"),
            Some(Form::Count {
                subject: "stone bridges".into()
            })
        );
        assert_eq!(
            form("Compare the Frell and Quill protocols"),
            Some(Form::Table)
        );
        assert_eq!(
            form("Give me a table of zorbium's properties"),
            Some(Form::Table)
        );
        assert_eq!(
            form("What does the Frell spec say about retries?"),
            Some(Form::Passage)
        );
        assert_eq!(
            form("Quote the licence's warranty clause"),
            Some(Form::Passage)
        );
        assert_eq!(form("What is the melting point of zorbium?"), None);
        assert_eq!(form("What is comparable to zorbium?"), None);
    }

    #[test]
    fn forms_in_other_languages() {
        let count = |s: &str| Some(Form::Count { subject: s.into() });
        assert_eq!(form("Wie viele Brücken hat Port Varn?"), count("brücken"));
        assert_eq!(form("Combien de ponts compte Port Varn ?"), count("ponts"));
        assert_eq!(form("¿Cuántos puentes tiene Port Varn?"), count("puentes"));
        assert_eq!(form("Сколько мостов в Порт-Варне?"), count("мостов"));
        assert_eq!(form("كم عدد الجسور في بورت فارن؟"), count("الجسور"));
        assert_eq!(
            form("Vergleiche die Protokolle Frell und Quill"),
            Some(Form::Table)
        );
        assert_eq!(
            form("Сравните протоколы Frell и Quill в таблице"),
            Some(Form::Table)
        );
        assert_eq!(form("用表格比较Frell和Quill协议"), Some(Form::Table));
        assert_eq!(
            form("Que dit la spécification, selon Frell, des reprises ?"),
            Some(Form::Passage)
        );
        // "lautet" is not "laut".
        assert_eq!(form("Wie lautet die Hauptstadt von Freedonia?"), None);
        // Chinese and Japanese: the noun after its counter, or before the particle.
        assert_eq!(form("港瓦恩市有多少座桥？"), count("桥"));
        assert_eq!(form("港瓦恩有几座石桥"), count("石桥"));
        assert_eq!(form("港瓦恩有多少个博物馆？"), count("博物馆"));
        assert_eq!(form("ポートヴァーンには何本の橋がありますか"), count("橋"));
        assert_eq!(form("ポートヴァーンには橋がいくつありますか"), count("橋"));
        assert_eq!(form("ポートヴァーンの橋の数は？"), count("橋"));
        // A measure, a time and "how" are not counts.
        assert_eq!(form("特伦尔的熔点是多少度"), None);
        assert_eq!(form("拉泽奥大桥有多少米长"), None);
        assert_eq!(form("如何部署Frell协议"), None);
        assert_eq!(form("为何拉泽奥大桥很长"), None);
        assert_eq!(form("它几乎有两公里长"), None);
    }

    /// The count `lookup_in` finds for `question` (in language `code`) in `md`, and how.
    fn count_in(question: &str, code: &str, md: &str) -> Option<(u64, String)> {
        let lang = Lang::from_tag(code).unwrap();
        match lookup_in(question, lang, md, &[]) {
            Some(Lookup::Count { count, method, .. }) => Some((count, method)),
            _ => None,
        }
    }

    /// Chinese and Japanese state a count with a counter between the number and the noun.
    #[test]
    fn a_stated_count_in_chinese_and_japanese() {
        let bridges = "港瓦恩市有多少座桥？";
        #[rustfmt::skip]
        let cases = [
            (bridges, "zh", "港瓦恩是一座运河城市，市内共有14座石桥，大多建于1800年代。", 14),
            (bridges, "zh", "港瓦恩有十四座桥横跨运河。", 14),
            (bridges, "zh", "港瓦恩的桥共12座，其中三座建于1903年。", 12),
            ("ポートヴァーンには何本の橋がありますか", "ja", "ポートヴァーンには14本の石の橋がある。", 14),
            ("ポートヴァーンには橋がいくつありますか", "ja", "運河の町ポートヴァーンの橋は全部で9基です。", 9),
            // A list about the subject counts in Chinese too.
            (bridges, "zh", "港瓦恩的桥：\n\n- 老桥\n- 磨坊桥\n- 新桥\n", 3),
        ];
        for (question, code, md, want) in cases {
            let got = count_in(question, code, md);
            assert_eq!(got.map(|(n, _)| n), Some(want), "{question} / {md}");
        }
        // A year before the noun is not a count, nor a number without a counter.
        for md in ["1903年的桥很有名。", "桥长798米。"] {
            let got = count_in(bridges, "zh", md);
            assert!(
                got.as_ref().is_none_or(|(_, m)| m != "stated"),
                "{md}: {got:?}"
            );
        }
    }

    /// A count's noun is found in the other forms its language gives it.
    #[test]
    fn a_stated_count_in_another_language() {
        let q = "Сколько мостов в Порт-Варне?";
        let md = "Порт-Варн — город каналов. В городе 14 каменных мостов через каналы.\n";
        assert_eq!(count_in(q, "ru", md).map(|(n, _)| n), Some(14));
        let listed = "Мосты Порт-Варна:\n\n- Старый мост\n- Мельничный мост\n- Новый мост\n";
        assert_eq!(count_in(q, "ru", listed).map(|(n, _)| n), Some(3));
        // Read as English, "мостов" is not "Мосты".
        let got = lookup_in(q, Lang::UND, listed, &[]);
        assert!(got.is_none(), "{got:?}");
        // A German compound counts as its last part.
        let md = "Port Varn ist eine Kanalstadt. Über die Kanäle führen 14 Steinbrücken.\n";
        let got = count_in("Wie viele Brücken hat Port Varn?", "de", md);
        assert_eq!(got.map(|(n, _)| n), Some(14));
    }

    #[test]
    fn a_stated_count_wins() {
        let md = "Port Varn is a canal city. The city has 14 stone bridges over its canals, most from the 1800s.\n\n- Old Bridge\n- New Bridge\n";
        let got = lookup("How many bridges does Port Varn have?", md, &[]);
        let Some(Lookup::Count {
            count,
            method,
            evidence,
            ..
        }) = got
        else {
            panic!("{got:?}")
        };
        assert_eq!((count, method.as_str()), (14, "stated"));
        assert!(evidence[0].contains("14 stone bridges"));
    }

    #[test]
    fn counts_list_items_and_table_rows() {
        let md = "The bridges of Port Varn are listed below for visitors.\n\n- Old Bridge, built of stone\n- Tanner's Bridge\n- Mill Bridge\n\nOther sights:\n\n- The market\n";
        let got = lookup("How many bridges does Port Varn have?", md, &[]);
        assert!(
            matches!(&got, Some(Lookup::Count { count: 3, method, .. }) if method == "counted_list"),
            "{got:?}"
        );
        let table = Table {
            headers: vec!["Bridge".into(), "Year".into()],
            rows: vec![
                vec!["Old".into(), "1801".into()],
                vec!["Mill".into(), "1840".into()],
            ],
        };
        let got = lookup(
            "How many bridges does Port Varn have?",
            "Port Varn is a canal city with a market and many visitors every year.",
            &[table],
        );
        assert!(
            matches!(&got, Some(Lookup::Count { count: 2, method, .. }) if method == "counted_rows"),
            "{got:?}"
        );
    }

    #[test]
    fn picks_the_best_table_and_passage() {
        let t = |h: &[&str], r: &[&str]| Table {
            headers: h.iter().map(|s| s.to_string()).collect(),
            rows: vec![r.iter().map(|s| s.to_string()).collect()],
        };
        let tables = vec![
            t(&["Month", "Rain"], &["May", "40 mm"]),
            t(&["Protocol", "Port"], &["Frell", "4410"]),
        ];
        assert_eq!(
            lookup("Compare protocol ports in a table", "", &tables),
            Some(Lookup::Table { index: 1 })
        );
        let md = "# Frell\n\nThe Frell spec covers framing and ports in detail.\n\nOn retries, the spec says a client must retry three times with a growing delay.\n\n```\nretry = 3\n```\n";
        let Some(Lookup::Passage { text }) =
            lookup("What does the Frell spec say about retries?", md, &[])
        else {
            panic!()
        };
        assert!(text.starts_with("On retries"), "{text}");
        let Some(Lookup::Passage { text }) = lookup("Quote \"framing and ports\"", md, &[]) else {
            panic!()
        };
        assert!(text.starts_with("The Frell spec covers"), "{text}");
    }
}
