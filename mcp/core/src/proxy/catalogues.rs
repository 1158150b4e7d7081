//! The server's tools as each caller was last shown them: the only thing a call's fate is
//! decided against (R5, R8, R18). A server may declare tools by the caller's capabilities
//! (the `_meta` a 2026-07-28 request carries), so in a session clients share, one
//! client's listing decides nothing of another's calls: each catalogue belongs to the
//! caller its listing was made for, and a call is classified only against its own
//! caller's. The layer keeps one strip set at a time; a catalogue keeps the set the layer
//! made of it, and the layer is given a catalogue's declarations again before it routes
//! a call of that caller when it last read another's.

use super::hold::Caller;
use reasons_transform::Json;
use std::collections::{HashMap, HashSet, VecDeque};

/// The most callers whose catalogues are kept: a caller whose catalogue went is listed
/// again when its calls need it, so clients that each send a `_meta` of their own cannot
/// grow the proxy without end.
const MOST_CALLERS: usize = 64;

/// The server's tools for one caller, from its latest whole listing for that caller.
pub(super) struct Catalogue {
    /// Which listing it was: listings are numbered in the order they were asked for.
    pub(super) generation: u64,
    /// Every name the listing declares.
    pub(super) names: HashSet<String>,
    /// The names whose calls the layer strips of the model's reason, under this listing.
    pub(super) stripped: HashSet<String>,
    /// Each declaration as the server listed it, and as the model is to see it.
    pub(super) declarations: HashMap<Json, Json>,
    /// The declarations in the order the listing gave them, repeats kept, each with its
    /// name: for a proxy that answers whole listings alone (empty otherwise).
    pub(super) in_order: Vec<(Json, Option<String>)>,
}

impl Catalogue {
    /// Whether `tools` holds the declarations this catalogue was made of, and no others.
    /// Their order and repeats do not matter: what the layer makes of a declaration
    /// depends on the set of declarations beside it, not on their order (R7).
    pub(super) fn is_made_of(&self, tools: &[Json]) -> bool {
        let distinct: HashSet<&Json> = tools.iter().collect();
        distinct.len() == self.declarations.len()
            && distinct
                .iter()
                .all(|tool| self.declarations.contains_key(*tool))
    }

    /// The declarations as the server listed them, for the layer to read again.
    pub(super) fn listed(&self) -> Vec<Json> {
        self.declarations.keys().cloned().collect()
    }
}

/// Each caller's catalogue, and whose the layer's strip set is now.
#[derive(Default)]
pub(super) struct Catalogues {
    by_caller: HashMap<Caller, Catalogue>,
    /// The callers, the least recently listed first.
    order: VecDeque<Caller>,
    /// The caller and generation of the catalogue the layer last read.
    layer_holds: Option<(Caller, u64)>,
}

impl Catalogues {
    /// `caller`'s catalogue, current or not.
    pub(super) fn of(&self, caller: &Caller) -> Option<&Catalogue> {
        self.by_caller.get(caller)
    }

    /// `caller`'s catalogue, when it is current: made of a listing asked for after the
    /// server's latest change (`want`).
    pub(super) fn current(&self, caller: &Caller, want: u64) -> Option<&Catalogue> {
        self.of(caller).filter(|catalogue| {
            cfg!(feature = "mutant-stale-listing") || catalogue.generation >= want
        })
    }

    /// The generation of `caller`'s catalogue; 0 when it has none.
    pub(super) fn generation(&self, caller: &Caller) -> u64 {
        self.of(caller).map_or(0, |catalogue| catalogue.generation)
    }

    /// Makes `caller`'s catalogue the same declarations again as of a later listing,
    /// `generation`, when `tools` are what it was made of; whether they were.
    pub(super) fn renew(&mut self, caller: &Caller, tools: &[Json], generation: u64) -> bool {
        let Some(catalogue) = self.by_caller.get_mut(caller) else {
            return false;
        };
        // A catalogue that keeps its listing's order is the same listing only in that
        // order, repeats and all.
        let reordered = !catalogue.in_order.is_empty()
            && !(catalogue.in_order.iter().map(|(tool, _)| tool)).eq(tools.iter());
        if !catalogue.is_made_of(tools) || reordered {
            return false;
        }
        if self.layer_holds == Some((caller.clone(), catalogue.generation)) {
            self.layer_holds = Some((caller.clone(), generation));
        }
        catalogue.generation = generation;
        true
    }

    /// `catalogue` is `caller`'s, which the layer has just read.
    pub(super) fn insert(&mut self, caller: Caller, catalogue: Catalogue) {
        self.layer_holds = Some((caller.clone(), catalogue.generation));
        self.order.retain(|kept| kept != &caller);
        self.order.push_back(caller.clone());
        self.by_caller.insert(caller, catalogue);
        while self.order.len() > MOST_CALLERS {
            if let Some(oldest) = self.order.pop_front() {
                self.by_caller.remove(&oldest);
            }
        }
    }

    /// Whether the layer's strip set is `caller`'s catalogue's.
    pub(super) fn layer_holds(&self, caller: &Caller) -> bool {
        let generation = self.generation(caller);
        self.layer_holds
            .as_ref()
            .is_some_and(|(held, at)| held == caller && *at == generation)
    }

    /// The layer has read `caller`'s catalogue again.
    pub(super) fn layer_read(&mut self, caller: &Caller) {
        self.layer_holds = Some((caller.clone(), self.generation(caller)));
    }

    /// Every declaration of every catalogue, as the server listed it, each once.
    pub(super) fn declared(&self) -> Vec<Json> {
        let all = self
            .by_caller
            .values()
            .flat_map(|catalogue| catalogue.declarations.keys());
        let mut declared: Vec<Json> = all.cloned().collect();
        declared.sort();
        declared.dedup();
        declared
    }

    /// How many callers have a catalogue.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.by_caller.len()
    }
}
