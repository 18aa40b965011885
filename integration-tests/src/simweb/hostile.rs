//! `hostile.test`: pages that misbehave, so fetch limits (size, time, redirects,
//! decompression, charset, content type) can be tested against a real socket, and pages and
//! files built to hurt what comes after the fetch (nesting, element floods, one huge line, NUL
//! bytes, zip bombs, truncated or lopsided files).
//!
//! SearXNG answers [`question`]`(path)` with that one page (see [`searxng_json`]), so a job
//! can be made of any of them and go through every stage.

use std::convert::Infallible;
use std::sync::OnceLock;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use serde_json::Value;

use super::render::simple_page;
use super::search::{result_json, searxng_response};

pub const HOST: &str = "hostile.test";
pub const HUGE_LEN: usize = 30 * 1024 * 1024;
pub const SLOW_SECONDS: u64 = 60;
/// `/stall` sends [`STALL_HEAD`] at once, then nothing for this long, then the rest.
pub const STALL_SECONDS: u64 = 120;
pub const STALL_HEAD: &str = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Stall</title></head><body><article><h1>Stall</h1><p>This page starts quickly and then goes quiet for two minutes, so an idle-read timeout";
pub const DEFLATE_BOMB_INFLATED_LEN: u64 = super::gzip_bomb::INFLATED_LEN;
/// 64 brotli meta-blocks of 16 MiB zeros each.
pub const BR_BOMB_INFLATED_LEN: u64 = BR_META_BLOCKS * BR_META_BLOCK_LEN;

const CHUNK: usize = 64 * 1024;
static FILL: [u8; CHUNK] = [b'x'; CHUNK];

/// Nesting of `/deep-nesting`: far past any parser's or renderer's recursion budget.
pub const DEEP_NESTING: usize = 100_000;
/// The text at the bottom of `/deep-nesting`.
pub const DEEP_TEXT: &str =
    "Deep under a hundred thousand elements, the kestrel count was 412 breeding pairs.";
/// `/invalid-utf8` is UTF-8, as declared, with stray bytes between these sentences.
pub const INVALID_UTF8_TEXT: [&str; 2] = [
    "The naïve façade of the kestrel tower held 38 nests.",
    "Observers counted them from the señora's garden.",
];
/// What `/wrong-charset` (windows-1252 served as UTF-8) and `/unknown-charset` (ISO-8859-1
/// under a label nobody knows) say, once decoded by their `<meta>`.
pub const CHARSET_TEXT: &str = "Café crème à la carte: the kestrel survey’s count was 212 pairs.";
/// What `/undeclared-charset` says: windows-1251 with no charset in its header or `<meta>`.
pub const UNDECLARED_TEXT: &str =
    "Пустельга гнездится на пустоши: весной наблюдатели насчитали двести двенадцать пар.";
/// What `/lying-charset` says: ISO-8859-7 served as UTF-8, with no `<meta>`.
pub const LYING_TEXT: &str =
    "Το γεράκι φωλιάζει στον βάλτο: την άνοιξη οι παρατηρητές μέτρησαν διακόσια δώδεκα ζευγάρια.";
/// The words of `/nul-bytes`, each followed by a NUL byte in the page.
pub const NUL_TEXT: &str =
    "Kestrel counts between NUL bytes still read as words, and the survey found 38 nests on the moor this spring";
/// `/tiny-elements` is this many `<b>w</b>` (about 9.6 MB).
pub const TINY_ELEMENTS: usize = 1_200_000;
/// `/huge-line` is one line of about 8 MB, without a line break or a full stop.
pub const HUGE_LINE_LEN: usize = 8 << 20;
const HUGE_LINE_WORDS: &str = "kestrel counts rose on the moor again ";

