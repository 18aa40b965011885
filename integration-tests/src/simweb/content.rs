//! Article bodies: answer pages (state a topic's facts), distractors (mention a topic in
//! passing) and generic filler pages (unrelated subjects, so search has noise to rank).

use super::render::{Block, Doc};
use super::rng::Rng;
use super::topics::Topic;

const SUBJECTS: &[&str] = &[
    "winter gardening",
    "sourdough baking",
    "commuter cycling",
    "home coffee roasting",
    "birdwatching",
    "repairing old radios",
    "trail running",
    "budget travel",
    "houseplant care",
    "film photography",
    "chess openings",
    "urban sketching",
    "beekeeping",
    "sea kayaking",
    "knitting",
    "backyard astronomy",
    "composting",
    "woodworking",
    "learning languages",
    "board game design",
    "fermenting vegetables",
    "restoring furniture",
    "city walking tours",
    "rock climbing",
    "vinyl record collecting",
];

const TITLE_TEMPLATES: &[&str] = &[
    "A beginner's guide to {S}",
    "Seven things I learned about {S}",
    "Why {S} is worth your weekend",
    "Notes on {S}",
    "Common mistakes in {S}",
    "What nobody tells you about {S}",
];

const GENERIC_SENTENCES: &[&str] = &[
    "Getting started with {S} takes less equipment than most people expect.",
    "The first few attempts at {S} rarely go to plan, and that is fine.",
    "Experienced hands say the secret to {S} is patience rather than talent.",
    "A small notebook helps you keep track of what works in {S}.",
    "Local clubs are the fastest way to meet other people interested in {S}.",
    "Weather, budget and spare time all shape how people approach {S}.",
    "Online forums about {S} are full of strong and contradictory opinions.",
    "It pays to borrow gear before buying anything expensive for {S}.",
    "Many people drift away from {S} and come back to it years later.",
    "Safety advice for {S} is boring to read but worth following.",
    "The best resources on {S} are often old books from second-hand shops.",
    "Seasonal changes make {S} feel different every few months.",
];

pub fn generic_subject(rng: &mut Rng) -> &'static str {
    rng.pick(SUBJECTS)
}

fn generic_paragraph(rng: &mut Rng, subject: &str, sentences: usize) -> String {
    let mut out = Vec::new();
    for _ in 0..sentences {
        out.push(rng.pick(GENERIC_SENTENCES).replace("{S}", subject));
    }
    out.join(" ")
}

/// An unrelated article about an everyday subject.
pub fn generic_doc(rng: &mut Rng, subject: &str) -> Doc {
    let title = rng.pick(TITLE_TEMPLATES).replace("{S}", subject);
    let mut blocks = Vec::new();
    let paras = rng.range(4, 8);
    for i in 0..paras {
        if i == 2 {
            blocks.push(Block::H2("Getting the basics right".into()));
        }
        let n = rng.range(3, 5) as usize;
        blocks.push(Block::P(generic_paragraph(rng, subject, n)));
        if i == 3 && rng.chance(50) {
            blocks.push(Block::Ul(vec![
                format!("Start small with {subject}."),
                "Keep notes.".into(),
                "Ask for help early.".into(),
            ]));
        }
    }
    Doc { title, blocks }
}

/// A generic article that names `topic` once, in passing, with none of its facts.
pub fn distractor_doc(rng: &mut Rng, subject: &str, topic: &Topic) -> Doc {
    let mut doc = generic_doc(rng, subject);
    let mention = Block::P(format!(
        "A reader wrote in to ask whether this post has anything to do with {} (it does not), \
         and we will leave that for another day. Back to {subject}.",
        topic.name
    ));
    let at = 1.min(doc.blocks.len());
    doc.blocks.insert(at, mention);
    doc
}

/// Answer page number `variant` (0..3) for `topic`. `long` pads it past 20 KB with
/// background paragraphs so size limits and chunking get exercised.
pub fn answer_doc(rng: &mut Rng, topic: &Topic, variant: usize, long: bool) -> Doc {
    let mut filler = topic.filler.clone();
    rng.shuffle(&mut filler);
    let mut fill = filler.iter().cycle();
    let mut next_fill = || fill.next().cloned().unwrap_or_default();

    let mut order: Vec<usize> = (0..topic.facts.len()).collect();
    rng.shuffle(&mut order);
    let facts: Vec<String> = order
        .iter()
        .map(|&i| {
            let stated = &topic.variants[i][variant];
            if i == 0 && variant == 2 && topic.disagrees() {
                super::topics::shift_first_number(stated)
            } else {
                stated.clone()
            }
        })
        .collect();

    let mut blocks = Vec::new();
    blocks.push(Block::P(format!(
        "{} {} {}",
        next_fill(),
        facts[0],
        next_fill()
    )));
    blocks.push(Block::P(format!("{} {}", facts[1], next_fill())));
    match variant {
        1 => blocks.push(Block::Table(
            topic
                .facts
                .iter()
                .enumerate()
                .map(|(i, f)| (format!("Fact {}", i + 1), f.clone()))
                .collect(),
        )),
        2 => blocks.push(Block::Ul(topic.filler.iter().take(3).cloned().collect())),
        _ => {}
    }
    if let Some(code) = &topic.code {
        if variant != 1 {
            blocks.push(Block::P("A typical session looks like this:".into()));
            blocks.push(Block::Code(code.clone()));
        }
    }
    blocks.push(Block::H2("Background".into()));
    blocks.push(Block::P(format!(
        "{} {} {}",
        next_fill(),
        next_fill(),
        facts[2]
    )));
    blocks.push(Block::P(format!("{} {}", next_fill(), next_fill())));
    if long {
        blocks.push(Block::H2("A longer look".into()));
        // Long articles restate the facts as they go, as long-form pieces do; otherwise
        // padding would bury the page in any length-normalised ranking.
        for i in 0..60 {
            let subject = generic_subject(rng);
            let fact = &topic.variants[i % topic.variants.len()][(i / 3) % 3];
            let p = format!(
                "{} {fact} {}",
                next_fill(),
                generic_paragraph(rng, subject, 2)
            );
            blocks.push(Block::P(p));
        }
    }
    Doc {
        title: topic.titles[variant].clone(),
        blocks,
    }
}
