//! The layer's options, with the contract's defaults, and their validation.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// The parameter's name by default (R1).
pub const DEFAULT_NAME: &str = "reason";

/// The parameter's description by default (R1).
pub const DEFAULT_DESCRIPTION: &str =
    "One short sentence: why this call. Shown to the human reviewing the session.";

/// Where the parameter goes among a schema's properties.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Position {
    /// Before every other property (R1): a model writes it before the arguments, and a
    /// host that shows only a call's first arguments, or cuts off those after a long one,
    /// still shows it.
    #[default]
    First,
    /// After every other property.
    Last,
}

/// How the layer behaves. `Options::default()` is the contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The parameter's name.
    pub name: String,
    /// The parameter's description, as the model reads it.
    pub description: String,
    /// List the parameter in `required`, and refuse calls to augmented tools without it.
    pub required: bool,
    /// Where the property goes.
    pub position: Position,
    /// Tools never augmented and never stripped, by exact name.
    pub leave_alone: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            name: DEFAULT_NAME.into(),
            description: DEFAULT_DESCRIPTION.into(),
            required: false,
            position: Position::First,
            leave_alone: Vec::new(),
        }
    }
}

/// The longest property name OpenAI's and Anthropic's tool schemas accept.
const MAX_NAME: usize = 64;

/// A description longer than this is a mistake, not a sentence for a model.
const MAX_DESCRIPTION: usize = 1024;

impl Options {
    /// Checks every option; the error names the first one that is wrong and why.
    pub fn validate(&self) -> Result<(), String> {
        // The name is restricted to characters that only an escape can spell
        // differently, which is what lets a call whose text has neither the name nor
        // a backslash skip parsing (R10).
        let name_ok = (1..=MAX_NAME).contains(&self.name.len())
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
        if !name_ok {
            return Err(format!(
                "option `name` must be 1 to {MAX_NAME} characters from a-z A-Z 0-9 _ . - (got {:?})",
                self.name
            ));
        }
        if self.description.trim().is_empty() {
            return Err("option `description` must not be empty".to_string());
        }
        let longest = MAX_DESCRIPTION - usize::from(cfg!(feature = "mutant-description-bound"));
        if self.description.chars().count() > longest {
            return Err(format!(
                "option `description` must be at most {MAX_DESCRIPTION} characters (got {})",
                self.description.chars().count()
            ));
        }
        if let Some(at) = self.leave_alone.iter().position(String::is_empty) {
            return Err(format!(
                "option `leave-alone` holds an empty tool name (entry {})",
                at + 1
            ));
        }
        Ok(())
    }

    /// Whether the tool `name` is to be left alone.
    pub fn leaves_alone(&self, name: &str) -> bool {
        self.leave_alone.iter().any(|alone| alone == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn the_defaults_are_the_contract() {
        // R1
        let options = Options::default();
        assert_eq!(options.name, "reason");
        assert_eq!(
            options.description,
            "One short sentence: why this call. Shown to the human reviewing the session."
        );
        assert!(!options.required);
        assert_eq!(options.position, Position::First);
        assert_eq!(options.validate(), Ok(()));
    }

    /// The error for the default options changed by `change`.
    fn refusal(change: impl FnOnce(&mut Options)) -> String {
        let mut options = Options::default();
        change(&mut options);
        options.validate().unwrap_err()
    }

    #[test]
    fn bad_options_are_named() {
        assert!(refusal(|o| o.name = "".into()).contains("option `name`"));
        assert!(refusal(|o| o.name = "why not".into()).contains("option `name`"));
        assert!(refusal(|o| o.name = "x".repeat(65)).contains("option `name`"));
        assert!(refusal(|o| o.description = " ".into()).contains("option `description`"));
        assert!(refusal(|o| o.description = "x".repeat(1025)).contains("option `description`"));
        let error = refusal(|o| o.leave_alone = vec!["a".into(), "".into()]);
        assert!(
            error.contains("option `leave-alone`") && error.contains("entry 2"),
            "{error}"
        );
    }
}
