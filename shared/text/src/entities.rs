//! The things a question names, and whether a text names them too, in the forms pages use.
//!
//! [`crate::names_in`] gives a question's names as single words; a page about the subject does
//! not hold every one of them. Real pages write "ESA" for the European Space Agency, "Bolivia"
//! where the question says "Bolivian", and leave the month of a date out. So a question's names
//! are grouped into entities — a run of capitalised words, as "European Space Agency" — and an
//! entity is named by a text that holds all its words (by the language's stems), its initials
//! written as an acronym ("ESA"), or, for an acronym, words whose initials spell it. Months and
//! weekdays are capitalised without naming anything. A place is named in any of its forms
//! ([`crate::places`]): "Bolivian" by a page that says Bolivia, "Dutch" by one that says
//! Amsterdam.

use crate::places::{forms_of, Forms};
use crate::{found_in_lang, names, names_in, terms, Lang, MONTHS};

/// Days of the week in English, lower-cased: capitalised, yet nothing a page must name.
const WEEKDAYS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// Something a question names.
#[derive(Clone, Debug, PartialEq)]
pub struct Entity {
    /// As the question writes it: "European Space Agency".
    pub written: String,
    /// Its content words, lower-cased: european, space, agency.
    pub words: Vec<String>,
    /// The acronym of a name of two or more words ("ESA"), or the name itself when the
    /// question writes it as one ("NASA").
    pub acronym: Option<String>,
    /// Whether the question writes it as an acronym, so that words whose initials spell it
    /// name it too.
    pub is_acronym: bool,
    /// The forms of the places it names, by CLDR: of the whole name (`None`: "United States")
    /// or of one of its `words` (`Some(index)`: "Bolivian" in "Bolivian Senate").
    pub places: Vec<(Option<usize>, &'static Forms)>,
}

impl Entity {
    /// Whether `question` (which names it) writes it as an adjective of a name describing the
    /// common noun after it, after an article: "the Jovian moon", "a Martian rock". Pages name
    /// what it describes in their own words ("Jupiter's moon Europa"), so a source need not
    /// write it. "Julian Assange", a place's adjective ("Bolivian", named in its own forms) and
    /// "of Jovian" are not. Asked of a question's entities only, not of every sentence's.
    pub fn describes(&self, question: &str) -> bool {
        let lower = self.written.to_lowercase();
        let adjective =
            (ADJECTIVE_ENDINGS.iter()).any(|e| lower.len() > e.len() + 2 && lower.ends_with(e));
        if self.words.len() > 1 || self.is_acronym || !self.places.is_empty() || !adjective {
            return false;
        }
        let tokens: Vec<&str> = question.split_whitespace().collect();
        (tokens.iter().position(|t| *t == self.written)).is_some_and(|at| {
            let before = tokens[..at].last().map(|t| t.to_lowercase());
            let after = tokens.get(at + 1).copied().unwrap_or("");
            matches!(before.as_deref(), Some("the" | "a" | "an"))
                && after.starts_with(char::is_lowercase)
                && after.chars().all(char::is_alphabetic)
        })
    }

