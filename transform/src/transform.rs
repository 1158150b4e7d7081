//! The transform's state and its two entry points, independent of how it is hosted.

use crate::call::{self, Param, Scan};
use crate::json::Fault;
use crate::listing;
use crate::options::Options;
use crate::protocol::{self, ProviderError, ToolCall, ToolResult};
use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// The reasons transform: its options and the augmented tools the last listing left behind.
#[derive(Clone, Debug)]
pub struct Transform {
    options: Options,
    augmented_tools: BTreeSet<String>,
    /// The scan for the parameter's name in a call's text.
    scan: Scan,
}

impl Default for Transform {
    fn default() -> Self {
        let options = Options::default();
        Transform {
            scan: Scan::new(&options.name),
            options,
            augmented_tools: BTreeSet::new(),
        }
    }
}

impl Transform {
    /// A layer with the contract's options. Nothing is stripped before the first listing (R8).
    pub fn new() -> Self {
        Self::default()
    }

    /// The options in force.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Replaces the options, or refuses them whole with a message naming the bad one.
    /// Accepted options empty the augmented tools: they were read under the old ones.
    pub fn configure(&mut self, options: Options) -> Result<(), String> {
        options.validate()?;
        self.scan = Scan::new(&options.name);
        self.options = options;
        self.augmented_tools.clear();
        Ok(())
    }

    /// The names the last listing augmented, in order: the only ones stripped (R8).
    pub fn augmented_tools(&self) -> Vec<String> {
        self.augmented_tools.iter().cloned().collect()
    }

    /// Augments a catalogue the provider below listed and makes its names the augmented tools,
    /// replacing the old one whole (R1–R8). A listing that failed never gets here, so it
    /// leaves the set as it was.
    pub fn list(&mut self, catalogue: Vec<String>) -> Vec<String> {
        let listing = listing::augment(catalogue, &self.options);
        self.augmented_tools = listing.augmented_tools;
        listing.declarations
    }

    /// Strips the batch, hands what is to be forwarded to `below`, and answers every call
    /// exactly once, in order (R9, R13). `below` is not called for an empty batch.
    pub fn execute(
        &self,
        calls: Vec<ToolCall>,
        below: impl FnOnce(Vec<ToolCall>) -> Result<Vec<ToolResult>, ProviderError>,
    ) -> Vec<ToolResult> {
        protocol::answer(calls.into_iter().map(|call| self.route(call)), below)
    }

    /// One call as the provider below is to receive it (R9), or its refusal: text that
    /// could hold the parameter but is not JSON (R10), or a call without it in required
    /// mode. [`Transform::execute`]'s first half, for a host that must not hold the layer
    /// while the provider below runs.
    pub fn route(&self, call: ToolCall) -> Result<ToolCall, ToolResult> {
        let tracked = if cfg!(feature = "mutant-name-ignore-case") {
            (self.augmented_tools.iter()).any(|name| name.eq_ignore_ascii_case(&call.name))
        } else {
            self.augmented_tools.contains(&call.name)
        };
        if !tracked && !cfg!(feature = "mutant-strip-untracked") {
            return Ok(call);
        }
        match call::find(call.arguments.text(), &self.options.name, &self.scan) {
            Param::Present { without, is_null } if !(is_null && self.options.required) => {
                Ok(ToolCall {
                    arguments: call.arguments.with_text(without),
                    ..call
                })
            }
            Param::Unreadable(fault) => Err(ToolResult::error(&call.id, &unreadable(&fault))),
            // Absent, or null where it is required.
            _ if self.options.required => Err(ToolResult::error(&call.id, &self.missing())),
            Param::Absent | Param::Present { .. } => Ok(call),
        }
    }

    /// What a call refused in required mode tells the model.
    fn missing(&self) -> String {
        format!(
            "This call was not run: it needs a `{}` argument ({}). Add it and call again.",
            self.options.name, self.options.description
        )
    }
}

