//! Support for the end-to-end tests: the fixture component, and the contract's vectors
//! (`tests/vectors/*.json`) run through the native transform and the component alike.

pub mod checks;
pub mod compose;
pub mod providers;

use once_cell::sync::Lazy;
use reasons_host::Plugin;
use reasons_host::dry_run::{self as transform, Layer, Report};
use reasons_transform::{Options, Position, ToolCall};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The misbehaving middleware fixture (`tests/fixtures/unruly`).
pub fn unruly() -> Plugin {
    static UNRULY: Lazy<Plugin> = Lazy::new(|| {
        let bytes = std::fs::read(env!("UNRULY_WASM")).expect("the fixture was built");
        Plugin::new("unruly", &bytes).expect("the fixture compiles")
    });
    UNRULY.clone()
}

/// The fixture that lies about its parameter and augmented tools (`tests/fixtures/liar`).
pub fn liar() -> Plugin {
    static LIAR: Lazy<Plugin> = Lazy::new(|| {
        let bytes = std::fs::read(env!("LIAR_WASM")).expect("the fixture was built");
        Plugin::new("liar", &bytes).expect("the fixture compiles")
    });
    LIAR.clone()
}

/// One case of a vector file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// What the case shows.
    pub name: String,
    /// The rule it proves (`R7`).
    pub rule: String,
    /// Options other than the contract's.
    #[serde(default)]
    pub options: Option<OptionsFile>,
    /// The catalogue the provider below lists.
    pub tools: Vec<Box<RawValue>>,
    /// The catalogue the model sees; absent when identical to `tools`.
    #[serde(default)]
    pub listed: Option<Vec<Box<RawValue>>>,
    /// The names augmented: the augmented tools. Corpora written before the key was renamed
    /// spell it `augmented`.
    #[serde(alias = "augmented")]
    pub augmented_tools: Vec<String>,
    /// The calls the model makes, as `CALLS.json` spells them.
    #[serde(default)]
    pub calls: Option<Box<RawValue>>,
    /// The calls the provider below receives; absent when identical to `calls`.
    #[serde(default)]
    pub received: Option<Box<RawValue>>,
    /// The ids of the calls answered by the layer itself with an error, not forwarded.
    #[serde(default)]
    pub refused: Vec<String>,
    /// Words the answer to a refused call must hold, by the call's id.
    #[serde(default)]
    pub says: BTreeMap<String, String>,
}

/// The layer's options as a vector spells them; absent fields keep the defaults.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptionsFile {
    name: Option<String>,
    description: Option<String>,
    #[serde(default)]
    required: bool,
    #[serde(default)]
    last: bool,
    #[serde(default)]
    leave_alone: Vec<String>,
}

impl From<&OptionsFile> for Options {
    fn from(file: &OptionsFile) -> Options {
        let defaults = Options::default();
        Options {
            name: file.name.clone().unwrap_or(defaults.name),
            description: file.description.clone().unwrap_or(defaults.description),
            required: file.required,
            position: if file.last {
                Position::Last
            } else {
                Position::First
            },
            leave_alone: file.leave_alone.clone(),
        }
    }
}

impl Case {
    /// The case's options.
    pub fn options(&self) -> Options {
        self.options.as_ref().map(Options::from).unwrap_or_default()
    }

    /// The case's catalogue, each declaration as its exact text.
    pub fn tools(&self) -> Vec<String> {
        texts(&self.tools)
    }

    /// The case's calls.
    pub fn calls(&self) -> Vec<ToolCall> {
        calls(self.calls.as_deref(), &self.name)
    }

    /// The calls the provider below is expected to receive.
    pub fn received(&self) -> Vec<ToolCall> {
        calls(
            self.received.as_deref().or(self.calls.as_deref()),
            &self.name,
        )
    }

    /// The catalogue the model is expected to see.
    pub fn listed(&self) -> Vec<String> {
        texts(self.listed.as_ref().unwrap_or(&self.tools))
    }

    /// Checks that the answer to each call the case says something of holds its words;
    /// `answers` are the refusals' ids and contents (JSON text, as a result carries it).
    pub fn check_says<'a>(&self, answers: impl IntoIterator<Item = (&'a str, &'a str)>, at: &str) {
        let answers: BTreeMap<&str, &str> = answers.into_iter().collect();
        for (id, words) in &self.says {
            let content = answers
                .get(id.as_str())
                .unwrap_or_else(|| panic!("{at}: call {id} was not refused"));
            let text: String = serde_json::from_str(content)
                .unwrap_or_else(|error| panic!("{at}: call {id}'s answer: {error}"));
            assert!(
                text.contains(words.as_str()),
                "{at}: call {id} says {text:?}, not {words:?}"
            );
        }
    }

    /// Runs the case through `layer`.
    pub fn run(&self, layer: Layer<'_>) -> Report {
        transform::run(layer, self.options(), self.tools(), self.calls())
            .unwrap_or_else(|error| panic!("{}: {error:#}", self.name))
    }
}

fn texts(values: &[Box<RawValue>]) -> Vec<String> {
    values.iter().map(|value| value.get().to_string()).collect()
}

fn calls(raw: Option<&RawValue>, origin: &str) -> Vec<ToolCall> {
    raw.map(|raw| transform::parse_calls(raw.get(), origin).expect("the vector's calls parse"))
        .unwrap_or_default()
}

/// The calls as a report lists them, back as calls.
pub fn received_calls(report: &Report) -> Vec<ToolCall> {
    let text = serde_json::to_string(&report.calls).expect("a report serialises");
    transform::parse_calls(&text, "the report").expect("a report's calls parse")
}

/// The vector files' directory.
pub fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors")
}

/// Every case of every vector file, with the file's name.
pub fn vectors() -> Vec<(String, Case)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(vectors_dir())
        .expect("tests/vectors exists")
        .map(|entry| entry.expect("a readable entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .flat_map(|path| {
            let text = std::fs::read_to_string(&path).expect("a readable vector file");
            let cases: Vec<Case> = serde_json::from_str(&text)
                .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            cases.into_iter().map(move |case| (file.clone(), case))
        })
        .collect()
}
