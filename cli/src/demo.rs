//! `reasons demo`: a scripted session through `Policy(Reasons(Recorder(FsTools)))` in a
//! temporary directory. A scripted model makes calls; for each one the output shows the
//! prompt a human would see, the decision, and what the file tools actually received.

use anyhow::Context;
use reasons_host::fs_tools::FsTools;
use reasons_host::plugin::Plugin;
use reasons_host::policy::{self, AskRequest, Decision, OnAsk, ReasonSource, Rule};
use reasons_host::provider::Provider;
use reasons_host::recorder::Recorder;
use reasons_host::stack::Stack;
use reasons_transform::{Arguments, Options, ToolCall, ToolResult};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex, PoisonError};

/// The session `reasons demo` plays when given no script.
pub const DEFAULT_SCRIPT: &str = include_str!("../demo/session.json");

/// A scripted session: files to start from, and the model's turns.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// What the user asked for, printed as the session's heading.
    pub task: String,
    /// The working directory's files when the session starts: path → content.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// The model's turns, in order.
    pub turns: Vec<Turn>,
}

/// One assistant turn.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// What the model says before its calls.
    pub say: String,
    /// The calls it makes.
    #[serde(default)]
    pub calls: Vec<ScriptedCall>,
}

/// One call of a turn, and how the scripted human answers if asked.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// The tool.
    pub tool: String,
    /// The arguments, sent as the JSON text a model's function call travels as.
    #[serde(default)]
    pub arguments: Option<Value>,
    /// Or the text exactly as the model wrote it, for arguments that are not JSON.
    #[serde(default)]
    pub text: Option<String>,
    /// `true` if the scripted human approves when asked; declining is the default.
    #[serde(default)]
    pub approve: bool,
}

impl Script {
    /// Parses a script, naming what is wrong with it.
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Script> {
        let script: Script = serde_json::from_str(text)
            .with_context(|| format!("{origin} is not a valid demo script"))?;
        for (turn, number) in script.turns.iter().zip(1..) {
            for call in &turn.calls {
                anyhow::ensure!(
                    call.arguments.is_some() != call.text.is_some(),
                    "{origin}: turn {number}'s call to {:?} must give either `arguments` \
                     or `text`, not both or neither",
                    call.tool
                );
            }
        }
        Ok(script)
    }
}

/// The demo's permission rules: reading is free, writing and deleting are asked about,
/// and no `.env` file is ever written.
pub fn rules() -> anyhow::Result<Vec<Rule>> {
    Ok(vec![
        Rule::new("fs_list", Decision::Allow)?,
        Rule::new("fs_read", Decision::Allow)?,
        Rule::new("fs_write", Decision::Deny)?.when("/path", "{.env,**/.env}")?,
        Rule::new("fs_write", Decision::Ask)?,
        Rule::new("fs_delete", Decision::Ask)?,
    ])
}

/// Who answers the policy's questions.
pub enum Human {
    /// The script's answers.
    Scripted,
    /// A person at this terminal.
    Terminal,
}

/// Plays `script` and writes the session to `out`.
pub fn run(script: &Script, human: Human, out: &mut dyn Write) -> anyhow::Result<()> {
    let dir = tempfile::tempdir().context("cannot make the session's temporary directory")?;
    for (path, content) in &script.files {
        let at = dir.path().join(path);
        anyhow::ensure!(
            at.parent() == Some(dir.path()),
            "script file {path:?} must be a plain file name"
        );
        std::fs::write(&at, content).with_context(|| format!("cannot write {path}"))?;
    }
    let mut tools = FsTools::new(dir.path())?;
    let originals = tools.tools_for_llm()?;
    let (recorder, received) = Recorder::new(Box::new(tools));
    let asked: Arc<Mutex<HashMap<String, bool>>> = Arc::default();
    let turns = numbered_calls(script);
    let answers: HashMap<String, bool> = turns
        .iter()
        .flatten()
        .map(|(call, approve)| (call.id.clone(), *approve))
        .collect();
    let mut stack = Stack::new(recorder)
        .reasons(&Plugin::reasons()?, Options::default())?
        .policy(rules()?, ask(human, answers, asked.clone()));
    let source = stack.reason_source().clone();
    let reason_param = source.param.clone();

    writeln!(out, "Task: {}", script.task)?;
    writeln!(
        out,
        "Working directory: {} (temporary)",
        dir.path().display()
    )?;
    let catalogue = stack.list().context("listing the tools failed")?;
    writeln!(
        out,
        "\nThe model sees {} tools, each with an optional `{reason_param}`:",
        catalogue.len()
    )?;
    for (declaration, original) in catalogue.iter().zip(&originals) {
        let note = if declaration == original {
            "  (declares its own `reason`: left alone, never stripped)"
        } else {
            ""
        };
        writeln!(out, "  {}{note}", summary(declaration))?;
    }

    let mut transcript = Vec::new();
    for (turn, numbered) in script.turns.iter().zip(turns) {
        writeln!(out, "\nassistant: {}", turn.say)?;
        let calls: Vec<ToolCall> = numbered.into_iter().map(|(call, _)| call).collect();
        transcript.push(json!({
            "role": "assistant",
            "content": turn.say,
            "tool_calls": calls.iter().map(|call| json!({
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments.text()},
            })).collect::<Vec<_>>(),
        }));
        let results = stack.execute(calls.clone());
        for (call, result) in calls.iter().zip(&results) {
            let was_asked = asked
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(&call.id)
                .copied();
            let received = received
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .find(|got| got.id == call.id)
                .map(|got| got.arguments.text().to_string());
            report(out, call, result, was_asked, received, &source)?;
            transcript
                .push(json!({"role": "tool", "tool_call_id": call.id, "content": result.content}));
        }
    }

    writeln!(
        out,
        "\nThe transcript keeps every reason (R11), read back as `{reason_param}`:"
    )?;
    for message in &transcript {
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            let arguments: Option<Value> = call["function"]["arguments"]
                .as_str()
                .and_then(|text| serde_json::from_str(text).ok());
            let name = call["function"]["name"].as_str().unwrap_or("");
            let reason = match arguments
                .as_ref()
                .map(|arguments| arguments[&reason_param].as_str())
            {
                _ if !source.augmented_tools.contains(name) => {
                    "(not augmented: its `reason` is the tool's own)".to_string()
                }
                None => "(in arguments that are not JSON, which were not forwarded)".to_string(),
                Some(Some(reason)) => reasons_inert::inert(reason, 80),
                Some(None) => "(none given)".to_string(),
            };
            writeln!(
                out,
                "  {} {name}: {reason}",
                call["id"].as_str().unwrap_or("")
            )?;
        }
    }
    Ok(())
}

