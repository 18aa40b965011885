//! What a data point's name asks for: the kind of value ("opened" wants a date, "long" a
//! length) and the words that mark a sentence as stating it. Clean reads values by it and
//! synthesize compares them, so both agree on what a sentence about a data point is.
//!
//! English data points are read by their words' shapes. Other languages' questions ask for
//! the values encyclopaedic questions ask for most (a length, a height, a depth, a melting
//! point, a founding year, a population, a weight, an area) in words listed here by language
//! ([`asked_in`]); those words name data points, and each language's words that state such a
//! value mark its sentences ("schmilzt" for "Schmelzpunkt", "fond" for "point de fusion").

use std::cell::RefCell;
use std::collections::HashMap;

use crate::{is_wide, terms, Lang};

/// Words that mark a sentence as stating a data point of a kind the page may never name.
const SYNONYMS: &[(&[&str], &[&str])] = &[
    (
        &["long", "length"],
        // "grows to", "reaches", "measures": with a length unit after them, as clean and the
        // conflict check require, they state a length.
        &[
            "long", "length", "longest", "spans", "span", "grows", "reaches", "measures",
        ],
    ),
    (
        &["tall", "height", "high"],
        &[
            "tall",
            "height",
            "high",
            "rises",
            "elevation",
            "tallest",
            "highest",
            "stands",
            "summit",
            "altitude",
            "above",
        ],
    ),
    (
        &["location", "where", "place"],
        &["located", "found", "lies", "held", "based", "situated"],
    ),
    (&["number", "count"], &["about", "around", "some", "nearly"]),
];

/// People named by a noun that is not an agent noun in -er/-or/-ist.
const PERSON_NOUNS: &[&str] = &[
    "captain",
    "author",
    "architect",
    "chef",
    "pilot",
    "king",
    "queen",
    "president",
    "leader",
    "head",
    "coach",
];

/// A value questions ask for, in one language: what the heuristic analysis names the data
/// point, the words of a question that ask for it, and the words of a sentence that state it.
/// Words are matched by the language's stems, or inside a Chinese or Japanese text.
struct Vocab {
    lang: &'static str,
    kind: Kind,
    label: &'static str,
    /// Words that ask for this value whatever else the question asks.
    asks: &'static [&'static str],
    /// Words that ask for it only when no other value's word does: "hoch" in "Wie hoch ist
    /// der Schmelzpunkt …" asks for the melting point, not a height.
    weak: &'static [&'static str],
    states: &'static [&'static str],
}

