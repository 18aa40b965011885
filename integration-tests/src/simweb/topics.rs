//! Fictional topics: each is an invented entity with a few hard facts (names, years,
//! numbers) that only its answer pages state. Wording varies per answer page so tests
//! cannot pass by matching one fixed sentence, but every variant keeps the distinctive
//! tokens (entity name, numbers, surnames) that fact checks look for.

use super::rng::Rng;
use super::words::{capitalise, thousands, Namer, MONTHS};

#[derive(Debug, Clone, PartialEq)]
pub struct Topic {
    /// URL-safe identifier, e.g. "zorbium".
    pub id: String,
    pub kind: &'static str,
    /// Title form, e.g. "Velmora Bridge".
    pub name: String,
    /// The invented token unique to this topic, e.g. "Velmora".
    pub key: String,
    /// Canonical fact sentences.
    pub facts: Vec<String>,
    /// For each fact, the wording used on answer page 0, 1 and 2.
    pub variants: Vec<[String; 3]>,
    pub question: String,
    pub titles: [String; 3],
    /// Sentences about the topic that carry no facts.
    pub filler: Vec<String>,
    /// A code sample for technical topics, rendered as `<pre><code>`.
    pub code: Option<String>,
}

pub const KINDS: usize = 8;

/// Builds topic number `i`; the kind rotates so every kind is well represented.
impl Topic {
    /// About one topic in five has answer pages that disagree on its first fact's number.
    pub fn disagrees(&self) -> bool {
        self.id.bytes().map(u32::from).sum::<u32>() % 5 == 0
    }
}

/// `s` with its first number raised by 13 ("1,284 degrees" → "1297 degrees"): the wrong value
/// a disagreeing page states.
pub fn shift_first_number(s: &str) -> String {
    let bytes: Vec<char> = s.chars().collect();
    let Some(start) = bytes.iter().position(char::is_ascii_digit) else {
        return s.to_owned();
    };
    let mut end = start;
    while end < bytes.len()
        && (bytes[end].is_ascii_digit()
            || (bytes[end] == ',' && bytes.get(end + 1).is_some_and(char::is_ascii_digit)))
    {
        end += 1;
    }
    let digits: String = bytes[start..end]
        .iter()
        .filter(|c| c.is_ascii_digit())
        .collect();
    let value: u64 = digits.parse().unwrap_or(0) + 13;
    let head: String = bytes[..start].iter().collect();
    let tail: String = bytes[end..].iter().collect();
    format!("{head}{value}{tail}")
}

