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

/// What a call waits for: the fate of its tool (`None`: its params cannot be read, and it
/// is refused when processed) in its caller's catalogue.
pub(super) struct Awaits {
    pub(super) tool: Option<String>,
    pub(super) caller: Caller,
}

/// What a client line waits for. Read once, when the line arrives; the line waits for
/// these and its calls are then decided by these, so that a call is never decided
/// against a catalogue other than the one it waited for.
pub(super) struct Waits {
    /// Each message's, in the line's order: `None` for a message that is no call.
    pub(super) calls: Vec<Option<Awaits>>,
    /// Whether the line holds an `initialize`: from there on the handshake, not a
    /// request's `_meta`, says who calls.
    initializes: bool,
}

/// A client line that waits for the augmented tools.
pub(super) struct Held {
    pub(super) line: Parsed,
    pub(super) waits: Waits,
    pub(super) since: Instant,
    /// How many listings had started when it arrived: one started later must complete.
    pub(super) arrival: u64,
    /// The line it went in to a session the server forgot, for a line sent again.
    pub(super) sent: Option<u64>,
}

/// A server's answer to the client's own `tools/list` that holds declarations the proxy
/// has not listed: it waits for a listing for the caller it answers.
pub(super) struct HeldPage {
    pub(super) line: Parsed,
    pub(super) since: Instant,
    pub(super) arrival: u64,
    pub(super) caller: Caller,
    /// Whether its listing asked for the first page.
    pub(super) first: bool,
}

impl<L: Layer> Proxy<L> {
    pub(super) fn hold(&self, line: Parsed, waits: Waits, since: Instant) -> Held {
        Held {
            line,
            waits,
            since,
            arrival: self.started,
            sent: None,
        }
    }

    pub(super) fn hold_page(&self, line: Parsed, caller: Caller, first: bool) -> HeldPage {
        HeldPage {
            line,
            since: self.now.instant,
            arrival: self.started,
            caller,
            first,
        }
    }

    /// What each message of a client line waits for. A call's caller is the one the
    /// session will have when the call is processed: an `initialize` before it, in its
    /// line or in a line that waits ahead of it, settles the session's, as the
    /// handshake does.
    pub(super) fn waits(&self, line: &Line) -> Waits {
        let reads = line.reads();
        let mut handshake = match self.held.iter().any(|held| held.waits.initializes) {
            true => Handshake::Waiting,
            false => self.handshake,
        };
        let mut initializes = false;
        let mut calls = Vec::with_capacity(reads.len());
        for read in reads {
            let awaits = match &read.message {
                Ok(Message::Request { method, params, .. }) if method == "tools/call" => {
                    Some(Awaits {
                        tool: CallParams::read(params.as_ref()).ok().map(|call| call.name),
                        caller: caller_of(handshake, params.as_ref()),
                    })
                }
                Ok(Message::Request { method, .. }) if method == "initialize" => {
                    (handshake, initializes) = (Handshake::Waiting, true);
                    None
                }
                _ => None,
            };
            calls.push(awaits);
        }
        if cfg!(feature = "mutant-first-caller") {
            let first = calls
                .iter()
                .flatten()
                .next()
                .map(|awaits| awaits.caller.clone());
            for awaits in calls.iter_mut().flatten() {
                awaits.caller = first.clone().flatten();
            }
        }
        Waits { calls, initializes }
    }

    /// Whom a listing for a request with `params` would be for (see [`Caller`]).
    pub(super) fn caller_of(&self, params: Option<&Params>) -> Caller {
        caller_of(self.handshake, params)
    }

    /// How far the listings for `caller` have come.
    fn progress(&self, caller: &Caller) -> &Listings {
        self.listings.get(caller).unwrap_or(NOT_LISTED)
    }

    fn progress_mut(&mut self, caller: &Caller) -> &mut Listings {
        self.listings.entry(caller.clone()).or_default()
    }

    /// Whether every call of a line that waits for `waits` can go now: each one's fate
    /// is [`decided`](Proxy::decided) by its own caller's catalogue.
    pub(super) fn can_go(&self, waits: &Waits, arrival: Option<u64>) -> bool {
        waits
            .calls
            .iter()
            .flatten()
            .all(|awaits| self.decided(awaits, arrival))
    }

