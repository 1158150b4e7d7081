//! What waits for the augmented tools, and the listings that end the wait (R18, R20): a call
//! goes to the server only once its tool's fate is known from a listing that is current,
//! or that started after the call arrived; the proxy lists the server itself for it, and
//! a wait that cannot end ends in an error. The catalogue is the server's latest whole
//! listing and nothing more.
//!
//! In a session without `initialize` (2026-07-28) each request carries its client's
//! protocol version and capabilities in `_meta`, and clients that do not know each other
//! may share it (the HTTP front's shared session): a listing the proxy makes for a
//! waiting message carries that message's `_meta` and no other client's, and the fate of
//! a listing (listed, failed) is its caller's alone, so that a server refusing one
//! client's version fails no other client's calls.

use super::catalogues::Catalogue;
use super::{Handshake, Out, Proxy, Relay, Release};
use crate::Now;
use crate::delivery::{About, Delivery};
use crate::jsonrpc::{self, CallParams, Id, Line, Message, Page, Params, Parsed, Read};
use crate::layer::Layer;
use crate::outline::Outline;
use reasons_transform::Json;
use reasons_transform::json;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// How long a message may wait for the augmented tools before the calls in it are refused
/// (never forwarded): long enough for a server fetched by `npx` on its first start.
pub const HOLD_AT_MOST: Duration = Duration::from_secs(60);

/// The most pages one listing may take: a server whose cursor never ends is a fault.
const MOST_PAGES: usize = 1000;

/// The most listings in a row that a change the server announced may overtake before
/// what waits for them is refused: a server that says its tools changed while it lists
/// them, every time, is never current.
const MOST_OVERTAKEN: u32 = 16;

/// Whom a listing is for: the `_meta` of the client request that needs it, in a session
/// without `initialize`; `None` in a session with one, where the handshake settled the
/// version and capabilities for every request.
pub(super) type Caller = Option<String>;

/// How far the listings for one caller have come: the generation of the latest started,
/// of the latest that completed, and of the latest that failed.
#[derive(Default)]
pub(super) struct Listings {
    started: u64,
    listed: u64,
    failed: u64,
    /// Why the latest that failed did, for what it refuses.
    why: String,
}

/// The progress of a caller no listing was made for.
const NOT_LISTED: &Listings = &Listings {
    started: 0,
    listed: 0,
    failed: 0,
    why: String::new(),
};

/// The proxy's own listing under way, page by page.
pub(super) struct OwnListing {
    pub(super) generation: u64,
    pub(super) caller: Caller,
    /// Its request under way: its id, and the line to the server it went in.
    pub(super) id: Id,
    pub(super) exchange: u64,
    pub(super) started: Instant,
    pub(super) tools: Vec<Json>,
    /// Each of `tools`' names, as its page read it.
    pub(super) names: Vec<Option<String>>,
    pub(super) cursors: HashSet<String>,
}

/// A line that waits for the augmented tools: a client message, or a server's answer to the
/// client's own `tools/list` that holds declarations the proxy has not listed.
pub(super) struct Held {
    pub(super) line: Parsed,
    /// The tool of each call in it, read once: what it waits to know the fate of.
    pub(super) tools: Vec<Option<String>>,
    pub(super) since: Instant,
    /// How many listings had started when it arrived: one started later must complete.
    pub(super) arrival: u64,
    /// Whom the listing it waits for is for.
    pub(super) caller: Caller,
    /// The line it went in to a session the server forgot, for a line sent again.
    pub(super) sent: Option<u64>,
}

impl<L: Layer> Proxy<L> {
    pub(super) fn hold(
        &self,
        line: Parsed,
        tools: Vec<Option<String>>,
        since: Instant,
        caller: Caller,
    ) -> Held {
        Held {
            line,
            tools,
            since,
            arrival: self.started,
            caller,
            sent: None,
        }
    }

