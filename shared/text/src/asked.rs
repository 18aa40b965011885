//! What a question asks for: the words of its question phrase ("which hotel", "how many
//! people", "what is the starting price of") and the kind of value an answer states. A sentence
//! answering "In which hotel was the girl found?" names a hotel; one answering "How many people
//! were injured?" holds a number. Real pages say much about a question's subject besides the
//! answer ("a kidnapped 8-year-old Fort Worth girl was rescued" shares four words of that
//! question and answers nothing): the question phrase is what tells the answer apart.
//!
//! English only for now: other languages' questions give no phrase, and ranking goes on as
//! before.

use crate::{is_digit, terms_in, Lang, MONTHS};

/// The kind of value a question asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// How many, how much, how long, what percentage, what year …
    Number,
    /// Who, which X (a name).
    Name,
    /// When.
    Date,
    /// Where.
    Place,
}

/// What a question asks for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Asked {
    /// The content words of the question phrase, lower-cased: "hotel" of "In which hotel was
    /// …", "starting price" of "What is the starting price of …", "bond" of "How much bond …".
    pub focus: Vec<String>,
    pub kind: Option<Kind>,
}

/// The words that open a question phrase.
const WH_WORDS: &[&str] = &[
    "how", "what", "which", "who", "whom", "whose", "when", "where",
];

/// Auxiliaries that end a question phrase ("how much *did* …", "which singer *did* …").
const AUXILIARIES: &[&str] = &[
    "is", "was", "are", "were", "do", "does", "did", "will", "would", "can", "could", "has",
    "have", "had", "should", "may", "might",
];

/// Words after "how" that ask for a measure.
pub const MEASURES: &[&str] = &[
    "long", "old", "far", "big", "tall", "high", "large", "fast", "deep", "wide", "heavy", "often",
];

/// Nouns of a question phrase that ask for a number.
pub const NUMBER_NOUNS: &[&str] = &[
    "percentage",
    "percent",
    "year",
    "number",
    "amount",
    "level",
    "price",
    "cost",
    "rate",
    "total",
    "age",
    "share",
    "sum",
    "figure",
    "score",
    "size",
    "count",
    "attendance",
    "speed",
    "population",
    "capacity",
    "distance",
    "weight",
    "temperature",
    "duration",
];

/// Nouns of a question phrase that ask for a name.
const NAME_NOUNS: &[&str] = &["name", "names", "surname", "surnames", "nickname"];

/// Nouns of a question phrase that ask for a code: a string a register gives a thing ("under
/// what stock code", "which ticker").
pub const CODE_NOUNS: &[&str] = &["code", "ticker"];

/// Words that end a noun phrase in a question phrase.
const ENDS_PHRASE: &[&str] = &[
    "of", "in", "at", "on", "for", "to", "from", "by", "with", "about", "that", "which", "who",
    "whose", "when", "where", "after", "before", "during",
];

