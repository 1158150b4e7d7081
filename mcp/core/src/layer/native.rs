//! The reasons transform linked in as plain Rust: the layer where no plugin host runs,
//! as in the wasi:http gateway, itself a component. The same code as the component's,
//! without the sandbox around it; the proxy's properties hold for both.

use super::{Layer, Routing, call};
use reasons_transform::{Json, Options, ProviderError, Transform};
use std::collections::BTreeSet;

/// The transform, reached directly: the proxy holds the catalogue and sends the calls.
pub struct NativeLayer {
    transform: Transform,
    /// The tools of the last catalogue whose reason the transform strips.
    augmented: BTreeSet<String>,
}

impl NativeLayer {
    /// The transform, configured with `options`; why not, when they are refused.
    pub fn new(options: Options) -> Result<NativeLayer, String> {
        let mut transform = Transform::new();
        transform.configure(options)?;
        Ok(NativeLayer {
            transform,
            augmented: BTreeSet::new(),
        })
    }
}

impl Layer for NativeLayer {
    fn augment(&mut self, tools: Vec<Json>) -> Result<Vec<Json>, ProviderError> {
        let listed = self.transform.list(tools);
        self.augmented = self.transform.augmented_tools().into_iter().collect();
        Ok(listed)
    }

    fn route(&mut self, id: &str, tool: &str, arguments: Option<&str>) -> Routing {
        Routing::of(arguments, self.transform.route(call(id, tool, arguments)))
    }

    fn strips(&self, tool: &str) -> bool {
        self.augmented.contains(tool)
    }

    fn param(&self) -> &str {
        &self.transform.options().name
    }

    fn required(&self) -> bool {
        self.transform.options().required
    }
}
