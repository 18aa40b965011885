//! `docs/architecture.md` stays true: these tests read it beside the code it describes and
//! fail, naming every missing or stale name at once, when the two part.
//!
//! - Crates: every workspace member (root `Cargo.toml`) is a row of the crate table by its
//!   path, and a line of the crate graph by its folder's name with exactly the workspace crates
//!   its `[dependencies]` name (dev-dependencies left out).
//! - Redis keys: every key passes through `RedisStore::key` (`src/redis/`), so the
//!   `self.key(&[…])` calls in its files are the one list of key families the code defines; each is
//!   parsed from the source (a literal part stays, anything else becomes `<…>`) and must be a
//!   key of the doc's Redis section. A new family in the store fails here until it is named.
//!   Every `Cache` (its `ALL`) is named there too.
//! - Names callers give those families (`lock:synth:<job>`, `rate:llm:<kind>:<model>` …) are
//!   built in other crates, with no list of them in code. They are found by their shape: a
//!   string literal `"word:{…"` in a `src/` of `shared/` or `services/` (this crate's own,
//!   where the key builders and hash fields live, left out), whose words must follow a family
//!   in a key of the Redis section. A literal of that shape that is no Redis name goes in
//!   [`NOT_KEY_NAMES`], with what it is.
//! - Object-store paths: each `format!` of `shared/messages/src/paths.rs` is named.
//! - Every `Type::member` and `module::item` the doc writes in backticks exists: a source file
//!   declares the type (or impl) and the member (fn, const, variant), or a file of the module
//!   defines or re-exports the item. A member of the same name elsewhere in that file passes
//!   too: this catches names that are gone, not every wrong attribution.
//!
//! Plain text, no parser crates: this crate's dev-dependencies stay what its own tests need.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use trawl_store::Cache;

/// Literals shaped like a Redis name (`"word:{…"`) that are not one.
const NOT_KEY_NAMES: &[(&str, &str)] = &[
    // Google's `tbs` time filter (`qdr:d`), services/search/src/providers/serper.rs.
    ("qdr:", "a search provider's query parameter"),
    // `site:example.org` in a query, services/search/src/chain.rs.
    ("site:", "a web search's site operator"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    let path = root().join(rel);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn doc() -> String {
    read("docs/architecture.md")
}

/// Fails with every problem, one per line.
fn report(what: &str, problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "docs/architecture.md has drifted from the code ({what}):\n  - {}\n",
        problems.join("\n  - ")
    );
}

/// The text from the line starting with `start` to the next line starting with `end`.
fn section<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(&format!("\n{start}"))
        .unwrap_or_else(|| panic!("docs/architecture.md has no line starting with {start:?}"));
    let rest = &text[from + 1..];
    let to = rest
        .find(&format!("\n{end}"))
        .unwrap_or_else(|| panic!("docs/architecture.md has no line starting with {end:?}"));
    &rest[..to]
}

/// The `code spans` of markdown text, outside fenced blocks.
fn code_spans(text: &str) -> Vec<&str> {
    let mut spans = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            spans.extend(line.split('`').skip(1).step_by(2));
        }
    }
    spans
}

