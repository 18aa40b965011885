//! The structured call: the fields as a response schema, the job's evidence as context.

use super::*;

/// The response schema: per field, its value (or null), the source's number and the quote.
pub fn schema(fields: &Fields) -> Value {
    let mut properties = serde_json::Map::new();
    for field in &fields.fields {
        let mut value = serde_json::Map::new();
        let ty = |t: Type| match t {
            Type::String => "string",
            Type::Number => "number",
            Type::Integer => "integer",
            Type::Boolean => "boolean",
        };
        let item = json!({"type": ty(field.shape.ty)});
        match field.array {
            true => {
                value.insert("type".into(), json!(["array", "null"]));
                value.insert("items".into(), item);
            }
            false => {
                value.insert("type".into(), json!([ty(field.shape.ty), "null"]));
            }
        }
        if !field.shape.choices.is_empty() && !field.array {
            let mut choices = field.shape.choices.clone();
            choices.push(Value::Null);
            value.insert("enum".into(), Value::Array(choices));
        }
        properties.insert(
            field.name.clone(),
            json!({
                "type": "object",
                "properties": {
                    "value": Value::Object(value),
                    "source": {"type": ["integer", "null"]},
                    "quote": {"type": ["string", "null"]},
                },
                "required": ["value", "source", "quote"],
                "additionalProperties": false,
            }),
        );
    }
    let names: Vec<&str> = fields.fields.iter().map(|f| f.name.as_str()).collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": names,
        "additionalProperties": false,
    })
}

/// The prompt's lines describing the fields.
pub fn described(fields: &Fields) -> String {
    let mut out = String::new();
    for f in &fields.fields {
        let mut line = format!("- {} ({}", f.name, f.point());
        let ty = match (f.array, f.shape.ty, f.shape.date) {
            (_, Type::String, true) => "a date, YYYY-MM-DD or as precise as stated",
            (_, Type::String, false) => "text",
            (_, Type::Number, _) => "a number",
            (_, Type::Integer, _) => "a whole number",
            (_, Type::Boolean, _) => "true or false",
        };
        line.push_str(&format!("): {ty}"));
        if f.array {
            line.push_str(", a list");
        }
        if let Some(unit) = &f.unit {
            line.push_str(&format!(", in {unit}"));
        }
        if !f.shape.choices.is_empty() {
            line.push_str(&format!(
                ", one of {}",
                Value::Array(f.shape.choices.clone())
            ));
        }
        if f.as_of {
            line.push_str(", the newest value stated");
        }
        if let Some(d) = &f.description {
            line.push_str(&format!(". {}", collapse_whitespace(d)));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Most characters of one source in the prompt.
const SOURCE_CHARS: usize = 2_400;

/// Asks `llm` once for every field, from the key points of `docs` and their sentences that
/// name a field; the answer is checked by [`read`].
pub async fn ask(
    llm: &trawl_llm::Llm,
    question: &str,
    fields: &Fields,
    docs: &[&AnalysedDoc],
) -> Result<Value, trawl_llm::LlmError> {
    let system = "Fill each field from the numbered sources only. For each field give its \
value in the type and unit asked (null when no source states it), the number of the source \
that states it, and the sentence of that source that states it, copied exactly. Never infer a \
value no sentence states.";
    let markers: Vec<String> = (fields.fields.iter())
        .flat_map(|f| trawl_text::points::markers(&f.point()))
        .map(|m| m.to_lowercase())
        .collect();
    let mut user = format!(
        "Question: {question}\nFields:\n{}Sources:\n",
        described(fields)
    );
    for d in docs {
        user.push_str(&format!(
            "[{}] {} | {}\n",
            crate::citations::label(d.source.idx),
            collapse_whitespace(&d.title),
            d.final_url
        ));
        let naming = trawl_text::sentences(&d.markdown).into_iter().filter(|s| {
            let lower = s.to_lowercase();
            markers.iter().any(|m| lower.contains(m.as_str()))
        });
        let mut used = 0;
        for line in d.key_points.iter().cloned().chain(naming) {
            if used + line.len() > SOURCE_CHARS {
                break;
            }
            used += line.len();
            user.push_str(&line);
            user.push('\n');
        }
        user.push('\n');
    }
    let request = trawl_llm::ChatRequest::new("fields", system, user);
    let names: Vec<String> = fields.fields.iter().map(|f| f.name.clone()).collect();
    let (answer, _) = (llm.json_value(&request, &schema(fields), |v: &Value| {
        match names
            .iter()
            .find(|n| !v.get(n.as_str()).is_some_and(Value::is_object))
        {
            Some(n) => Err(format!("no object for the field {n:?}")),
            None => Ok(()),
        }
    }))
    .await?;
    Ok(answer)
}

/// Reads the model's answer: each field's value kept only where its quote is a sentence of
/// the source it names and states the value; the others keep `fallback`'s finding, with
/// a note. `label` maps a source number of the context to its document.
pub fn read(
    fields: &Fields,
    answer: &Value,
    docs: &[&AnalysedDoc],
    label: impl Fn(u32) -> Option<u32>,
    fallback: Findings,
) -> Findings {
    let mut notes = Vec::new();
    // Each source's sentences once, whichever fields quote it.
    let texts: Vec<Sentences> = docs.iter().map(|d| Sentences::of(d)).collect();
    let mut by_name: BTreeMap<String, Finding> = fallback
        .fields
        .into_iter()
        .map(|(f, x)| (f.name, x))
        .collect();
    for field in &fields.fields {
        let given = &answer[&field.name];
        let value = &given["value"];
        if value.is_null() {
            continue;
        }
        let text = (given["source"].as_u64())
            .and_then(|n| label(n as u32))
            .and_then(|idx| texts.iter().find(|t| t.doc.source.idx == idx));
        let quote = given["quote"].as_str().unwrap_or("");
        let checked = text.and_then(|t| Candidate::checked(field, value.clone(), quote, t));
        match checked {
            Some(c) => {
                // The model's value leads; values the extractors found elsewhere stay
                // beside it, so sources that disagree are a conflict whoever read them.
                let found = by_name.remove(&field.name).unwrap_or_default();
                by_name.insert(field.name.clone(), found.led_by(field, c));
            }
            None => notes.push(format!(
                "{}: the model's value is not stated by the source it cites; the extractors' is kept",
                field.name
            )),
        }
    }
    Findings {
        fields: (fields.fields.iter())
            .map(|f| (f.clone(), by_name.remove(&f.name).unwrap_or_default()))
            .collect(),
        by: "llm",
        notes,
    }
}