/// Not a word list a crate keeps: which words ask for a value and which state it is trawl's
/// reading of questions. English is read by [`kind`]'s shapes and [`SYNONYMS`].
#[rustfmt::skip]
const VOCAB: &[Vocab] = &[
    // German
    Vocab { lang: "de", kind: Kind::Measure, label: "Länge", asks: &["länge"], weak: &["lang"], states: &["lang", "länge", "misst", "erstreckt", "längste"] },
    Vocab { lang: "de", kind: Kind::Measure, label: "Höhe", asks: &["höhe"], weak: &["hoch"], states: &["hoch", "höhe", "erhebt", "gipfel", "meeresspiegel", "höchste"] },
    Vocab { lang: "de", kind: Kind::Measure, label: "Tiefe", asks: &["tiefe"], weak: &["tief"], states: &["tief", "tiefe", "tiefste"] },
    Vocab { lang: "de", kind: Kind::Measure, label: "Schmelzpunkt", asks: &["schmelzpunkt", "schmelztemperatur"], weak: &[], states: &["schmilzt", "schmelzen", "schmelzpunkt"] },
    Vocab { lang: "de", kind: Kind::Date, label: "Gründung", asks: &["gegründet", "gründung", "gründungsjahr"], weak: &[], states: &["gegründet", "gründung"] },
    Vocab { lang: "de", kind: Kind::Quantity, label: "Einwohner", asks: &["einwohner", "einwohnerzahl", "bevölkerung"], weak: &[], states: &["einwohner", "bevölkerung"] },
    Vocab { lang: "de", kind: Kind::Measure, label: "Gewicht", asks: &["gewicht", "wiegt"], weak: &["schwer"], states: &["wiegt", "gewicht", "schwer"] },
    Vocab { lang: "de", kind: Kind::Measure, label: "Fläche", asks: &["fläche"], weak: &["groß"], states: &["fläche", "umfasst"] },
    Vocab { lang: "de", kind: Kind::Person, label: "Architekt", asks: &["entworfen", "entwarf", "architekt", "architektin"], weak: &[], states: &["entworfen", "entwarf", "entwurf", "architekt", "architektin", "geplant", "plante"] },
    Vocab { lang: "de", kind: Kind::Person, label: "Entdecker", asks: &["entdeckt", "entdeckte", "entdecker", "entdeckerin"], weak: &[], states: &["entdeckt", "entdeckte", "entdecker", "entdeckerin", "isoliert", "isolierte"] },
    Vocab { lang: "de", kind: Kind::Place, label: "Lage", asks: &["wo", "lage", "standort"], weak: &[], states: &["liegt", "befindet", "gelegen", "lage"] },
    // French
    Vocab { lang: "fr", kind: Kind::Measure, label: "longueur", asks: &["longueur"], weak: &["long", "longue"], states: &["long", "longue", "longueur", "mesure", "étend"] },
    Vocab { lang: "fr", kind: Kind::Measure, label: "altitude", asks: &["altitude", "hauteur"], weak: &["haut", "haute"], states: &["haut", "haute", "hauteur", "altitude", "culmine", "sommet", "élève"] },
    Vocab { lang: "fr", kind: Kind::Measure, label: "profondeur", asks: &["profondeur"], weak: &["profond"], states: &["profond", "profonde", "profondeur"] },
    Vocab { lang: "fr", kind: Kind::Measure, label: "point de fusion", asks: &["fusion"], weak: &[], states: &["fusion", "fond", "fondre"] },
    Vocab { lang: "fr", kind: Kind::Date, label: "fondation", asks: &["fondée", "fondé", "fondation"], weak: &[], states: &["fondée", "fondé", "fondation"] },
    Vocab { lang: "fr", kind: Kind::Quantity, label: "population", asks: &["population", "habitants"], weak: &[], states: &["population", "habitants"] },
    Vocab { lang: "fr", kind: Kind::Measure, label: "poids", asks: &["poids", "pèse"], weak: &[], states: &["pèse", "poids"] },
    Vocab { lang: "fr", kind: Kind::Measure, label: "superficie", asks: &["superficie"], weak: &[], states: &["superficie", "étend"] },
    Vocab { lang: "fr", kind: Kind::Person, label: "architecte", asks: &["conçu", "conçue", "dessiné", "dessinée", "architecte"], weak: &[], states: &["conçu", "conçue", "dessiné", "dessinée", "architecte", "œuvre"] },
    Vocab { lang: "fr", kind: Kind::Person, label: "découvreur", asks: &["découvert", "découverte", "découvreur"], weak: &[], states: &["découvert", "découverte", "découvreur", "isolé", "isolée"] },
    Vocab { lang: "fr", kind: Kind::Place, label: "lieu", asks: &["où", "emplacement", "situé", "située"], weak: &[], states: &["situé", "située", "trouve", "emplacement"] },
    // Spanish
    Vocab { lang: "es", kind: Kind::Measure, label: "longitud", asks: &["longitud"], weak: &["largo", "mide"], states: &["longitud", "largo", "mide", "extiende"] },
    Vocab { lang: "es", kind: Kind::Measure, label: "altura", asks: &["altura", "altitud"], weak: &["alto"], states: &["altura", "alto", "altitud", "alcanza", "cumbre", "eleva"] },
    Vocab { lang: "es", kind: Kind::Measure, label: "profundidad", asks: &["profundidad"], weak: &["profundo"], states: &["profundidad", "profundo"] },
    Vocab { lang: "es", kind: Kind::Measure, label: "punto de fusión", asks: &["fusión"], weak: &[], states: &["fusión", "funde", "fundir"] },
    Vocab { lang: "es", kind: Kind::Date, label: "fundación", asks: &["fundó", "fundada", "fundado", "fundación"], weak: &[], states: &["fundó", "fundada", "fundado", "fundación"] },
    Vocab { lang: "es", kind: Kind::Quantity, label: "población", asks: &["población", "habitantes"], weak: &[], states: &["población", "habitantes"] },
    Vocab { lang: "es", kind: Kind::Measure, label: "peso", asks: &["peso", "pesa"], weak: &[], states: &["pesa", "peso"] },
    Vocab { lang: "es", kind: Kind::Measure, label: "superficie", asks: &["superficie", "extensión"], weak: &[], states: &["superficie", "extensión", "extiende"] },
    Vocab { lang: "es", kind: Kind::Person, label: "arquitecto", asks: &["diseñó", "diseñado", "diseñada", "arquitecto", "arquitecta"], weak: &[], states: &["diseñó", "diseñado", "diseñada", "arquitecto", "arquitecta", "proyectó", "obra"] },
    Vocab { lang: "es", kind: Kind::Person, label: "descubridor", asks: &["descubrió", "descubierto", "descubierta", "descubridor"], weak: &[], states: &["descubrió", "descubierto", "descubierta", "descubridor", "aisló"] },
    Vocab { lang: "es", kind: Kind::Place, label: "ubicación", asks: &["dónde", "ubicación", "ubicado", "ubicada"], weak: &[], states: &["ubicado", "ubicada", "encuentra", "situado", "situada"] },
    // Russian
    Vocab { lang: "ru", kind: Kind::Measure, label: "длина", asks: &["длина", "протяжённость"], weak: &["длинный"], states: &["длина", "длинный", "протяжённость", "протянулся"] },
    Vocab { lang: "ru", kind: Kind::Measure, label: "высота", asks: &["высота"], weak: &["высокий"], states: &["высота", "высокий", "возвышается", "вершина"] },
    Vocab { lang: "ru", kind: Kind::Measure, label: "глубина", asks: &["глубина"], weak: &["глубокий"], states: &["глубина", "глубокий"] },
    Vocab { lang: "ru", kind: Kind::Measure, label: "температура плавления", asks: &["плавления"], weak: &[], states: &["плавления", "плавится"] },
    Vocab { lang: "ru", kind: Kind::Date, label: "основание", asks: &["основан", "основана", "основано", "основания"], weak: &[], states: &["основан", "основана", "основано", "основания"] },
    Vocab { lang: "ru", kind: Kind::Quantity, label: "население", asks: &["население", "жителей", "численность"], weak: &[], states: &["население", "жителей", "проживает"] },
    Vocab { lang: "ru", kind: Kind::Measure, label: "вес", asks: &["вес", "весит"], weak: &[], states: &["вес", "весит"] },
    Vocab { lang: "ru", kind: Kind::Measure, label: "площадь", asks: &["площадь"], weak: &[], states: &["площадь", "занимает"] },
    Vocab { lang: "ru", kind: Kind::Person, label: "архитектор", asks: &["спроектировал", "спроектировала", "спроектирован", "архитектор", "автор"], weak: &[], states: &["спроектировал", "спроектировала", "спроектирован", "архитектор", "проект", "автор"] },
    Vocab { lang: "ru", kind: Kind::Person, label: "первооткрыватель", asks: &["открыл", "открыла", "первооткрыватель"], weak: &[], states: &["открыл", "открыла", "открыт", "первооткрыватель", "выделил"] },
    Vocab { lang: "ru", kind: Kind::Place, label: "местоположение", asks: &["где", "местоположение", "расположен", "расположена"], weak: &[], states: &["расположен", "расположена", "находится", "стоит"] },
    // Chinese
    Vocab { lang: "zh", kind: Kind::Measure, label: "长度", asks: &["长度", "全长", "多长"], weak: &[], states: &["长"] },
    Vocab { lang: "zh", kind: Kind::Measure, label: "高度", asks: &["高度", "海拔", "多高"], weak: &[], states: &["高", "海拔"] },
    Vocab { lang: "zh", kind: Kind::Measure, label: "深度", asks: &["深度", "多深"], weak: &[], states: &["深"] },
    Vocab { lang: "zh", kind: Kind::Measure, label: "熔点", asks: &["熔点"], weak: &[], states: &["熔点", "熔化"] },
    Vocab { lang: "zh", kind: Kind::Date, label: "建立", asks: &["建立", "成立", "创建", "建于", "建城", "建镇"], weak: &[], states: &["建立", "成立", "创建", "建于", "建城", "建镇"] },
    Vocab { lang: "zh", kind: Kind::Quantity, label: "人口", asks: &["人口"], weak: &[], states: &["人口", "居民"] },
    Vocab { lang: "zh", kind: Kind::Measure, label: "重量", asks: &["重量", "多重"], weak: &[], states: &["重"] },
    Vocab { lang: "zh", kind: Kind::Measure, label: "面积", asks: &["面积"], weak: &[], states: &["面积"] },
    Vocab { lang: "zh", kind: Kind::Person, label: "设计者", asks: &["设计者", "谁设计", "设计师是谁"], weak: &[], states: &["设计"] },
    Vocab { lang: "zh", kind: Kind::Person, label: "发现者", asks: &["发现者", "谁发现"], weak: &[], states: &["发现"] },
    Vocab { lang: "zh", kind: Kind::Place, label: "位置", asks: &["哪里", "哪儿", "什么地方", "位置"], weak: &[], states: &["位于", "坐落"] },
    // Japanese
    Vocab { lang: "ja", kind: Kind::Measure, label: "長さ", asks: &["長さ", "全長"], weak: &[], states: &["長さ", "全長", "長い"] },
    Vocab { lang: "ja", kind: Kind::Measure, label: "標高", asks: &["標高", "高さ"], weak: &[], states: &["標高", "高さ", "高い"] },
    Vocab { lang: "ja", kind: Kind::Measure, label: "深さ", asks: &["深さ"], weak: &[], states: &["深さ", "深い"] },
    Vocab { lang: "ja", kind: Kind::Measure, label: "融点", asks: &["融点"], weak: &[], states: &["融点", "溶け", "融け", "融解"] },
    Vocab { lang: "ja", kind: Kind::Date, label: "創設", asks: &["創設", "設立", "創建", "建設"], weak: &[], states: &["創設", "設立", "創建", "建設"] },
    Vocab { lang: "ja", kind: Kind::Quantity, label: "人口", asks: &["人口"], weak: &[], states: &["人口", "住民"] },
    Vocab { lang: "ja", kind: Kind::Measure, label: "重さ", asks: &["重さ", "重量"], weak: &[], states: &["重さ", "重量"] },
    Vocab { lang: "ja", kind: Kind::Measure, label: "面積", asks: &["面積"], weak: &[], states: &["面積"] },
    Vocab { lang: "ja", kind: Kind::Person, label: "設計者", asks: &["設計者", "誰が設計"], weak: &[], states: &["設計"] },
    Vocab { lang: "ja", kind: Kind::Person, label: "発見者", asks: &["発見者", "誰が発見"], weak: &[], states: &["発見"] },
    Vocab { lang: "ja", kind: Kind::Place, label: "場所", asks: &["どこ", "場所", "所在地"], weak: &[], states: &["位置", "所在"] },
    // Arabic
    Vocab { lang: "ar", kind: Kind::Measure, label: "طول", asks: &["طول"], weak: &[], states: &["طول", "بطول", "يمتد"] },
    Vocab { lang: "ar", kind: Kind::Measure, label: "ارتفاع", asks: &["ارتفاع", "علو"], weak: &[], states: &["ارتفاع", "بارتفاع", "يرتفع", "قمة"] },
    Vocab { lang: "ar", kind: Kind::Measure, label: "عمق", asks: &["عمق"], weak: &[], states: &["عمق", "بعمق"] },
    Vocab { lang: "ar", kind: Kind::Measure, label: "درجة انصهار", asks: &["انصهار"], weak: &[], states: &["انصهار", "ينصهر"] },
    Vocab { lang: "ar", kind: Kind::Date, label: "تأسيس", asks: &["تأسيس", "تأسست", "تأسس", "أسست"], weak: &[], states: &["تأسيس", "تأسست", "تأسس", "أسست"] },
    Vocab { lang: "ar", kind: Kind::Quantity, label: "سكان", asks: &["سكان", "السكان"], weak: &[], states: &["سكان", "السكان", "نسمة"] },
    Vocab { lang: "ar", kind: Kind::Measure, label: "وزن", asks: &["وزن", "يزن"], weak: &[], states: &["وزن", "يزن"] },
    Vocab { lang: "ar", kind: Kind::Measure, label: "مساحة", asks: &["مساحة"], weak: &[], states: &["مساحة"] },
    Vocab { lang: "ar", kind: Kind::Person, label: "المصمم", asks: &["صمم", "المصمم", "مصمم"], weak: &[], states: &["صمم", "صممه", "صممها", "تصميم", "المصمم"] },
    Vocab { lang: "ar", kind: Kind::Person, label: "المكتشف", asks: &["اكتشف", "المكتشف"], weak: &[], states: &["اكتشف", "اكتشفه", "اكتشفها", "اكتشاف", "المكتشف"] },
    Vocab { lang: "ar", kind: Kind::Place, label: "الموقع", asks: &["أين", "موقع"], weak: &[], states: &["يقع", "تقع", "موقع"] },
];