/// `<job>`, `<token>` … all become `<>`, so a family matches however its parts are named.
fn normalise(key: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in key.chars() {
        match c {
            '<' | '{' => {
                inside = true;
                out.push('<');
            }
            '>' | '}' if inside => {
                inside = false;
                out.push('>');
            }
            _ if inside => {}
            _ => out.push(c),
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// True if `word` occurs in `text` not as part of a longer identifier.
fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

// ---------------------------------------------------------------------------------------------
// Crates

struct Member {
    path: String,
    /// The folder's name: what the graph calls the crate.
    short: String,
    /// Package names of the workspace crates in its `[dependencies]`.
    deps: BTreeSet<String>,
}

/// The quoted strings of the root manifest's `members = [ … ]`.
fn member_paths() -> Vec<String> {
    let manifest = read("Cargo.toml");
    let start = manifest
        .find("members = [")
        .expect("the root Cargo.toml has a members list");
    let list = &manifest[start..];
    let list = &list[..list.find(']').expect("the members list ends")];
    list.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// A manifest's package name and the keys of its normal dependency tables
/// (`[dependencies]`, `[target.….dependencies]`).
fn manifest(path: &str) -> (String, BTreeSet<String>) {
    let text = read(&format!("{path}/Cargo.toml"));
    let (mut table, mut name, mut deps) = (String::new(), None, BTreeSet::new());
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            table = line.trim_matches(|c| c == '[' || c == ']').to_owned();
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let key = line
            .split(|c: char| c == '=' || c == '.' || c.is_whitespace())
            .next()
            .unwrap_or_default();
        if table == "package" && key == "name" && name.is_none() {
            name = line.split('"').nth(1).map(str::to_owned);
        }
        if table == "dependencies"
            || (table.starts_with("target.") && table.ends_with(".dependencies"))
        {
            deps.insert(key.to_owned());
        }
    }
    let name = name.unwrap_or_else(|| panic!("{path}/Cargo.toml has no package name"));
    (name, deps)
}

fn members() -> Vec<Member> {
    let paths = member_paths();
    let manifests: Vec<(String, BTreeSet<String>)> = paths.iter().map(|p| manifest(p)).collect();
    let workspace: BTreeSet<&str> = manifests.iter().map(|(name, _)| name.as_str()).collect();
    paths
        .iter()
        .zip(&manifests)
        .map(|(path, (_, deps))| Member {
            path: path.clone(),
            short: path.rsplit('/').next().unwrap_or(path).to_owned(),
            deps: (deps.iter())
                .filter(|d| workspace.contains(d.as_str()))
                .cloned()
                .collect(),
        })
        .collect()
}

/// The crate graph: the first fenced block under `## Crates`, lines `a, b: x, y (comment)`,
/// `none` for no dependencies.
fn graph(doc: &str) -> (BTreeMap<String, BTreeSet<String>>, Vec<String>) {
    let crates = section(doc, "## Crates", "## ");
    let block = crates
        .split("```")
        .nth(1)
        .expect("## Crates opens with the crate graph in a fenced block");
    let (mut graph, mut problems) = (BTreeMap::new(), Vec::new());
    for line in block.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let Some((names, uses)) = line.split_once(':') else {
            problems.push(format!("graph line {line:?} has no `:`"));
            continue;
        };
        let uses = uses.split('(').next().unwrap_or_default().trim();
        let uses: BTreeSet<String> = match uses {
            "none" => BTreeSet::new(),
            _ => uses.split(',').map(|u| u.trim().to_owned()).collect(),
        };
        for name in names.split(',').map(str::trim) {
            if graph.insert(name.to_owned(), uses.clone()).is_some() {
                problems.push(format!("`{name}` is in the crate graph twice"));
            }
        }
    }
    (graph, problems)
}

#[test]
fn every_workspace_crate_is_in_the_graph_and_the_table() {
    let doc = doc();
    let members = members();
    assert!(
        members.len() >= 10 && members.iter().any(|m| m.path == "shared/store"),
        "the members of the root Cargo.toml were not read: {:?}",
        members.iter().map(|m| &m.path).collect::<Vec<_>>()
    );
    let short_of: BTreeMap<String, &str> = members
        .iter()
        .map(|m| (manifest(&m.path).0, m.short.as_str()))
        .collect();
    let (graph, mut problems) = graph(&doc);
    for m in &members {
        if !doc.contains(&format!("\n| `{}` |", m.path)) {
            problems.push(format!(
                "`{}` has no row in the crate table, which names each crate by its path",
                m.path
            ));
        }
        let cargo: BTreeSet<String> = (m.deps.iter())
            .map(|d| short_of[d.as_str()].to_owned())
            .collect();
        match graph.get(&m.short) {
            None => problems.push(format!(
                "`{}` ({}) is not in the crate graph; its dependencies: {}",
                m.short,
                m.path,
                list(&cargo)
            )),
            Some(drawn) if *drawn != cargo => problems.push(format!(
                "`{}` in the crate graph uses {}; its Cargo.toml: {}",
                m.short,
                list(drawn),
                list(&cargo)
            )),
            Some(_) => {}
        }
    }
    let shorts: BTreeSet<&str> = members.iter().map(|m| m.short.as_str()).collect();
    for name in graph.keys().filter(|n| !shorts.contains(n.as_str())) {
        problems.push(format!(
            "`{name}` in the crate graph is no workspace member"
        ));
    }
    report("crates", problems);
}

fn list(names: &BTreeSet<String>) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.iter().cloned().collect::<Vec<_>>().join(", ")
    }
}

// ---------------------------------------------------------------------------------------------
// Redis keys and object paths