pub fn make_topic(i: usize, rng: &mut Rng, namer: &mut Namer) -> Topic {
    let w = namer.word(rng);
    let p = namer.person(rng);
    let y = rng.range(1850, 2015);
    match i % KINDS {
        0 => material(rng, namer, &p, y),
        1 => {
            let river = namer.word(rng);
            let len = thousands(rng.range(300, 4200));
            let f = [
                format!("The {w} Bridge spans {len} metres across the {river} River."),
                format!("The {w} Bridge opened in {y}."),
                format!("The {w} Bridge was designed by engineer {p}."),
            ];
            let v = vec![
                [f[0].clone(), format!("Crossing the {river} River, the {w} Bridge is {len} metres long from end to end."), format!("At {len} metres, the {w} Bridge is the longest crossing over the {river} River.")],
                [f[1].clone(), format!("Traffic first rolled across the {w} Bridge when it opened in {y}."), format!("After years of delays the {w} Bridge finally opened in {y}.")],
                [f[2].clone(), format!("The engineer behind the {w} Bridge was {p}, who drew the first sketches on a napkin."), format!("{p}, the engineer who designed the {w} Bridge, insisted on a single slender pylon.")],
            ];
            finish(
                1,
                "bridge",
                format!("the {w} Bridge"),
                format!("{w} Bridge"),
                w.clone(),
                f,
                v,
                format!("How long is the {w} Bridge and when did it open?"),
                None,
                rng,
            )
        }
        2 => {
            let org = format!("{} Labs", namer.word(rng));
            let port = rng.range(1100, 9800);
            let bytes = thousands(rng.range(2, 64) * 1024);
            let f = [
                format!("The {w} protocol uses port {port}."),
                format!("The {w} protocol was designed by {p} at {org} in {y}."),
                format!("{w} protocol messages are limited to {bytes} bytes."),
            ];
            let v = vec![
                [
                    f[0].clone(),
                    format!("By default the {w} protocol listens on port {port}."),
                    format!("Firewalls must open port {port} for the {w} protocol to work."),
                ],
                [
                    f[1].clone(),
                    format!("{p} designed the {w} protocol while working at {org} in {y}."),
                    format!("In {y}, {p} of {org} published the design of the {w} protocol."),
                ],
                [
                    f[2].clone(),
                    format!("A single {w} protocol message may not exceed {bytes} bytes."),
                    format!("The {w} protocol caps every message at {bytes} bytes."),
                ],
            ];
            let code = format!(
                "$ {} connect --host relay.example --port {port}\nconnected: {w}/1 handshake ok",
                w.to_lowercase()
            );
            finish(
                2,
                "protocol",
                format!("the {w} protocol"),
                format!("{w} protocol"),
                w.clone(),
                f,
                v,
                format!("Which port does the {w} protocol use and who designed it?"),
                Some(code),
                rng,
            )
        }
        3 => {
            let fish = namer.word_with_suffix(rng, "fish");
            let lake = namer.word(rng);
            let cm = rng.range(8, 140);
            let f = [
                format!("The {fish} grows to an average length of {cm} centimetres."),
                format!("The {fish} is found only in Lake {lake}."),
                format!("The {fish} was first described by {p} in {y}."),
            ];
            let v = vec![
                [
                    f[0].clone(),
                    format!("An adult {fish} averages {cm} centimetres in length."),
                    format!("Fully grown, the {fish} reaches about {cm} centimetres on average."),
                ],
                [
                    f[1].clone(),
                    format!("The only known home of the {fish} is Lake {lake}."),
                    format!("Nowhere except Lake {lake} has the {fish} ever been recorded."),
                ],
                [
                    f[2].clone(),
                    format!("{p} gave the first scientific description of the {fish} in {y}."),
                    format!(
                        "The {fish} entered the literature in {y}, when {p} first described it."
                    ),
                ],
            ];
            let q = format!("How long does the {fish} grow and where is it found?");
            finish(
                3,
                "species",
                format!("the {fish}"),
                fish.clone(),
                fish,
                f,
                v,
                q,
                None,
                rng,
            )
        }
        4 => {
            let town = namer.word(rng);
            let month = rng.pick(MONTHS);
            let visitors = thousands(rng.range(12, 900) * 1000);
            let f = [
                format!("The {w} Festival is held every {month} in the town of {town}."),
                format!("The {w} Festival was founded in {y}."),
                format!("The {w} Festival attracts about {visitors} visitors each year."),
            ];
            let v = vec![
                [f[0].clone(), format!("Every {month}, the town of {town} hosts the {w} Festival."), format!("The {w} Festival takes over {town} each {month}.")],
                [f[1].clone(), format!("The first {w} Festival took place in {y}."), format!("Since its founding in {y}, the {w} Festival has never been cancelled.")],
                [f[2].clone(), format!("Roughly {visitors} visitors come to the {w} Festival every year."), format!("With about {visitors} visitors a year, the {w} Festival fills every hotel.")],
            ];
            finish(4, "festival", format!("the {w} Festival"), format!("{w} Festival"), w.clone(), f, v, format!("When and where is the {w} Festival held, and how many visitors does it attract?"), None, rng)
        }
        5 => {
            let len = rng.range(40, 160);
            let f = [
                format!("The research vessel {w} was launched in {y}."),
                format!("The research vessel {w} is {len} metres long."),
                format!("The research vessel {w} was captained by {p} on its first expedition."),
            ];
            let v = vec![
                [f[0].clone(), format!("The research vessel {w} slid down the slipway and was launched in {y}."), format!("Launched in {y}, the research vessel {w} spent its first winter in dry dock.")],
                [f[1].clone(), format!("From bow to stern the research vessel {w} measures {len} metres."), format!("At {len} metres long, the research vessel {w} is small for an ocean ship.")],
                [f[2].clone(), format!("{p} captained the research vessel {w} on its first expedition."), format!("On the first expedition of the research vessel {w}, the captain was {p}.")],
            ];
            finish(
                5,
                "ship",
                format!("the research vessel {w}"),
                format!("Research vessel {w}"),
                w.clone(),
                f,
                v,
                format!("When was the research vessel {w} launched and who captained it?"),
                None,
                rng,
            )
        }
        6 => {
            let range = namer.word(rng);
            let h = thousands(rng.range(1200, 8400));
            let f = [
                format!("Mount {w} rises {h} metres above sea level."),
                format!("Mount {w} was first climbed by {p} in {y}."),
                format!("Mount {w} lies in the {range} Range."),
            ];
            let v = vec![
                [
                    f[0].clone(),
                    format!("The summit of Mount {w} stands {h} metres above sea level."),
                    format!("At {h} metres above sea level, Mount {w} dominates the skyline."),
                ],
                [
                    f[1].clone(),
                    format!(
                        "{p} made the first ascent of Mount {w} and was first to climb it in {y}."
                    ),
                    format!("Nobody had climbed Mount {w} until {p} reached the top in {y}."),
                ],
                [
                    f[2].clone(),
                    format!("Mount {w} is part of the {range} Range."),
                    format!("The {range} Range is home to Mount {w}."),
                ],
            ];
            finish(
                6,
                "mountain",
                format!("Mount {w}"),
                format!("Mount {w}"),
                w.clone(),
                f,
                v,
                format!("How tall is Mount {w} and who first climbed it?"),
                None,
                rng,
            )
        }
        _ => {
            let (a, b) = (rng.range(1, 9), rng.range(0, 30));
            let target = rng
                .pick(&[
                    "WebAssembly",
                    "the JVM",
                    "native ARM code",
                    "C",
                    "JavaScript",
                ])
                .to_string();
            let f = [
                format!("The {w} programming language was created by {p} in {y}."),
                format!("The latest release of the {w} programming language is version {a}.{b}."),
                format!("The {w} programming language compiles to {target}."),
            ];
            let v = vec![
                [f[0].clone(), format!("{p} created the {w} programming language in {y}."), format!("In {y}, {p} released the first version of the {w} programming language that {p} had created.")],
                [f[1].clone(), format!("Version {a}.{b} is the latest release of the {w} programming language."), format!("The {w} programming language reached version {a}.{b} in its latest release.")],
                [f[2].clone(), format!("Programs in the {w} programming language compile to {target}."), format!("The {w} compiler targets {target}.")],
            ];
            let code = format!(
                "fn main() {{\n    print(\"hello from {w}\")\n}}\n// {} build --release",
                w.to_lowercase()
            );
            finish(
                7,
                "language",
                format!("the {w} programming language"),
                format!("{w} programming language"),
                w.clone(),
                f,
                v,
                format!("Who created the {w} programming language and in what year?"),
                Some(code),
                rng,
            )
        }
    }
}