impl Vocab {
    fn lang(&self) -> Lang {
        Lang::from_tag(self.lang).unwrap_or(Lang::UND)
    }

    /// Whether `text` (lower-cased) holds `word` of this row's language: inside it for a
    /// Chinese or Japanese word, else as one of its words by stem.
    fn holds(&self, text: &str, word: &str) -> bool {
        if word.chars().any(is_wide) {
            return text.contains(word);
        }
        let lang = self.lang();
        // Snowball rewrites only a word's end: a word of another first letter is another word,
        // told apart without stemming either (most are).
        let first = word.chars().next();
        let mut stem = None;
        let mut found = false;
        crate::each_word(text, |w| {
            found = w == word
                || (w.chars().next() == first
                    && lang.stem(w) == *stem.get_or_insert_with(|| lang.stem(word)));
            !found
        });
        found
    }

    fn holds_any(&self, text: &str, words: &[&str]) -> bool {
        words.iter().any(|w| self.holds(text, w))
    }
}

/// The data points a question not in English asks for by [`VOCAB`]'s words, named in its
/// language ("Wie hoch ist der Berg Velsor?" → `Höhe`). English questions are read by their
/// shapes (search's `data_points`); this gives nothing for them.
pub fn asked_in(question: &str, lang: Lang) -> Vec<&'static str> {
    let q = question.to_lowercase();
    let rows = || VOCAB.iter().filter(|v| v.lang == lang.code());
    let strong: Vec<&'static str> = rows()
        .filter(|v| v.holds_any(&q, v.asks))
        .map(|v| v.label)
        .collect();
    if !strong.is_empty() {
        return strong;
    }
    rows()
        .filter(|v| v.holds_any(&q, v.weak))
        .map(|v| v.label)
        .collect()
}

