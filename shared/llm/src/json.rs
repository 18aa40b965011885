//! Getting JSON out of a model's reply, whatever the model wrapped it in: `<think>` blocks
//! (reasoning models), markdown fences, prose before and after.

/// The reply without `<think>…</think>` blocks (an unclosed one runs to the end).
pub(crate) fn strip_think(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<think>") {
        out.push_str(&rest[..start]);
        match rest[start..].find("</think>") {
            Some(end) => rest = &rest[start + end + "</think>".len()..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    out.trim().to_owned()
}

/// The first balanced JSON object or array in `text`, preferring a fenced ```json block.
pub(crate) fn extract_json(text: &str) -> Option<&str> {
    if let Some(start) = text.find("```json").or_else(|| text.find("```JSON")) {
        let body = &text[start + 7..];
        if let Some(end) = body.find("```") {
            let inner = body[..end].trim();
            if let Some(found) = balanced(inner) {
                return Some(found);
            }
        }
    }
    balanced(text)
}

/// The first `{…}` or `[…]` whose brackets balance, skipping brackets inside strings.
fn balanced(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let mut search_from = 0;
    while let Some(offset) = text[search_from..].find(['{', '[']) {
        let start = search_from + offset;
        let (mut depth, mut in_string, mut escaped) = (0i32, false, false);
        for (i, &b) in bytes.iter().enumerate().skip(start) {
            if in_string {
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        let candidate = &text[start..=i];
                        if serde_json::from_str::<serde_json::Value>(candidate).is_ok() {
                            return Some(candidate);
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
        search_from = start + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_think_blocks() {
        assert_eq!(
            strip_think("<think>hmm {\"a\":1}</think>\n{\"b\": 2}"),
            "{\"b\": 2}"
        );
        assert_eq!(strip_think("x <think>never closed"), "x");
        assert_eq!(strip_think("plain"), "plain");
    }

    #[test]
    fn finds_json_in_prose_fences_and_arrays() {
        assert_eq!(
            extract_json("Sure! {\"a\": {\"b\": \"}\"}} done"),
            Some("{\"a\": {\"b\": \"}\"}}")
        );
        assert_eq!(
            extract_json("Here:\n```json\n{\"x\": [1, 2]}\n```\nbye"),
            Some("{\"x\": [1, 2]}")
        );
        assert_eq!(extract_json("[1, 2, 3]"), Some("[1, 2, 3]"));
        assert_eq!(
            extract_json("{not json} then {\"ok\": true}"),
            Some("{\"ok\": true}")
        );
        assert_eq!(extract_json("I think the answer is probably fine."), None);
    }
}
