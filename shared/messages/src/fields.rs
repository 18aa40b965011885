//! Answers as data: the fields a job is asked to fill (a JSON Schema object, [`Fields`]) and
//! what it found for each ([`Answer`], the job's `answer.json`).
//!
//! The schema is the subset every structured-output API accepts and a table can hold: an object
//! whose properties are strings, numbers, integers, booleans or arrays of those, with `format:
//! date`, `enum`, `minimum`/`maximum` and `description`; and two keywords of ours: `unit` (a
//! number is given in it, converted from another unit of the same quantity) and `as_of` (the
//! value changes over time: the newest dated statement wins). Anything else is refused with its
//! path named, since a keyword silently ignored is a constraint the user believes holds.

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// Most fields a job may ask for: each is a column of the batch's table and a line of the
/// extraction prompt.
pub const MAX_FIELDS: usize = 50;
/// Longest field name, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// Most bytes of a schema as JSON.
pub const MAX_SCHEMA_BYTES: usize = 16 * 1024;

/// Keywords the schema's top level takes; `title` and `description` say what the table is.
const TOP_KEYWORDS: &[&str] = &[
    "$schema",
    "type",
    "properties",
    "required",
    "title",
    "description",
    "additionalProperties",
];
/// Keywords a field takes.
const FIELD_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "enum",
    "minimum",
    "maximum",
    "description",
    "title",
    "unit",
    "as_of",
    "items",
];
/// Keywords an array's `items` take.
const ITEM_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "enum",
    "minimum",
    "maximum",
    "description",
];

/// A value's JSON type, as a field declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    String,
    Number,
    Integer,
    Boolean,
}

impl Type {
    fn parse(name: &str) -> Option<Type> {
        Some(match name {
            "string" => Type::String,
            "number" => Type::Number,
            "integer" => Type::Integer,
            "boolean" => Type::Boolean,
            _ => return None,
        })
    }
}

/// What one value of a field must be: its type and the constraints on it.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    pub ty: Type,
    /// `format: date`: a string `YYYY-MM-DD` (or `YYYY-MM`, `YYYY` where a page says no more).
    pub date: bool,
    /// The only values allowed, where the schema lists them.
    pub choices: Vec<Value>,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
}

/// One field: a column of the answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    pub description: Option<String>,
    /// The value's shape; for an array, its items'.
    pub shape: Shape,
    /// The field is a list of values (`type: array`).
    pub array: bool,
    /// The unit a number is given in (`°C`, `km`, `USD`).
    pub unit: Option<String>,
    /// The value changes over time: the newest dated statement wins, with its date.
    pub as_of: bool,
    pub required: bool,
}

impl Field {
    /// The field as a data point phrase, what the extractors and prompts name it by:
    /// `headquarters_city` → "headquarters city".
    pub fn point(&self) -> String {
        let spaced: String = (self.name.chars())
            .map(|c| if c == '_' || c == '-' { ' ' } else { c })
            .collect();
        // camelCase → camel case
        let mut out = String::with_capacity(spaced.len() + 4);
        let mut prev_lower = false;
        for c in spaced.chars() {
            if c.is_uppercase() && prev_lower {
                out.push(' ');
            }
            prev_lower = c.is_lowercase();
            out.extend(c.to_lowercase());
        }
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// Why `value` is not a valid value of this field, if it is not.
    pub fn refuses(&self, value: &Value) -> Option<String> {
        match (self.array, value) {
            (true, Value::Array(items)) => items.iter().find_map(|v| self.shape.refuses(v)),
            (true, _) => Some("not a list".into()),
            (false, v) => self.shape.refuses(v),
        }
    }
}

impl Shape {
    fn refuses(&self, value: &Value) -> Option<String> {
        let typed = match (self.ty, value) {
            (Type::String, Value::String(s)) => !self.date || is_date(s),
            (Type::Number, Value::Number(_)) => true,
            (Type::Integer, Value::Number(n)) => n.as_f64().is_some_and(|f| f.fract() == 0.0),
            (Type::Boolean, Value::Bool(_)) => true,
            _ => false,
        };
        if !typed {
            return Some(format!("{value} is not a {}", self.described()));
        }
        if !self.choices.is_empty() && !self.choices.contains(value) {
            return Some(format!("{value} is not one of the field's enum"));
        }
        let n = value.as_f64();
        if let (Some(n), Some(min)) = (n, self.minimum) {
            if n < min {
                return Some(format!("{n} is below the minimum {min}"));
            }
        }
        if let (Some(n), Some(max)) = (n, self.maximum) {
            if n > max {
                return Some(format!("{n} is above the maximum {max}"));
            }
        }
        None
    }