/// Whether `word` (lower-cased) of a text in `lang` asks for or states one of [`VOCAB`]'s
/// values.
pub fn names_a_value(word: &str, lang: Lang) -> bool {
    (VOCAB.iter().filter(|v| v.lang == lang.code())).any(|v| {
        v.holds_any(word, v.asks) || v.holds_any(word, v.weak) || v.holds_any(word, v.states)
    })
}

/// The row naming `point`: its label, or a point that is one of the words asking for it
/// (not a weak one: "long" is English's too, read by its rules).
fn vocab_of(point: &str) -> Option<&'static Vocab> {
    // A job's few data points are looked up for each of its pages: each is matched once a
    // thread (some 30 µs of stemming against every row), then remembered.
    thread_local!(static SEEN: RefCell<HashMap<String, Option<usize>>> = RefCell::default());
    let found = SEEN.with(|seen| {
        if let Some(found) = seen.borrow().get(point) {
            return *found;
        }
        let p = point.trim().to_lowercase();
        let found = (VOCAB.iter()).position(|v| {
            v.label.to_lowercase() == p || v.asks.iter().any(|w| *w == p || v.holds(&p, w))
        });
        let mut seen = seen.borrow_mut();
        if seen.len() >= 1024 {
            seen.clear();
        }
        seen.insert(point.to_owned(), found);
        found
    });
    found.map(|i| &VOCAB[i])
}