/// What `question` (in `lang`) asks for.
pub fn asked(question: &str, lang: Lang) -> Asked {
    if !lang.is_english_or_und() {
        return Asked::default();
    }
    let words: Vec<String> = (question.split_whitespace())
        .map(|w| {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-');
            let w = w.strip_suffix("'s").or(w.strip_suffix("’s")).unwrap_or(w);
            w.to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    let Some(at) = (words.iter()).position(|w| WH_WORDS.contains(&w.as_str())) else {
        return Asked::default();
    };
    let rest = &words[at + 1..];
    // Two questions in one ("What is its melting point and who first isolated it?"): each has
    // its phrase, and favouring the first's would leave the second's answer out.
    let second = (rest.windows(2))
        .any(|w| w[0] == "and" && (WH_WORDS.contains(&w[1].as_str()) || w[1] == "in"));
    if second {
        return Asked::default();
    }
    let phrase = |from: usize| noun_phrase(rest, from, false, lang);
    let (kind, focus) = match words[at].as_str() {
        "how" => match rest.first().map(String::as_str) {
            Some("many" | "much") => (Some(Kind::Number), phrase(1)),
            Some(m) if MEASURES.contains(&m) => (Some(Kind::Number), vec![m.to_owned()]),
            _ => (None, Vec::new()),
        },
        // "Who is the director for games at …" asks for a person by their role, as "which
        // singer" does: the role's words are the focus. "Who heads …" names none.
        "who" | "whom" | "whose" => match (rest.first(), rest.get(1).map(String::as_str)) {
            (Some(aux), Some(next)) if AUXILIARIES.contains(&aux.as_str()) && is_article(next) => {
                (Some(Kind::Name), phrase(1))
            }
            _ => (Some(Kind::Name), Vec::new()),
        },
        "when" => (Some(Kind::Date), Vec::new()),
        "where" => (Some(Kind::Place), Vec::new()),
        which => return what_or_which(which == "which", rest, lang),
    };
    Asked { focus, kind }
}

fn is_article(word: &str) -> bool {
    matches!(word, "the" | "a" | "an")
}

/// The content words of the phrase of `rest` from `from`: "the starting price of", "hotel
/// was": up to an auxiliary or a word that ends the phrase (`nominal`: or an article opening
/// the next one, as a noun phrase ends: "the hostages the Taliban released").
fn noun_phrase(rest: &[String], from: usize, nominal: bool, lang: Lang) -> Vec<String> {
    let taken: Vec<&str> = (rest.iter().skip(from))
        .skip_while(|w| is_article(w))
        .take_while(|w| {
            let ends = AUXILIARIES.contains(&w.as_str()) || ENDS_PHRASE.contains(&w.as_str());
            !(ends || nominal && is_article(w))
        })
        .map(String::as_str)
        .collect();
    terms_in(&taken.join(" "), lang)
}

/// What a question phrase opened by "what" or "which" (`which`) asks, `rest` its words after
/// that: "what is the starting price of …", "which singer did …", "what year …". "Which" picks
/// one of named things; "what" may ask for anything ("what is the melting point", "what
/// sentence"), so only its nouns of a number, a date or a place say the kind.
fn what_or_which(which: bool, rest: &[String], lang: Lang) -> Asked {
    let aux = (rest.first()).is_some_and(|w| AUXILIARIES.contains(&w.as_str()));
    // "Which two firms": the count says how many answers, not a word they are said in.
    let mut focus = noun_phrase(rest, usize::from(aux), false, lang);
    focus.retain(|w| !is_count(w));
    // "What is the name of the doctors' group …": a name, asked by the noun it names
    // ("group"), which the answer says ("a recently formed group Doctors for Camp Closure")
    // where it seldom says "name".
    if let [noun] = focus.as_slice() {
        let of = (rest.iter().position(|w| w == noun))
            .filter(|&i| rest.get(i + 1).is_some_and(|w| w == "of"));
        if let Some(i) = of.filter(|_| NAME_NOUNS.contains(&noun.as_str())) {
            let named = noun_phrase(rest, i + 2, true, lang);
            return Asked {
                kind: Some(Kind::Name),
                focus: if named.is_empty() { focus } else { named },
            };
        }
    }
    let has = |words: &[&str]| focus.iter().any(|w| words.contains(&w.as_str()));
    let kind = if has(NUMBER_NOUNS) {
        Some(Kind::Number)
    } else if has(CODE_NOUNS) {
        Some(Kind::Name)
    } else if has(&["date", "day", "month"]) {
        Some(Kind::Date)
    } else if has(&["city", "town", "country", "place"]) {
        Some(Kind::Place)
    } else if which {
        Some(Kind::Name)
    } else {
        None
    };
    Asked {
        kind: kind.filter(|_| !focus.is_empty()),
        focus,
    }
}

impl Kind {
    /// Whether `sentence` states a value of this kind that the question (`question_words`, its
    /// words lower-cased) does not already hold: a number, a date, or a name past the
    /// sentence's first word. "On July 25 Trump called Zelensky" holds no answer to "When was
    /// the transcript of the July 25 call released?".
    pub fn stated_in(self, sentence: &str, question_words: &[String]) -> bool {
        let new = |w: &str| !question_words.iter().any(|q| q == w);
        let words = || (sentence.split(|c: char| !c.is_alphanumeric())).map(str::to_lowercase);
        let number = || {
            words()
                .any(|w| (w.chars().any(is_digit) || NUMBER_WORDS.contains(&w.as_str())) && new(&w))
        };
        match self {
            Kind::Number => number(),
            Kind::Date => number() || words().any(|w| MONTHS.contains(&w.as_str()) && new(&w)),
            Kind::Name | Kind::Place => (sentence.split_whitespace().skip(1)).any(|w| {
                let w = w.trim_matches(|c: char| !c.is_alphanumeric());
                w.chars().next().is_some_and(char::is_uppercase)
                    && !question_words.contains(&w.to_lowercase())
            }),
        }
    }
}

/// Whether `word` is a number, in digits or in words.
fn is_count(word: &str) -> bool {
    word.chars().all(|c| is_digit(c) || c == ',') || NUMBER_WORDS.contains(&word)
}

/// Numbers written as words.
const NUMBER_WORDS: &[&str] = &[
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    "hundred", "thousand", "million", "billion", "dozen", "half",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn of(question: &str) -> (Vec<String>, Option<Kind>) {
        let a = asked(question, Lang::EN);
        (a.focus, a.kind)
    }

    #[test]
    fn how_many_names_are_asked_for_is_no_word_of_the_answer() {
        // A real page answers "Wistron and Global Lighting Technologies are said to be among
        // the suppliers of the keyboards": "two" is how many names, not a word to find, and
        // weighed as the question phrase's word it ranked "there are two OLED layers" first.
        let (focus, kind) = of("Which two firms are reportedly among those supplying keyboards?");
        assert_eq!((focus, kind), (vec!["firms".to_string()], Some(Kind::Name)));
        assert_eq!(
            of("Which 3 countries have signed the pact?").0,
            vec!["countries"]
        );
    }

    #[test]
    fn the_name_of_something_is_asked_by_the_noun_it_names() {
        // A real page answers "members of a recently formed group Doctors for Camp Closure".
        let s = |v: &[&str]| v.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert_eq!(
            of("What is the name of the doctors' group that offered free flu shots?"),
            (s(&["doctors", "group"]), Some(Kind::Name))
        );
        assert_eq!(
            of("What are the surnames of the hostages the Taliban released?"),
            (s(&["hostages"]), Some(Kind::Name))
        );
        // A name that is no answer's noun stays what it was.
        assert_eq!(of("What name did they give it?"), (s(&["name"]), None));
    }

    #[test]
    fn a_question_phrase_gives_the_words_and_the_kind_asked() {
        let s = |v: &[&str]| v.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert_eq!(
            of("In which hotel was the kidnapped Fort Worth girl found?"),
            (s(&["hotel"]), Some(Kind::Name))
        );
        assert_eq!(
            of("How many people were injured in the clashes?"),
            (s(&["people"]), Some(Kind::Number))
        );
        assert_eq!(
            of("How much did WeWork pay to acquire Meetup?"),
            (s(&[]), Some(Kind::Number))
        );
        assert_eq!(
            of("What is the starting price of the Mustang Mach-E?"),
            (s(&["starting", "price"]), Some(Kind::Number))
        );
        assert_eq!(
            of("In what year was Patrick Carlineo convicted?").1,
            Some(Kind::Number)
        );
        assert_eq!(
            of("How long did the man take steroids?"),
            (s(&["long"]), Some(Kind::Number))
        );
        assert_eq!(of("Who heads the team?"), (s(&[]), Some(Kind::Name)));
        // h015: a person asked by their role.
        assert_eq!(
            of("Who is the director for games at the tech giant that bought CloudSimple?"),
            (s(&["director"]), Some(Kind::Name))
        );
        assert_eq!(
            of("Who is NASA's deputy associate administrator?"),
            (s(&[]), Some(Kind::Name))
        );
        // A measure named by its noun is a number too.
        assert_eq!(
            of("What was the attendance at Staples Center when the Lakers beat the Thunder?"),
            (s(&["attendance"]), Some(Kind::Number))
        );
        // "What" may ask for a measure as well as a name.
        assert_eq!(
            of("What is the melting point of Zorblium?"),
            (s(&["melting", "point"]), None)
        );
        assert_eq!(of("When was the transcript released?").1, Some(Kind::Date));
        assert_eq!(of("Pourquoi?"), (s(&[]), None));
        assert_eq!(
            of("How long is the Brimomir Bridge and when did it open?"),
            (s(&[]), None)
        );
    }

    #[test]
    fn a_sentence_states_a_value_of_the_kind() {
        let q: Vec<String> = ["fort", "worth", "girl"].map(String::from).to_vec();
        assert!(Kind::Name.stated_in(
            "He took the child to Forest Hill's WoodSpring Suites hotel.",
            &q
        ));
        assert!(!Kind::Name.stated_in("A kidnapped Fort Worth girl was rescued by police.", &q));
        assert!(Kind::Number.stated_in("Thirty people were injured.", &q));
        assert!(Kind::Number.stated_in("It cost $449,000.", &q));
        assert!(!Kind::Number.stated_in("Many people were injured.", &q));
        assert!(Kind::Date.stated_in("It was released on September 25.", &q));
        // The question's own values are no answer.
        let q: Vec<String> = ["transcript", "july", "25", "call"]
            .map(String::from)
            .to_vec();
        assert!(!Kind::Date.stated_in("Trump's July 25 call with Zelensky was heard.", &q));
        assert!(Kind::Date.stated_in("The transcript was released on September 25.", &q));
        assert!(Kind::Number.stated_in("It closed at 27,934.", &["102".into(), "2".into()]));
    }
}