    /// Whom a listing for a client line would be for: the `_meta` of its first request
    /// that carries one.
    pub(super) fn caller(&self, read: &Line) -> Caller {
        let reads = match read {
            Line::One(read) => std::slice::from_ref(read),
            Line::Batch(reads) => reads.as_slice(),
        };
        reads.iter().find_map(|read| match &read.message {
            Ok(Message::Request { params, .. }) => self.caller_of(params.as_ref()),
            _ => None,
        })
    }

    /// Whom a listing for a request with `params` would be for (see [`Caller`]).
    pub(super) fn caller_of(&self, params: Option<&Params>) -> Caller {
        match self.handshake {
            Handshake::None => params.and_then(Params::meta_without_token),
            Handshake::Waiting | Handshake::Done => None,
        }
    }

    /// How far the listings for `caller` have come.
    fn progress(&self, caller: &Caller) -> &Listings {
        self.listings.get(caller).unwrap_or(NOT_LISTED)
    }

    fn progress_mut(&mut self, caller: &Caller) -> &mut Listings {
        self.listings.entry(caller.clone()).or_default()
    }

    /// Whether every call of a line of `caller`'s, whose `tools` they are, can go now:
    /// its tool is in the caller's current catalogue, or a listing for the caller that
    /// started after the line arrived (`arrival`) has completed.
    pub(super) fn can_go(
        &self,
        tools: &[Option<String>],
        caller: &Caller,
        arrival: Option<u64>,
    ) -> bool {
        let listed_since = |arrival: Option<u64>| {
            arrival.is_some_and(|arrival| self.progress(caller).listed > arrival)
        };
        let current = self.catalogues.current(caller, self.want);
        tools.iter().all(|tool| {
            let Some(tool) = tool else {
                // An unreadable call waits for nothing: it is refused when processed.
                return true;
            };
            let known = current.is_some_and(|catalogue| catalogue.names.contains(tool));
            known || listed_since(arrival)
        })
    }

    /// The server's answer to the client's `tools/list`, as the model is to see it. A
    /// whole listing (no cursor either way) is the server's latest catalogue: the proxy
    /// takes it as its own. A page with declarations the proxy has not listed waits for
    /// its own listing.
    pub(super) fn page(
        &mut self,
        read: &Read,
        page: Option<Page>,
        (cursor, generation): (bool, u64),
        caller: Caller,
        may_hold: bool,
    ) -> Relay {
        let Some(page) = page else {
            return Relay::Keep;
        };
        if !cursor && page.next_cursor.is_none() {
            let progress = self.progress_mut(&caller);
            progress.started = progress.started.max(generation);
            let tools = page.tools.iter().map(|tool| tool.to_string()).collect();
            self.install(generation, tools, page.names.clone(), &caller);
        }
        if self.augments_all(&page.tools, &caller) || !may_hold {
            let (text, about) = self.augmented_page(read, &page, &caller);
            return Relay::Change(text, about);
        }
        Relay::Hold(caller)
    }

    /// Whether every declaration is in `caller`'s current catalogue.
    fn augments_all(&self, tools: &[&str], caller: &Caller) -> bool {
        self.catalogues
            .current(caller, self.want)
            .is_some_and(|catalogue| {
                (tools.iter()).all(|tool| catalogue.declarations.contains_key(*tool))
            })
    }

