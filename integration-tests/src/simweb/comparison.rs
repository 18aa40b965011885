//! The comparison family (in [`Corpus::generate_with_families`]): for each topic whose first
//! fact is a measure (a bridge's or a species' length, a mountain's height, a material's melting
//! point), a page titled for the topic that states its value beside the values two other topics
//! of its kind give, each sentence naming its own subject. A conflict check that reads values
//! without their subjects sees three values for one attribute on a page about the question's
//! entity; a report that takes the first number near the attribute's name gives a wrong answer.
//!
//! [`Corpus::generate_with_families`]: super::Corpus::generate_with_families

use super::corpus::PageKind;
use super::render::{Block, Doc};
use super::rng::Rng;
use super::topics::Topic;

/// Kinds whose first fact is a value with a unit.
const MEASURED: &[&str] = &["bridge", "species", "mountain", "material"];

/// The comparison page of each measured topic in `topics`.
pub fn docs(topics: &[Topic], rng: &mut Rng) -> Vec<(PageKind, Doc)> {
    let measured: Vec<&Topic> = (topics.iter())
        .filter(|t| MEASURED.contains(&t.kind))
        .collect();
    measured
        .iter()
        .map(|t| {
            let others: Vec<&&Topic> = (measured.iter())
                .filter(|o| o.kind == t.kind && o.id != t.id)
                .take(2)
                .collect();
            let mut filler = t.filler.clone();
            rng.shuffle(&mut filler);
            let mut blocks = vec![
                Block::P(format!("{} {}", filler[0], t.facts[0])),
                Block::H2("How it compares".into()),
            ];
            // The other subjects' facts as their own answer pages state them: the subject
            // named before the value, as a reader would write it.
            blocks.extend(
                others
                    .iter()
                    .map(|o| Block::P(format!("For comparison: {}", o.facts[0]))),
            );
            blocks.push(Block::P(filler[1..3].join(" ")));
            let doc = Doc {
                title: format!("{} compared with its rivals", t.name),
                blocks,
            };
            (
                PageKind::Comparison {
                    topic: t.id.clone(),
                },
                doc,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::Corpus;
    use super::*;

    #[test]
    fn each_measured_topic_has_a_page_naming_other_subjects_values() {
        let c = Corpus::generate_with_families();
        let pages: Vec<_> = (c.pages().iter())
            .filter(|p| matches!(p.kind, PageKind::Comparison { .. }))
            .collect();
        let measured = (c.topics().iter())
            .filter(|t| MEASURED.contains(&t.kind))
            .count();
        assert!(measured >= 20, "{measured} measured topics");
        assert_eq!(pages.len(), measured);
        for p in pages {
            let PageKind::Comparison { topic } = &p.kind else {
                unreachable!()
            };
            let t = c.topics().iter().find(|t| t.id == *topic).unwrap();
            assert!(p.title.contains(&t.name) && p.text.contains(&t.facts[0]));
            let others = (c.topics().iter())
                .filter(|o| o.id != t.id && p.text.contains(&o.facts[0]))
                .count();
            assert_eq!(others, 2, "{}", p.url);
        }
    }
}