pub const PATHS: &[&str] = &[
    "/huge",
    "/slow",
    "/redirect-loop",
    "/gzip-bomb",
    "/latin1",
    "/file.pdf",
    "/stall",
    "/deflate-bomb",
    "/br-bomb",
    "/empty-200",
    "/deep-nesting",
    "/invalid-utf8",
    "/wrong-charset",
    "/unknown-charset",
    "/undeclared-charset",
    "/lying-charset",
    "/nul-bytes",
    "/huge-line",
    "/tiny-elements",
    "/endless",
    "/redirect-cookies",
    "/bomb.docx",
    "/truncated.pdf",
    "/unbalanced.csv",
    "/wide.csv",
];

const DOCX_MIME: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/// A question whose search (SearXNG's JSON endpoint) finds exactly `path` on hostile.test.
pub fn question(path: &str) -> String {
    format!("What does the hostile page {path} say about kestrel counts?")
}

/// SearXNG's `format=json` answer for a [`question`]: the page on top of page 1, nothing after.
pub fn searxng_json(query: &str, pageno: usize) -> Option<Value> {
    let at = query.find("hostile page /")? + "hostile page ".len();
    let path = query[at..].split_whitespace().next()?;
    let results = if pageno <= 1 {
        vec![result_json(
            &format!("http://{HOST}{path}"),
            HOST,
            path,
            &format!("Kestrel counts on the hostile page {path}"),
            &format!("What the hostile page {path} says about kestrel counts, and how."),
            0,
            1.0,
        )]
    } else {
        Vec::new()
    };
    Some(searxng_response(query, 1, results))
}

/// Serves `path` on hostile.test; `None` means 404.
pub fn handle(path: &str) -> Option<Response> {
    let html = [(header::CONTENT_TYPE, "text/html; charset=utf-8")];
    Some(match path {
        "/robots.txt" => ([(header::CONTENT_TYPE, "text/plain")], "User-agent: *\nDisallow:\n").into_response(),
        "/" => {
            let links: String = PATHS.iter().map(|p| format!("<li><a href=\"{p}\">{p}</a></li>\n")).collect();
            (html, simple_page("Hostile", &format!("<ul>\n{links}</ul>"))).into_response()
        }
        "/huge" => {
            // Streamed so the server never holds 30 MB; no Content-Length, like a real
            // endless page, so the client must enforce its own cap.
            let head = Bytes::from_static(b"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Huge</title></head><body><p>");
            let chunks = std::iter::once(head)
                .chain((0..HUGE_LEN / CHUNK).map(|_| Bytes::from_static(&FILL)))
                .map(Ok::<_, Infallible>);
            (html, Body::from_stream(stream::iter(chunks))).into_response()
        }
        "/slow" => {
            let drip = stream::unfold(0u64, |i| async move {
                if i >= SLOW_SECONDS {
                    return None;
                }
                if i > 0 {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                Some((Ok::<_, Infallible>(Bytes::from_static(b"x")), i + 1))
            });
            (html, Body::from_stream(drip)).into_response()
        }
        "/redirect-loop" => (
            StatusCode::FOUND,
            [(header::LOCATION, "http://hostile.test/redirect-loop")],
            "",
        )
            .into_response(),
        "/gzip-bomb" => (
            [(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CONTENT_ENCODING, "gzip")],
            Bytes::from_static(super::gzip_bomb::gzip_bomb()),
        )
            .into_response(),
        "/deflate-bomb" => (
            [(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CONTENT_ENCODING, "deflate")],
            Bytes::from_static(deflate_bomb()),
        )
            .into_response(),
        "/br-bomb" => (
            [(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CONTENT_ENCODING, "br")],
            Bytes::from_static(br_bomb()),
        )
            .into_response(),
        "/stall" => {
            let parts = stream::unfold(0u8, |i| async move {
                let part = match i {
                    0 => STALL_HEAD,
                    1 => {
                        tokio::time::sleep(Duration::from_secs(STALL_SECONDS)).await;
                        " must trip before the rest arrives.</p></article></body></html>\n"
                    }
                    _ => return None,
                };
                Some((Ok::<_, Infallible>(Bytes::from_static(part.as_bytes())), i + 1))
            });
            (html, Body::from_stream(parts)).into_response()
        }
        "/empty-200" => (html, "").into_response(),
        "/latin1" => {
            // "Café crème à la carte" in ISO-8859-1: bytes 0xE9, 0xE8, 0xE0 are invalid UTF-8.
            let mut body = b"<!DOCTYPE html><html><head><title>Caf\xe9</title></head><body><article><h1>Caf\xe9 cr\xe8me</h1><p>Caf\xe9 cr\xe8me \xe0 la carte, pr\xe9par\xe9 \xe0 la fran\xe7aise. The kestrel survey counted the same pairs on the moor as the year before.</p></article></body></html>".to_vec();
            body.push(b'\n');
            ([(header::CONTENT_TYPE, "text/html; charset=iso-8859-1")], body).into_response()
        }
        "/file.pdf" => (
            [(header::CONTENT_TYPE, "application/pdf")],
            &b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"[..],
        )
            .into_response(),
        "/endless" => {
            // Chunks for as long as the client reads: only its total time limit ends this.
            let drip = stream::unfold((), |()| async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                Some((Ok::<_, Infallible>(Bytes::from_static(&FILL[..1024])), ()))
            });
            (html, Body::from_stream(drip)).into_response()
        }
        "/redirect-cookies" => redirect_cookies(),
        "/bomb.docx" => (
            [(header::CONTENT_TYPE, DOCX_MIME)],
            Bytes::from_static(super::gzip_bomb::docx_bomb()),
        )
            .into_response(),
        "/truncated.pdf" => {
            let (_, pdf) = super::files::fixture("/report.pdf").expect("the report fixture");
            ([(header::CONTENT_TYPE, "application/pdf")], &pdf[..pdf.len() / 2]).into_response()
        }
        _ => return built(path),
    })
}

