//! `trawl.example.toml`: every key with its documentation and default, generated from the
//! config types (their doc comments, through their JSON schema, and `Config::default()`), so
//! it cannot drift from the code. A test holds the repository's copy equal to it; rewrite the
//! copy with `UPDATE_EXAMPLE=1 cargo test -p trawl-config example`.

use serde_json::Value as Json;

use crate::{Config, LlmConfig};

/// The sections in the order a reader meets them: where the fleet runs, what a job does stage
/// by stage, then the optional LLM and the servers.
const SECTIONS: [&str; 16] = [
    "broker",
    "store",
    "output",
    "job",
    "search",
    "fetch",
    "cache",
    "documents",
    "clean",
    "synthesize",
    "report",
    "research",
    "llm",
    "metrics",
    "api",
    "mcp",
];

const WIDTH: usize = 96;

/// The example file's text.
pub fn example() -> String {
    let schema = serde_json::to_value(schemars::schema_for!(Config)).expect("a schema serialises");
    let defaults = toml::Value::try_from(Config::default()).expect("the defaults serialise");
    let llm = toml::Value::try_from(LlmConfig::default()).expect("the LLM defaults serialise");
    let mut out = String::from(
        "# trawl's configuration: every key with what it does and its default. Generated from the\n\
         # code (`trawl config example` prints it); change a key by copying it to your trawl.toml,\n\
         # or by setting TRAWL__SECTION__KEY (e.g. TRAWL__FETCH__MAX_LEVEL=1), which wins over the\n\
         # file. `trawl config show` prints the configuration in effect, `trawl config check`\n\
         # checks it. Secrets never go here: keys are named by the variables that hold them.\n",
    );
    for section in SECTIONS {
        let property = &schema["properties"][section];
        let (def, optional) = definition(&schema, property);
        // An optional section (the LLM) is off by default: shown commented out, with the
        // defaults its keys take once the section is there.
        let (values, prefix) = match defaults.get(section) {
            Some(values) => (values, ""),
            None if section == "llm" => (&llm, "# "),
            None => panic!("section {section} has no defaults"),
        };
        out.push('\n');
        let about = property["description"]
            .as_str()
            .or(def["description"].as_str());
        comment(&mut out, about.unwrap_or_default());
        if optional {
            out.push_str("# Off unless the section is present.\n");
        }
        out.push_str(&format!("{prefix}[{section}]\n"));
        let Some(keys) = def["properties"].as_object() else {
            continue;
        };
        for (key, doc) in keys {
            let doc_text = doc["description"].as_str().unwrap_or_default();
            comment(&mut out, doc_text);
            match values.get(key) {
                Some(value) => out.push_str(&format!("{prefix}{key} = {value}\n")),
                None => out.push_str(&format!("# {key} = (unset)\n")),
            }
        }
    }
    out
}

/// The definition a section's property points at, and whether the section is optional.
fn definition<'a>(schema: &'a Json, property: &'a Json) -> (&'a Json, bool) {
    let reference = |p: &'a Json| {
        let name = p["$ref"].as_str()?.strip_prefix("#/$defs/")?;
        Some(&schema["$defs"][name])
    };
    if let Some(def) = reference(property) {
        return (def, false);
    }
    let variants = (property["anyOf"]
        .as_array()
        .or(property["oneOf"].as_array()))
    .expect("a section is a struct or an optional struct");
    let def = variants
        .iter()
        .find_map(reference)
        .expect("a struct variant");
    (def, true)
}

/// `text` as `#` comment lines of at most [`WIDTH`] characters, paragraphs kept.
fn comment(out: &mut String, text: &str) {
    for paragraph in text.split("\n\n").filter(|p| !p.trim().is_empty()) {
        let mut line = String::from("#");
        for word in paragraph.split_whitespace() {
            if line.len() + 1 + word.len() > WIDTH && line.len() > 1 {
                out.push_str(&line);
                out.push('\n');
                line = String::from("#");
            }
            line.push(' ');
            line.push_str(word);
        }
        out.push_str(&line);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use super::*;

    fn checked_in() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../trawl.example.toml")
    }

    #[test]
    fn example_file_is_up_to_date() {
        let generated = example();
        if std::env::var_os("UPDATE_EXAMPLE").is_some() {
            std::fs::write(checked_in(), &generated).unwrap();
        }
        let file = std::fs::read_to_string(checked_in()).unwrap_or_default();
        assert!(
            file == generated,
            "trawl.example.toml is out of date: run UPDATE_EXAMPLE=1 cargo test -p trawl-config example"
        );
    }

    #[test]
    fn every_section_is_listed_once() {
        let schema = serde_json::to_value(schemars::schema_for!(Config)).unwrap();
        let mut sections: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        sections.sort();
        let mut listed = SECTIONS.to_vec();
        listed.sort();
        assert_eq!(sections, listed);
    }

    /// The file loads as it is (the defaults), and with the LLM section uncommented it loads
    /// too: every key it shows is one the config takes, with a value it accepts.
    #[test]
    fn example_loads_and_states_the_defaults() {
        let dir = std::env::temp_dir().join(format!("trawl-example-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = example();
        let plain = dir.join("plain.toml");
        std::fs::write(&plain, &text).unwrap();
        let loaded = Config::load(Some(&plain), &BTreeMap::new()).unwrap();
        assert_eq!(loaded.show(), Config::default().show());

        let mut in_llm = false;
        let with_llm: String = (text.lines())
            .map(|line| {
                if line.starts_with("# [") || line.starts_with('[') {
                    in_llm = line == "# [llm]";
                }
                let uncommented = line.strip_prefix("# ").filter(|l| {
                    in_llm && (l.starts_with('[') || l.contains(" = ")) && !l.ends_with("(unset)")
                });
                uncommented.unwrap_or(line).to_owned() + "\n"
            })
            .collect();
        let llm = dir.join("llm.toml");
        std::fs::write(&llm, &with_llm).unwrap();
        let env = BTreeMap::from([("TRAWL__LLM__MODEL".to_owned(), "m".to_owned())]);
        let loaded = Config::load(Some(&llm), &env);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(loaded.unwrap().llm.is_some());
    }
}