fn material(rng: &mut Rng, namer: &mut Namer, p: &str, y: u64) -> Topic {
    let m = namer.word_with_suffix(rng, "ium");
    let t = thousands(rng.range(300, 3400));
    let use_ = rng
        .pick(&[
            "deep-sea cable sheathing",
            "satellite mirror coatings",
            "high-voltage insulators",
            "violin strings",
            "turbine blades",
            "lighthouse lenses",
        ])
        .to_string();
    let f = [
        format!("{m} melts at {t} degrees Celsius."),
        format!("{m} was first isolated by Dr. {p} in {y}."),
        format!("{m} is used mainly in {use_}."),
    ];
    let v = vec![
        [f[0].clone(), format!("The melting point of {m} is {t} degrees Celsius, far higher than most alloys."), format!("Heated to {t} degrees Celsius, {m} finally melts; that melting point surprised early chemists.")],
        [f[1].clone(), format!("Dr. {p} first isolated {m} in {y}."), format!("It was in {y} that Dr. {p} first isolated a pure sample of {m}.")],
        [f[2].clone(), format!("Today most {m} ends up in {use_}."), format!("The main use of {m} is in {use_}.")],
    ];
    finish(
        0,
        "material",
        m.clone(),
        m.clone(),
        m.clone(),
        f,
        v,
        format!("What is the melting point of {m} and who first isolated it?"),
        None,
        rng,
    )
}

