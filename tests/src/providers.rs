//! Host providers for the tests: real behaviour, including the bad kinds.

use reasons_host::{Json, Provider};
use reasons_transform::{ProviderError, ToolCall, ToolResult};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a [`Scripted`] provider does when called.
#[derive(Clone, Debug)]
pub enum Behaviour {
    /// Answers each call with its arguments' text as a JSON string.
    Echo,
    /// Fails the whole batch (or the listing).
    Fail(String),
    /// Panics.
    Panic,
    /// Answers only the first call.
    AnswerFirstOnly,
    /// Echoes, after this long: a slow tool.
    Slow(Duration),
}

/// A provider with a fixed catalogue whose behaviour a test can change between calls,
/// and which remembers every call it receives.
#[derive(Clone)]
pub struct Scripted {
    catalogue: Arc<Mutex<Vec<Json>>>,
    behaviour: Arc<Mutex<Behaviour>>,
    received: Arc<Mutex<Vec<ToolCall>>>,
    listings: Arc<Mutex<usize>>,
}

impl Scripted {
    /// A provider listing `catalogue` and echoing calls.
    pub fn new(catalogue: &[&str]) -> Scripted {
        Scripted {
            catalogue: Arc::new(Mutex::new(
                catalogue.iter().map(|d| d.to_string()).collect(),
            )),
            behaviour: Arc::new(Mutex::new(Behaviour::Echo)),
            received: Arc::default(),
            listings: Arc::default(),
        }
    }

    /// Changes what the provider does from now on.
    pub fn behave(&self, behaviour: Behaviour) {
        *self.behaviour.lock().unwrap() = behaviour;
    }

    /// Replaces the catalogue.
    pub fn set_catalogue(&self, catalogue: &[&str]) {
        *self.catalogue.lock().unwrap() = catalogue.iter().map(|d| d.to_string()).collect();
    }

    /// Every call received so far, and forgets them.
    pub fn take_received(&self) -> Vec<ToolCall> {
        std::mem::take(&mut *self.received.lock().unwrap())
    }

    /// How many times the catalogue was listed.
    pub fn listings(&self) -> usize {
        *self.listings.lock().unwrap()
    }
}

impl Provider for Scripted {
    fn tools_for_llm(&mut self) -> Result<Vec<Json>, ProviderError> {
        *self.listings.lock().unwrap() += 1;
        let behaviour = self.behaviour.lock().unwrap().clone();
        match behaviour {
            Behaviour::Fail(message) => Err(ProviderError::Failed(message)),
            Behaviour::Panic => panic!("the scripted provider panics while listing"),
            _ => Ok(self.catalogue.lock().unwrap().clone()),
        }
    }

    fn execute_tool_calls(
        &mut self,
        calls: Vec<ToolCall>,
    ) -> Result<Vec<ToolResult>, ProviderError> {
        self.received.lock().unwrap().extend(calls.iter().cloned());
        let echo = |call: &ToolCall| {
            ToolResult::ok(
                &call.id,
                &serde_json::to_string(call.arguments.text()).unwrap(),
            )
        };
        let behaviour = self.behaviour.lock().unwrap().clone();
        match behaviour {
            Behaviour::Echo => Ok(calls.iter().map(echo).collect()),
            Behaviour::AnswerFirstOnly => Ok(calls.iter().take(1).map(echo).collect()),
            Behaviour::Slow(time) => {
                std::thread::sleep(time);
                Ok(calls.iter().map(echo).collect())
            }
            Behaviour::Fail(message) => Err(ProviderError::Failed(message)),
            Behaviour::Panic => panic!("the scripted provider panics while executing"),
        }
    }
}

/// A call in text form.
pub fn text_call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: reasons_transform::Arguments::Text(arguments.into()),
    }
}