    fn described(&self) -> &'static str {
        match (self.ty, self.date) {
            (Type::String, true) => "date (YYYY-MM-DD, YYYY-MM or YYYY)",
            (Type::String, false) => "string",
            (Type::Number, _) => "number",
            (Type::Integer, _) => "whole number",
            (Type::Boolean, _) => "boolean",
        }
    }
}

/// `YYYY-MM-DD`, `YYYY-MM` or `YYYY`, with a real month and day.
pub fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let digits = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_digit());
    match parts[..] {
        [y] => digits(y, 4),
        [y, m] => digits(y, 4) && digits(m, 2) && (1..=12).contains(&m.parse::<u32>().unwrap_or(0)),
        [_, _, _] => chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok(),
        _ => false,
    }
}

/// A job's fields: the properties of its schema in the schema's order (a table's columns keep
/// the order the user wrote), and the schema as given, which is what is serialised.
#[derive(Clone, Debug, PartialEq)]
pub struct Fields {
    pub fields: Vec<Field>,
    /// The schema's top level without `properties`.
    top: Map<String, Value>,
    /// `properties`, in the order given.
    properties: Vec<(String, Value)>,
}

/// A schema refused: where (`properties.founded.pattern`) and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("fields: {path}: {reason}")]
pub struct FieldsError {
    pub path: String,
    pub reason: String,
}

fn refuse(path: impl Into<String>, reason: impl Into<String>) -> FieldsError {
    FieldsError {
        path: path.into(),
        reason: reason.into(),
    }
}

impl Fields {
    /// Reads a schema whose keys are in a JSON map (so its fields come in the map's order);
    /// [`Deserialize`] keeps the order of a JSON text.
    pub fn parse(schema: Value) -> Result<Fields, FieldsError> {
        match schema {
            Value::Object(mut top) => {
                let properties = match top.remove("properties") {
                    Some(Value::Object(p)) => Some(p.into_iter().collect()),
                    Some(_) => {
                        return Err(refuse("properties", "expected an object of fields by name"))
                    }
                    None => None,
                };
                Fields::read(top, properties)
            }
            _ => Err(not_an_object()),
        }
    }

    fn read(
        mut top: Map<String, Value>,
        properties: Option<Vec<(String, Value)>>,
    ) -> Result<Fields, FieldsError> {
        // A keyword given as null is a keyword not given, as clients that write every
        // optional member write them.
        top.retain(|_, v| !v.is_null());
        known(&top, TOP_KEYWORDS, "")?;
        if top.get("type").and_then(Value::as_str) != Some("object") {
            return Err(refuse(
                "type",
                "must be \"object\": the fields are its properties",
            ));
        }
        if let Some(key) = ["title", "description", "$schema"]
            .into_iter()
            .find(|k| top.get(*k).is_some_and(|v| !v.is_string()))
        {
            return Err(refuse(key, "expected a string"));
        }
        // The answer never holds more than the fields, whatever this says.
        if top
            .get("additionalProperties")
            .is_some_and(|v| !v.is_boolean())
        {
            return Err(refuse("additionalProperties", "expected true or false"));
        }
        let Some(properties) = properties else {
            return Err(refuse("properties", "expected an object of fields by name"));
        };
        if properties.is_empty() || properties.len() > MAX_FIELDS {
            return Err(refuse(
                "properties",
                format!(
                    "{} fields; a schema has 1 to {MAX_FIELDS}",
                    properties.len()
                ),
            ));
        }
        let mut seen = std::collections::HashSet::new();
        if let Some((name, _)) = properties.iter().find(|(n, _)| !seen.insert(n.as_str())) {
            return Err(refuse(
                format!("properties.{name}"),
                "the field is given twice",
            ));
        }
        let required = required_of(&top)?;
        let fields = (properties.iter())
            .map(|(name, spec)| field(name, spec, required.contains(&name.as_str())))
            .collect::<Result<Vec<Field>, FieldsError>>()?;
        let size = serde_json::to_vec(&top).map_or(usize::MAX, |b| b.len())
            + serde_json::to_vec(&properties).map_or(usize::MAX, |b| b.len());
        if size > MAX_SCHEMA_BYTES {
            return Err(refuse(
                "(schema)",
                format!("{size} bytes, more than {MAX_SCHEMA_BYTES}"),
            ));
        }
        Ok(Fields {
            fields,
            top,
            properties,
        })
    }