/// The pages and files built at first use (megabytes each), with their content types.
fn built(path: &str) -> Option<Response> {
    static PAGES: OnceLock<Vec<(&'static str, &'static str, Vec<u8>)>> = OnceLock::new();
    let pages = PAGES.get_or_init(|| {
        let utf8 = "text/html; charset=utf-8";
        vec![
            ("/deep-nesting", utf8, deep_nesting()),
            ("/invalid-utf8", utf8, invalid_utf8()),
            ("/wrong-charset", utf8, latin_page(b"windows-1252")),
            (
                "/unknown-charset",
                "text/html; charset=x-unknown-9",
                latin_page(b"iso-8859-1"),
            ),
            (
                "/undeclared-charset",
                "text/html",
                legacy_page(encoding_rs::WINDOWS_1251, UNDECLARED_TEXT),
            ),
            (
                "/lying-charset",
                utf8,
                legacy_page(encoding_rs::ISO_8859_7, LYING_TEXT),
            ),
            ("/nul-bytes", utf8, nul_bytes()),
            ("/huge-line", utf8, huge_line()),
            ("/tiny-elements", utf8, tiny_elements()),
            ("/unbalanced.csv", "text/csv", unbalanced_csv()),
            ("/wide.csv", "text/csv", wide_csv()),
        ]
    });
    let (_, content_type, body) = pages.iter().find(|(p, _, _)| *p == path)?;
    Some(
        (
            [(header::CONTENT_TYPE, *content_type)],
            Bytes::from_static(body),
        )
            .into_response(),
    )
}

fn article(title: &str, body: &str) -> String {
    format!("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head><body><article><h1>{title}</h1>{body}</article></body></html>\n")
}

fn deep_nesting() -> Vec<u8> {
    let body = format!(
        "<p>Kestrel counts on a page nested far too deep.</p>{}<p>{DEEP_TEXT}</p>{}",
        "<div>".repeat(DEEP_NESTING),
        "</div>".repeat(DEEP_NESTING)
    );
    article("Deep nesting", &body).into_bytes()
}

