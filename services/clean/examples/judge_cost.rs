//! What the cleanliness judge's heuristic costs on a page of article text.
//! `cargo run --release -p trawl-clean --example judge_cost`

use std::hint::black_box;
use std::time::Instant;

fn main() {
    let paragraph = "The river rose four metres in a single night, and by morning the lower town \
                     had moved uphill with whatever its people could carry on their backs.";
    // About 20 KB of markdown: paragraphs, a few headings, a short list.
    let mut page = String::new();
    for i in 0..100 {
        if i % 10 == 0 {
            page.push_str(&format!("## Section {i}\n\n- one item\n- another item\n\n"));
        }
        page.push_str(&format!("{paragraph} ({i})\n\n"));
    }
    let rounds = 2_000;
    let started = Instant::now();
    for _ in 0..rounds {
        black_box(trawl_clean::judge::heuristic(black_box(&page)));
    }
    let each = started.elapsed().as_secs_f64() / f64::from(rounds);
    println!(
        "judge::heuristic: {:.1} µs a page of {} KB",
        each * 1e6,
        page.len() / 1024
    );
}
