//! Predefined CJK CMaps, which pdf-extract does not know: it panics on a Type0 font whose
//! `Encoding` names one (`UniGB-UCS2-H`, `90ms-RKSJ-H` …), and every page using the font is
//! lost. Chinese, Japanese and Korean office PDFs use them widely.
//!
//! Before extraction each such font gets the CMap spelled out in terms pdf-extract reads: an
//! `Encoding` with the named CMap's code space, each code standing for itself (`Identity-H`
//! for the two-byte Unicode CMaps), and, unless the font has a usable one, a `ToUnicode` CMap
//! from codes to characters. For the Unicode
//! CMaps (`Uni…-UCS2-…`, `Uni…-UTF16-…`) a code is its character; for the legacy ones
//! (Shift JIS, EUC, GBK, Big5, UHC) the character is what encoding_rs decodes the code's bytes
//! to. The CID a code really selects in the Adobe character collection matters only for glyph
//! widths, so spacing may be a little off; the text is right. A name not listed here stays
//! as it is and its pages fail as before, each on its own.

use pdf_extract::{Dictionary, Document, Object, ObjectId, Stream};

/// How the codes of a predefined CMap become characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Codes {
    /// Two-byte codes that are UTF-16 code units (`Uni*-UCS2-*`, `Uni*-UTF16-*`).
    Unicode,
    /// One-byte ASCII and two-byte codes in a legacy multi-byte encoding.
    Legacy(&'static encoding_rs::Encoding),
}

/// The codes behind a predefined CMap's name (its `-H`/`-V` writing mode aside).
fn codes(name: &str) -> Option<Codes> {
    let base = name
        .strip_suffix("-H")
        .or_else(|| name.strip_suffix("-V"))
        .unwrap_or(name);
    if base.starts_with("Uni") && (base.contains("-UCS2") || base.contains("-UTF16")) {
        return Some(Codes::Unicode);
    }
    let encoding = if base.contains("RKSJ") {
        encoding_rs::SHIFT_JIS
    } else if base == "EUC" {
        encoding_rs::EUC_JP
    } else if base.starts_with("GB") {
        encoding_rs::GBK
    } else if base.starts_with("KSC") {
        encoding_rs::EUC_KR
    } else if base.contains("B5") {
        encoding_rs::BIG5
    } else {
        return None;
    };
    Some(Codes::Legacy(encoding))
}

/// Gives every Type0 font with a predefined CMap of [`codes`] what pdf-extract needs.
pub(super) fn spell_out(doc: &mut Document) {
    let fonts: Vec<(ObjectId, Codes, bool)> = (doc.objects.iter())
        .filter_map(|(&id, object)| {
            let font = object.as_dict().ok()?;
            if font.get(b"Subtype").and_then(Object::as_name).ok()? != b"Type0" {
                return None;
            }
            let name = font.get(b"Encoding").and_then(Object::as_name).ok()?;
            let name = std::str::from_utf8(name).ok()?;
            if name.starts_with("Identity-") {
                return None;
            }
            // pdf-extract reads a ToUnicode stream; a name there (`Adobe-Japan1-UCS2`) it
            // does not know either.
            let mapped = matches!(
                font.get(b"ToUnicode"),
                Ok(Object::Reference(_) | Object::Stream(_))
            );
            Some((id, codes(name)?, mapped))
        })
        .collect();
    // One set of streams per CMap, shared by the fonts that name it: a legacy ToUnicode maps
    // some 20 000 codes.
    let mut encodings: Vec<(Codes, Object)> = Vec::new();
    let mut maps: Vec<(Codes, ObjectId)> = Vec::new();
    for &(id, codes, mapped) in &fonts {
        let encoding = match encodings.iter().find(|(c, _)| *c == codes) {
            Some((_, encoding)) => encoding.clone(),
            None => {
                let encoding = match codes {
                    // Two bytes a code, each its own CID: what pdf-extract does for Identity-H.
                    Codes::Unicode => Object::Name(b"Identity-H".to_vec()),
                    Codes::Legacy(e) => {
                        Object::Reference(doc.add_object(cmap_stream(encoding_cmap(e))))
                    }
                };
                encodings.push((codes, encoding.clone()));
                encoding
            }
        };
        let to_unicode = (!mapped).then(|| match maps.iter().find(|(c, _)| *c == codes) {
            Some(&(_, map)) => map,
            None => {
                let map = doc.add_object(cmap_stream(to_unicode_cmap(codes)));
                maps.push((codes, map));
                map
            }
        });
        if let Ok(Object::Dictionary(font)) = doc.get_object_mut(id) {
            font.set("Encoding", encoding);
            if let Some(to_unicode) = to_unicode {
                font.set("ToUnicode", Object::Reference(to_unicode));
            }
        }
    }
}