fn invalid_utf8() -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(b"<p>");
    body.extend_from_slice(INVALID_UTF8_TEXT[0].as_bytes());
    // A lone continuation byte, a truncated sequence, bytes that never occur in UTF-8.
    body.extend_from_slice(b" \x80 \xc3 \xff\xfe ");
    body.extend_from_slice(INVALID_UTF8_TEXT[1].as_bytes());
    body.extend_from_slice(b"</p>");
    let page = article("Invalid UTF-8", "@");
    let (head, tail) = page.split_once('@').expect("the placeholder");
    [head.as_bytes(), &body, tail.as_bytes()].concat()
}

/// [`CHARSET_TEXT`] in windows-1252 (a superset of ISO-8859-1 but for the quote), declared by
/// a `<meta>` naming `charset`.
fn latin_page(charset: &[u8]) -> Vec<u8> {
    let text: Vec<u8> = CHARSET_TEXT
        .chars()
        .map(|c| match c {
            '’' => 0x92,
            c => u8::try_from(u32::from(c)).expect("a Latin-1 character"),
        })
        .collect();
    let mut page = b"<!DOCTYPE html><html><head><meta charset=\"".to_vec();
    page.extend_from_slice(charset);
    page.extend_from_slice(b"\"><title>Kestrels</title></head><body><article><h1>Kestrels</h1><p>");
    page.extend_from_slice(&text);
    page.extend_from_slice(
        b" The survey is repeated every spring on the same moor.</p></article></body></html>\n",
    );
    page
}

/// An article saying `text` in `encoding`, which nothing in the page names.
fn legacy_page(encoding: &'static encoding_rs::Encoding, text: &str) -> Vec<u8> {
    let page = format!(
        "<!DOCTYPE html><html><head><title>{text}</title></head><body><article><h1>{text}</h1>\
         <p>{text}</p><p>{text}</p></article></body></html>\n"
    );
    let (bytes, _, unmappable) = encoding.encode(&page);
    assert!(!unmappable, "{} holds the text", encoding.name());
    bytes.into_owned()
}

fn nul_bytes() -> Vec<u8> {
    let mut text = Vec::new();
    for word in NUL_TEXT.split(' ') {
        text.extend_from_slice(word.as_bytes());
        text.extend_from_slice(b"\0 ");
    }
    let mut page = b"<!DOCTYPE html><html><head><title>N\0UL</title></head><body><article><h1>NUL bytes</h1><p>".to_vec();
    page.extend_from_slice(&text);
    page.extend_from_slice(b"</p><p>");
    // A megabyte of NULs: six times that once escaped in JSON.
    page.resize(page.len() + (1 << 20), 0);
    page.extend_from_slice(b"</p></article></body></html>\n");
    page
}

fn huge_line() -> Vec<u8> {
    let words = HUGE_LINE_WORDS.repeat(HUGE_LINE_LEN / HUGE_LINE_WORDS.len());
    article("One huge line", &format!("<p>{words}</p>"))
        .trim_end()
        .as_bytes()
        .to_vec()
}

fn tiny_elements() -> Vec<u8> {
    article("Tiny elements", &"<b>w</b>".repeat(TINY_ELEMENTS)).into_bytes()
}

/// A quote opened on the second row and never closed: the rest of the file is one field.
fn unbalanced_csv() -> Vec<u8> {
    let mut csv = b"site,kestrel pairs\n\"North,210\n".to_vec();
    csv.extend_from_slice(&b"East,202\n".repeat(200_000));
    csv
}

/// Rows of 400 000 columns each, 9.6 MB in all.
fn wide_csv() -> Vec<u8> {
    b"k,"
        .repeat(400_000)
        .into_iter()
        .chain(*b"\n")
        .collect::<Vec<u8>>()
        .repeat(12)
}

/// A redirect to itself that sets a new 4 KB cookie on every hop.
fn redirect_cookies() -> Response {
    static HOP: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = HOP.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let cookie = format!("hop{n}={}; Path=/", "c".repeat(4000));
    (
        StatusCode::FOUND,
        [
            (header::LOCATION, format!("http://{HOST}/redirect-cookies")),
            (header::SET_COOKIE, cookie),
        ],
        "",
    )
        .into_response()
}