/// The unit `words` start with (after a number), as (base unit, factor, offset): a value in it
/// is `number * factor + offset` in the base unit.
pub fn unit_of(words: &[&str]) -> Option<(&'static str, f64, f64)> {
    // Any script's punctuation: "مترا،" is "مترا".
    let w = |i: usize| {
        words.get(i).map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '°')
                .to_lowercase()
        })
    };
    let first = w(0)?;
    let second = w(1).unwrap_or_default();
    let degrees = matches!(
        first.as_str(),
        "degrees"
            | "degree"
            | "°"
            | "deg"
            | "grad"
            | "degrés"
            | "degré"
            | "grados"
            | "grado"
            | "градусов"
            | "градуса"
            | "градус"
            | "درجة"
            | "度"
    );
    let scale = if degrees {
        second.as_str()
    } else {
        first.as_str()
    };
    Some(match scale {
        "°c" | "celsius" | "c" if degrees || scale != "c" => ("°C", 1.0, 0.0),
        "цельсия" | "مئوية" | "摄氏度" | "攝氏度" => ("°C", 1.0, 0.0),
        "°f" | "fahrenheit" | "f" if degrees || scale != "f" => {
            ("°C", 5.0 / 9.0, -32.0 * 5.0 / 9.0)
        }
        "k" | "kelvin" => ("°C", 1.0, -273.15),
        "m" | "metre" | "metres" | "meter" | "meters" => ("m", 1.0, 0.0),
        // The metre and the kilometre as other languages write them after a number.
        "metern" | "mètre" | "mètres" | "metro" | "metros" | "米" | "メートル" | "м" | "метр"
        | "метра" | "метров" | "متر" | "مترا" | "أمتار" => ("m", 1.0, 0.0),
        "km" | "kilometre" | "kilometres" | "kilometer" | "kilometers" => ("m", 1000.0, 0.0),
        "kilometern"
        | "kilomètre"
        | "kilomètres"
        | "kilómetro"
        | "kilómetros"
        | "公里"
        | "千米"
        | "キロメートル"
        | "км"
        | "километр"
        | "километра"
        | "километров"
        | "كيلومتر"
        | "كيلومترا"
        | "كم" => ("m", 1000.0, 0.0),
        "cm" | "centimetres" | "centimeters" => ("m", 0.01, 0.0),
        "ft" | "foot" | "feet" => ("m", 0.3048, 0.0),
        "mi" | "mile" | "miles" => ("m", 1609.344, 0.0),
        "kg" | "kilogram" | "kilograms" => ("kg", 1.0, 0.0),
        "g" | "gram" | "grams" => ("kg", 0.001, 0.0),
        "t" | "tonne" | "tonnes" => ("kg", 1000.0, 0.0),
        "lb" | "lbs" | "pound" | "pounds" => ("kg", 0.453_592_37, 0.0),
        _ => return None,
    })
}