    /// Whether one of `texts` gives the place of word `i` (or, for `None`, of the whole
    /// name) in one of its forms.
    fn place_in(&self, i: Option<usize>, texts: &[&str]) -> bool {
        (self.places.iter())
            .filter(|(at, _)| *at == i)
            .any(|(_, forms)| texts.iter().any(|t| forms.in_text(t)))
    }
}

/// The entities `question` (in `lang`) names: each run of capitalised words past the first
/// word, a possessive or punctuation ending the run ("Scooter Braun's company" names Scooter
/// Braun). German, whose capitals mark every noun, has one entity per name
/// [`crate::names_in`] finds; scripts without case have none.
pub fn entities_in(question: &str, lang: Lang) -> Vec<Entity> {
    if !lang.capitals_mark_names() {
        let written = |n: &str| {
            let mut words = question.split(|c: char| !c.is_alphanumeric());
            let found = words.find(|w| !w.is_empty() && w.to_lowercase() == n);
            found.map_or(n.to_owned(), str::to_owned)
        };
        return (names_in(question, lang).into_iter())
            .map(|w| Entity {
                places: forms_of(&w).map(|f| (Some(0), f)).into_iter().collect(),
                written: written(&w),
                words: vec![w],
                acronym: None,
                is_acronym: false,
            })
            .collect();
    }
    // A question in title case names nothing by its capitals.
    if names(question).is_empty() {
        return Vec::new();
    }
    let mut out: Vec<Entity> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let mut close = |run: &mut Vec<&str>| {
        if let Some(e) = entity(run, lang).filter(|e| !out.contains(e)) {
            out.push(e);
        }
        run.clear();
    };
    for token in question.split_whitespace().skip(1) {
        let core = token.trim_matches(|c: char| !c.is_alphanumeric());
        let (core, possessive) = match core.strip_suffix("'s").or(core.strip_suffix("’s")) {
            Some(c) => (c, true),
            None => (core, false),
        };
        // "pro-Morales" names Morales.
        let core = match capitalised(core) {
            true => core,
            false => core.rsplit('-').find(|p| capitalised(p)).unwrap_or(""),
        };
        if core.is_empty() || !capitalised(core) {
            close(&mut run);
            continue;
        }
        run.push(core);
        let ends = token.ends_with([',', ';', ':', '?', '.', ')', '!']);
        if possessive || ends {
            close(&mut run);
        }
    }
    close(&mut run);
    out
}

/// Endings of an adjective made from a name: Jov-ian, Mart-ian, Europ-ean, Arct-ic, Cornw-ish
/// … (morphology, not names). Not a bare "-an": "the Razorgan grows" is a name.
const ADJECTIVE_ENDINGS: &[&str] = &["ian", "ean", "ese", "ic", "ish"];

fn capitalised(w: &str) -> bool {
    w.chars().next().is_some_and(char::is_uppercase)
}

fn is_acronym(w: &str) -> bool {
    let n = w.chars().count();
    (2..=6).contains(&n) && w.chars().all(|c| c.is_uppercase() || c.is_ascii_digit())
}

/// The entity a run of capitalised words names, if any of them is a content word that is not
/// a month or a weekday.
fn entity(run: &[&str], lang: Lang) -> Option<Entity> {
    let kept: Vec<&str> = (run.iter().copied())
        .filter(|w| {
            let lower = w.to_lowercase();
            !MONTHS.contains(&lower.as_str()) && !WEEKDAYS.contains(&lower.as_str())
        })
        .collect();
    let words = terms(&kept.join(" "))
        .into_iter()
        .filter(|w| !lang.is_stop_word(w))
        .collect::<Vec<_>>();
    if words.is_empty() {
        return None;
    }
    let single_acronym = kept.len() == 1 && is_acronym(kept[0]);
    let acronym = match (single_acronym, kept.len()) {
        (true, _) => Some(kept[0].to_owned()),
        (false, n) if n >= 2 => Some(
            (kept.iter())
                .filter_map(|w| w.chars().next())
                .flat_map(char::to_uppercase)
                .collect(),
        ),
        _ => None,
    };
    let written = kept.join(" ");
    let mut places: Vec<(Option<usize>, &'static Forms)> = Vec::new();
    if kept.len() > 1 {
        places.extend(forms_of(&written).map(|f| (None, f)));
    }
    for w in &kept {
        let at = words.iter().position(|x| *x == w.to_lowercase());
        if let (Some(at), Some(forms)) = (at, forms_of(w)) {
            places.push((Some(at), forms));
        }
    }
    Some(Entity {
        written,
        words,
        acronym,
        is_acronym: single_acronym,
        places,
    })
}

/// Which of `entities` `texts` name, in `lang`: all of an entity's words (by their stems, or a
/// place's in any of its forms), the place it names in any of its forms, its acronym as a word
/// written in capitals, or, for an acronym, capitalised words whose initials spell it
/// ("European Space Agency" for "ESA").
pub fn named_in(entities: &[Entity], texts: &[&str], lang: Lang) -> Vec<bool> {
    let words: Vec<String> = entities.iter().flat_map(|e| e.words.clone()).collect();
    let found = found_in_lang(&words, texts, lang);
    let mut at = 0;
    (entities.iter())
        .map(|e| {
            let words = &found[at..at + e.words.len()];
            at += e.words.len();
            let all = (words.iter().enumerate()).all(|(i, f)| *f || e.place_in(Some(i), texts));
            all || e.place_in(None, texts)
                || (e.acronym.as_deref()).is_some_and(|a| {
                    texts
                        .iter()
                        .any(|t| holds_acronym(t, a) || (e.is_acronym && holds_expansion(t, a)))
                })
        })
        .collect()
}

/// Whether `text` holds `acronym` as a word of its own ("ESA's" holds ESA, "MESA" does not).
fn holds_acronym(text: &str, acronym: &str) -> bool {
    text.match_indices(acronym).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + acronym.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// Whether `text` holds capitalised words whose initials spell `acronym`, "of", "for", "and"
/// and "the" between them not counted ("National Aeronautics and Space Administration").
fn holds_expansion(text: &str, acronym: &str) -> bool {
    let letters: Vec<char> = acronym.chars().collect();
    let words: Vec<&str> = (text.split(|c: char| !c.is_alphanumeric() && c != '-'))
        .filter(|w| !w.is_empty())
        .collect();
    (0..words.len()).any(|start| {
        let mut i = 0;
        for w in &words[start..] {
            if i == letters.len() {
                break;
            }
            if i > 0 && matches!(*w, "of" | "for" | "and" | "the" | "on") {
                continue;
            }
            if !capitalised(w) || !w.starts_with(letters[i]) {
                return false;
            }
            i += 1;
        }
        i == letters.len()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(question: &str) -> Vec<String> {
        (entities_in(question, Lang::EN).into_iter())
            .map(|e| e.written)
            .collect()
    }

    #[test]
    fn a_question_s_entities_are_its_runs_of_capitalised_words() {
        assert_eq!(
            written("Who heads the European Space Agency team studying hibernation?"),
            ["European Space Agency"]
        );
        // A possessive ends a name; a month names nothing; "pro-Morales" names Morales.
        assert_eq!(
            written("How much did Scooter Braun's company pay for Big Machine in November 2019?"),
            ["Scooter Braun", "Big Machine"]
        );
        assert_eq!(
            written("How many died at the Bolivian plant where pro-Morales protesters marched?"),
            ["Bolivian", "Morales"]
        );
        assert_eq!(
            written("Who is the CEO of DH, the Spokane firm?"),
            ["CEO", "DH", "Spokane"]
        );
        assert!(written("How Long Is The Bridge?").is_empty());
    }

    #[test]
    fn an_adjective_of_a_name_describes_the_noun_after_it() {
        let describes = |question: &str| -> Vec<(String, bool)> {
            (entities_in(question, Lang::EN).into_iter())
                .map(|e| (e.written.clone(), e.describes(question)))
                .collect()
        };
        // h010 of the real-page set: the pages say "Jupiter's moon Europa", never "Jovian".
        assert_eq!(
            describes("How many miles across is the Jovian moon where water was found?"),
            [("Jovian".to_owned(), true)]
        );
        assert_eq!(
            describes("Which rover found a Martian rock in Jezero?"),
            [("Martian".to_owned(), true), ("Jezero".to_owned(), false)]
        );
        // A name, a place's adjective (named in its own forms) and a name after a preposition
        // are not.
        for q in [
            "How many charges does Julian Assange face?",
            "How many died at the Bolivian fuel plant?",
            "Who married the Christian Dior heir?",
            "What is the population of Jovian?",
            "How long does the Razorgan grow?",
        ] {
            assert!(describes(q).iter().all(|(_, d)| !d), "{q}");
        }
    }

    #[test]
    fn a_place_is_named_in_any_of_its_forms() {
        let named = |question: &str, text: &str| {
            named_in(&entities_in(question, Lang::EN), &[text], Lang::EN)
        };
        // q050 of the real-page set: the page about the plant says Bolivia, never "Bolivian".
        let q =
            "How many were injured at the Bolivian fuel plant where pro-Morales protesters died?";
        assert_eq!(
            named(
                q,
                "Three died near the Senkata plant, Bolivia's interim government said; Evo Morales"
            ),
            [true, true]
        );
        assert_eq!(
            named(q, "Three died near a fuel plant in Peru."),
            [false, false]
        );
        // h002: "the Dutch capital" is Amsterdam on the page; a word of a longer name too.
        let q =
            "How many spiders did artists from France install on a bridge in the Dutch capital?";
        assert_eq!(
            named(
                q,
                "Giant spiders by a French collective crawl over a bridge in Amsterdam."
            ),
            [true, true]
        );
        let q = "Which driver won the Dutch Grand Prix in 2021?";
        assert_eq!(
            named(q, "Grand Prix of the Netherlands at Zandvoort"),
            [true]
        );
        assert_eq!(named(q, "Grand Prix of Belgium at Spa"), [false]);
    }

    #[test]
    fn an_entity_is_named_by_its_words_its_acronym_or_its_expansion() {
        let named = |question: &str, text: &str| {
            named_in(&entities_in(question, Lang::EN), &[text], Lang::EN)
        };
        let q = "Who heads the European Space Agency team studying hibernation?";
        assert_eq!(named(q, "ESA's Topical Team on hibernation"), [true]);
        assert_eq!(named(q, "The European Space Agency says"), [true]);
        assert_eq!(named(q, "MESA and a space agency"), [false]);
        let q = "How far did the NASA probe travel?";
        assert_eq!(
            named(q, "The National Aeronautics and Space Administration said"),
            [true]
        );
        assert_eq!(named(q, "The National Space Agency said"), [false]);
        // Every word, not one of them: another bridge's page does not name the Brimomir Bridge.
        let q = "How long is the Brimomir Bridge?";
        assert_eq!(named(q, "The Velvelra Bridge is 3 km long."), [false]);
        assert_eq!(named(q, "Walk over the Brimomir bridge."), [true]);
    }
}
