//! Is this response the page, or something standing in its way?
//!
//! Run on every response at every level, so a block page is never passed on as content. Three
//! kinds of evidence, each enough to escalate:
//!
//! - the status: 401, 403, 429 and 503 are how sites refuse clients;
//! - a bot-management interstitial, known by the vendor's headers or by its markers in a page
//!   with little visible text. The text condition matters: Cloudflare injects its
//!   `challenge-platform` script into ordinary pages too, and an article may quote "Access
//!   Denied"; an interstitial has almost no text of its own;
//! - a JavaScript-only shell: scripts and next to no text until a browser runs them.

/// Why a response is not the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    Status(u16),
    /// A bot-management interstitial; the name says whose.
    Challenge(&'static str),
    /// The page only exists once a browser runs its scripts.
    ScriptShell,
}

impl Block {
    /// A metric label: a fixed set (four statuses, the vendors below, `script_shell`).
    pub fn kind(&self) -> String {
        match self {
            Block::Status(s) => format!("http_{s}"),
            Block::Challenge(vendor) => vendor.to_ascii_lowercase().replace(' ', "_"),
            Block::ScriptShell => "script_shell".into(),
        }
    }

    /// Every kind [`Block::kind`] can return, for metrics created before the first block.
    pub(crate) fn all_kinds() -> Vec<String> {
        let statuses = BLOCK_STATUSES.iter().map(|&s| Block::Status(s));
        let vendors = CHALLENGE_HEADERS
            .iter()
            .map(|&(_, _, v)| v)
            .chain(CHALLENGE_MARKERS.iter().map(|&(_, v)| v))
            .map(Block::Challenge);
        let mut kinds: Vec<String> = statuses
            .chain(vendors)
            .chain([Block::ScriptShell])
            .map(|b| b.kind())
            .collect();
        kinds.sort();
        kinds.dedup();
        kinds
    }

    pub fn describe(&self) -> String {
        match self {
            Block::Status(s) => format!("http {s}"),
            Block::Challenge(vendor) => format!("{vendor} challenge"),
            Block::ScriptShell => "page rendered only by JavaScript".into(),
        }
    }
}

/// Interstitials have little text; a real page with more than this is not one.
const CHALLENGE_MAX_TEXT: usize = 1_500;
/// A shell's visible text (a title, "enable JavaScript", a cookie line) stays under this.
const SHELL_MAX_TEXT: usize = 200;

/// Statuses sites refuse clients with.
const BLOCK_STATUSES: [u16; 4] = [401, 403, 429, 503];

/// Response headers by vendor: `(header, value substring or "" for any, vendor)`.
const CHALLENGE_HEADERS: &[(&str, &str, &str)] = &[
    ("cf-mitigated", "challenge", "Cloudflare"),
    ("x-datadome", "", "DataDome"),
    ("x-dd-b", "", "DataDome"),
    ("x-px-block", "", "PerimeterX"),
    ("x-sucuri-block", "", "Sucuri"),
    ("x-amzn-waf-action", "", "AWS WAF"),
];

/// Body markers by vendor, lowercase, matched in pages with little text, outside inline
/// scripts (a page's own bot check carries its block page as a string until it decides).
const CHALLENGE_MARKERS: &[(&str, &str)] = &[
    ("<title>just a moment...</title>", "Cloudflare"),
    ("cf-browser-verification", "Cloudflare"),
    ("cf_chl_opt", "Cloudflare"),
    ("cf-chl-", "Cloudflare"),
    ("attention required! | cloudflare", "Cloudflare"),
    ("captcha-delivery.com", "DataDome"),
    ("px-captcha", "PerimeterX"),
    ("_pxcaptcha", "PerimeterX"),
    ("perimeterx", "PerimeterX"),
    ("<title>access denied</title>", "Akamai"),
    ("errors.edgesuite.net", "Akamai"),
    ("_incapsula_resource", "Imperva"),
    ("kasada", "Kasada"),
    ("please verify you are a human", "bot check"),
    ("verify you are human", "bot check"),
    ("checking your browser before accessing", "bot check"),
    ("enable javascript and cookies to continue", "bot check"),
];

