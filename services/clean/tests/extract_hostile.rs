//! `extract` on pages built to hurt: absurd nesting, sheer size, bytes that are not HTML or not
//! UTF-8, a flood of empty elements. Each must come back, on the default test-thread stack,
//! with the text it could find; time is not asserted, but every case is linear work and
//! finishes in seconds (the nesting case took 20 s in the HTML parser alone before nesting was
//! bounded, the way browsers bound it).

use trawl_clean::extract::extract;

const URL: &str = "https://hostile.example/page";

/// Deterministic bytes without a dependency (xorshift64*).
fn noise(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            (seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

#[test]
fn deeply_nested_divs() {
    let depth = 100_000;
    let html = format!(
        "<html><body>{}<p>The innermost paragraph is still found.</p>{}</body></html>",
        "<div>".repeat(depth),
        "</div>".repeat(depth)
    );
    let x = extract(&html, URL);
    assert!(x
        .markdown
        .contains("The innermost paragraph is still found."));
}

#[test]
fn deeply_nested_inline_and_list_markup() {
    let depth = 50_000;
    let html = format!(
        "<body><article>{}{}deep words{}</article></body>",
        "<p>Lead paragraph with enough words to be an article body. ".repeat(20),
        "<ul><li><b><i><a href='/x'><blockquote>".repeat(depth),
        "</blockquote></a></i></b></li></ul>".repeat(depth),
    );
    let x = extract(&html, URL);
    assert!(x.markdown.contains("Lead paragraph"));
}

#[test]
fn list_items_that_nest_instead_of_ending_each_other() {
    // `<li>` ends an open `<li>`, but not a `<dd>`: alternating, they nest without end.
    let html = format!("<body>{}deep words", "<ul><li><dl><dd>".repeat(100_000));
    let x = extract(&html, URL);
    assert!(x.markdown.contains("deep words"));
}

#[test]
fn stray_end_tags_under_a_deep_stack() {
    let html = format!(
        "<body>{}<p>Words under the stack.</p>{}",
        "<div>".repeat(500),
        "</span></em>".repeat(500_000)
    );
    let x = extract(&html, URL);
    assert!(x.markdown.contains("Words under the stack."));
}

#[test]
fn fifty_megabyte_page() {
    // No known container: the scoring stage weighs every paragraph and every sibling.
    let para = "<p>Paragraph text that goes on for a while, with commas, clauses and enough words \
        to look like an article, repeated until the page weighs fifty megabytes.</p>\n";
    let count = 50 * 1024 * 1024 / para.len();
    let html = format!(
        "<html><head><title>Big</title></head><body><div>{}</div><div>{}</div></body></html>",
        para.repeat(count / 2),
        para.repeat(count / 2)
    );
    let x = extract(&html, URL);
    assert_eq!(x.title, "Big");
    assert_eq!(x.method, "scored");
    assert!(x.text_chars > 40 * 1024 * 1024, "{} chars", x.text_chars);
}

#[test]
fn a_million_paragraphs_straight_in_the_body() {
    let html = format!(
        "<body>{}</body>",
        "<p>Short paragraph, with a comma, and enough words to count.</p>".repeat(1_000_000)
    );
    let x = extract(&html, URL);
    assert!(x.text_chars > 50_000_000, "{} chars", x.text_chars);
}

#[test]
fn random_bytes_lossily_decoded() {
    for seed in 1..=4 {
        let bytes = noise(2 * 1024 * 1024, seed);
        let html = String::from_utf8_lossy(&bytes);
        extract(&html, URL);
    }
}

#[test]
fn random_bytes_rich_in_markup_characters() {
    // Mostly `<`, `>`, `/`, quotes, `=`, `!`, `-` and letters: tag-like garbage everywhere.
    const ALPHABET: &[u8] = b"<<<>>//\"'=!-- divpascriptstyle\n";
    let bytes: Vec<u8> = noise(2 * 1024 * 1024, 99)
        .into_iter()
        .map(|b| ALPHABET[usize::from(b) % ALPHABET.len()])
        .collect();
    extract(&String::from_utf8_lossy(&bytes), URL);
}

#[test]
fn unclosed_formatting_before_many_paragraphs() {
    // The parser re-opens every unclosed formatting element in each later paragraph.
    let open: String = (0..500).map(|k| format!("<b class=c{k}>")).collect();
    let html = format!("<body><p>{open}{}", "<p>Some words here.".repeat(50_000));
    let x = extract(&html, URL);
    assert!(x.markdown.contains("Some words here."));
}

#[test]
fn a_hundred_thousand_attributes_on_one_element() {
    let attrs: String = (0..100_000)
        .map(|k| format!(" data-a{k}=\"{k}\""))
        .collect();
    let html = format!("<body><div{attrs}><p>Text after the attributes.</p></div></body>");
    let x = extract(&html, URL);
    assert!(x.markdown.contains("Text after the attributes."));
}

#[test]
fn unterminated_raw_text_and_comments() {
    // Each shape makes a naive scanner search to the end of the page at every `<`.
    let lts = "<".repeat(2_000_000);
    for html in [
        format!("<body><script><!--{lts}"),
        format!("<body><script><!--<script>{lts}</script>"),
        format!("<body><style>{lts}"),
        format!("<body><title>{lts}"),
        format!("<body><!--{}", "-".repeat(2_000_000)),
        format!("<body>{}", "<div x='".repeat(200_000)),
        format!("<body>{}", "<a<b".repeat(500_000)),
    ] {
        extract(&html, URL);
    }
}

#[test]
fn invalid_utf8_sequences_lossily_decoded() {
    let mut bytes = b"<html><body><article><p>".to_vec();
    for k in 0..200_000u32 {
        bytes.extend_from_slice(b"word ");
        // Lone continuation bytes, overlong encodings, truncated sequences, surrogates.
        match k % 5 {
            0 => bytes.push(0x80),
            1 => bytes.extend_from_slice(&[0xc0, 0xaf]),
            2 => bytes.extend_from_slice(&[0xe2, 0x82]),
            3 => bytes.extend_from_slice(&[0xed, 0xa0, 0x80]),
            _ => bytes.extend_from_slice(&[0xf8, 0x88, 0x80, 0x80, 0x80]),
        }
        if k % 50 == 0 {
            bytes.extend_from_slice(b"</p><p>");
        }
    }
    bytes.extend_from_slice(b"</p></article></body></html>");
    let x = extract(&String::from_utf8_lossy(&bytes), URL);
    assert!(x.markdown.contains("word"));
}

#[test]
fn a_million_empty_elements() {
    let html = format!(
        "<html><body><article><p>{}</p>{}<p>{}</p></article></body></html>",
        "Before the flood, a paragraph of ordinary article text. ".repeat(10),
        "<span></span><b></b><div></div><i></i><p></p>".repeat(200_000),
        "After the flood, another paragraph of ordinary article text. ".repeat(10),
    );
    let x = extract(&html, URL);
    assert!(x.markdown.contains("Before the flood"));
    assert!(x.markdown.contains("After the flood"));
}