/// Each turn's calls as the model sends them, numbered `call_1`, `call_2`… across the
/// session, each with the scripted human's answer should the policy ask.
fn numbered_calls(script: &Script) -> Vec<Vec<(ToolCall, bool)>> {
    let mut number = 0;
    script
        .turns
        .iter()
        .map(|turn| {
            turn.calls
                .iter()
                .map(|call| {
                    number += 1;
                    let text = match (&call.arguments, &call.text) {
                        (Some(arguments), _) => arguments.to_string(),
                        (None, text) => text.clone().unwrap_or_default(),
                    };
                    let sent = ToolCall {
                        id: format!("call_{number}"),
                        name: call.tool.clone(),
                        arguments: Arguments::Text(text),
                    };
                    (sent, call.approve)
                })
                .collect()
        })
        .collect()
}

/// The policy's `on_ask`: records that the call was asked about, and answers.
fn ask(
    human: Human,
    answers: HashMap<String, bool>,
    asked: Arc<Mutex<HashMap<String, bool>>>,
) -> OnAsk {
    Box::new(move |request: &AskRequest<'_>| {
        let approved = match human {
            Human::Scripted => answers.get(&request.call.id).copied().unwrap_or(false),
            Human::Terminal => ask_terminal(request),
        };
        asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(request.call.id.clone(), approved);
        approved
    })
}

/// Puts the prompt to the person at the terminal; anything but `y` declines.
fn ask_terminal(request: &AskRequest<'_>) -> bool {
    let mut stderr = std::io::stderr().lock();
    let _ = write!(stderr, "\n{}\nAllow this call? [y/N] ", request.prompt);
    let _ = stderr.flush();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).is_ok()
        && matches!(answer.trim(), "y" | "Y" | "yes")
}

/// One line about a declaration as the model sees it: its name and parameters.
fn summary(declaration: &str) -> String {
    let value: Value = serde_json::from_str(declaration).unwrap_or_default();
    let function = &value["function"];
    let properties = function["parameters"]["properties"].as_object();
    let names: Vec<&str> = properties
        .into_iter()
        .flatten()
        .map(|(name, _)| name.as_str())
        .collect();
    format!(
        "{}({})",
        function["name"].as_str().unwrap_or("?"),
        names.join(", ")
    )
}

/// The block the session prints for one call.
fn report(
    out: &mut dyn Write,
    call: &ToolCall,
    result: &ToolResult,
    asked: Option<bool>,
    received: Option<String>,
    source: &ReasonSource,
) -> anyhow::Result<()> {
    let (prompt, _) = policy::prompt(call, source);
    writeln!(out, "\n  ── {} ──", call.id)?;
    for line in prompt.lines() {
        writeln!(out, "  │ {line}")?;
    }
    let decision = match (asked, &received) {
        (Some(true), _) => "asked the human: approved",
        (Some(false), _) => "asked the human: declined",
        (None, Some(_)) => "allowed by the policy",
        (None, None) => "denied by the policy",
    };
    writeln!(out, "  decision: {decision}")?;
    match received {
        Some(arguments) => writeln!(out, "  the tool received: {arguments}")?,
        None => writeln!(
            out,
            "  the tool received: nothing (the call was not forwarded)"
        )?,
    }
    let kind = if result.is_error { "error" } else { "result" };
    writeln!(
        out,
        "  {kind}: {}",
        reasons_inert::inert(&result.content, 160)
    )?;
    Ok(())
}

/// Play a scripted session through Policy(Reasons(file tools)) in a temporary directory.
#[derive(clap::Args)]
pub struct Args {
    /// A script to play instead of the built-in one (the format of `demo/session.json`).
    #[arg(long, value_name = "FILE")]
    script: Option<std::path::PathBuf>,
    /// Ask the human at this terminal instead of using the script's answers.
    #[arg(long)]
    interactive: bool,
}

/// `reasons demo`, as its flags ask.
impl crate::Run for Args {
    fn run(self) -> anyhow::Result<u8> {
        let Args {
            script,
            interactive,
        } = self;
        let script = match script {
            None => Script::parse(DEFAULT_SCRIPT, "the built-in script")?,
            Some(path) => {
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                Script::parse(&text, &path.display().to_string())?
            }
        };
        let human = if interactive {
            Human::Terminal
        } else {
            Human::Scripted
        };
        run(&script, human, &mut std::io::stdout().lock())?;
        Ok(0)
    }
}