/// Content-Encoding `deflate` means zlib (RFC 1950): the gzip bomb's deflate stream between
/// a zlib header and the Adler-32 of its zeros.
fn deflate_bomb() -> &'static [u8] {
    static BOMB: OnceLock<Vec<u8>> = OnceLock::new();
    BOMB.get_or_init(|| {
        let gz = super::gzip_bomb::gzip_bomb();
        // 10-byte gzip header, 8-byte trailer (CRC-32, length).
        let deflate = &gz[10..gz.len() - 8];
        // Adler-32 of n zeros: a stays 1, b adds a once per byte.
        let adler = ((DEFLATE_BOMB_INFLATED_LEN % 65_521) as u32) << 16 | 1;
        let mut zlib = Vec::with_capacity(deflate.len() + 6);
        zlib.extend_from_slice(&[0x78, 0x01]); // 32 KiB window, no dictionary; header % 31 == 0
        zlib.extend_from_slice(deflate);
        zlib.extend_from_slice(&adler.to_be_bytes());
        zlib
    })
}

const BR_META_BLOCKS: u64 = 64;
/// The largest meta-block (MLEN is at most 24 bits of MLEN - 1).
const BR_META_BLOCK_LEN: u64 = 1 << 24;

/// A hand-assembled brotli bomb (RFC 7932), under a kilobyte. Every prefix code is a
/// "simple" code with one symbol, which costs zero bits to read, so each meta-block is its
/// header plus one command: insert one literal zero, copy 2^24 - 1 bytes from distance 1.
fn br_bomb() -> &'static [u8] {
    static BOMB: OnceLock<Vec<u8>> = OnceLock::new();
    BOMB.get_or_init(|| {
        let mut b = LsbBits::default();
        b.put(0, 1); // WBITS = 16
        for _ in 0..BR_META_BLOCKS {
            b.put(0, 1); // ISLAST
            b.put(2, 2); // MNIBBLES = 6
            b.put((BR_META_BLOCK_LEN - 1) as u32, 24);
            b.put(0, 1); // ISUNCOMPRESSED
            b.put(0, 3); // one block type each for literals, commands and distances
            b.put(0, 2); // NPOSTFIX
            b.put(0, 4); // NDIRECT
            b.put(0, 2); // literal context mode
            b.put(0, 2); // one literal tree, one distance tree: no context maps

            // Simple prefix codes (HSKIP = 1) with one symbol (NSYM - 1 = 0).
            for (symbol, alphabet_bits) in [(0, 8), (BR_INSERT_1_COPY_23, 10), (16, 6)] {
                b.put(1, 2);
                b.put(0, 2);
                b.put(symbol, alphabet_bits);
            }
            // The one command; its code, the literal and the distance code cost no bits.
            // Copy length code 23 is 2118 + 24 extra bits.
            b.put((BR_META_BLOCK_LEN - 1 - 2118) as u32, 24);
            b.put(0, 1); // distance code 16's extra bit: distance 1
        }
        b.put(1, 1); // ISLAST
        b.put(1, 1); // ISLASTEMPTY
        b.out
    })
}

/// Insert-and-copy code 399: the 384..447 cell (insert codes 0..7, copy codes 16..23)
/// at insert code 1 (one literal, no extra bits) and copy code 23.
const BR_INSERT_1_COPY_23: u32 = 384 + (1 << 3) + 7;

/// LSB-first bit packer, as brotli requires.
#[derive(Default)]
struct LsbBits {
    out: Vec<u8>,
    pos: usize,
}