    /// The field called `name`.
    pub fn get(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The schema as a JSON value (its `properties` in a JSON map's order).
    pub fn schema(&self) -> Value {
        let mut top = self.top.clone();
        let properties: Map<String, Value> = self.properties.iter().cloned().collect();
        top.insert("properties".into(), Value::Object(properties));
        Value::Object(top)
    }
}

fn not_an_object() -> FieldsError {
    refuse(
        "(schema)",
        "expected a JSON Schema object such as {\"type\": \"object\", \"properties\": {\"founded\": {\"type\": \"integer\"}}}",
    )
}

fn known(object: &Map<String, Value>, allowed: &[&str], at: &str) -> Result<(), FieldsError> {
    match object.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(refuse(
            format!("{at}{k}"),
            format!("unsupported keyword (supported: {})", allowed.join(", ")),
        )),
        None => Ok(()),
    }
}

/// The field names `required` lists; a name that is not a field is left out (it would only
/// ask for a column the table does not have).
fn required_of(top: &Map<String, Value>) -> Result<Vec<&str>, FieldsError> {
    let Some(required) = top.get("required") else {
        return Ok(Vec::new());
    };
    let Value::Array(names) = required else {
        return Err(refuse("required", "expected a list of field names"));
    };
    (names.iter().enumerate())
        .map(|(i, name)| {
            name.as_str()
                .ok_or_else(|| refuse(format!("required.{i}"), "expected a field name"))
        })
        .collect()
}

fn field(name: &str, spec: &Value, required: bool) -> Result<Field, FieldsError> {
    let at = format!("properties.{name}");
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_NAME_CHARS || name.chars().any(|c| c.is_control()) {
        return Err(refuse(
            at,
            format!("a field name is 1 to {MAX_NAME_CHARS} characters, without control characters"),
        ));
    }
    let Value::Object(spec) = spec else {
        return Err(refuse(
            at,
            "expected an object such as {\"type\": \"string\"}",
        ));
    };
    let spec = &without_nulls(spec);
    known(spec, FIELD_KEYWORDS, &format!("{at}."))?;
    let ty = spec.get("type").and_then(Value::as_str);
    let array = ty == Some("array");
    let shape = match (array, spec.get("items")) {
        (true, Some(Value::Object(items))) => {
            let items = &without_nulls(items);
            known(items, ITEM_KEYWORDS, &format!("{at}.items."))?;
            shape_of(items, &format!("{at}.items"))?
        }
        (true, _) => {
            return Err(refuse(
                format!("{at}.items"),
                "an array field needs items, such as {\"type\": \"string\"}",
            ))
        }
        (false, Some(_)) => {
            return Err(refuse(
                format!("{at}.items"),
                "only an array field takes items",
            ))
        }
        (false, None) => shape_of(spec, &at)?,
    };
    let unit = match spec.get("unit") {
        None => None,
        Some(Value::String(u))
            if !u.trim().is_empty() && matches!(shape.ty, Type::Number | Type::Integer) =>
        {
            Some(u.trim().to_owned())
        }
        Some(_) => {
            return Err(refuse(
                format!("{at}.unit"),
                "a unit (such as \"km\") is given to a number or integer field",
            ))
        }
    };
    let as_of = match spec.get("as_of") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(refuse(format!("{at}.as_of"), "expected true or false")),
    };
    let description = match spec.get("description") {
        None => None,
        Some(Value::String(d)) => Some(d.clone()),
        Some(_) => return Err(refuse(format!("{at}.description"), "expected a string")),
    };
    if spec.get("title").is_some_and(|t| !t.is_string()) {
        return Err(refuse(format!("{at}.title"), "expected a string"));
    }
    Ok(Field {
        name: name.to_owned(),
        description,
        shape,
        array,
        unit,
        as_of,
        required,
    })
}