/// The key families `RedisStore::key` is called with, as `job:<>:outcomes`, each with the
/// first file of `shared/store/src/redis/` that calls it so.
fn key_families() -> BTreeMap<String, String> {
    let mut files = Vec::new();
    rust_files(&root().join("shared/store/src/redis"), &mut files);
    files.sort();
    let mut families = BTreeMap::new();
    for file in &files {
        let source = fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let file = file
            .strip_prefix(root())
            .unwrap_or(file)
            .display()
            .to_string();
        for (at, call) in source.match_indices("self.key(&[") {
            let rest = &source[at + call.len()..];
            let args = &rest[..rest.find("])").expect("a key call ends with `])`")];
            let parts: Vec<String> = args
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(|part| match part.split('"').nth(1) {
                    // A literal, or a `format!` literal whose arguments become `<>`.
                    Some(literal) => normalise(literal),
                    None => "<>".to_owned(),
                })
                .collect();
            families
                .entry(parts.join(":"))
                .or_insert_with(|| file.clone());
        }
    }
    families
}

fn redis_section(doc: &str) -> &str {
    section(doc, "**Redis**", "**RabbitMQ**")
}

#[test]
fn every_redis_key_family_and_cache_is_named() {
    let doc = doc();
    let spans: BTreeSet<String> = code_spans(redis_section(&doc))
        .into_iter()
        .map(normalise)
        .collect();
    let families = key_families();
    assert!(
        families.contains_key("job:<>:outcomes") && families.len() >= 10,
        "the key families were not read from shared/store/src/redis/: {families:?}"
    );
    let mut problems: Vec<String> = (families.iter())
        .filter(|(f, _)| !spans.contains(*f))
        .map(|(f, file)| format!("Redis key family `{f}` (`RedisStore::key` in {file}) is not a key of the Redis section"))
        .collect();
    for cache in Cache::ALL {
        if !spans.contains(cache.as_str()) {
            problems.push(format!(
                "cache `{}` (`Cache`) is not named in the Redis section",
                cache.as_str()
            ));
        }
    }
    report("Redis key families", problems);
}

/// Every `.rs` file under `dir`, relative to the root.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// The words of a literal of the shape `"word:word:{…"`, as `word:word:`.
fn name_prefixes(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in source.match_indices('"') {
        let rest = &source[at + 1..];
        let Some(brace) = rest.find(":{") else {
            continue;
        };
        let words = &rest[..brace];
        let shaped = !words.is_empty()
            && words.split(':').all(|w| {
                w.starts_with(|c: char| c.is_ascii_lowercase())
                    && w.chars().all(|c| {
                        c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_'
                    })
            });
        if shaped {
            found.push(format!("{words}:"));
        }
    }
    found
}

#[test]
fn every_name_callers_give_a_key_family_is_named() {
    let doc = doc();
    let spans = code_spans(redis_section(&doc));
    let mut files = Vec::new();
    for top in ["shared", "services"] {
        for krate in fs::read_dir(root().join(top))
            .into_iter()
            .flatten()
            .flatten()
        {
            if krate.path().ends_with("shared/store") {
                continue;
            }
            rust_files(&krate.path().join("src"), &mut files);
        }
    }
    assert!(
        files.len() > 50,
        "the sources were not found: {} files",
        files.len()
    );
    let mut seen = BTreeMap::new();
    for file in &files {
        let source = fs::read_to_string(file).unwrap_or_default();
        for prefix in name_prefixes(&source) {
            seen.entry(prefix).or_insert_with(|| file.clone());
        }
    }
    assert!(
        seen.contains_key("synth:"),
        "the synthesis lease's name (`synth:{{job}}`) was not found: the scan is broken"
    );
    let problems = seen
        .iter()
        .filter(|(prefix, _)| !NOT_KEY_NAMES.iter().any(|(n, _)| n == prefix))
        .filter(|(prefix, _)| !spans.iter().any(|s| s.contains(&format!(":{prefix}"))))
        .map(|(prefix, file)| {
            let file = file.strip_prefix(root()).unwrap_or(file).display().to_string();
            format!(
                "`{prefix}…` ({file}) looks like a name for a Redis key family, and no key of the Redis section (`family:{prefix}…`) has it; if it is no Redis name, add it to NOT_KEY_NAMES"
            )
        })
        .collect();
    report("names of Redis keys", problems);
}

