//! What language detection costs on a page: `Lang::detect` reads at most the first 512 bytes. Then
//! what reading a language's number signs from CLDR costs (`Lang::numerals`, once a page with
//! data points in clean, once a job in synthesize).
//! `cargo run --release -p trawl-text --example lang_cost`

use std::hint::black_box;
use std::time::Instant;

use trawl_text::Lang;

fn main() {
    let pages = [
        (
            "en",
            "The bridge spans the river in three arches and carries both road and rail traffic. ",
        ),
        (
            "de",
            "Die Brücke überspannt den Fluss in drei Bögen und trägt Straßen- und Bahnverkehr. ",
        ),
        (
            "ru",
            "Мост пересекает реку тремя арками и несёт автомобильное и железнодорожное движение. ",
        ),
        ("zh", "这座桥以三个拱跨越河流，同时承载公路和铁路交通。"),
    ];
    println!(
        "{:<4}{:>10}{:>14}{:>12}",
        "lang", "bytes", "µs / page", "ns / byte"
    );
    for (want, sentence) in pages {
        let page = sentence.repeat(8192 / sentence.len() + 1);
        assert_eq!(Lang::detect(&page).code(), want);
        let rounds = 2_000;
        let started = Instant::now();
        for _ in 0..rounds {
            black_box(Lang::detect(black_box(&page)));
        }
        let per_page = started.elapsed().as_secs_f64() / f64::from(rounds);
        let read = page.len().min(512);
        println!(
            "{want:<4}{:>10}{:>14.1}{:>12.1}",
            page.len(),
            per_page * 1e6,
            per_page * 1e9 / read as f64
        );
    }
    let rounds = 20_000;
    let started = Instant::now();
    for code in ["de", "fr", "ru", "zh"].iter().cycle().take(rounds) {
        black_box(Lang::from_tag(black_box(code)).unwrap().numerals());
    }
    let each = started.elapsed().as_secs_f64() / rounds as f64;
    println!("Lang::numerals: {:.1} µs", each * 1e6);
    // What a data point's kind and markers cost (clean asks once a page for each).
    let started = Instant::now();
    for point in ["long", "melting point", "Schmelzpunkt", "熔点"]
        .iter()
        .cycle()
        .take(rounds)
    {
        black_box(trawl_text::points::kind(black_box(point)));
        black_box(trawl_text::points::markers(black_box(point)));
    }
    let each = started.elapsed().as_secs_f64() / rounds as f64;
    println!(
        "points::kind and points::markers of a data point: {:.1} µs",
        each * 1e6
    );
}