fn without_nulls(spec: &Map<String, Value>) -> Map<String, Value> {
    (spec.iter())
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn shape_of(spec: &Map<String, Value>, at: &str) -> Result<Shape, FieldsError> {
    let ty = match spec.get("type") {
        Some(Value::String(t)) => Type::parse(t).ok_or_else(|| {
            refuse(
                format!("{at}.type"),
                format!(
                    "{t:?} is not supported (string, number, integer, boolean, or array of those)"
                ),
            )
        })?,
        _ => {
            return Err(refuse(
                format!("{at}.type"),
                "expected one of string, number, integer, boolean, array",
            ))
        }
    };
    let date = match spec.get("format") {
        None => false,
        Some(Value::String(f)) if f == "date" && ty == Type::String => true,
        Some(_) => {
            return Err(refuse(
                format!("{at}.format"),
                "only \"date\", on a string field, is supported",
            ))
        }
    };
    let bound = |key: &str| match spec.get(key) {
        None => Ok(None),
        Some(Value::Number(n)) if matches!(ty, Type::Number | Type::Integer) => Ok(n.as_f64()),
        Some(_) => Err(refuse(
            format!("{at}.{key}"),
            "expected a number, on a number or integer field",
        )),
    };
    let (minimum, maximum) = (bound("minimum")?, bound("maximum")?);
    if let (Some(lo), Some(hi)) = (minimum, maximum) {
        if lo > hi {
            return Err(refuse(
                format!("{at}.minimum"),
                format!("{lo} is above the maximum {hi}"),
            ));
        }
    }
    let mut shape = Shape {
        ty,
        date,
        choices: Vec::new(),
        minimum,
        maximum,
    };
    match spec.get("enum") {
        None => {}
        Some(Value::Array(values)) if !values.is_empty() => {
            for (i, v) in values.iter().enumerate() {
                if let Some(why) = shape.refuses(v) {
                    return Err(refuse(format!("{at}.enum.{i}"), why));
                }
            }
            shape.choices = values.clone();
        }
        Some(_) => {
            return Err(refuse(
                format!("{at}.enum"),
                "expected a non-empty list of values",
            ))
        }
    }
    Ok(shape)
}

impl Serialize for Fields {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.top.len() + 1))?;
        for (k, v) in &self.top {
            map.serialize_entry(k, v)?;
        }
        map.serialize_entry("properties", &Ordered(self.properties.clone()))?;
        map.end()
    }
}

/// A JSON object's entries in the order they were read (repeats kept, to be named) or are
/// written: a table's columns keep the order the user gave its fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Ordered<T>(pub Vec<(String, T)>);

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Ordered(Vec::new())
    }
}

impl<T> Ordered<T> {
    pub fn get(&self, key: &str) -> Option<&T> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &T)> {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl<T> std::ops::Index<&str> for Ordered<T> {
    type Output = T;
    fn index(&self, key: &str) -> &T {
        self.get(key).expect("no such key")
    }
}

impl<T: Serialize> Serialize for Ordered<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Ordered<T>, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Ordered<T>, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = m.next_entry::<String, T>()? {
                    entries.push(entry);
                }
                Ok(Ordered(entries))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Fields, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Fields;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("fields as a JSON Schema object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Fields, A::Error> {
                let mut top = Map::new();
                let mut properties = None;
                while let Some(key) = m.next_key::<String>()? {
                    if key == "properties" {
                        properties = Some(m.next_value::<Ordered<Value>>()?.0);
                    } else {
                        top.insert(key, m.next_value()?);
                    }
                }
                Fields::read(top, properties).map_err(A::Error::custom)
            }
        }
        d.deserialize_map(V)
    }
}