#[allow(clippy::too_many_arguments)]
fn finish(
    kind_ix: usize,
    kind: &'static str,
    the_name: String,
    name: String,
    key: String,
    facts: [String; 3],
    variants: Vec<[String; 3]>,
    question: String,
    code: Option<String>,
    rng: &mut Rng,
) -> Topic {
    let titles = [
        format!("{name}: the essential facts"),
        format!("Everything you wanted to know about {the_name}"),
        format!("A short history of {name}"),
    ];
    let mut filler = Vec::new();
    let pool = filler_pool(kind_ix);
    for tpl in pool.iter().chain(GENERIC_FILLER) {
        if rng.chance(80) {
            filler.push(capitalise(&tpl.replace("{N}", &the_name)));
        }
    }
    Topic {
        id: super::words::slug(&key),
        kind,
        name,
        key,
        facts: facts.to_vec(),
        variants,
        question,
        titles,
        filler,
        code,
    }
}

const GENERIC_FILLER: &[&str] = &[
    "Few subjects have attracted as much quiet enthusiasm as {N}.",
    "Newcomers are often surprised by how much there is to say about {N}.",
    "Local archives hold a surprising number of letters that mention {N}.",
    "Popular accounts of {N} tend to repeat the same handful of anecdotes.",
    "Enthusiasts maintain detailed notes about {N} and share them freely.",
    "The story of {N} is easier to follow once the basic facts are clear.",
];

fn filler_pool(kind: usize) -> &'static [&'static str] {
    match kind {
        0 => &[
            "Freshly cut samples of {N} have a faint bluish sheen.",
            "Laboratories still argue about the best way to store {N}.",
            "Several museums display samples of {N} behind thick glass.",
        ],
        1 => &[
            "Commuters describe {N} as the most photographed structure in the region.",
            "Painting {N} is a job that never really ends.",
            "On foggy mornings {N} seems to vanish halfway across.",
        ],
        2 => &[
            "Implementations of {N} exist for most operating systems.",
            "Network engineers praise {N} for its simple handshake.",
            "Debugging {N} is easy because its frames are human readable.",
        ],
        3 => &[
            "Anglers rarely catch {N} because it feeds at night.",
            "The {N} has striking silver fins that flash in shallow water.",
            "Conservation groups monitor {N} population every spring.",
        ],
        4 => &[
            "Street musicians travel for weeks to play at {N}.",
            "Food stalls at {N} are famous for their smoked pastries.",
            "Tickets for {N} usually sell out within days.",
        ],
        5 => &[
            "Scientists aboard {N} have mapped large stretches of seabed.",
            "The crew of {N} keep a famously detailed logbook.",
            "Visitors can tour {N} when it is in port.",
        ],
        6 => &[
            "Snow covers the upper slopes of {N} for most of the year.",
            "Hikers are warned that the weather on {N} changes quickly.",
            "Photographers gather at dawn to capture {N} in pink light.",
        ],
        _ => &[
            "Fans of {N} praise its clear error messages.",
            "The {N} has a small but friendly community.",
            "Tutorials for {N} usually start with a tiny web server.",
        ],
    }
}
