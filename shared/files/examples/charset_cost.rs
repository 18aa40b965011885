//! What detecting a page's charset costs: `decode` of a 16 KB windows-1251 page that names no
//! charset (the detector runs) against the same page under its declared charset, in one run.
//!
//! `cargo run --release -p trawl-files --example charset_cost`

use std::time::Instant;

use trawl_files::decode;

fn per_call(rounds: u32, mut f: impl FnMut() -> usize) -> f64 {
    let started = Instant::now();
    let mut sink = 0;
    for _ in 0..rounds {
        sink += f();
    }
    std::hint::black_box(sink);
    started.elapsed().as_secs_f64() / f64::from(rounds)
}

fn main() {
    let sentence = "Москва - столица России, крупнейший по численности населения город страны. \
                    Город расположен на реке Москве в центре Восточно-Европейской равнины. ";
    let page = format!("<html><body><p>{}</p></body></html>", sentence.repeat(110));
    let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(&page);
    let rounds = 2_000;
    let declared = per_call(rounds, || {
        decode(&bytes, "text/html; charset=windows-1251", Some("ru")).len()
    });
    let detected = per_call(rounds, || decode(&bytes, "text/html", Some("ru")).len());
    assert_eq!(decode(&bytes, "text/html", Some("ru")), page);
    println!(
        "{} bytes: declared {:.1} µs, detected {:.1} µs ({:.0} ns a byte more, ×{:.1})",
        bytes.len(),
        declared * 1e6,
        detected * 1e6,
        (detected - declared) * 1e9 / bytes.len() as f64,
        detected / declared
    );
}