/// Reads a schema from its JSON text (a `--fields` file): the error names the place.
pub fn from_text(text: &str) -> Result<Fields, FieldsError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let fields = Fields::deserialize(&mut de).and_then(|f| de.end().map(|()| f));
    fields.map_err(|e| match e.classify() {
        serde_json::error::Category::Data => {
            // The schema's own refusal, as `FieldsError` wrote it ("fields: <path>: <reason>").
            let text = e.to_string();
            let text = text.split(" at line ").next().unwrap_or(&text);
            match text
                .strip_prefix("fields: ")
                .and_then(|t| t.split_once(": "))
            {
                Some((path, reason)) => refuse(path, reason),
                None => refuse("(schema)", text),
            }
        }
        _ => refuse("(schema)", format!("not JSON: {e}")),
    })
}

/// How the API's document describes [`Fields`]: what JSON Schema can state of it. The rules
/// between keywords (`format` only on a string, `unit` only on a number, `items` only and
/// always on an array, `enum` values of the field's type, `required` naming fields) are the
/// parser's.
#[cfg(feature = "openapi")]
pub mod doc {
    #![allow(dead_code)]

    use std::collections::BTreeMap;

    /// The names of the document's schemas these types make.
    pub const SCHEMAS: &[&str] = &[
        "Fields",
        "ObjectType",
        "FieldDoc",
        "StringField",
        "NumberField",
        "IntegerField",
        "BooleanField",
        "ArrayField",
        "ItemDoc",
        "StringItem",
        "NumberItem",
        "IntegerItem",
        "BooleanItem",
        "StringType",
        "NumberType",
        "IntegerType",
        "BooleanType",
        "ArrayType",
        "DateFormat",
    ];

    /// The values wanted as data: a JSON Schema object whose properties are the fields.
    #[derive(utoipa::ToSchema, serde::Deserialize)]
    #[schema(as = Fields)]
    #[serde(deny_unknown_fields)]
    pub struct FieldsDoc {
        #[serde(rename = "type")]
        kind: ObjectType,
        /// 1 to 50 fields by name (1 to 64 characters), in the order the table's columns take.
        properties: BTreeMap<String, FieldDoc>,
        /// Names of fields the answer should hold; a field not found is `not_found` either way.
        required: Option<Vec<String>>,
        title: Option<String>,
        description: Option<String>,
        #[serde(rename = "$schema")]
        dialect: Option<String>,
        #[serde(rename = "additionalProperties")]
        additional: Option<bool>,
    }