/// Units Chinese and Japanese write straight after a number, longest first ("1738米，设有…").
const WIDE_UNITS: &[&str] = &[
    "キロメートル",
    "メートル",
    "摄氏度",
    "攝氏度",
    "公里",
    "千米",
    "米",
    "度",
];

/// The Chinese or Japanese unit `text` starts with ([`WIDE_UNITS`]): the text after a number,
/// with the rest of the sentence on ("米，设有四条车道" → 米).
pub fn wide_unit(text: &str) -> Option<&'static str> {
    WIDE_UNITS.iter().copied().find(|u| text.starts_with(u))
}

/// The kind of value a data point asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Date,
    Percent,
    Money,
    Measure,
    Person,
    Place,
    Count,
    Quantity,
    Generic,
}

/// The kind of value `point` asks for, by its words (a table of examples is in clean's
/// `datapoints`).
pub fn kind(point: &str) -> Kind {
    if let Some(v) = vocab_of(point) {
        return v.kind;
    }
    let p = point.to_lowercase();
    let last = p.split_whitespace().last().unwrap_or("");
    let has = |words: &[&str]| words.iter().any(|w| p.split_whitespace().any(|x| x == *w));
    if has(&[
        "date",
        "year",
        "when",
        "founded",
        "opened",
        "established",
        "born",
        "released",
        "published",
        "day",
    ]) {
        Kind::Date
    } else if has(&["percent", "percentage", "rate", "share", "proportion"]) {
        Kind::Percent
    } else if has(&[
        "price", "cost", "revenue", "salary", "budget", "worth", "fee", "income", "profit",
    ]) {
        Kind::Money
    } else if has(&[
        "long",
        "length",
        "tall",
        "height",
        "high",
        "far",
        "distance",
        "deep",
        "depth",
        "wide",
        "width",
        "big",
        "large",
        "size",
        "weight",
        "heavy",
        "old",
        "age",
        "point",
        "temperature",
        "speed",
        "capacity",
        "area",
        "duration",
    ]) {
        Kind::Measure
    } else if has(&["location", "place", "where", "city", "country", "region"]) {
        Kind::Place
    } else if has(&[
        "number",
        "count",
        "amount",
        "total",
        "population",
        "quantity",
    ]) {
        Kind::Quantity
    } else if p.split_whitespace().count() == 1
        && (PERSON_NOUNS.contains(&last)
            || ["er", "or", "ist"].iter().any(|s| last.ends_with(s))
                && !["other", "order", "color", "colour", "floor"].contains(&last))
    {
        Kind::Person
    } else if p.split_whitespace().count() == 1 && last.len() > 3 && last.ends_with('s') {
        Kind::Count
    } else {
        Kind::Generic
    }
}