impl LsbBits {
    fn put(&mut self, value: u32, n: u32) {
        for i in 0..n {
            if self.pos.is_multiple_of(8) {
                self.out.push(0);
            }
            if (value >> i) & 1 == 1 {
                *self.out.last_mut().expect("pushed above") |= 1 << (self.pos % 8);
            }
            self.pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    use super::*;
    use crate::simweb::Simweb;

    async fn send_get(addr: SocketAddr, path: &str) -> TcpStream {
        let mut s = TcpStream::connect(addr).await.expect("connect");
        let req = format!("GET {path} HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n");
        s.write_all(req.as_bytes()).await.expect("write");
        s
    }

    #[tokio::test]
    async fn stall_sends_its_head_then_goes_quiet() {
        let web = Simweb::for_tests().await;
        let mut s = send_get(web.addr(), "/stall").await;
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        let head_arrived = tokio::time::timeout(Duration::from_secs(5), async {
            while !String::from_utf8_lossy(&got).contains(STALL_HEAD) {
                let n = s.read(&mut buf).await.expect("read");
                assert!(n > 0, "closed early");
                got.extend_from_slice(&buf[..n]);
            }
        })
        .await;
        assert!(head_arrived.is_ok(), "{}", String::from_utf8_lossy(&got));
        assert!(String::from_utf8_lossy(&got).starts_with("HTTP/1.1 200"));
        let more = tokio::time::timeout(Duration::from_millis(500), s.read(&mut buf)).await;
        assert!(more.is_err(), "bytes arrived during the stall");
    }

    #[tokio::test]
    async fn empty_200_has_no_body() {
        let web = Simweb::for_tests().await;
        let mut s = send_get(web.addr(), "/empty-200").await;
        let mut text = String::new();
        s.read_to_string(&mut text).await.expect("read");
        let text = text.to_ascii_lowercase();
        assert!(text.starts_with("http/1.1 200") && text.contains("content-type: text/html"));
        assert!(
            text.contains("content-length: 0") && text.ends_with("\r\n\r\n"),
            "{text}"
        );
    }

    /// Reads up to `limit` decoded bytes of `path` through reqwest's own decoders, the ones
    /// fetch uses; every byte must be zero.
    async fn decoded_zeros(addr: SocketAddr, path: &str, limit: u64) -> u64 {
        let client = reqwest::Client::builder()
            .no_proxy()
            .resolve(HOST, addr)
            .build()
            .expect("client");
        let mut resp = client
            .get(format!("http://{HOST}:{}{path}", addr.port()))
            .send()
            .await
            .expect("send");
        assert_eq!(resp.status(), 200);
        let mut total = 0u64;
        while let Some(chunk) = resp.chunk().await.expect("decode") {
            assert!(chunk.iter().all(|&b| b == 0), "non-zero byte near {total}");
            total += chunk.len() as u64;
            if total >= limit {
                break;
            }
        }
        total
    }

    #[test]
    fn bombs_are_small() {
        assert!(deflate_bomb().len() < 1_200_000 && deflate_bomb()[..2] == [0x78, 0x01]);
        assert!(br_bomb().len() < 1024, "{}", br_bomb().len());
    }

    #[tokio::test]
    async fn bombs_decode_to_zeros() {
        let web = Simweb::for_tests().await;
        // Past the first brotli meta-block, so the second one's header is read too.
        let limit = 2 * BR_META_BLOCK_LEN + 1;
        for path in ["/deflate-bomb", "/br-bomb"] {
            assert!(
                decoded_zeros(web.addr(), path, limit).await >= limit,
                "{path}"
            );
        }
    }

    #[tokio::test]
    #[ignore = "inflates 2 GiB; run by hand after changing a bomb"]
    async fn bombs_inflate_to_their_declared_length() {
        let web = Simweb::for_tests().await;
        assert_eq!(
            decoded_zeros(web.addr(), "/deflate-bomb", u64::MAX).await,
            DEFLATE_BOMB_INFLATED_LEN
        );
        assert_eq!(
            decoded_zeros(web.addr(), "/br-bomb", u64::MAX).await,
            BR_BOMB_INFLATED_LEN
        );
    }
}