fn cmap_stream(body: String) -> Stream {
    Stream::new(Dictionary::new(), body.into_bytes())
}

fn cmap(code_space: &str, mappings: &str) -> String {
    format!(
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n\
         /CMapName /trawl def\n{code_space}{mappings}\
         endcmap CMapName currentdict /CMap defineresource pop end end\n"
    )
}

/// The code space of a legacy CMap, every code its own CID. adobe-cmap-parser 0.4 takes a
/// range's width in bytes as half its bytes (it counts as if hex digits were bytes), so a
/// one-byte range is written with two bytes and a two-byte range with four, high bytes zero;
/// `fonts_with_predefined_cjk_cmaps_lose_no_page` fails if a new version reads them otherwise.
fn encoding_cmap(encoding: &'static encoding_rs::Encoding) -> String {
    let space = if encoding == encoding_rs::SHIFT_JIS {
        "4 begincodespacerange\n<0000> <0080>\n<00A0> <00DF>\n<00008140> <00009FFC>\n\
         <0000E040> <0000FCFC>\nendcodespacerange\n"
    } else {
        "2 begincodespacerange\n<0000> <0080>\n<00008140> <0000FEFE>\nendcodespacerange\n"
    };
    cmap(space, "1 begincidrange\n<0000> <FFFF> 0\nendcidrange\n")
}

/// Codes to characters: ranges for Unicode codes, each code decoded for a legacy encoding.
fn to_unicode_cmap(codes: Codes) -> String {
    let encoding = match codes {
        // Surrogates alone are no characters.
        Codes::Unicode => {
            return cmap(
                "",
                "2 beginbfrange\n<0000> <D7FF> <0000>\n<E000> <FFFF> <E000>\nendbfrange\n",
            )
        }
        Codes::Legacy(e) => e,
    };
    let mut pairs: Vec<String> = (0x20u16..0x7F)
        .map(|b| format!("<{b:02X}> <{b:04X}>"))
        .collect();
    let one_byte_kana = encoding == encoding_rs::SHIFT_JIS;
    let singles = (0xA1u8..=0xDF).filter(|_| one_byte_kana).map(|b| vec![b]);
    let doubles =
        (0x81u8..=0xFE).flat_map(|lead| (0x40u8..=0xFE).map(move |trail| vec![lead, trail]));
    for bytes in singles.chain(doubles) {
        let Some(text) = encoding.decode_without_bom_handling_and_without_replacement(&bytes)
        else {
            continue;
        };
        let mut units = text.encode_utf16();
        // One character for one code; anything else is not a character of the encoding.
        let (Some(unit), None) = (units.next(), units.next()) else {
            continue;
        };
        if text.chars().count() != 1 {
            continue;
        }
        let code: String = bytes.iter().map(|b| format!("{b:02X}")).collect();
        pairs.push(format!("<{code}> <{unit:04X}>"));
    }
    let mut out = String::with_capacity(pairs.len() * 16);
    // CMaps list at most 100 mappings per block.
    for block in pairs.chunks(100) {
        out.push_str(&format!("{} beginbfchar\n", block.len()));
        for pair in block {
            out.push_str(pair);
            out.push('\n');
        }
        out.push_str("endbfchar\n");
    }
    cmap("", &out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_give_their_codes() {
        assert_eq!(codes("UniGB-UCS2-H"), Some(Codes::Unicode));
        assert_eq!(codes("UniJIS-UTF16-V"), Some(Codes::Unicode));
        assert_eq!(
            codes("90ms-RKSJ-H"),
            Some(Codes::Legacy(encoding_rs::SHIFT_JIS))
        );
        assert_eq!(codes("GBK-EUC-H"), Some(Codes::Legacy(encoding_rs::GBK)));
        assert_eq!(
            codes("KSCms-UHC-H"),
            Some(Codes::Legacy(encoding_rs::EUC_KR))
        );
        assert_eq!(codes("ETen-B5-H"), Some(Codes::Legacy(encoding_rs::BIG5)));
        assert_eq!(codes("EUC-V"), Some(Codes::Legacy(encoding_rs::EUC_JP)));
        assert_eq!(codes("Hojo-H"), None);
    }

    #[test]
    fn legacy_codes_decode_to_their_characters() {
        let map = to_unicode_cmap(Codes::Legacy(encoding_rs::GBK));
        // 中 is D6D0 in GBK, U+4E2D.
        assert!(map.contains("<D6D0> <4E2D>\n"), "{}", &map[..400]);
        assert!(map.contains("<41> <0041>\n"));
        let sjis = to_unicode_cmap(Codes::Legacy(encoding_rs::SHIFT_JIS));
        // ｱ (half-width katakana) is one byte, A1..DF; 日 is 93FA.
        assert!(sjis.contains("<B1> <FF71>\n") && sjis.contains("<93FA> <65E5>\n"));
    }
}
