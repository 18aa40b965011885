//! Text of a body in whatever charset it came: the header's, the page's `<meta>`, or what
//! Firefox's detector (chardetng) makes of it.

/// Decodes with a BOM's encoding, else the header's charset, else a `<meta>` charset in the
/// first 1 KiB, else UTF-8 when the bytes are UTF-8, else what Firefox's detector (chardetng)
/// makes of them, helped by the top-level domain `tld` the page came from (`ru`, `jp`);
/// undecodable bytes become U+FFFD rather than failing the page.
///
/// Two departures from taking the header at its word, both for pages that would otherwise come
/// out as replacement characters: a label no encoding answers to is passed over, and a header
/// saying UTF-8 over bytes that are not UTF-8 (a server-wide default over an old page) gives way
/// to the page's own `<meta>`, or to the detector. A `<meta>` naming UTF-16 means UTF-8, as in
/// browsers: the bytes were readable enough to find it.
///
/// NUL and the other C0 controls an HTML parser never shows (all but tab, line feed, form feed
/// and carriage return) are removed: each would cost six bytes once the page travels as JSON.
pub fn decode(bytes: &[u8], content_type: &str, tld: Option<&str>) -> String {
    use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8};
    let known = |label: String| Encoding::for_label(label.trim().as_bytes());
    let meta = || {
        let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).to_ascii_lowercase();
        let at = head.find("charset=")?;
        let rest = head[at + 8..].trim_start_matches(['"', '\'']);
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(rest.len());
        known(rest[..end].to_owned()).map(|e| {
            if e == UTF_16LE || e == UTF_16BE {
                UTF_8
            } else {
                e
            }
        })
    };
    let unlabelled = || unlabelled(bytes, tld);
    let encoding = match charset_param(content_type).and_then(known) {
        Some(e) if e == UTF_8 && std::str::from_utf8(bytes).is_err() => {
            meta().unwrap_or_else(unlabelled)
        }
        Some(e) => e,
        None => meta().unwrap_or_else(unlabelled),
    };
    // `decode` looks for a BOM first and drops it.
    let (text, _, _) = encoding.decode(bytes);
    let hidden = |c: char| matches!(c, '\0'..='\x08' | '\x0b' | '\x0e'..='\x1f' | '\x7f');
    // Every hidden character is ASCII, a byte no other character's UTF-8 holds: the bytes
    // tell, without decoding the page's characters.
    if text.bytes().any(|b| b.is_ascii() && hidden(char::from(b))) {
        text.chars().filter(|&c| !hidden(c)).collect()
    } else {
        text.into_owned()
    }
}

/// The encoding of bytes that do not say theirs (or say UTF-8 and are not): UTF-8 when they
/// are; the detector's guess when it is a multi-byte encoding that reads them without an
/// error (Shift_JIS, EUC-JP, GBK, Big5, EUC-KR: their structure rarely holds by chance, while
/// such text often forms a few UTF-8 sequences by chance); otherwise UTF-8 when it is UTF-8
/// but for a few stray bytes, else the guess.
fn unlabelled(bytes: &[u8], tld: Option<&str>) -> &'static encoding_rs::Encoding {
    if std::str::from_utf8(bytes).is_ok() {
        return encoding_rs::UTF_8;
    }
    let guess = detect(bytes, tld);
    let reads = || (guess.decode_without_bom_handling_and_without_replacement(bytes)).is_some();
    if !guess.is_single_byte() && reads() || !mostly_utf8(bytes) {
        guess
    } else {
        encoding_rs::UTF_8
    }
}

/// UTF-8 but for a few stray bytes: some characters beyond ASCII read as UTF-8, and at most
/// eight broken sequences for each. Text in a single-byte legacy encoding almost never forms
/// UTF-8 sequences (a letter beyond ASCII is followed by a space or another such letter, not
/// by a continuation byte), and a UTF-8 page with stray bytes reads better with a few U+FFFD
/// than decoded as a legacy encoding throughout.
fn mostly_utf8(bytes: &[u8]) -> bool {
    let (mut read, mut broken) = (0usize, 0usize);
    for chunk in bytes.utf8_chunks() {
        read += chunk.valid().chars().filter(|c| !c.is_ascii()).count();
        broken += usize::from(!chunk.invalid().is_empty());
    }
    read > 0 && broken <= read * 8
}

/// The detector's guess from the first [`DETECT_BYTES`]: enough text for its statistics, and,
/// at about 70 ns a byte, at most about a millisecond however large the page.
fn detect(bytes: &[u8], tld: Option<&str>) -> &'static encoding_rs::Encoding {
    use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
    // ISO-2022-JP is left out, as browsers do: its escapes can smuggle ASCII past a filter.
    let mut detector = EncodingDetector::new(Iso2022JpDetection::Deny);
    detector.feed(&bytes[..bytes.len().min(DETECT_BYTES)], false);
    // The detector panics on a label with a period, upper case or non-ASCII.
    let tld = tld.filter(|t| {
        !t.is_empty()
            && t.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    });
    detector.guess(tld.map(str::as_bytes), Utf8Detection::Deny)
}

const DETECT_BYTES: usize = 16 * 1024;

/// The last label of `url`'s host, lower case, for [`decode`]'s detector.
pub fn tld_of(url: &url::Url) -> Option<String> {
    let host = url.host_str()?.trim_end_matches('.');
    Some(host.rsplit('.').next()?.to_ascii_lowercase())
}

fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim().eq_ignore_ascii_case("charset")).then(|| v.trim().trim_matches('"').to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_declared_and_sniffed_charsets() {
        assert_eq!(
            decode(b"caf\xe9", "text/html; charset=iso-8859-1", None),
            "café"
        );
        assert_eq!(
            decode(b"<meta charset=\"windows-1252\">caf\xe9", "text/html", None),
            "<meta charset=\"windows-1252\">café"
        );
        assert_eq!(decode("café".as_bytes(), "text/html", None), "café");
    }

    /// Pages that declare no charset, or one their bytes are not in, come out as the text they
    /// are: Firefox's detector reads their statistics (and the page's top-level domain).
    #[test]
    fn undeclared_legacy_encodings_are_detected() {
        let texts = [
            (
                encoding_rs::WINDOWS_1251,
                "ru",
                "Москва - столица России, крупнейший по численности населения город страны. \
                 Город расположен на реке Москве в центре Восточно-Европейской равнины.",
            ),
            (
                encoding_rs::KOI8_R,
                "ru",
                "Москва - столица России, крупнейший по численности населения город страны. \
                 Город расположен на реке Москве в центре Восточно-Европейской равнины.",
            ),
            (
                encoding_rs::SHIFT_JIS,
                "jp",
                "東京は日本の首都であり、世界有数の大都市である。人口は約千四百万人で、\
                 政治と経済の中心地となっている。",
            ),
            (
                encoding_rs::EUC_JP,
                "jp",
                "東京は日本の首都であり、世界有数の大都市である。人口は約千四百万人で、\
                 政治と経済の中心地となっている。",
            ),
            (
                encoding_rs::GBK,
                "cn",
                "北京是中华人民共和国的首都，是全国的政治中心、文化中心，也是世界著名古都。",
            ),
            (
                encoding_rs::EUC_KR,
                "kr",
                "서울은 대한민국의 수도이며 최대 도시이다. 한강을 사이에 두고 남북으로 나뉜다.",
            ),
            (
                encoding_rs::WINDOWS_1252,
                "fr",
                "Le château se trouve près de la forêt ; à côté, un café où l'on mange des crêpes.",
            ),
            (
                encoding_rs::ISO_8859_7,
                "gr",
                "Η Αθήνα είναι η πρωτεύουσα και η μεγαλύτερη πόλη της Ελλάδας, με μακρά ιστορία.",
            ),
        ];
        for (encoding, tld, text) in texts {
            let page = format!("<html><body><p>{text}</p></body></html>");
            let (bytes, _, unmappable) = encoding.encode(&page);
            assert!(!unmappable, "{} cannot hold the sample", encoding.name());
            for content_type in ["text/html", "text/html; charset=utf-8"] {
                for tld in [Some(tld), None] {
                    assert_eq!(
                        decode(&bytes, content_type, tld),
                        page,
                        "{} under {content_type:?} from {tld:?}",
                        encoding.name()
                    );
                }
            }
        }
    }

    /// Bytes no detector reads, and top-level domains the detector would refuse, give a
    /// best-effort text, never a panic.
    #[test]
    fn hostile_bytes_and_odd_domains_never_panic() {
        let noise: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for tld in [
            None,
            Some("RU"),
            Some("xn--p1ai"),
            Some("рф"),
            Some("co.uk"),
            Some(""),
        ] {
            let text = decode(&noise, "text/html", tld);
            assert!(!text.is_empty());
        }
        let url = url::Url::parse("http://Example.CO.UK./page").unwrap();
        assert_eq!(tld_of(&url).as_deref(), Some("uk"));
    }

    #[test]
    fn a_wrong_or_unknown_header_charset_gives_way_to_the_meta() {
        let latin = b"<meta charset=\"windows-1252\">caf\xe9 \x93quoted\x94";
        let read = "<meta charset=\"windows-1252\">café “quoted”";
        assert_eq!(decode(latin, "text/html; charset=utf-8", None), read);
        assert_eq!(decode(latin, "text/html; charset=x-klingon", None), read);
        // A header naming another encoding is still taken at its word.
        assert_eq!(
            decode(
                b"<meta charset=utf-8>caf\xe9",
                "text/html; charset=iso-8859-1",
                None
            ),
            "<meta charset=utf-8>café"
        );
        // A page that is UTF-8 but for a stray byte stays UTF-8.
        assert_eq!(
            decode(
                &["naïve \u{2014} ".as_bytes(), b"\xff"].concat(),
                "text/html; charset=utf-8",
                None
            ),
            "naïve \u{2014} \u{fffd}"
        );
        // A few characters beyond ASCII and more stray bytes than them: still UTF-8.
        let stray = b"The na\xc3\xafve fa\xc3\xa7ade \x80 \xc3 \xff\xfe se\xc3\xb1ora";
        assert_eq!(
            decode(stray, "text/html; charset=utf-8", None),
            "The naïve façade \u{fffd} \u{fffd} \u{fffd}\u{fffd} señora"
        );
        assert_eq!(
            decode(b"<meta charset=utf-16>caf\xc3\xa9", "text/html", None),
            "<meta charset=utf-16>café"
        );
        assert_eq!(
            decode(
                b"\xef\xbb\xbfcaf\xc3\xa9",
                "text/html; charset=iso-8859-1",
                None
            ),
            "café"
        );
    }

    #[test]
    fn controls_a_parser_never_shows_are_removed() {
        assert_eq!(
            decode(b"a\0b\x01\x7f c\td\r\n\x0ce", "text/html", None),
            "ab c\td\r\n\x0ce"
        );
    }
}