/// Judges one response. `header` looks a header up by lowercase name; `body` is the decoded
/// HTML (for the browser levels, the rendered DOM, where a shell no longer applies).
pub fn detect<'a>(
    status: u16,
    header: impl Fn(&str) -> Option<&'a str>,
    body: &str,
    rendered: bool,
) -> Option<Block> {
    for &(name, needle, vendor) in CHALLENGE_HEADERS {
        if header(name).is_some_and(|v| v.to_ascii_lowercase().contains(needle)) {
            return Some(Block::Challenge(vendor));
        }
    }
    if BLOCK_STATUSES.contains(&status) {
        return Some(Block::Status(status));
    }
    let text = visible_text_len(body, CHALLENGE_MAX_TEXT + 1);
    if text <= CHALLENGE_MAX_TEXT {
        let lower = without_script_bodies(body).to_ascii_lowercase();
        if let Some(&(_, vendor)) = CHALLENGE_MARKERS.iter().find(|(m, _)| lower.contains(m)) {
            return Some(Block::Challenge(vendor));
        }
        if !rendered && text <= SHELL_MAX_TEXT && lower.contains("<script") {
            return Some(Block::ScriptShell);
        }
    }
    None
}

/// Characters of text a reader would see, counted up to `limit`: outside tags and outside
/// `script`, `style`, `noscript`, `template` and `head`, whitespace runs counted once. One pass,
/// no parse: it runs on every response.
pub(crate) fn visible_text_len(html: &str, limit: usize) -> usize {
    const HIDDEN: [&str; 5] = ["script", "style", "noscript", "template", "head"];
    let bytes = html.as_bytes();
    let (mut i, mut count, mut space) = (0, 0, true);
    while i < bytes.len() && count < limit {
        if bytes[i] == b'<' {
            let rest = &html[i + 1..];
            let name_len = rest
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric())
                .count();
            let name = rest[..name_len].to_ascii_lowercase();
            let end = match rest.find('>') {
                Some(e) => i + 1 + e + 1,
                None => break,
            };
            i = match HIDDEN.iter().find(|&&h| h == name) {
                Some(h) => find_ci(html, end, &format!("</{h}")).unwrap_or(bytes.len()),
                None => end,
            };
            continue;
        }
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            if !space {
                count += 1;
                space = true;
            }
        } else if c & 0xC0 != 0x80 {
            // One count per character: skip UTF-8 continuation bytes.
            count += 1;
            space = false;
        }
        i += 1;
    }
    count
}

/// `html` with the contents of every `<script>` element dropped (tags and attributes kept).
fn without_script_bodies(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut at = 0;
    while let Some(open) = find_ci(html, at, "<script") {
        let Some(end_of_tag) = html[open..].find('>').map(|e| open + e + 1) else {
            break;
        };
        out.push_str(&html[at..end_of_tag]);
        at = find_ci(html, end_of_tag, "</script").unwrap_or(html.len());
    }
    out.push_str(&html[at..]);
    out
}

