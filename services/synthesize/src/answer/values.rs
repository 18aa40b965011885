//! Values as pages write them: numbers with their scale, unit and currency, dates, names
//! without their titles, read into the type a field asks for.

use serde_json::{json, Value};
use trawl_messages::fields::{Field, Type};
use trawl_text::points::unit_of;
use trawl_text::{collapse_whitespace, MONTHS};

use super::whole;

/// A number as a page states it: its value, and the unit after it as (base unit, factor,
/// offset) or a currency.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Quantity {
    n: f64,
    unit: Option<(&'static str, f64, f64)>,
    currency: Option<&'static str>,
}

const CURRENCIES: &[(&str, &str)] = &[
    ("$", "USD"),
    ("us$", "USD"),
    ("usd", "USD"),
    ("dollars", "USD"),
    ("€", "EUR"),
    ("eur", "EUR"),
    ("euros", "EUR"),
    ("£", "GBP"),
    ("gbp", "GBP"),
    ("pounds sterling", "GBP"),
    ("¥", "JPY"),
    ("jpy", "JPY"),
    ("yen", "JPY"),
    ("rs", "INR"),
    ("₹", "INR"),
    ("inr", "INR"),
    ("rupees", "INR"),
];

/// Every number of `text`, each with the scale word and unit after it and a currency around it.
pub(super) fn numbers_in(text: &str) -> Vec<Quantity> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    for (i, word) in words.iter().enumerate() {
        let lower = word.to_lowercase();
        let start = lower.find(|c: char| c.is_ascii_digit());
        let Some(start) = start else { continue };
        let prefix = &lower[..start];
        let digits: String = (lower[start..].chars())
            .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
            .collect();
        let digits = digits.trim_end_matches(['.', ',']);
        let Ok(mut n) = digits.replace(',', "").parse::<f64>() else {
            continue;
        };
        let rest = &lower[start + digits.len()..];
        let mut next = i + 1;
        let scale_word = match rest.trim_matches(|c: char| !c.is_alphanumeric()) {
            "" => words.get(next).map(|w| w.to_lowercase()),
            inline => Some(inline.to_owned()),
        };
        let scale = match scale_word
            .as_deref()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        {
            Some("thousand" | "k") => 1e3,
            Some("million" | "m" | "mn") => 1e6,
            Some("billion" | "bn" | "b") => 1e9,
            Some("trillion" | "tn") => 1e12,
            _ => 1.0,
        };
        if scale != 1.0 {
            n *= scale;
            if rest.trim_matches(|c: char| !c.is_alphanumeric()).is_empty() {
                next += 1;
            }
        }
        let after: Vec<&str> = match rest.trim_matches(|c: char| !c.is_alphanumeric() && c != '°')
        {
            "" => words[next.min(words.len())..].to_vec(),
            inline => vec![inline],
        };
        let before = i
            .checked_sub(1)
            .map(|b| words[b].to_lowercase())
            .unwrap_or_default();
        let currency = (CURRENCIES.iter())
            .find(|(sign, _)| {
                prefix.trim_end_matches('.') == *sign
                    || before.trim_matches(|c: char| !c.is_alphanumeric() && !"$€£¥₹".contains(c))
                        == *sign
                    || after
                        .first()
                        .is_some_and(|a| a.trim_matches(|c: char| !c.is_alphanumeric()) == *sign)
            })
            .map(|(_, code)| *code);
        out.push(Quantity {
            n,
            unit: if currency.is_some() {
                None
            } else {
                unit_of(&after)
            },
            currency,
        });
    }
    out
}

/// `q` in `unit` (the field's; `None`: as stated): converted from another unit of the same
/// quantity, none from another quantity or currency.
pub(super) fn in_unit(q: &Quantity, unit: Option<&str>) -> Option<f64> {
    let Some(unit) = unit else {
        return Some(q.n);
    };
    if let Some(code) = currency_code(unit) {
        return match q.currency {
            Some(c) if c == code => Some(q.n),
            None if q.unit.is_none() => Some(q.n),
            _ => None,
        };
    }
    if matches!(unit, "%" | "percent") {
        return q.unit.is_none().then_some(q.n);
    }
    let (base, factor, offset) = unit_of(&[unit])?;
    match q.unit {
        // A number without a unit is taken as given in the field's.
        None if q.currency.is_none() => Some(q.n),
        Some((b, f, o)) if b == base => Some((q.n * f + o - offset) / factor),
        _ => None,
    }
}

fn currency_code(unit: &str) -> Option<&'static str> {
    let lower = unit.to_lowercase();
    (CURRENCIES.iter())
        .find(|(sign, code)| *sign == lower || code.eq_ignore_ascii_case(&lower))
        .map(|(_, code)| *code)
}

/// The value `raw` gives `field`, as its type wants it, valid against the field.
pub(super) fn typed(field: &Field, raw: &str) -> Option<Value> {
    let value = match (field.array, field.shape.ty) {
        (true, _) => {
            let items: Vec<Value> = (raw.split([',', ';']))
                .flat_map(|p| p.split(" and "))
                .filter_map(|p| one(field, p.trim()))
                .collect();
            (!items.is_empty()).then_some(Value::Array(items))?
        }
        (false, _) => one(field, raw)?,
    };
    field.refuses(&value).is_none().then_some(value)
}