/// What a call refused for text that is not JSON tells the model (R10).
fn unreadable(fault: &Fault) -> String {
    format!(
        "This call was not run: its arguments are not valid JSON (at byte {}, {}). \
         Send the arguments again as one JSON object.",
        fault.at, fault.what
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Arguments;
    use alloc::vec;

    const T: &str = r#"{"name":"t","inputSchema":{}}"#;
    const U: &str = r#"{"name":"u","inputSchema":{}}"#;

    /// The arguments `layer` forwards for one call to `name`.
    fn forwarded(layer: &Transform, name: &str, arguments: &str) -> String {
        let call = ToolCall {
            id: "1".into(),
            name: name.into(),
            arguments: Arguments::Text(arguments.into()),
        };
        let mut got = String::new();
        layer.execute(vec![call], |calls| {
            got = calls[0].arguments.text().into();
            Ok(vec![])
        });
        got
    }

    #[test]
    fn the_augmented_tools_is_the_last_listings() {
        // R8
        let mut layer = Transform::new();
        assert_eq!(forwarded(&layer, "t", r#"{"reason":1}"#), r#"{"reason":1}"#);
        layer.list(vec![T.into(), U.into()]);
        assert_eq!(layer.augmented_tools(), ["t", "u"]);
        assert_eq!(forwarded(&layer, "t", r#"{"reason":1}"#), "{}");
        layer.list(vec![U.into()]);
        assert_eq!(forwarded(&layer, "t", r#"{"reason":1}"#), r#"{"reason":1}"#);
        assert_eq!(forwarded(&layer, "u", r#"{"reason":1}"#), "{}");
    }

    #[test]
    fn new_options_empty_the_set_and_bad_ones_change_nothing() {
        // R8
        let mut layer = Transform::new();
        layer.list(vec![T.into()]);
        let bad = Options {
            name: String::new(),
            ..Options::default()
        };
        assert!(layer.configure(bad).is_err());
        assert_eq!(layer.augmented_tools(), ["t"]);
        layer
            .configure(Options {
                name: "why".into(),
                ..Options::default()
            })
            .unwrap();
        assert!(layer.augmented_tools().is_empty());
        assert_eq!(layer.options().name, "why");
    }

    #[test]
    fn required_mode_asks_the_model_for_the_reason_in_a_result() {
        // The required mode (an option, which overrides R6's nullable spelling): refused
        // calls are answered, never forwarded.
        let mut layer = Transform::new();
        let options = Options {
            required: true,
            ..Options::default()
        };
        layer.configure(options).unwrap();
        layer.list(vec![T.into()]);
        let call = ToolCall {
            id: "7".into(),
            name: "t".into(),
            arguments: Arguments::Text(r#"{"a":1}"#.into()),
        };
        let results = layer.execute(vec![call], |_| panic!("a refused call was forwarded"));
        assert_eq!(results.len(), 1);
        assert!(results[0].is_error);
        assert_eq!(results[0].call_id, "7");
        assert!(
            results[0].content.contains("needs a `reason` argument"),
            "{}",
            results[0].content
        );
        assert!(results[0].content.contains("Add it and call again"));
    }

    #[test]
    fn text_that_could_hide_a_reason_is_answered_in_place_and_never_forwarded() {
        // R10, R13: the refusal takes the call's place in the answers; the rest go on.
        let mut layer = Transform::new();
        layer.list(vec![T.into()]);
        let call = |id: &str, text: &str| ToolCall {
            id: id.into(),
            name: "t".into(),
            arguments: Arguments::Text(text.into()),
        };
        let calls = vec![
            call("1", r#"{"a":1,"reason":"x"}"#),
            call("2", "{\"reason\":\"two\nlines\"}"),
            call("3", r#"{"a":NaN}"#),
        ];
        let mut below = Vec::new();
        let results = layer.execute(calls, |calls| {
            below = calls.iter().map(|call| call.id.clone()).collect();
            Ok(calls
                .iter()
                .map(|call| ToolResult::ok(&call.id, "null"))
                .collect())
        });
        assert_eq!(below, ["1", "3"]);
        assert_eq!(results.len(), 3);
        let ids: Vec<&str> = results
            .iter()
            .map(|result| result.call_id.as_str())
            .collect();
        assert_eq!(ids, ["1", "2", "3"]);
        assert!(!results[0].is_error && results[1].is_error && !results[2].is_error);
        let said = "This call was not run: its arguments are not valid JSON (at byte 14, a raw \
                    control character (U+000A), which a JSON string holds only escaped). Send \
                    the arguments again as one JSON object.";
        assert_eq!(results[1].content, serde_json::to_string(said).unwrap());
    }

    #[test]
    fn an_empty_batch_never_reaches_the_provider() {
        // R13
        let layer = Transform::new();
        let results = layer.execute(Vec::new(), |_| panic!("called with nothing to do"));
        assert!(results.is_empty());
    }
}
