//! Places a question names in another form than the page that answers it: "Bolivian" where the
//! page says Bolivia, "the Dutch capital" where it says Amsterdam, "Moscow" where it says Москва.
//!
//! The names are CLDR's, in every language trawl detects (`data/places.tsv`, written by
//! `scripts/gen-places` from Babel's copy of CLDR): each territory's names, the names of the
//! languages that name its people ("Dutch", "néerlandais"), and the exemplar cities of its time
//! zones with their names in each language. CLDR has no demonyms; a word that is a territory's
//! name with a demonym's ending ("Bolivi-an", "Kanad-ier", "brasil-eño") stands for the
//! territory (`DEMONYM_ENDINGS`).
//!
//! A territory's forms are its names and its cities' (a page about Amsterdam is about the
//! Dutch); a city's are only its own names (a page about Rotterdam says "Netherlands" without
//! being about Amsterdam).

use std::collections::HashMap;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

const DATA: &str = include_str!("../data/places.tsv");

/// The endings that make a territory's name (whole, or without its last vowel or "y") a word
/// for its people or what is theirs, in the languages with the most pages: English ("Bolivi-an",
/// "Japan-ese", "Iraq-i", "Ital-ian"), French ("bolivi-en", "mexic-ain"), German
/// ("Bolivi-aner", "kanad-isch"), Spanish, Italian and Portuguese ("bolivi-ano",
/// "brasil-eño"). Short on purpose: each ending is a way a word of a question can stand for a
/// territory, and Spanish's feminine "-ana" would make Indiana Indian ("Indi-ana").
const DEMONYM_ENDINGS: &[&str] = &[
    "n", "an", "ian", "ean", "ese", "i", "ien", "ienne", "ain", "aine", "ais", "aise", "ano",
    "eno", "eño", "iano", "aner", "ier", "isch", "ische", "ischen", "ischer", "er",
];

/// The shortest stem of a demonym, in letters: "Peru" and "Iraq" are read, a territory's
/// two-letter code or a three-letter stem is not.
const MIN_DEMONYM_STEM: usize = 4;

/// The forms a text may give a place a question names: all of them found by one automaton.
pub struct Forms {
    names: Vec<&'static str>,
    automaton: OnceLock<AhoCorasick>,
}

/// One place's forms are one value: two are equal when they are the same place's.
impl PartialEq for Forms {
    fn eq(&self, other: &Forms) -> bool {
        std::ptr::eq(self, other)
    }
}

impl std::fmt::Debug for Forms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Forms({} names, first {:?})",
            self.names.len(),
            self.names.first()
        )
    }
}

impl Forms {
    fn new(names: Vec<&'static str>) -> Forms {
        Forms {
            names,
            automaton: OnceLock::new(),
        }
    }

    /// Whether `text` holds one of the forms as words of its own. Case is ignored for ASCII
    /// letters, except in a short or all-capital form ("US" is not "us").
    pub fn in_text(&self, text: &str) -> bool {
        let automaton = self.automaton.get_or_init(|| {
            AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .build(&self.names)
                .expect("place names build an automaton")
        });
        automaton.find_overlapping_iter(text).any(|m| {
            let form = self.names[m.pattern().as_usize()];
            let found = &text[m.start()..m.end()];
            let exact_case = form.chars().count() <= 3 || form.chars().all(|c| !c.is_lowercase());
            (!exact_case || found == form) && stands_alone(text, m.start(), m.end())
        })
    }

    #[cfg(test)]
    fn holds(&self, name: &str) -> bool {
        self.names.contains(&name)
    }
}

/// Whether `text[start..end]` is not part of a longer word. Scripts without case (Chinese,
/// Thai) write names inside runs of letters, so only a cased letter next to a cased letter
/// joins them.
fn stands_alone(text: &str, start: usize, end: usize) -> bool {
    let cased = |c: char| c.is_lowercase() || c.is_uppercase();
    let first = text[start..end].chars().next();
    let last = text[start..end].chars().next_back();
    let joins = |outside: Option<char>, edge: Option<char>| {
        outside.is_some_and(|o| o.is_alphanumeric() && (cased(o) || o.is_ascii_digit()))
            && edge.is_some_and(cased)
    };
    !joins(text[..start].chars().next_back(), first) && !joins(text[end..].chars().next(), last)
}

struct Places {
    territories: Vec<Forms>,
    cities: Vec<Forms>,
    /// A territory's names and its people's languages, lower-cased, to the territory.
    territory_of: HashMap<String, usize>,
    /// A city's names, lower-cased, to the city.
    city_of: HashMap<String, usize>,
    /// A one-word territory name, lower-cased, whole and without its last vowel or "y", to
    /// the territory: the stems of demonyms.
    demonym_stems: HashMap<String, usize>,
}

