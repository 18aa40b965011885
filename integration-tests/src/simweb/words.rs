//! Word lists and made-up-name generation. Every invented name is checked against a
//! set of names already handed out, so each topic owns tokens no other page uses; that is
//! what lets tests check "did the report cite the right page" by looking for a word.

use std::collections::BTreeSet;

use super::rng::Rng;

pub const HOST_FIRST: &[&str] = &[
    "daily", "quarry", "amber", "copper", "silent", "northern", "paper", "lantern", "velvet",
    "harbor", "meadow", "granite", "cobalt", "hollow", "signal",
];

pub const HOST_SECOND: &[&str] = &[
    "orbit",
    "notes",
    "gazette",
    "ledger",
    "review",
    "journal",
    "dispatch",
    "digest",
    "chronicle",
    "almanac",
    "courier",
    "bulletin",
    "observer",
    "wire",
    "post",
];

/// Syllables for invented names; consonant-vowel shapes keep them pronounceable.
const SYLLABLES: &[&str] = &[
    "zor", "vel", "mo", "ra", "quil", "thar", "bri", "nex", "ko", "lu", "sa", "dren", "ti", "vo",
    "pha", "gri", "mel", "osk", "ya", "wen", "dar", "fi", "zu", "kel", "mir", "tov", "ash", "ne",
    "bel", "cru", "ix", "pav", "sor", "ul", "gan", "rhe",
];

const FIRST_NAMES: &[&str] = &[
    "Anika", "Tomas", "Priya", "Oskar", "Mirela", "Jonah", "Leilani", "Ruben", "Sigrid", "Kofi",
    "Ines", "Dmitri", "Hana", "Emeka", "Liesel", "Mateo", "Noor", "Bastian", "Yuki", "Clara",
];

pub const MONTHS: &[&str] = &[
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Hands out invented words that are unique across the whole corpus.
#[derive(Debug, Default)]
pub struct Namer {
    used: BTreeSet<String>,
}

impl Namer {
    /// A capitalised invented word of 2–3 syllables, never returned twice.
    pub fn word(&mut self, rng: &mut Rng) -> String {
        loop {
            let n = if rng.chance(60) { 2 } else { 3 };
            let mut w = String::new();
            for _ in 0..n {
                w.push_str(rng.pick(SYLLABLES));
            }
            if w.len() < 5 || w.len() > 10 {
                continue;
            }
            let w = capitalise(&w);
            if self.used.insert(w.to_lowercase()) {
                return w;
            }
        }
    }

    /// An invented word with a fixed suffix ("Zorbium", "Quillfish"); the whole word is
    /// what must be unique, since that is the token search and fact checks see.
    pub fn word_with_suffix(&mut self, rng: &mut Rng, suffix: &str) -> String {
        loop {
            let base = self.word(rng);
            let w = format!("{base}{suffix}");
            if self.used.insert(w.to_lowercase()) {
                return w;
            }
        }
    }

    /// A real first name plus an invented surname, e.g. "Anika Velmor".
    pub fn person(&mut self, rng: &mut Rng) -> String {
        let first = rng.pick(FIRST_NAMES);
        let last = self.word(rng);
        format!("{first} {last}")
    }
}

pub fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// "1,284" style thousands separators: facts are checked by their numbers, so the same
/// formatting must be used everywhere a number appears.
pub fn thousands(n: u64) -> String {
    let digits: Vec<char> = n.to_string().chars().rev().collect();
    let groups: Vec<String> = digits.chunks(3).map(|g| g.iter().rev().collect()).collect();
    groups.into_iter().rev().collect::<Vec<_>>().join(",")
}

/// URL slug from a title: lowercase ASCII words joined by '-'.
pub fn slug(title: &str) -> String {
    let mut out = String::new();
    for word in title
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&word.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting_helpers() {
        assert_eq!(thousands(1284), "1,284");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(
            slug("Zorbium: melting point & history"),
            "zorbium-melting-point-history"
        );
    }

    #[test]
    fn names_are_unique() {
        let mut namer = Namer::default();
        let mut rng = Rng::new(3);
        let mut seen = BTreeSet::new();
        for _ in 0..300 {
            assert!(seen.insert(namer.word(&mut rng)));
        }
    }
}