/// Byte offset of `needle` (ASCII, lowercase) in `hay` at or after `from`, ignoring case.
fn find_ci(hay: &str, from: usize, needle: &str) -> Option<usize> {
    let n = needle.as_bytes();
    hay.as_bytes()
        .get(from..)?
        .windows(n.len())
        .position(|w| w.eq_ignore_ascii_case(n))
        .map(|p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_headers(_: &str) -> Option<&'static str> {
        None
    }

    fn article(words: usize) -> String {
        let text = "Researchers measured the flow of the river over ten years. ".repeat(words / 10);
        format!("<html><head><title>River</title><script>var x=1;</script></head><body><nav>Home</nav><article><h1>River</h1><p>{text}</p></article></body></html>")
    }

    #[test]
    fn every_block_detect_finds_is_among_the_kinds_metrics_start_with() {
        let kinds = Block::all_kinds();
        let mut found = Vec::new();
        for status in BLOCK_STATUSES {
            found.push(detect(status, no_headers, &article(300), false));
        }
        for &(name, needle, _) in CHALLENGE_HEADERS {
            let value = if needle.is_empty() { "1" } else { needle };
            found.push(detect(200, |h| (h == name).then_some(value), "", false));
        }
        for &(marker, _) in CHALLENGE_MARKERS {
            let page = format!("<html><body><p>{marker}</p></body></html>");
            found.push(detect(200, no_headers, &page, false));
        }
        found.push(Some(Block::ScriptShell));
        for block in found {
            let kind = block.expect("each signal is a block").kind();
            assert!(kinds.contains(&kind), "{kind} is not in {kinds:?}");
        }
    }

    #[test]
    fn statuses_block() {
        for status in [401, 403, 429, 503] {
            assert_eq!(
                detect(status, no_headers, &article(300), false),
                Some(Block::Status(status))
            );
        }
        assert_eq!(detect(200, no_headers, &article(300), false), None);
        assert_eq!(detect(404, no_headers, &article(300), false), None);
    }

    #[test]
    fn vendor_headers_block_even_with_status_200() {
        let cf = |name: &str| (name == "cf-mitigated").then_some("challenge");
        assert_eq!(
            detect(200, cf, "<html></html>", true),
            Some(Block::Challenge("Cloudflare"))
        );
        let dd = |name: &str| (name == "x-datadome").then_some("protected");
        assert_eq!(
            detect(403, dd, "", false),
            Some(Block::Challenge("DataDome"))
        );
    }

    #[test]
    fn interstitials_are_known_by_their_markers() {
        let cloudflare = "<!DOCTYPE html><html><head><title>Just a moment...</title><script src=\"/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1\"></script></head><body><div class=\"main-wrapper\"><h1>example.org</h1><p>Verifying you are human. This may take a few seconds.</p></div></body></html>";
        assert_eq!(
            detect(200, no_headers, cloudflare, true),
            Some(Block::Challenge("Cloudflare"))
        );
        let px = "<html><body><h1>Access denied</h1><p>Please verify you are a human</p><div id=\"px-captcha\"></div></body></html>";
        assert_eq!(
            detect(200, no_headers, px, true),
            Some(Block::Challenge("PerimeterX"))
        );
        // The same markers inside a page's own script are not a block page yet.
        let checker = "<html><body><div id=\"app\"><h1>Hello</h1></div><script>if (navigator.webdriver) { app.innerHTML = '<div id=\"px-captcha\"></div>'; }</script></body></html>";
        assert_eq!(detect(200, no_headers, checker, true), None);
        let datadome = "<html><body><iframe src=\"https://geo.captcha-delivery.com/captcha/?initialCid=x\"></iframe></body></html>";
        assert_eq!(
            detect(200, no_headers, datadome, false),
            Some(Block::Challenge("DataDome"))
        );
    }

    #[test]
    fn a_real_page_that_mentions_a_vendor_is_not_blocked() {
        // Cloudflare injects its script into ordinary pages; articles quote block pages.
        let page = article(400).replace(
            "</body>",
            "<p>The page said: please verify you are a human.</p><script src=\"/cdn-cgi/challenge-platform/scripts/jsd/main.js\"></script></body>",
        );
        assert_eq!(detect(200, no_headers, &page, false), None);
    }

    #[test]
    fn script_shells_are_found_before_rendering_only() {
        let shell = "<!doctype html><html><head><title>App</title><script src=\"/app.js\"></script></head><body><div id=\"app\"></div><noscript>Please enable JavaScript to view this page.</noscript></body></html>";
        assert_eq!(
            detect(200, no_headers, shell, false),
            Some(Block::ScriptShell)
        );
        assert_eq!(detect(200, no_headers, shell, true), None);
        // A short page without scripts is just short.
        assert_eq!(
            detect(
                200,
                no_headers,
                "<html><body><p>Gone fishing.</p></body></html>",
                false
            ),
            None
        );
    }

    #[test]
    fn visible_text_skips_tags_scripts_and_styles() {
        let html = "<head><title>T</title><style>p{color:red}</style></head><body><p>Hello   <b>wörld</b></p><script>if (a < b) { x(); }</script><SCRIPT>y()</SCRIPT>!</body>";
        // "Hello wörld!" plus the space left where tags separated words.
        assert_eq!(visible_text_len(html, 1000), "Hello wörld!".chars().count());
        assert_eq!(visible_text_len(html, 3), 3);
        // Unclosed tags and scripts end the count instead of looping.
        assert_eq!(visible_text_len("abc<script>never closed", 100), 3);
        assert_eq!(visible_text_len("abc<p", 100), 3);
    }
}