    #[derive(utoipa::ToSchema, serde::Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum ObjectType {
        Object,
    }

    /// One field: a column of the answer, by its type.
    #[derive(utoipa::ToSchema, serde::Deserialize)]
    #[serde(untagged)]
    pub enum FieldDoc {
        String(StringField),
        Number(NumberField),
        Integer(IntegerField),
        Boolean(BooleanField),
        Array(ArrayField),
    }

    /// A text field; `format: date` makes it a date, `YYYY-MM-DD` (or `YYYY-MM`, `YYYY`
    /// where a page says no more).
    #[derive(utoipa::ToSchema, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct StringField {
        #[serde(rename = "type")]
        kind: StringType,
        format: Option<DateFormat>,
        /// The only values allowed.
        #[serde(rename = "enum")]
        #[schema(min_items = 1)]
        choices: Option<Vec<String>>,
        /// What the field holds, in words: extraction reads it.
        description: Option<String>,
        title: Option<String>,
        /// The value changes over time: the newest dated statement wins, with its date.
        as_of: Option<bool>,
    }

    /// A number field.
    #[derive(utoipa::ToSchema, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct NumberField {
        #[serde(rename = "type")]
        kind: NumberType,
        #[serde(rename = "enum")]
        #[schema(min_items = 1)]
        choices: Option<Vec<f64>>,
        /// At most `maximum`.
        minimum: Option<f64>,
        maximum: Option<f64>,
        /// The unit the number is given in (`km`, `°C`, `USD`), converted from another unit of
        /// the same quantity.
        #[schema(min_length = 1)]
        unit: Option<String>,
        description: Option<String>,
        title: Option<String>,
        as_of: Option<bool>,
    }

    /// A whole-number field.
    #[derive(utoipa::ToSchema, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct IntegerField {
        #[serde(rename = "type")]
        kind: IntegerType,
        #[serde(rename = "enum")]
        #[schema(min_items = 1)]
        choices: Option<Vec<i64>>,
        minimum: Option<i64>,
        maximum: Option<i64>,
        #[schema(min_length = 1)]
        unit: Option<String>,
        description: Option<String>,
        title: Option<String>,
        as_of: Option<bool>,
    }

    /// A true-or-false field.
    #[derive(utoipa::ToSchema, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct BooleanField {
        #[serde(rename = "type")]
        kind: BooleanType,
        description: Option<String>,
        title: Option<String>,
        as_of: Option<bool>,
    }

    /// A list field.
    #[derive(utoipa::ToSchema, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct ArrayField {
        #[serde(rename = "type")]
        kind: ArrayType,
        items: ItemDoc,
        description: Option<String>,
        title: Option<String>,
        as_of: Option<bool>,
    }

    /// A list field's items.
    #[derive(utoipa::ToSchema, serde::Deserialize)]
    #[serde(untagged)]
    pub enum ItemDoc {
        String(StringItem),
        Number(NumberItem),
        Integer(IntegerItem),
        Boolean(BooleanItem),
    }

    #[derive(utoipa::ToSchema, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct StringItem {
        #[serde(rename = "type")]
        kind: StringType,
        format: Option<DateFormat>,
        #[serde(rename = "enum")]
        #[schema(min_items = 1)]
        choices: Option<Vec<String>>,
        description: Option<String>,
    }

    #[derive(utoipa::ToSchema, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct NumberItem {
        #[serde(rename = "type")]
        kind: NumberType,
        minimum: Option<f64>,
        maximum: Option<f64>,
        description: Option<String>,
    }

    #[derive(utoipa::ToSchema, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct IntegerItem {
        #[serde(rename = "type")]
        kind: IntegerType,
        minimum: Option<i64>,
        maximum: Option<i64>,
        description: Option<String>,
    }

    #[derive(utoipa::ToSchema, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct BooleanItem {
        #[serde(rename = "type")]
        kind: BooleanType,
        description: Option<String>,
    }

    /// A keyword's only value: each enum has one variant, written in lower case.
    macro_rules! one_word {
        ($($name:ident: $word:ident),*) => {$(
            #[derive(utoipa::ToSchema, serde::Deserialize)]
            #[serde(rename_all = "lowercase")]
            enum $name {
                $word,
            }
        )*};
    }
    one_word!(StringType: String, NumberType: Number, IntegerType: Integer, BooleanType: Boolean, ArrayType: Array, DateFormat: Date);
}

/// What became of a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldStatus {
    /// One value, stated by the sources cited.
    Found,
    /// No source the job read states a value of the field.
    NotFound,
    /// Sources disagree: each value is listed with its sources, and none is the value.
    Conflict,
}

impl fmt::Display for FieldStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FieldStatus::Found => "found",
            FieldStatus::NotFound => "not_found",
            FieldStatus::Conflict => "conflict",
        })
    }
}

/// One value a source states, with where it says it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stated {
    pub value: Value,
    /// The report's citation numbers of the sources that state it.
    pub sources: Vec<u32>,
    /// The sentence it came from, as the first of those sources writes it.
    pub quote: String,
    /// The source's URL, for a table's `<field>_source` column.
    pub url: String,
    /// The date the statement gives for the value, for an `as_of` field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
}