    /// `read`'s text with each declaration of its page as `caller`'s catalogue augments
    /// it, and what it is about; a declaration the catalogue does not hold goes as it is
    /// (the model is not offered the parameter for it, and a call carrying it is refused).
    fn augmented_page(&self, read: &Read, page: &Page, caller: &Caller) -> (String, About) {
        let catalogue = self.catalogues.of(caller);
        let augmented = |tool: &str| {
            catalogue
                .and_then(|catalogue| catalogue.declarations.get(tool))
                .map_or(tool.to_string(), Json::clone)
        };
        // A tool is dropped by its name, as the page read it.
        let kept = |name: &Option<String>| {
            !self.dropping()
                || name
                    .as_ref()
                    .is_none_or(|name| !self.params.breaks_rules(name))
        };
        let tools: Vec<String> = (page.tools.iter().zip(&page.names))
            .filter(|(_, name)| kept(name))
            .map(|(tool, _)| augmented(tool))
            .collect();
        let tools = format!("[{}]", tools.join(","));
        let about = About::of(read).after(jsonrpc::span(read.text, page.array), tools.len());
        (jsonrpc::replace(read.text, page.array, &tools), about)
    }

    /// The number of a listing asked for now: listings are numbered in the order they
    /// are asked for.
    pub(super) fn number_listing(&mut self) -> u64 {
        self.started += 1;
        self.started
    }

    /// Makes `tools`, listing `generation` for `caller`, the catalogue, unless a newer
    /// one is in place, or the server said its tools changed after the listing was asked
    /// for: then the server may have answered what it read before the change, and the
    /// listing is no one's catalogue (what waits for it waits for another).
    fn install(
        &mut self,
        generation: u64,
        tools: Vec<Json>,
        names: Vec<Option<String>>,
        caller: &Caller,
    ) {
        if generation < self.want {
            return;
        }
        if generation <= self.catalogues.generation(caller) {
            self.listed(caller, generation);
            return;
        }
        // The same listing again (a client listing on every turn): the strip set made
        // of it stands; only how current it is changes.
        if self.catalogues.renew(caller, &tools, generation) {
            self.listed(caller, generation);
            return;
        }
        match self.layer.augment(tools.clone()) {
            Ok(listed) => {
                let names: HashSet<String> = names.into_iter().flatten().collect();
                let stripped = (names.iter())
                    .filter(|name| self.layer.strips(name))
                    .cloned()
                    .collect();
                let catalogue = Catalogue {
                    generation,
                    names,
                    stripped,
                    declarations: tools.into_iter().zip(listed).collect(),
                };
                self.catalogues.insert(caller.clone(), catalogue);
                self.listed(caller, generation);
            }
            Err(error) => {
                let why = format!("the layer could not list them: {error}");
                self.note(format!("the server's tools could not be listed: {why}"));
                self.fail(caller, generation, why);
            }
        }
    }

    /// A listing for `caller` completed: what waited for one knows its tools' fate.
    fn listed(&mut self, caller: &Caller, generation: u64) {
        let progress = self.progress_mut(caller);
        progress.listed = progress.listed.max(generation);
    }

    /// A listing for `caller` failed for `why`: what of that caller's waited for it is
    /// refused, saying so.
    fn fail(&mut self, caller: &Caller, generation: u64, why: String) {
        let progress = self.progress_mut(caller);
        if generation >= progress.failed {
            progress.failed = generation;
            progress.why = why;
        }
    }