/// The words whose presence marks a sentence as talking about `point`: its own terms, words
/// that state such a value ("spans" for a length, "schmilzt" for "Schmelzpunkt"), and the verb
/// of a person noun ("designer" → "designed", "captain" → "captained").
pub fn markers(point: &str) -> Vec<String> {
    if let Some(v) = vocab_of(point) {
        // A Chinese or Japanese name is matched whole: its characters alone say little.
        let mut out = match point.chars().any(is_wide) {
            true => vec![point.trim().to_owned()],
            false => crate::terms_in(point, v.lang()),
        };
        for w in v.asks.iter().chain(v.states) {
            if !out.iter().any(|o| o == w) {
                out.push(w.to_string());
            }
        }
        return out;
    }
    let mut out = terms(point);
    let lower = point.to_lowercase();
    for (names, words) in SYNONYMS {
        if lower.split_whitespace().any(|w| names.contains(&w)) {
            out.extend(words.iter().map(|w| w.to_string()));
        }
    }
    if kind(point) == Kind::Person {
        if PERSON_NOUNS.contains(&lower.as_str()) {
            out.push(format!("{lower}ed"));
        }
        for suffix in ["er", "or", "ist"] {
            if let Some(stem) = lower.strip_suffix(suffix) {
                if stem.len() >= 4 {
                    out.push(format!("{stem}ed"));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lang(code: &str) -> Lang {
        Lang::from_tag(code).unwrap()
    }

    #[test]
    fn questions_in_other_languages_name_their_data_points() {
        let cases: &[(&str, &str, &[&str])] = &[
            ("de", "Wie hoch ist der Berg Velsor?", &["Höhe"]),
            // "hoch" asks for the melting point here, not a height.
            (
                "de",
                "Wie hoch ist der Schmelzpunkt des Metalls Quarvium?",
                &["Schmelzpunkt"],
            ),
            (
                "de",
                "Wann wurde die Stadt Drenmel gegründet?",
                &["Gründung"],
            ),
            ("fr", "Quelle est l'altitude du mont Ultov ?", &["altitude"]),
            (
                "fr",
                "Quel est le point de fusion du Rabel ?",
                &["point de fusion"],
            ),
            ("es", "¿Cuánto mide el puente de Tovmo?", &["longitud"]),
            (
                "es",
                "¿En qué año se fundó la ciudad de Brela?",
                &["fundación"],
            ),
            ("ru", "Какова длина моста Товмо?", &["длина"]),
            ("ru", "Каково население города Брела?", &["население"]),
            ("zh", "拉泽奥大桥有多长？", &["长度"]),
            ("zh", "特伦尔的熔点是多少度？", &["熔点"]),
            ("ja", "カルデン山の標高は何メートルですか？", &["標高"]),
            ("ar", "ما طول جسر كيلفي؟", &["طول"]),
            // Who and where.
            ("de", "Wer hat die Zorvel-Brücke entworfen?", &["Architekt"]),
            ("fr", "Qui a découvert le Rabel ?", &["découvreur"]),
            ("es", "¿Dónde está el monte Ultov?", &["ubicación"]),
            ("ru", "Кто спроектировал мост Товмо?", &["архитектор"]),
            ("ru", "Где находится гора Ультов?", &["местоположение"]),
            ("zh", "拉泽奥大桥是谁设计的？", &["设计者"]),
            ("ar", "من صمم جسر كيلفي؟", &["المصمم"]),
            ("ar", "أين يقع جبل أولتوف؟", &["الموقع"]),
            ("ja", "ウルトフ山はどこにありますか？", &["場所"]),
            // A bridge's design life asks for no designer.
            ("zh", "拉泽奥大桥的设计寿命是多少年？", &[]),
            // "Where" and "when" together ask for both.
            (
                "de",
                "Wo und wann wurde die Stadt Drenmel gegründet?",
                &["Gründung", "Lage"],
            ),
            ("de", "Wer ist der Bürgermeister von Drenmel?", &[]),
        ];
        for (code, question, want) in cases {
            assert_eq!(asked_in(question, lang(code)), *want, "{question}");
        }
        assert!(asked_in("How long is the Velmora Bridge?", Lang::EN).is_empty());
    }

    #[test]
    fn other_languages_data_points_have_a_kind_and_the_words_that_state_them() {
        assert_eq!(kind("Schmelzpunkt"), Kind::Measure);
        assert_eq!(
            kind("Einwohner"),
            Kind::Quantity,
            "not an agent noun in -er"
        );
        assert_eq!(kind("fondation"), Kind::Date);
        assert_eq!(kind("熔点"), Kind::Measure);
        assert_eq!(kind("altitude"), Kind::Measure);
        let m = markers("Schmelzpunkt");
        assert!(m.iter().any(|w| w == "schmilzt"), "{m:?}");
        let m = markers("point de fusion");
        assert!(m.iter().any(|w| w == "fond"), "{m:?}");
        assert!(
            !m.iter().any(|w| w == "de"),
            "a function word marks nothing: {m:?}"
        );
        assert_eq!(markers("熔点")[0], "熔点");
        assert_eq!(kind("Architekt"), Kind::Person);
        assert_eq!(kind("lieu"), Kind::Place);
        assert!(markers("arquitecto").iter().any(|w| w == "diseñado"));
        // English keeps its own reading.
        assert_eq!(kind("melting point"), Kind::Measure);
        assert!(markers("long").iter().any(|w| w == "spans"));
    }
}
