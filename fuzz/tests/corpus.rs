//! Every fuzz target's property over its committed seeds (`corpus/TARGET`, crash inputs found
//! earlier among them as `regress_*`), any crash input not yet fixed (`artifacts/TARGET`, kept
//! out of git), and a fixed set of mutants of the seeds made the way libFuzzer makes them (bytes
//! flipped, erased, copied, spliced between seeds, dictionary tokens inserted). Deterministic:
//! the same inputs every run. This is what the ordinary test run (and CI) checks; coverage-guided
//! fuzzing, which needs an instrumented build of its own, is `scripts/fuzz`.

use std::path::{Path, PathBuf};

use trawl_fuzz_checks::TARGETS;

/// Mutants per target: a few seconds of a debug build.
const MUTANTS: usize = 400;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Vec<u8>)> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    out.sort();
    out
}

/// The tokens of a libFuzzer dictionary: one quoted string per line (optionally `name=`
/// before it), with `\\`, `\"` and `\xNN` escapes; `#` starts a comment.
fn dictionary(text: &str) -> Vec<Vec<u8>> {
    let mut tokens = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let (Some(open), Some(close)) = (line.find('"'), line.rfind('"')) else {
            panic!("dictionary line without a quoted token: {line}");
        };
        let inner = &line.as_bytes()[open + 1..close];
        let mut token = Vec::new();
        let mut i = 0;
        while i < inner.len() {
            match (inner[i], inner.get(i + 1)) {
                (b'\\', Some(b'x')) => {
                    let hex = std::str::from_utf8(&inner[i + 2..i + 4]).unwrap();
                    token.push(u8::from_str_radix(hex, 16).unwrap());
                    i += 4;
                }
                (b'\\', Some(&c)) => {
                    token.push(c);
                    i += 2;
                }
                (c, _) => {
                    token.push(c);
                    i += 1;
                }
            }
        }
        tokens.push(token);
    }
    tokens
}

/// xorshift64: mutants that are the same on every run and machine.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// One to four of libFuzzer's kinds of mutation, stacked, on a copy of a seed.
fn mutate(rng: &mut Rng, seeds: &[Vec<u8>], dict: &[Vec<u8>], max: usize) -> Vec<u8> {
    let mut data = seeds[rng.below(seeds.len())].clone();
    for _ in 0..=rng.below(4) {
        let at = rng.below(data.len() + 1);
        match rng.below(7) {
            0 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] ^= 1 << rng.below(8);
            }
            1 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] = rng.below(256) as u8;
            }
            2 if !dict.is_empty() => {
                let token = &dict[rng.below(dict.len())];
                data.splice(at..at, token.iter().copied());
            }
            3 => {
                let end = (at + rng.below(64)).min(data.len());
                data.drain(at..end);
            }
            4 => {
                let end = (at + rng.below(256)).min(data.len());
                let part = data[at..end].to_vec();
                let to = rng.below(data.len() + 1);
                data.splice(to..to, part);
            }
            5 => {
                let other = &seeds[rng.below(seeds.len())];
                let from = rng.below(other.len() + 1);
                data.truncate(at);
                data.extend_from_slice(&other[from..]);
            }
            _ => data.insert(at, b"<>\"\n\0\xff&;"[rng.below(8)]),
        }
    }
    data.truncate(max);
    data
}

/// Runs `check` on `input`; on a panic, keeps the input where `scripts/fuzz --repro` reads it
/// and fails with its origin and path.
fn run(target: &str, check: fn(&[u8]), origin: &str, input: &[u8]) {
    if std::panic::catch_unwind(|| check(input)).is_ok() {
        return;
    }
    let dir = root().join("artifacts").join(target);
    std::fs::create_dir_all(&dir).unwrap();
    let name = format!("crash-{:016x}", fnv(input));
    std::fs::write(dir.join(&name), input).unwrap();
    panic!(
        "{target} failed on {origin} (saved as fuzz/artifacts/{target}/{name}; \
         scripts/fuzz --repro {target} fuzz/artifacts/{target}/{name} shows it again)"
    );
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn replay(name: &str) {
    let target = TARGETS.iter().find(|t| t.name == name).unwrap();
    let seeds = files(&root().join("corpus").join(name));
    assert!(seeds.len() >= 3, "{name}: {} seeds", seeds.len());
    for (path, input) in seeds
        .iter()
        .chain(&files(&root().join("artifacts").join(name)))
    {
        run(name, target.check, path, input);
    }
    let dict_path = root().join("dict").join(format!("{}.dict", target.dict));
    let dict = dictionary(&std::fs::read_to_string(dict_path).unwrap());
    let seeds: Vec<Vec<u8>> = seeds.into_iter().map(|(_, bytes)| bytes).collect();
    let mut rng = Rng(fnv(name.as_bytes()));
    for i in 0..MUTANTS {
        let input = mutate(&mut rng, &seeds, &dict, target.max_len);
        run(name, target.check, &format!("mutant {i}"), &input);
    }
}

#[test]
fn envelope() {
    replay("envelope");
}

#[test]
fn robots() {
    replay("robots");
}

#[test]
fn extract() {
    replay("extract");
}

#[test]
fn markdown() {
    replay("markdown");
}

#[test]
fn dictionaries_read_as_libfuzzer_reads_them() {
    let tokens = dictionary("# c\n\"a\\\"b\"\nkw=\"\\x3c\\\\\"\n");
    assert_eq!(tokens, [b"a\"b".to_vec(), b"<\\".to_vec()]);
    for name in ["envelope", "robots", "html"] {
        let text = std::fs::read_to_string(root().join("dict").join(format!("{name}.dict")));
        assert!(dictionary(&text.unwrap()).len() > 10, "{name}.dict");
    }
}

/// `scripts/fuzz` runs libFuzzer with the same targets, input lengths and dictionaries as this
/// replay: its `TARGETS`, `MAX_LEN` and `DICT` tables are the crate's `TARGETS`.
#[test]
fn scripts_fuzz_knows_the_same_targets() {
    let script = std::fs::read_to_string(root().join("../scripts/fuzz")).unwrap();
    let line = |start: &str| {
        (script.lines())
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("scripts/fuzz has no line {start}…"))
            .to_owned()
    };
    let names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
    assert_eq!(line("TARGETS=("), format!("TARGETS=({})", names.join(" ")));
    let table = |pairs: Vec<String>| format!("({})", pairs.join(" "));
    let max_len = table(
        TARGETS
            .iter()
            .map(|t| format!("[{}]={}", t.name, t.max_len))
            .collect(),
    );
    assert_eq!(
        line("declare -A MAX_LEN="),
        format!("declare -A MAX_LEN={max_len}")
    );
    let dict = table(
        TARGETS
            .iter()
            .map(|t| format!("[{}]={}", t.name, t.dict))
            .collect(),
    );
    assert_eq!(line("declare -A DICT="), format!("declare -A DICT={dict}"));
}