    /// Lets go of what waited, in order, as far as it can go; lists the server when
    /// what waits needs it.
    pub(super) fn drain(&mut self, out: &mut Vec<Out>) {
        let now = self.now.instant;
        while let Some(held) = self.held.pop_front() {
            // Nothing goes while a new session starts: the server takes nothing first.
            let starting = self.again.under_way.is_some();
            let release = if !starting && self.can_go(&held.tools, &held.caller, Some(held.arrival))
            {
                Release::Go
            } else if self.progress(&held.caller).failed > held.arrival {
                let why = &self.progress(&held.caller).why;
                Release::Refuse(format!(
                    "the proxy could not list the server's tools ({why})"
                ))
            } else if now >= held.since + self.hold {
                Release::Refuse(format!(
                    "the server's tools were not listed within {} ms",
                    self.hold.as_millis()
                ))
            } else {
                self.held.push_front(held);
                break;
            };
            self.client_line(&held.line, release, out);
        }
        while let Some(front) = self.pages.front() {
            let progress = self.progress(&front.caller);
            let ready = progress.failed > front.arrival
                || progress.listed > front.arrival
                || now >= front.since + self.hold;
            if !ready {
                break;
            }
            let held = self.pages.pop_front().expect("the front was there");
            let Line::One(read) = held.line.line() else {
                unreachable!("only single responses are held")
            };
            if let Ok(Message::Response { result, .. }) = read.message
                && let Some(page) = result.and_then(Page::read)
            {
                let (text, about) = self.augmented_page(&read, &page, &held.caller);
                out.push(Out::Client(Delivery::one(text.into_bytes(), about)));
            }
        }
        let waiting = self.held.front().or(self.pages.front());
        let stuck = self
            .listing
            .as_ref()
            .is_some_and(|listing| now >= listing.started + self.hold);
        if stuck && let Some(listing) = self.listing.take() {
            self.abandoned.insert(listing.id);
            let why = format!("no answer within {} ms", self.hold.as_millis());
            self.fail(&listing.caller, listing.generation, why);
            return self.drain(out);
        }
        // A listing must start when none has started for its caller since what waits
        // arrived, or since the server last said its tools changed.
        let needs = waiting
            .filter(|held| {
                let started = self.progress(&held.caller).started;
                started <= held.arrival || started < self.want
            })
            .map(|held| held.caller.clone());
        if let Some(caller) = needs
            && self.listing.is_none()
            && !matches!(self.handshake, Handshake::Waiting)
        {
            self.start_listing(caller, out);
        }
        self.forget_callers();
    }

    /// Keeps the progress only of callers something waits for: a later message arrives
    /// after every listing so far, so it needs none of the record, and clients that
    /// each send a `_meta` of their own cannot grow it without end.
    fn forget_callers(&mut self) {
        let Proxy {
            listings,
            held,
            pages,
            listing,
            ..
        } = self;
        let waits = |caller: &Caller| {
            held.iter()
                .chain(pages.iter())
                .any(|held| &held.caller == caller)
                || listing
                    .as_ref()
                    .is_some_and(|listing| &listing.caller == caller)
        };
        listings.retain(|caller, _| waits(caller));
    }

    /// When what waits next must be looked at again, if anything waits.
    pub fn wake_at(&self) -> Option<Instant> {
        let held = self.held.front().into_iter().chain(self.pages.front());
        let holds = held.map(|held| held.since + self.hold);
        let listing = self
            .listing
            .as_ref()
            .map(|listing| listing.started + self.hold);
        holds.chain(listing).min()
    }

    /// Looks at what waits again: a hold past its time ends in errors.
    pub fn tick(&mut self, now: Now) -> Vec<Out> {
        self.now = now;
        let mut out = Vec::new();
        self.drain(&mut out);
        self.with_notes(out)
    }

    /// Whether nothing waits for the server's tools.
    pub fn idle(&self) -> bool {
        self.held.is_empty() && self.pages.is_empty() && self.listing.is_none()
    }

    fn start_listing(&mut self, caller: Caller, out: &mut Vec<Out>) {
        let generation = self.number_listing();
        self.progress_mut(&caller).started = generation;
        let (id, exchange) = self.ask_for_tools(None, &caller, out);
        self.listing = Some(OwnListing {
            generation,
            caller,
            id,
            exchange,
            started: self.now.instant,
            tools: Vec::new(),
            names: Vec::new(),
            cursors: HashSet::new(),
        });
    }