/// One field of `answer.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldAnswer {
    pub status: FieldStatus,
    /// The value when found, valid against the field's schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    #[serde(default)]
    pub sources: Vec<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    /// Each value the sources disagree on, for a conflict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<Stated>,
}

impl FieldAnswer {
    pub fn not_found() -> FieldAnswer {
        FieldAnswer {
            status: FieldStatus::NotFound,
            value: None,
            sources: Vec::new(),
            quote: None,
            url: None,
            as_of: None,
            values: Vec::new(),
        }
    }

    pub fn found(stated: Stated) -> FieldAnswer {
        FieldAnswer {
            status: FieldStatus::Found,
            value: Some(stated.value),
            sources: stated.sources,
            quote: Some(stated.quote),
            url: Some(stated.url),
            as_of: stated.as_of,
            values: Vec::new(),
        }
    }

    pub fn conflict(values: Vec<Stated>) -> FieldAnswer {
        FieldAnswer {
            status: FieldStatus::Conflict,
            values,
            ..FieldAnswer::not_found()
        }
    }
}

/// `answer.json`: each field of the job by name in the schema's order, and which path filled
/// them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub fields: Ordered<FieldAnswer>,
    /// `llm` or `extractive`.
    pub by: String,
    /// Why the LLM's answer was not taken, where it was asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<Fields, FieldsError> {
        Fields::parse(v)
    }

    #[test]
    fn a_table_of_typed_fields_is_read_in_its_order() {
        let f = parse(json!({
            "type": "object",
            "properties": {
                "headquarters_city": {"type": "string", "description": "where it is run from"},
                "founded": {"type": "integer", "minimum": 1800},
                "length": {"type": "number", "unit": "km"},
                "listed": {"type": "boolean"},
                "opened": {"type": "string", "format": "date"},
                "sector": {"type": "string", "enum": ["energy", "retail"]},
                "products": {"type": "array", "items": {"type": "string"}},
                "ceo": {"type": "string", "as_of": true},
            },
            "required": ["founded"],
        }))
        .unwrap();
        let names: Vec<&str> = f.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names.len(), 8);
        let city = f.get("headquarters_city").unwrap();
        assert_eq!(city.point(), "headquarters city");
        assert!(f.get("founded").unwrap().required && !city.required);
        assert_eq!(f.get("length").unwrap().unit.as_deref(), Some("km"));
        assert!(f.get("ceo").unwrap().as_of);
        assert!(f.get("products").unwrap().array);
        // What is serialised is what was given.
        let back = serde_json::to_value(&f).unwrap();
        assert_eq!(back["properties"]["founded"]["minimum"], 1800);
    }

    #[test]
    fn a_schema_file_keeps_its_order_and_its_errors_name_the_place() {
        let text = r#"{"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "number", "unit": "km"}}}"#;
        let f = from_text(text).unwrap();
        let names: Vec<&str> = f.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha"]);
        let again: Fields = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
        assert_eq!(again, f);
        let bad =
            from_text(r#"{"type": "object", "properties": {"a": {"type": "strin"}}}"#).unwrap_err();
        assert_eq!(bad.path, "properties.a.type");
        assert!(from_text("{not json")
            .unwrap_err()
            .reason
            .starts_with("not JSON"));
    }

    #[test]
    fn values_are_checked_against_their_field() {
        let f = parse(json!({"type": "object", "properties": {
            "founded": {"type": "integer", "minimum": 1800, "maximum": 2100},
            "opened": {"type": "string", "format": "date"},
            "sector": {"type": "string", "enum": ["energy", "retail"]},
            "tags": {"type": "array", "items": {"type": "string"}},
        }}))
        .unwrap();
        let founded = f.get("founded").unwrap();
        assert_eq!(founded.refuses(&json!(1931)), None);
        assert_eq!(founded.refuses(&json!(1931.0)), None);
        assert!(founded.refuses(&json!(1931.5)).is_some());
        assert!(founded.refuses(&json!(1700)).unwrap().contains("minimum"));
        assert!(founded.refuses(&json!("1931")).is_some());
        let opened = f.get("opened").unwrap();
        assert_eq!(opened.refuses(&json!("1931-03-12")), None);
        assert_eq!(opened.refuses(&json!("1931-03")), None);
        assert!(opened.refuses(&json!("1931-02-30")).is_some());
        assert!(opened.refuses(&json!("March 1931")).is_some());
        assert!(f.get("sector").unwrap().refuses(&json!("mining")).is_some());
        let tags = f.get("tags").unwrap();
        assert_eq!(tags.refuses(&json!(["a", "b"])), None);
        assert!(tags.refuses(&json!(["a", 2])).is_some());
        assert!(tags.refuses(&json!("a")).is_some());
    }

    #[test]
    fn what_is_not_supported_is_refused_by_its_path() {
        let path = |v: Value| parse(v).unwrap_err().path;
        let obj = |p: Value| json!({"type": "object", "properties": p});
        assert_eq!(
            path(obj(json!({"name": {"type": "string", "pattern": "^A"}}))),
            "properties.name.pattern"
        );
        assert_eq!(
            path(obj(json!({"n": {"type": "object"}}))),
            "properties.n.type"
        );
        assert_eq!(
            path(obj(json!({"n": {"type": "string", "format": "email"}}))),
            "properties.n.format"
        );
        assert_eq!(
            path(obj(json!({"n": {"type": "string", "unit": "km"}}))),
            "properties.n.unit"
        );
        assert_eq!(
            path(obj(
                json!({"n": {"type": "array", "items": {"type": "string", "minLength": 1}}})
            )),
            "properties.n.items.minLength"
        );
        assert_eq!(
            path(obj(json!({"n": {"type": "array"}}))),
            "properties.n.items"
        );
        assert_eq!(
            path(obj(json!({"n": {"type": "string", "enum": ["a", 3]}}))),
            "properties.n.enum.1"
        );
        assert_eq!(path(obj(json!({}))), "properties");
        assert_eq!(path(json!({"type": "array"})), "type");
        assert_eq!(
            path(json!({"type": "object", "properties": {"a": {"type": "string"}}, "oneOf": []})),
            "oneOf"
        );
        assert_eq!(
            path(
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", 3]})
            ),
            "required.1"
        );
        // Words about the table or a field are text.
        let a = json!({"a": {"type": "string"}});
        for (key, value) in [
            ("title", json!({})),
            ("description", json!(3)),
            ("$schema", json!([])),
        ] {
            let mut schema = obj(a.clone());
            schema[key] = value;
            assert_eq!(path(schema), key);
        }
        assert_eq!(
            path(obj(json!({"a": {"type": "string", "title": 1}}))),
            "properties.a.title"
        );
        // A required name that is no field asks for nothing the table has.
        let f = parse(
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]}),
        );
        assert!(f.unwrap().fields[0].required);
        let err = parse(obj(json!({"name": {"type": "string", "pattern": "^A"}}))).unwrap_err();
        assert!(err.to_string().contains("unsupported keyword"), "{err}");
    }

    #[test]
    fn a_field_name_repeated_in_the_json_is_refused_where_the_text_is_read() {
        // A JSON map would keep the last of a repeated key without a word.
        let err = from_text(r#"{"type": "object", "properties": {"a": {"type": "string"}, "a": {"type": "integer"}}}"#)
            .unwrap_err();
        assert_eq!(err.path, "properties.a");
        assert!(err.reason.contains("twice"), "{err}");
    }

    #[test]
    fn points_read_as_words() {
        let f = |name: &str| Field {
            name: name.into(),
            description: None,
            shape: Shape {
                ty: Type::String,
                date: false,
                choices: vec![],
                minimum: None,
                maximum: None,
            },
            array: false,
            unit: None,
            as_of: false,
            required: false,
        };
        assert_eq!(f("headquarters_city").point(), "headquarters city");
        assert_eq!(f("foundingYear").point(), "founding year");
        assert_eq!(f("CEO").point(), "ceo");
        assert_eq!(f("melting point").point(), "melting point");
    }
}
