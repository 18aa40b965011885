//! OpenAI-compatible `POST /v1/embeddings` with deterministic hashed bag-of-words vectors.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::openai::error;
use super::script::fnv1a;
use super::{has_bearer, MODEL};

/// Length of every embedding.
pub const DIMS: usize = 64;

/// Lower-cased words: maximal runs of alphanumeric characters.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// Counts of FNV-1a(word) mod 64 over the lower-cased words, L2-normalised (all zeros for
/// text without words).
pub fn embed(text: &str) -> Vec<f32> {
    let mut v = [0f32; DIMS];
    for w in words(text) {
        v[(fnv1a(w.as_bytes()) % DIMS as u64) as usize] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v.to_vec()
}

/// `input` as a list of strings: a string, or a non-empty array of strings.
fn inputs(body: &Value) -> Result<Vec<String>, String> {
    const BAD: &str = "'input' must be a string or a non-empty array of strings";
    match body.get("input") {
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(items)) if !items.is_empty() => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| BAD.to_string())
            })
            .collect(),
        _ => Err(BAD.to_string()),
    }
}

/// The `list` response for a parsed request body.
pub fn response(body: &Value) -> Result<Value, String> {
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .ok_or("'model' is required")?;
    match body.get("encoding_format").and_then(Value::as_str) {
        None | Some("float") => {}
        Some(other) => {
            return Err(format!(
                "encoding_format {other:?} is not supported; use \"float\""
            ))
        }
    }
    let inputs = inputs(body)?;
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, text)| json!({"object": "embedding", "index": i, "embedding": embed(text)}))
        .collect();
    let n: usize = inputs.iter().map(|t| words(t).count()).sum();
    Ok(json!({
        "object": "list",
        "data": data,
        "model": if model.is_empty() { MODEL } else { model },
        "usage": {"prompt_tokens": n, "total_tokens": n},
    }))
}

pub async fn embeddings(headers: HeaderMap, body: Bytes) -> Response {
    if !has_bearer(&headers) {
        return error(
            StatusCode::UNAUTHORIZED,
            "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth.",
            "invalid_request_error",
            None,
            Some("invalid_api_key"),
        );
    }
    let result = serde_json::from_slice::<Value>(&body)
        .map_err(|e| format!("invalid JSON body: {e}"))
        .and_then(|v| response(&v));
    match result {
        Ok(v) => Json(v).into_response(),
        Err(msg) => error(
            StatusCode::BAD_REQUEST,
            &msg,
            "invalid_request_error",
            Some("input"),
            None,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_server;
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn similar_texts_are_closer() {
        let a = embed("The melting point of Zorblium is 1,812 degrees Celsius.");
        let b = embed("Zorblium melting point: 1812 degrees");
        let c = embed("Festival visitors fill every hotel in town each summer");
        assert_eq!(a.len(), DIMS);
        assert!((cosine(&a, &a) - 1.0).abs() < 1e-5);
        assert!(
            cosine(&a, &b) > cosine(&a, &c) + 0.2,
            "{} vs {}",
            cosine(&a, &b),
            cosine(&a, &c)
        );
        assert_eq!(embed("Hello, WORLD"), embed("hello world"));
        assert!(embed(" ,. ").iter().all(|x| *x == 0.0));
    }

    #[test]
    fn request_validation() {
        assert!(response(&json!({"model": "m", "input": []})).is_err());
        assert!(response(&json!({"model": "m", "input": [1, 2]})).is_err());
        assert!(response(&json!({"input": "x"})).is_err());
        assert!(
            response(&json!({"model": "m", "input": "x", "encoding_format": "base64"})).is_err()
        );
    }

    #[tokio::test]
    async fn embeddings_over_http() {
        let base = test_server().await;
        let client = reqwest::Client::new();
        let url = format!("{base}/v1/embeddings");
        let body = json!({"model": "text-embedding-3-small", "input": ["alpha beta", "alpha gamma delta"]});

        let resp = client.post(&url).json(&body).send().await.expect("send");
        assert_eq!(resp.status().as_u16(), 401);
        let v: Value = resp.json().await.expect("json");
        assert_eq!(v["error"]["code"], "invalid_api_key");

        let v: Value = client
            .post(&url)
            .bearer_auth("k")
            .json(&body)
            .send()
            .await
            .expect("send")
            .json()
            .await
            .expect("json");
        assert_eq!(v["object"], "list");
        assert_eq!(v["model"], "text-embedding-3-small");
        assert_eq!(v["usage"], json!({"prompt_tokens": 5, "total_tokens": 5}));
        let data = v["data"].as_array().expect("data");
        assert_eq!(data.len(), 2);
        for (i, d) in data.iter().enumerate() {
            assert_eq!(d["object"], "embedding");
            assert_eq!(d["index"], i);
            assert_eq!(d["embedding"].as_array().map(Vec::len), Some(DIMS));
        }
        let first: Vec<f32> = serde_json::from_value(data[1]["embedding"].clone()).expect("floats");
        assert_eq!(first, embed("alpha gamma delta"));

        let single = json!({"model": "m", "input": "alpha"});
        let resp = client
            .post(&url)
            .bearer_auth("k")
            .json(&single)
            .send()
            .await
            .expect("send");
        assert_eq!(resp.status().as_u16(), 200);
        let v: Value = resp.json().await.expect("json");
        assert_eq!(v["data"].as_array().map(Vec::len), Some(1));
    }
}