#[test]
fn every_object_store_path_is_named() {
    let doc = doc();
    let spans: BTreeSet<String> = code_spans(&doc)
        .into_iter()
        .map(|s| normalise(s).trim_end_matches('/').to_owned())
        .collect();
    let source = read("shared/messages/src/paths.rs");
    let mut paths = Vec::new();
    for (at, call) in source.match_indices("format!(\"") {
        let rest = &source[at + call.len()..];
        let literal = normalise(&rest[..rest.find('"').expect("a format string ends")]);
        let literal = literal.strip_prefix("<>/").unwrap_or(&literal).to_owned();
        // `<>`: a job's file by its name (`job_file`), a name not a path.
        if literal != "<>" {
            paths.push(literal);
        }
    }
    assert!(
        paths.iter().any(|p| p == "report.md") && paths.len() >= 10,
        "the paths were not read from shared/messages/src/paths.rs: {paths:?}"
    );
    let problems = paths
        .iter()
        .filter(|p| {
            let last = p.rsplit('/').next().unwrap_or(p);
            !spans.contains(p.as_str()) && (last.starts_with('<') || !spans.contains(last))
        })
        .map(|p| format!("object path `{p}` (shared/messages/src/paths.rs) is not named"))
        .collect();
    report("object-store paths", problems);
}

// ---------------------------------------------------------------------------------------------
// Names of types, functions and modules

struct Source {
    /// Relative to the root, `/`-separated.
    path: String,
    text: String,
}

fn sources() -> Vec<Source> {
    let mut files = Vec::new();
    for top in ["shared", "services", "integration-tests", "fuzz"] {
        rust_files(&root().join(top), &mut files);
    }
    files
        .into_iter()
        .map(|file| Source {
            path: (file.strip_prefix(root()).unwrap_or(&file))
                .to_string_lossy()
                .replace('\\', "/"),
            text: fs::read_to_string(&file).unwrap_or_default(),
        })
        .collect()
}

/// A line of `text` declares `ty` or an impl for it.
fn declares_type(text: &str, ty: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim_start();
        let line = ["pub(crate) ", "pub(super) ", "pub "]
            .iter()
            .find_map(|p| line.strip_prefix(p))
            .unwrap_or(line);
        ["struct ", "enum ", "trait ", "type ", "impl"]
            .iter()
            .any(|k| line.starts_with(k))
            && has_word(line, ty)
    })
}

/// `text` defines `item`: a function, constant, type, module, or an enum variant, or
/// re-exports it.
fn defines(text: &str, item: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim_start();
        let variant = line
            .strip_prefix(item)
            .is_some_and(|r| r.is_empty() || r.starts_with([',', '(', ' ', '{']));
        variant
            || [
                "fn ", "const ", "static ", "struct ", "enum ", "trait ", "type ", "mod ",
            ]
            .iter()
            .any(|k| {
                line.match_indices(&format!("{k}{item}")).any(|(at, m)| {
                    let after = line[at + m.len()..].chars().next();
                    let before = line[..at].chars().next_back();
                    !after.is_some_and(is_ident) && !before.is_some_and(is_ident)
                })
            })
            || (line.contains("pub use ") && has_word(line, item))
    })
}

/// The file belongs to module (or crate) `module`: one of its folders or its file is named so.
fn in_module(path: &str, module: &str) -> bool {
    let module = module.strip_prefix("trawl_").unwrap_or(module);
    path.split('/')
        .any(|part| part == module || part.strip_suffix(".rs") == Some(module))
}

/// Each `a::b` of the doc's code spans, with the span it is in.
fn paths_in(doc: &str) -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    for span in code_spans(doc) {
        for (at, _) in span.match_indices("::") {
            let left: String = (span[..at].chars().rev())
                .take_while(|c| is_ident(*c))
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let right: String = span[at + 2..]
                .chars()
                .take_while(|c| is_ident(*c))
                .collect();
            if !left.is_empty() && !right.is_empty() {
                found.insert((left, right));
            }
        }
    }
    found
}

#[test]
fn every_type_member_and_module_item_named_exists() {
    let doc = doc();
    let sources = sources();
    let named = paths_in(&doc);
    assert!(
        named.contains(&("Job".to_owned(), "record".to_owned())),
        "no `Type::method` was read from the doc: {named:?}"
    );
    let problems = named
        .iter()
        .filter(|(left, right)| {
            let found = if left.starts_with(|c: char| c.is_ascii_uppercase()) {
                sources
                    .iter()
                    .any(|s| declares_type(&s.text, left) && defines(&s.text, right))
            } else {
                sources.iter().any(|s| {
                    in_module(&s.path, left)
                        && (defines(&s.text, right) || in_module(&s.path, right))
                })
            };
            !found
        })
        .map(|(left, right)| format!("`{left}::{right}` is not in the source"))
        .collect();
    report("names", problems);
}