    /// Whether the fate of a call that arrived after `arrival` listings had started is
    /// known: its caller's catalogue is current (asked for after the server's latest
    /// change) and names its tool, or was asked for after the call arrived (a tool it
    /// does not name is none of the server's). A listing that completed for it and was
    /// overtaken by a change since decides nothing, though the call waited for it.
    fn decided(&self, Awaits { tool, caller }: &Awaits, arrival: Option<u64>) -> bool {
        let Some(tool) = tool else {
            // An unreadable call waits for nothing: it is refused when processed.
            return true;
        };
        let current = self.catalogues.current(caller, self.want);
        current.is_some_and(|catalogue| {
            catalogue.names.contains(tool)
                || arrival.is_some_and(|arrival| catalogue.generation > arrival)
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
            let (text, about) = self.client_page(read, &page, &caller, !cursor);
            return Relay::Change(text, about);
        }
        Relay::Hold(caller, !cursor)
    }

    /// The answer to a client's page of tools (`first`: the listing asked for the first),
    /// as the model is to see it: augmented as `caller`'s catalogue says; and, for a proxy
    /// [answering whole listings](Proxy::answering_whole_listings), a first page that
    /// more follow is the whole listing its current catalogue was made of.
    fn client_page(
        &self,
        read: &Read,
        page: &Page,
        caller: &Caller,
        first: bool,
    ) -> (String, About) {
        let whole = (self.whole_listings && first && page.next_cursor.is_some())
            .then(|| self.catalogues.current(caller, self.want))
            .flatten()
            .filter(|catalogue| !catalogue.in_order.is_empty());
        match whole.and_then(|catalogue| self.whole_listing(read, page, catalogue)) {
            Some(answer) => answer,
            None => self.augmented_page(read, page, caller),
        }
    }

    /// `read`, a first page of tools, as the whole listing `catalogue` was made of: its
    /// `tools` every declaration of every page, augmented, and no `nextCursor`; every
    /// other byte as it came. `None` when its cursor cannot be taken out.
    fn whole_listing(
        &self,
        read: &Read,
        page: &Page,
        catalogue: &Catalogue,
    ) -> Option<(String, About)> {
        let result = jsonrpc::at(read.text, &["result"])?;
        let cursor = jsonrpc::member_range(result, page.next_cursor?)?;
        let at = jsonrpc::span(read.text, result).start;
        let cursor = at + cursor.start..at + cursor.end;
        let array = jsonrpc::span(read.text, page.array);
        let tools: Vec<&str> = (catalogue.in_order.iter())
            .filter(|(_, name)| name.as_deref().is_none_or(|name| !self.drops(name)))
            .map(|(tool, _)| catalogue.declarations.get(tool).unwrap_or(tool).as_str())
            .collect();
        let tools = format!("[{}]", tools.join(","));
        // The later place first, so that the earlier one's offsets still hold.
        let mut edits = [(cursor, String::new()), (array, tools)];
        edits.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
        let (mut text, mut about) = (read.text.to_string(), About::of(read));
        for (range, with) in edits {
            about = about.after(range.clone(), with.len());
            text.replace_range(range, &with);
        }
        Some((text, about))
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
                let in_order = match self.whole_listings {
                    true => tools.iter().cloned().zip(names.iter().cloned()).collect(),
                    false => Vec::new(),
                };
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
                    in_order,
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
            let failed = (held.waits.calls.iter().flatten())
                .map(|awaits| self.progress(&awaits.caller))
                .find(|progress| progress.failed > held.arrival);
            let release = if !starting && self.can_go(&held.waits, Some(held.arrival)) {
                Release::Go
            } else if let Some(Listings { why, .. }) = failed {
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
            self.client_line(&held.line, &held.waits, release, out);
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
                let (text, about) = self.client_page(&read, &page, &held.caller, held.first);
                out.push(Out::Client(Delivery::one(text.into_bytes(), about)));
            }
        }
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
        // A listing must start for a caller when none has started for it since what
        // waits arrived, or since the server last said its tools changed: for each call
        // of the first line that waits whose fate is not known, or for the first page.
        let needs_listing = |caller: &Caller, arrival: u64| {
            let started = self.progress(caller).started;
            started <= arrival || started < self.want
        };
        let needs = match (self.held.front(), self.pages.front()) {
            (Some(held), _) => (held.waits.calls.iter().flatten())
                .filter(|awaits| !self.decided(awaits, Some(held.arrival)))
                .map(|awaits| &awaits.caller)
                .find(|caller| needs_listing(caller, held.arrival)),
            (None, Some(page)) => {
                Some(&page.caller).filter(|caller| needs_listing(caller, page.arrival))
            }
            (None, None) => None,
        }
        .cloned();
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
            (held
                .iter()
                .flat_map(|held| held.waits.calls.iter().flatten()))
            .any(|awaits| &awaits.caller == caller)
                || pages.iter().any(|page| &page.caller == caller)
                || listing
                    .as_ref()
                    .is_some_and(|listing| &listing.caller == caller)
        };
        listings.retain(|caller, _| waits(caller));
    }

    /// When what waits next must be looked at again, if anything waits.
    pub fn wake_at(&self) -> Option<Instant> {
        let held = self.held.front().map(|held| held.since);
        let holds = held
            .into_iter()
            .chain(self.pages.front().map(|page| page.since));
        let holds = holds.map(|since| since + self.hold);
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
        if let Some(cursor) = page
            .next_cursor
            .filter(|_| !cfg!(feature = "mutant-first-page"))
        {
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
        if cfg!(feature = "mutant-numbered-on-answer") {
            listing.generation = self.started.max(self.want);
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

/// Whom a listing for a request with `params` would be for, under `handshake`: its
/// `_meta` in a session without `initialize`, the session's after one.
fn caller_of(handshake: Handshake, params: Option<&Params>) -> Caller {
    if cfg!(feature = "mutant-one-caller") {
        return None;
    }
    match handshake {
        Handshake::None => params.and_then(Params::meta_without_token),
        Handshake::Waiting | Handshake::Done => None,
    }
}