    /// Sends a `tools/list` request of the proxy's own for `caller` (for the page after
    /// `cursor`, if given); its id, and the line it went in.
    fn ask_for_tools(
        &mut self,
        cursor: Option<&str>,
        caller: &Caller,
        out: &mut Vec<Out>,
    ) -> (Id, u64) {
        let id = Id::own();
        let mut params = Vec::new();
        if let Some(cursor) = cursor {
            params.push(format!(r#""cursor":{cursor}"#));
        }
        if let Some(meta) = caller {
            params.push(format!(r#""_meta":{meta}"#));
        }
        let params = (!params.is_empty()).then(|| format!("{{{}}}", params.join(",")));
        let params = params.as_deref();
        // The proxy's own params, read as any request's are, for its outline.
        let read = params.map(Params::read);
        let outline = Outline {
            own: true,
            ..Outline::request(Some(id.clone()), "tools/list", read.as_ref(), None)
        };
        let line = jsonrpc::request(&id, "tools/list", params).into_bytes();
        out.push(self.for_server(line, outline));
        (id, self.sent)
    }

    /// A page of the proxy's own listing: ask for the next, or use the whole.
    /// `text` is the whole answer, for the error it holds when it has no `result`.
    pub(super) fn own_page(&mut self, result: Option<&str>, text: &str, out: &mut Vec<Out>) {
        let Some(mut listing) = self.listing.take() else {
            return;
        };
        let Some(page) = result.and_then(Page::read) else {
            let said = jsonrpc::at(text, &["error", "message"]).and_then(json::string);
            let why = match said {
                Some(message) => format!("the server answered: {message}"),
                None => "the server's answer is no list of tools".to_string(),
            };
            self.note(format!("{why}; calls that wait for its tools are refused"));
            self.fail(&listing.caller, listing.generation, why);
            return;
        };
        self.params.learn(&page);
        listing
            .tools
            .extend(page.tools.iter().map(|tool| tool.to_string()));
        listing.names.extend(page.names.iter().cloned());
        if let Some(cursor) = page.next_cursor {
            let repeated = !listing.cursors.insert(cursor.to_string());
            if repeated || listing.cursors.len() >= MOST_PAGES {
                let why = format!(
                    "the server's tools/list did not end (a cursor repeated, or \
                     {MOST_PAGES} pages)"
                );
                self.note(format!("{why}; calls that wait are refused"));
                self.fail(&listing.caller, listing.generation, why);
                return;
            }
            (listing.id, listing.exchange) = self.ask_for_tools(Some(cursor), &listing.caller, out);
            self.listing = Some(listing);
            return;
        }
        if listing.generation < self.want {
            // Overtaken by a change: asked for again, up to [`MOST_OVERTAKEN`] in a row.
            self.overtaken += 1;
            if self.overtaken >= MOST_OVERTAKEN {
                self.overtaken = 0;
                let why = format!(
                    "the server said its tools changed during each of {MOST_OVERTAKEN} \
                     listings in a row"
                );
                self.note(format!("{why}; calls that wait for its tools are refused"));
                self.fail(&listing.caller, listing.generation, why);
            }
            return;
        }
        self.overtaken = 0;
        self.install(
            listing.generation,
            listing.tools,
            listing.names,
            &listing.caller,
        );
    }
}

/// Whether a line goes on even while others wait: a response (the client answering the
/// server) or `notifications/initialized`, which servers may need before they list.
pub(super) fn bypasses_hold(read: &Line) -> bool {
    let Line::One(read) = read else { return false };
    match &read.message {
        Ok(Message::Response { .. }) => true,
        Ok(Message::Notification { method, .. }) => method == "notifications/initialized",
        _ => false,
    }
}

/// The tool of each `tools/call` request in a line: `None` for one whose params cannot
/// be read (it will be refused).
pub(super) fn calls(read: &Line) -> Vec<Option<String>> {
    let reads = match read {
        Line::One(read) => std::slice::from_ref(read),
        Line::Batch(reads) => reads.as_slice(),
    };
    reads
        .iter()
        .filter_map(|read| match &read.message {
            Ok(Message::Request { method, params, .. }) if method == "tools/call" => Some(
                CallParams::read(params.as_ref())
                    .ok()
                    .map(|params| params.name),
            ),
            _ => None,
        })
        .collect()
}