fn places() -> &'static Places {
    static PLACES: OnceLock<Places> = OnceLock::new();
    PLACES.get_or_init(|| {
        let mut p = Places {
            territories: Vec::new(),
            cities: Vec::new(),
            territory_of: HashMap::new(),
            city_of: HashMap::new(),
            demonym_stems: HashMap::new(),
        };
        for line in DATA
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
        {
            let mut fields = line.split('\t').skip(1);
            let names: Vec<&'static str> = fields.next().unwrap_or("").split('|').collect();
            let cities: Vec<Vec<&'static str>> = (fields.next().unwrap_or("").split(';'))
                .filter(|c| !c.is_empty())
                .map(|c| c.split('|').collect())
                .collect();
            let t = p.territories.len();
            for name in &names {
                let lower = name.to_lowercase();
                p.territory_of.entry(lower.clone()).or_insert(t);
                let one_word = lower.chars().all(char::is_alphabetic);
                if one_word && lower.chars().count() >= MIN_DEMONYM_STEM {
                    let trimmed = lower.trim_end_matches(['a', 'e', 'i', 'o', 'y']);
                    for stem in [lower.as_str(), trimmed] {
                        if stem.chars().count() >= MIN_DEMONYM_STEM {
                            p.demonym_stems.entry(stem.to_owned()).or_insert(t);
                        }
                    }
                }
            }
            for city in &cities {
                let c = p.cities.len();
                for name in city {
                    p.city_of.entry(name.to_lowercase()).or_insert(c);
                }
                p.cities.push(Forms::new(city.clone()));
            }
            let all = names.into_iter().chain(cities.into_iter().flatten());
            p.territories.push(Forms::new(all.collect()));
        }
        p
    })
}

/// The forms of the place `name` names (a question's word or run of words, as written), if it
/// names one: a territory, a language of its people or a demonym of it give every name of the
/// territory and of its cities; a city gives its names in each language.
pub fn forms_of(name: &str) -> Option<&'static Forms> {
    let p = places();
    let lower = name.to_lowercase();
    if let Some(&t) = p.territory_of.get(&lower) {
        return Some(&p.territories[t]);
    }
    if let Some(&c) = p.city_of.get(&lower) {
        return Some(&p.cities[c]);
    }
    demonym_of(&lower).map(|t| &p.territories[t])
}

/// The territory whose name `word` (lower-cased) is with a demonym's ending.
fn demonym_of(word: &str) -> Option<usize> {
    if !word.chars().all(char::is_alphabetic) {
        return None;
    }
    let p = places();
    (DEMONYM_ENDINGS.iter()).find_map(|ending| {
        let stem = word.strip_suffix(ending)?;
        (stem.chars().count() >= MIN_DEMONYM_STEM)
            .then(|| p.demonym_stems.get(stem).copied())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_demonym_or_a_people_s_language_stands_for_its_territory_and_its_cities() {
        // From real pages: q050 asks about "the Bolivian fuel plant", the page says Bolivia;
        // h002 asks about "the Dutch capital", the page says Amsterdam.
        let bolivian = forms_of("Bolivian").expect("a demonym");
        assert!(bolivian.in_text("Clashes at a fuel plant in Bolivia left three dead."));
        assert!(bolivian.in_text("Bolivia's interim government said"));
        assert!(!bolivian.in_text("Clashes at a fuel plant in Peru left three dead."));
        let dutch = forms_of("Dutch").expect("a language of a people");
        assert!(dutch.in_text("Giant spiders were installed on a bridge in Amsterdam."));
        assert!(dutch.in_text("la police des Pays-Bas"));
        assert!(forms_of("French").is_some_and(|f| f.in_text("artists from France")));
        for (demonym, place) in [
            ("Japanese", "Japan"),
            ("Italian", "Italy"),
            ("Mexican", "Mexico"),
            ("Iraqi", "Iraq"),
            ("Canadian", "Canada"),
            ("Australian", "Australia"),
            ("bolivien", "Bolivie"),
            ("brasileño", "Brasil"),
            ("Kanadier", "Kanada"),
        ] {
            let forms = forms_of(demonym).unwrap_or_else(|| panic!("{demonym}"));
            assert!(forms.holds(place), "{demonym} stands for {place}");
        }
    }

    #[test]
    fn a_city_stands_for_itself_in_each_language_not_for_its_country() {
        let moscow = forms_of("Moscow").expect("a city");
        assert!(moscow.in_text("Протесты в Москва"));
        assert!(moscow.in_text("in Moskau"));
        assert!(!moscow.in_text("in Russia"));
        let amsterdam = forms_of("Amsterdam").expect("a city");
        assert!(!amsterdam.in_text("Rotterdam, Netherlands"));
    }

    #[test]
    fn words_that_only_look_like_demonyms_stand_for_nothing() {
        // "India" + "na" is not a demonym's ending; an ordinary word is no place.
        assert!(forms_of("Indiana").is_none());
        assert!(forms_of("Senate").is_none());
        // A language of most people of many territories names the people of the one named
        // after it ("Inggris Raya", Indonesian for the United Kingdom), not its likely one's.
        let english = forms_of("English").expect("a language");
        assert!(english.holds("United Kingdom") && !english.holds("United States"));
    }

    #[test]
    fn a_short_or_all_capital_form_is_matched_in_its_own_case_and_as_a_word() {
        let uk = forms_of("United Kingdom").expect("a territory");
        assert!(uk.in_text("the UK election debate"));
        assert!(!uk.in_text("visit uk.example.com"));
        assert!(!forms_of("Dutch")
            .expect("a language")
            .in_text("Netherlandsche"));
        assert!(!forms_of("Bolivian")
            .expect("a demonym")
            .in_text("Bolivianos"));
        // A script without case names a place inside a run of letters.
        assert!(forms_of("China")
            .expect("a territory")
            .in_text("在中国的销售"));
    }
}
