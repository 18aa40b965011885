//! `hostile.test`: pages that misbehave, so fetch limits (size, time, redirects,
//! decompression, charset, content type) can be tested against a real socket.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::stream;

use super::render::simple_page;

pub const HOST: &str = "hostile.test";
pub const HUGE_LEN: usize = 30 * 1024 * 1024;
pub const SLOW_SECONDS: u64 = 60;

const CHUNK: usize = 64 * 1024;
static FILL: [u8; CHUNK] = [b'x'; CHUNK];

pub const PATHS: &[&str] = &[
    "/huge",
    "/slow",
    "/redirect-loop",
    "/gzip-bomb",
    "/latin1",
    "/file.pdf",
];

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
        "/latin1" => {
            // "Café crème à la carte" in ISO-8859-1: bytes 0xE9, 0xE8, 0xE0 are invalid UTF-8.
            let mut body = b"<!DOCTYPE html><html><head><title>Caf\xe9</title></head><body><article><h1>Caf\xe9 cr\xe8me</h1><p>Caf\xe9 cr\xe8me \xe0 la carte, pr\xe9par\xe9 \xe0 la fran\xe7aise.</p></article></body></html>".to_vec();
            body.push(b'\n');
            ([(header::CONTENT_TYPE, "text/html; charset=iso-8859-1")], body).into_response()
        }
        "/file.pdf" => (
            [(header::CONTENT_TYPE, "application/pdf")],
            &b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"[..],
        )
            .into_response(),
        _ => return None,
    })
}