/// One value of `field`'s shape read from `raw`.
fn one(field: &Field, raw: &str) -> Option<Value> {
    let shape = &field.shape;
    if !shape.choices.is_empty() {
        let lower = raw.to_lowercase();
        let stated: Vec<&Value> = (shape.choices.iter())
            .filter(|c| {
                c.as_str()
                    .is_some_and(|c| contains_word(&lower, &c.to_lowercase()))
            })
            .collect();
        return match stated[..] {
            [one] => Some(one.clone()),
            _ => None,
        };
    }
    match shape.ty {
        Type::String if shape.date => date_of(raw).map(Value::String),
        Type::String => {
            let text =
                collapse_whitespace(raw.trim_matches(|c: char| c.is_whitespace() || c == '.'));
            // A name without its title: "Dr. Ruben Tidar" is Ruben Tidar.
            let text = (TITLES.iter())
                .find_map(|t| text.strip_prefix(t).filter(|r| r.starts_with(' ')))
                .map_or(text.clone(), |r| r.trim().to_owned());
            (!text.is_empty() && text.chars().count() <= 200).then_some(Value::String(text))
        }
        Type::Boolean => match raw.trim().to_lowercase().as_str() {
            "yes" | "true" => Some(Value::Bool(true)),
            "no" | "false" => Some(Value::Bool(false)),
            _ => None,
        },
        Type::Integer | Type::Number => {
            // A year asked as a whole number ("founded") is the year of a date.
            let wants_year = shape.ty == Type::Integer
                && trawl_text::points::kind(&field.point()) == trawl_text::points::Kind::Date;
            if wants_year {
                return year_of(raw).map(|y| json!(y));
            }
            let q = numbers_in(raw).into_iter().next()?;
            let n = in_unit(&q, field.unit.as_deref())?;
            match shape.ty {
                Type::Integer if (n - n.round()).abs() < 1e-9 => Some(json!(n.round() as i64)),
                Type::Integer => None,
                _ => serde_json::Number::from_f64(round(n)).map(|n| whole(field, Value::Number(n))),
            }
        }
    }
}

/// Titles before a name.
const TITLES: &[&str] = &[
    "Dr.", "Dr", "Prof.", "Prof", "Mr.", "Mrs.", "Ms.", "Sir", "Dame",
];

/// `n` to at most six significant digits after a conversion ("0.62137" miles, not
/// 0.621371192237334).
pub(super) fn round(n: f64) -> f64 {
    if n == 0.0 || !n.is_finite() {
        return n;
    }
    let digits = 6 - n.abs().log10().ceil() as i32;
    let scale = 10f64.powi(digits.clamp(0, 12));
    (n * scale).round() / scale
}

pub(super) fn contains_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// A year from 1000 to 2999 that `text` states.
fn year_of(text: &str) -> Option<i64> {
    (text.split(|c: char| !c.is_ascii_digit()))
        .find(|w| w.len() == 4 && matches!(w.as_bytes()[0], b'1' | b'2'))
        .and_then(|w| w.parse().ok())
}

/// `text`'s date as ISO 8601, as precise as it says: `12 March 1931` / `March 12, 1931` →
/// `1931-03-12`, `March 1931` → `1931-03`, `1931` → `1931`, `2021-03-04` as it is.
pub(super) fn date_of(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = (lower.split(|c: char| !c.is_alphanumeric() && c != '-'))
        .filter(|w| !w.is_empty())
        .collect();
    if let Some(iso) = words
        .iter()
        .find(|w| trawl_messages::fields::is_date(w) && w.len() >= 7)
    {
        return Some((*iso).to_owned());
    }
    let year = year_of(text)?;
    let month = (words.iter()).find_map(|w| {
        MONTHS
            .iter()
            .position(|m| *w == *m || (w.len() >= 3 && m.starts_with(*w) && w.len() <= m.len()))
    });
    let Some(month) = month else {
        return Some(year.to_string());
    };
    let day = (words.iter())
        .filter_map(|w| {
            w.trim_end_matches(|c: char| c.is_alphabetic())
                .parse::<u32>()
                .ok()
        })
        .find(|d| (1..=31).contains(d));
    let ym = format!("{year:04}-{:02}", month + 1);
    match day.map(|d| format!("{ym}-{d:02}")) {
        Some(full) if trawl_messages::fields::is_date(&full) => Some(full),
        _ => Some(ym),
    }
}

/// The newest date `quote` gives, as ISO 8601 (`2023`, `2023-05`), for an `as_of` field.
pub(super) fn newest_date(quote: &str) -> Option<String> {
    let years: Vec<i64> = (quote.split(|c: char| !c.is_ascii_digit()))
        .filter(|w| w.len() == 4)
        .filter_map(|w| w.parse().ok())
        .filter(|y| (1000..=2100).contains(y))
        .collect();
    let newest = *years.iter().max()?;
    // The date around the newest year, as precise as the quote gives it.
    let at = quote.find(&newest.to_string())?;
    let from = trawl_text::floor_char_boundary(quote, at.saturating_sub(16));
    let around = &quote[from..(at + 4).min(quote.len())];
    date_of(around).filter(|d| d.starts_with(&newest.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_as_precise_as_stated() {
        assert_eq!(date_of("12 March 1931").as_deref(), Some("1931-03-12"));
        assert_eq!(date_of("March 12, 1931").as_deref(), Some("1931-03-12"));
        assert_eq!(date_of("Sept 1931").as_deref(), Some("1931-09"));
        assert_eq!(date_of("in 1931").as_deref(), Some("1931"));
        assert_eq!(date_of("2021-03-04").as_deref(), Some("2021-03-04"));
        assert_eq!(date_of("no date"), None);
    }

    #[test]
    fn numbers_read_with_scale_unit_and_currency() {
        let q = numbers_in("about Rs 299 crore, $4.25bn and 12 miles");
        assert_eq!(q[0].currency, Some("INR"));
        assert_eq!(q[1].n, 4.25e9);
        assert_eq!(q[1].currency, Some("USD"));
        assert_eq!(in_unit(&q[2], Some("km")).map(round), Some(19.3121));
    }
}
