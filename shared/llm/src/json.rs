//! Getting JSON out of a model's reply, whatever the model wrapped it in: `<think>` blocks
//! (reasoning models), markdown fences, prose before and after; and how long such a reply
//! need be.

use serde_json::Value;

/// Tokens a string field of an answer may take: a sentence or two of reasoning.
const STRING: u32 = 96;
/// Tokens a string inside a list may take: a query, a phrase, a name.
const ITEM_STRING: u32 = 40;
/// Items a list or a map without a bound of its own may hold.
const ITEMS: u32 = 10;
/// The least and the most a JSON answer is allowed, whatever its schema.
const ALLOWANCE: (u32, u32) = (128, 4096);

/// The most tokens an answer of `schema` needs, generously: each field's name and value, a
/// string a sentence or two (`maxLength` bounds it), a list [`ITEMS`] long (`maxItems`). A
/// model on a laptop writes a few tokens a second, and one that rambles past what the step
/// can use (a relevance verdict of a thousand tokens) costs minutes; cut at this allowance,
/// the answer does not parse and the step takes its non-LLM path.
pub(crate) fn allowance(schema: &Value) -> u32 {
    need(schema, STRING).clamp(ALLOWANCE.0, ALLOWANCE.1)
}

/// What a value of `schema` needs, a string taking `string` tokens.
fn need(schema: &Value, string: u32) -> u32 {
    if schema.get("enum").is_some() || schema.get("const").is_some() {
        return 8;
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alternatives) = schema.get(key).and_then(Value::as_array) {
            return alternatives
                .iter()
                .map(|a| need(a, string))
                .max()
                .unwrap_or(string);
        }
    }
    let kind = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        // ["string", "null"]: an optional field.
        Some(Value::Array(types)) => (types.iter().filter_map(Value::as_str))
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ => "",
    };
    let bound = |key: &str| schema.get(key).and_then(Value::as_u64).map(|n| n as u32);
    match kind {
        "object" => {
            let fields: u32 = (schema.get("properties").and_then(Value::as_object))
                .map_or(0, |p| p.values().map(|v| 6 + need(v, string)).sum());
            let entries = match schema.get("additionalProperties") {
                Some(v @ Value::Object(_)) => ITEMS * (6 + need(v, ITEM_STRING)),
                _ => 0,
            };
            4 + fields + entries
        }
        "array" => {
            let item = schema
                .get("items")
                .map_or(ITEM_STRING, |i| need(i, ITEM_STRING));
            2 + bound("maxItems").unwrap_or(ITEMS).saturating_mul(2 + item)
        }
        "string" => bound("maxLength").map_or(string, |n| n / 3 + 2),
        "number" | "integer" | "boolean" | "null" => 6,
        _ => string,
    }
}

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
    fn an_answers_allowance_is_what_its_schema_can_hold() {
        // A relevance verdict: a flag, a sentence of reasoning, a number.
        let verdict = serde_json::json!({"type": "object", "properties": {
            "relevant": {"type": "boolean"},
            "reasoning": {"type": "string"},
            "confidence": {"type": "number"}}});
        assert_eq!(allowance(&verdict), 130);
        // Lists hold ten short strings unless bounded; a map's entries count like a list's.
        let plan = serde_json::json!({"type": "object", "properties": {
            "queries": {"type": "array", "items": {"type": "string"}, "maxItems": 3}}});
        assert_eq!(allowance(&plan), 4 + 6 + 2 + 3 * 42);
        let data = serde_json::json!({"type": "object",
            "additionalProperties": {"type": ["string", "null"]}});
        assert_eq!(allowance(&data), 4 + 10 * 46);
        // Never less than a short answer needs, nor more than a long one.
        assert_eq!(allowance(&serde_json::json!({"type": "boolean"})), 128);
        let huge = serde_json::json!({"type": "array", "maxItems": 1000,
            "items": {"type": "string"}});
        assert_eq!(allowance(&huge), 4096);
    }

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
