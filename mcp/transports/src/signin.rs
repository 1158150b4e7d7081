//! Signing in to a server that asks for it, as the MCP authorization spec (2025-11-25,
//! 2026-07-28) has a client do: on a 401, the server's protected resource metadata and
//! its authorization server's are found and checked (`discovery`), the proxy is a
//! client there (`register`), and the person signs in in their browser (`browser`),
//! which comes back to a loopback listener (`callback`) with a code the proxy trades,
//! with its PKCE verifier, for tokens bound to this server alone (`resource`, RFC 8707).
//! Tokens are kept for the next run (`store`), refreshed when they expire, and stepped
//! up when a 403 asks for more scope.
//!
//! Fails closed: metadata naming another resource or issuer, an `iss` that is not the
//! authorization server's, a redirect without this sign-in's `state` — each ends the
//! sign-in with why, and the request that needed it is answered with that error. A
//! token is sent to the server it was issued for and nowhere else.

mod browser;
mod callback;
mod challenge;
mod discovery;
mod register;
mod store;
mod web;

use crate::outgoing::Secrets;
use crate::upstream::shown;
use callback::Callback;
use challenge::Challenge;
use discovery::Authority;
use oauth2::basic::{BasicClient, BasicErrorResponseType};
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet,
    EndpointSet, PkceCodeChallenge, RedirectUrl, RefreshToken, RequestTokenError, Scope,
    TokenResponse, TokenUrl,
};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use store::{Kept, Registered, Token};
use ureq::http::{HeaderName, HeaderValue};
use url::Url;

pub use register::Given;
pub use store::Store;

/// How the proxy signs in, as the user set it.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The client registered ahead, if any, and the metadata document's URL.
    pub given: Given,
    /// How long a person has to finish signing in.
    pub wait: Duration,
    /// Whether a 401 opens a sign-in (a person is there to do it); else it is answered
    /// with the way to sign in ahead (`reasons login`).
    pub interactive: bool,
}

/// How long before it expires a token is refreshed: a request sent with it must still
/// find it good.
const EARLY: u64 = 30;

/// After a sign-in failed, how long the requests that follow are answered with why
/// rather than opening another: a client that retries would open tab after tab.
const QUIET: Duration = Duration::from_secs(30);

/// The sign-in of one server, shared by every request to it in this process.
pub struct SignIn {
    server: Url,
    /// The server's URL as the store keys it.
    key: String,
    settings: Settings,
    store: Store,
    web: web::Web,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    kept: Option<Kept>,
    loaded: bool,
    /// Counts the tokens held: a request refused with one that is no longer held is
    /// simply sent again with the new one.
    generation: u64,
    failed: Option<(Instant, String)>,
    /// The generation a refresh made for a 401: refused too, it is no token this
    /// server takes (it moved to another authorization server, which still takes the
    /// old refresh token), and a new sign-in follows instead of another refresh.
    refreshed_for_401: Option<u64>,
}

/// The token a request carries, as a secret of the server's origin, and which one it
/// was.
#[derive(Default)]
pub struct Bearer {
    pub token: Option<Secrets>,
    pub generation: u64,
}

impl std::fmt::Debug for SignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SignIn({})", self.shown())
    }
}

/// The sign-ins of this process, one per server, so that the sessions of an HTTP front
/// front share one person's sign-in.
static SIGN_INS: LazyLock<Mutex<HashMap<String, Weak<SignIn>>>> = LazyLock::new(Mutex::default);

impl SignIn {
    /// The sign-in of the server at `server`.
    pub fn of(server: &str, settings: &Settings) -> Result<Arc<SignIn>, String> {
        let mut all = SIGN_INS.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(shared) = all.get(server).and_then(Weak::upgrade) {
            return Ok(shared);
        }
        let url = Url::parse(server).map_err(|error| format!("{server:?}: {error}"))?;
        let sign_in = Arc::new(SignIn {
            web: web::Web::for_server(&url),
            server: url,
            key: server.to_string(),
            settings: settings.clone(),
            store: Store::of_user(),
            state: Mutex::default(),
        });
        all.insert(server.to_string(), Arc::downgrade(&sign_in));
        Ok(sign_in)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The token to send now: the one kept, refreshed first if it is about to expire.
    pub fn bearer(&self) -> Bearer {
        let mut state = self.lock();
        if !state.loaded {
            state.loaded = true;
            state.kept = self.store.load(&self.key).ok().flatten();
        }
        let expiring = state
            .kept
            .as_ref()
            .and_then(|kept| kept.token.as_ref())
            .is_some_and(|token| {
                token.refresh.is_some() && token.expires_at.is_some_and(|at| at <= now() + EARLY)
            });
        if expiring {
            let _ = self.refresh(&mut state);
        }
        self.bearer_of(&state)
    }

    /// The token `state` holds, for the server it was issued for alone.
    fn bearer_of(&self, state: &State) -> Bearer {
        let access = (state.kept.as_ref()).and_then(|kept| kept.token.as_ref());
        let secret = access.and_then(|token| {
            let value = HeaderValue::from_str(&format!("Bearer {}", token.access)).ok()?;
            let name = HeaderName::from_static("authorization");
            // A sign-in over http off this machine was refused: there is no such token.
            (Secrets::for_origin_of(&self.server).with(name, value, "the token")).ok()
        });
        Bearer {
            token: secret,
            generation: state.generation,
        }
    }

    /// The token kept, without waiting: none while a sign-in is under way (it holds the
    /// state until the person is done, or `--sign-in-wait` ends), so that what ends the
    /// session (a signal, the client's close) never waits on a person.
    pub fn bearer_at_once(&self) -> Bearer {
        match self.state.try_lock() {
            Ok(state) => self.bearer_of(&state),
            Err(_) => Bearer::default(),
        }
    }

    /// The server refused a request sent with `generation`'s token (`status` 401 or
    /// 403, `challenge` its `WWW-Authenticate`): gets a token it may take (another
    /// process's, a refreshed one, a new sign-in, more scope), for the request to be
    /// sent again; or why not.
    pub fn refused(
        &self,
        generation: u64,
        status: u16,
        challenge: Option<&str>,
    ) -> Result<(), String> {
        let mut state = self.lock();
        if state.generation != generation {
            return Ok(());
        }
        // A sign-in made meanwhile by `reasons login`, or by another proxy.
        if let Ok(Some(kept)) = self.store.load(&self.key)
            && state.kept.as_ref() != Some(&kept)
        {
            state.kept = Some(kept);
            state.generation += 1;
            return Ok(());
        }
        let challenge = Challenge::read(challenge).unwrap_or_default();
        let held: Vec<String> = state
            .kept
            .as_ref()
            .and_then(|kept| Some(kept.token.as_ref()?.scopes.clone()))
            .unwrap_or_default();
        let mut more = Vec::new();
        if status == 403 {
            if !challenge.wants_more_scope() {
                return Err("it refused the token reasons signed in for (HTTP 403)".into());
            }
            let wanted = scopes(challenge.scope.as_deref());
            if wanted.iter().all(|scope| held.contains(scope)) {
                return Err(format!(
                    "it refused the token for want of scope ({}), though the token was \
                     granted it: signing in again would not help",
                    wanted.join(" ")
                ));
            }
            more = held;
        } else if state.refreshed_for_401 != Some(generation) && self.refresh(&mut state).is_ok() {
            state.refreshed_for_401 = Some(state.generation);
            return Ok(());
        }
        if let Some((at, why)) = &state.failed
            && at.elapsed() < QUIET
        {
            return Err(why.clone());
        }
        let signed = self.sign_in(&mut state, &challenge, more);
        if let Err(why) = &signed {
            state.failed = Some((Instant::now(), why.clone()));
        }
        signed
    }

    /// Signs in from a terminal (`reasons login`): the server is asked as a client
    /// would, and signed in to if it asks. What was done, or why not.
    pub fn login(&self) -> Result<String, String> {
        let (status, challenge) = self.web.probe(&self.server)?;
        if !matches!(status, 401 | 403) {
            return Ok(format!(
                "{} does not ask to sign in (it answered HTTP {status}): nothing to do",
                self.shown()
            ));
        }
        let mut state = self.lock();
        state.kept = self.store.load(&self.key)?;
        let challenge = Challenge::read(challenge.as_deref()).unwrap_or_default();
        self.sign_in(&mut state, &challenge, Vec::new())?;
        // Keeping it is the work of `login`: a sign-in that was not kept is its failure.
        let path = self.store.path()?;
        match self.store.load(&self.key) {
            Ok(Some(_)) => Ok(format!(
                "signed in to {}; kept in {}",
                self.shown(),
                path.display()
            )),
            _ => Err(format!(
                "signed in to {}, but the sign-in could not be kept in {}",
                self.shown(),
                path.display()
            )),
        }
    }

    /// Whether the server at `server` will ask its user to sign in before it serves a
    /// client: no sign-in of the user's is kept for it, and it answers a client's first
    /// request, sent without credentials, with 401 (or 403). Asked within `patience`.
    pub fn awaits(server: &str, patience: Duration) -> Result<bool, String> {
        let kept = Store::of_user().load(server)?;
        if kept.is_some_and(|kept| kept.token.is_some()) {
            return Ok(false);
        }
        let url = Url::parse(server).map_err(|error| format!("{}: {error}", shown(server)))?;
        let (status, _) = web::Web::within(&url, patience).probe(&url)?;
        Ok(matches!(status, 401 | 403))
    }

    /// Forgets the server's sign-in (`reasons logout`), its refresh token revoked first
    /// where the authorization server takes revocations (RFC 7009; best effort, said):
    /// what was done.
    pub fn logout(server: &str) -> Result<String, String> {
        let forgotten = Store::of_user().forget(server)?;
        if forgotten.is_empty() {
            return Ok(format!("{} was not signed in to", shown(server)));
        }
        let mut said = vec![format!("signed out of {}", shown(server))];
        said.extend(forgotten.iter().filter_map(|kept| revoke(server, kept)));
        Ok(said.join("; "))
    }

    fn shown(&self) -> String {
        shown(&self.key)
    }

    /// A new sign-in by the person, for the scopes the challenge names (with `more`,
    /// those held already, when it steps up).
    fn sign_in(
        &self,
        state: &mut State,
        challenge: &Challenge,
        more: Vec<String>,
    ) -> Result<(), String> {
        let server = self.shown();
        // A token sent to a server over plain http crosses the network in clear (RFC
        // 6750 §5.3): only this machine's http is signed in to.
        self.web
            .url(self.server.as_str(), "the server's URL")
            .map_err(|_| {
                "it asks to sign in over plain http, which would send its token in clear \
                 across the network (RFC 6750 §5.3): nothing was signed in to; use its \
                 https:// URL"
                    .to_string()
            })?;
        if !self.settings.interactive {
            return Err(
                "it is not signed in to, and signing in is left to a terminal here \
                 (--no-sign-in, REASONS_NO_SIGN_IN)"
                    .into(),
            );
        }
        let resource = discovery::resource(
            &self.web,
            &self.server,
            challenge.resource_metadata.as_deref(),
        )?;
        // The authorization server signed in with before, while the server still names
        // it; else the one it prefers. A client of another is not used with this one.
        // What is held stays held until a new sign-in replaces it: one that fails (a
        // step-up nobody finished) leaves the token the other requests carry.
        let kept = (state.kept.clone())
            .filter(|kept| resource.authorization_servers.contains(&kept.issuer));
        let issuer = kept
            .as_ref()
            .map_or(&resource.authorization_servers[0], |kept| &kept.issuer)
            .clone();
        Self::given_client_stays_with(&self.settings.given, state.kept.as_ref(), &issuer)?;
        let authority = discovery::authority(&self.web, &issuer)?;
        let mut wanted = match &challenge.scope {
            Some(scope) => scopes(Some(scope)),
            None => resource.scopes_supported.clone().unwrap_or_default(),
        };
        for scope in more {
            if !wanted.contains(&scope) {
                wanted.push(scope);
            }
        }
        // A refresh token, where the authorization server grants them for it (SEP-2207).
        let offline = authority
            .scopes_supported
            .as_ref()
            .is_some_and(|all| all.iter().any(|one| one == "offline_access"));
        if offline && !wanted.is_empty() && !wanted.iter().any(|one| one == "offline_access") {
            wanted.push("offline_access".into());
        }
        let (mut callback, client) = self.client_for(&authority, kept.map(|kept| kept.client))?;
        let redirect_uri = callback.redirect_uri();
        let oauth = oauth_client(&client, &authority.token_endpoint)?
            .set_auth_uri(
                AuthUrl::new(authority.authorization_endpoint.clone())
                    .map_err(|error| format!("its authorization endpoint: {error}"))?,
            )
            .set_redirect_uri(RedirectUrl::new(redirect_uri).map_err(|error| error.to_string())?);
        let (challenge_code, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut asked = oauth
            .authorize_url(CsrfToken::new_random)
            .add_scopes(wanted.iter().cloned().map(Scope::new))
            .add_extra_param("resource", &resource.id)
            .set_pkce_challenge(challenge_code);
        // OpenID Connect Core §11: a provider grants `offline_access` (a refresh token)
        // only when the person was asked to consent to it.
        if wanted.iter().any(|scope| scope == "offline_access") {
            asked = asked.add_extra_param("prompt", "consent");
        }
        let (page, state_token) = asked.url();
        browser::show(&callback.link_to(page.to_string()), &server);
        let deadline = Instant::now() + self.settings.wait;
        let (returned, page) = callback
            .wait(state_token.secret(), deadline)
            .map_err(|why| {
                format!(
                    "signing in to it did not finish: {why} (within {} s, --sign-in-wait)",
                    self.settings.wait.as_secs()
                )
            })?;
        // The page waits for the checks and the exchange: it says "Signed in" only for
        // a sign-in that was.
        let http = self.web.oauth(&authority.token_endpoint)?;
        let token = check_iss(&authority, returned.iss.as_deref()).and_then(|()| {
            oauth
                .exchange_code(AuthorizationCode::new(returned.code))
                .set_pkce_verifier(verifier)
                .add_extra_param("resource", &resource.id)
                .request(&http)
                .map_err(|error| {
                    format!(
                        "the authorization server would not issue a token: {}",
                        why_not(error)
                    )
                })
        });
        page.tell(&token.as_ref().map(|_| ()).map_err(String::clone));
        let token = token?;
        let kept = Kept {
            resource: resource.id,
            issuer: authority.issuer,
            token_endpoint: authority.token_endpoint,
            revocation_endpoint: authority.revocation_endpoint,
            client,
            token: Some(token_of(&token, wanted, None)),
        };
        self.keep(state, kept);
        Ok(())
    }

    /// Refused when the client the user gave (`--client-id`, its secret above all) was
    /// signed in with at another authorization server than `issuer`: a client is bound to
    /// the issuer it belongs to, and its secret goes nowhere else (RFC 9700 §4.4, mix-up),
    /// whatever a server's metadata names since.
    fn given_client_stays_with(
        given: &Given,
        kept: Option<&Kept>,
        issuer: &str,
    ) -> Result<(), String> {
        let Some(id) = &given.id else {
            return Ok(());
        };
        match kept {
            Some(kept) if kept.client.id == *id && kept.issuer != issuer => Err(format!(
                "its metadata now names the authorization server {issuer}, but the client \
             given with --client-id is {}'s: its credentials go to no other (RFC 9700 \
             §4.4). Give {issuer}'s client, after `reasons logout` of this server",
                kept.issuer
            )),
            _ => Ok(()),
        }
    }

    /// The loopback listener and the client to sign in with: the one kept, on the port
    /// it was registered with where it has one; else one the spec's order gives.
    fn client_for(
        &self,
        authority: &Authority,
        kept: Option<Registered>,
    ) -> Result<(Callback, Registered), String> {
        let given = &self.settings.given;
        let kept =
            kept.filter(|client| given.id.is_none() || given.id.as_ref() == Some(&client.id));
        if let Some(client) = kept {
            let port = client
                .redirect_uri
                .as_deref()
                .and_then(|uri| Url::parse(uri).ok()?.port());
            match port {
                None => return Ok((listen(0)?, client)),
                Some(port) => {
                    if let Ok(callback) = Callback::listen(port) {
                        return Ok((callback, client));
                    }
                }
            }
        }
        let callback = listen(0)?;
        let client = register::client(&self.web, authority, given, &callback.redirect_uri())?;
        Ok((callback, client))
    }

    /// Trades the refresh token for new tokens (the refresh token too, where the
    /// authorization server rotates it), under the store's lock: another process that
    /// refreshed first has its tokens taken instead, and a sign-in forgotten meanwhile
    /// (`reasons logout`) is not brought back. A refusal forgets the refresh token.
    fn refresh(&self, state: &mut State) -> Result<(), String> {
        let held = state.kept.clone().ok_or("nothing kept")?;
        let (mut outcome, mut forgotten, mut unknown) = (Ok(()), false, false);
        let updated = self.store.update(&self.key, |stored| {
            let Some(stored) = stored else {
                forgotten = true;
                outcome = Err("its sign-in was forgotten (reasons logout)".into());
                return None;
            };
            if stored != held {
                return Some(stored);
            }
            match self.refreshed(&stored) {
                Ok(kept) => Some(kept),
                Err((why, refused)) => {
                    outcome = Err(why);
                    unknown = refused == Refused::Client;
                    (refused == Refused::Token).then(|| {
                        let mut kept = stored;
                        if let Some(token) = &mut kept.token {
                            token.refresh = None;
                        }
                        kept
                    })
                }
            }
        });
        if unknown {
            // The authorization server no longer knows the client it registered (it
            // restarted, or expired the registration): the sign-in is forgotten, and the
            // next one registers again, where each landed on its error page for good.
            self.store.forget(&self.key)?;
            forgotten = true;
        }
        match updated {
            Ok(Some(kept)) => {
                state.kept = Some(kept);
                state.generation += 1;
            }
            Ok(None) if forgotten => state.kept = None,
            Ok(None) => {}
            Err(why) => return Err(why),
        }
        outcome
    }

    /// `kept` with the tokens its refresh token is traded for; or why not, and what the
    /// authorization server refused, if it did.
    fn refreshed(&self, kept: &Kept) -> Result<Kept, (String, Refused)> {
        let token = kept
            .token
            .as_ref()
            .ok_or(("no token".to_string(), Refused::No))?;
        let refresh = token
            .refresh
            .clone()
            .ok_or(("no refresh token".to_string(), Refused::No))?;
        let client =
            oauth_client(&kept.client, &kept.token_endpoint).map_err(|why| (why, Refused::No))?;
        let http = (self.web.oauth(&kept.token_endpoint)).map_err(|why| (why, Refused::No))?;
        let new = client
            .exchange_refresh_token(&RefreshToken::new(refresh.clone()))
            .add_extra_param("resource", &kept.resource)
            .request(&http)
            .map_err(|error| {
                let refused = match &error {
                    // A client the user gave is theirs to fix; one reasons registered, to
                    // register again.
                    RequestTokenError::ServerResponse(refusal)
                        if *refusal.error() == BasicErrorResponseType::InvalidClient
                            && self.settings.given.id.is_none() =>
                    {
                        Refused::Client
                    }
                    RequestTokenError::ServerResponse(_) => Refused::Token,
                    _ => Refused::No,
                };
                (why_not(error), refused)
            })?;
        let mut kept = kept.clone();
        kept.token = Some(token_of(&new, token.scopes.clone(), Some(refresh)));
        Ok(kept)
    }

    /// Takes `kept` for this proxy, and keeps it in the store for the next: a store that
    /// cannot be written loses the person's sign-in for later runs, not for this one,
    /// which goes on with it (said on stderr).
    fn keep(&self, state: &mut State, kept: Kept) {
        if let Err(why) = self.store.save(&self.key, kept.clone()) {
            crate::say::say(&format!(
                "signed in to {}, but the sign-in could not be kept ({why}): it serves this \
                 proxy until it ends",
                self.shown()
            ));
        }
        state.kept = Some(kept);
        state.generation += 1;
        state.failed = None;
    }
}

/// What an authorization server refused of a refresh.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Refused {
    /// Nothing: it could not be asked, or its answer could not be read.
    No,
    /// The refresh token: good no more.
    Token,
    /// The client reasons registered, which it no longer knows.
    Client,
}

/// RFC 9207: an `iss` the authorization server sent must be its issuer, compared as
/// strings; one that says it sends `iss` must have sent it.
fn check_iss(authority: &Authority, iss: Option<&str>) -> Result<(), String> {
    match iss {
        Some(iss) if iss != authority.issuer => Err(format!(
            "the sign-in came back from {iss:?}, not from the authorization server {} \
             (RFC 9207 iss): its code was not used",
            authority.issuer
        )),
        None if authority.authorization_response_iss_parameter_supported => Err(format!(
            "the sign-in came back without the iss the authorization server {} says it \
             sends (RFC 9207): its code was not used",
            authority.issuer
        )),
        _ => Ok(()),
    }
}

type Client =
    BasicClient<EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

/// The oauth2 crate's client for `client` at `token_endpoint`, authenticating as it was
/// registered to.
fn oauth_client(client: &Registered, token_endpoint: &str) -> Result<Client, String> {
    let token_url = TokenUrl::new(token_endpoint.to_string())
        .map_err(|error| format!("its token endpoint: {error}"))?;
    let mut oauth = BasicClient::new(ClientId::new(client.id.clone())).set_token_uri(token_url);
    if let Some(secret) = client.secret.as_ref().filter(|_| client.method != "none") {
        oauth = oauth.set_client_secret(ClientSecret::new(secret.clone()));
    }
    Ok(oauth.set_auth_type(match client.method.as_str() {
        "client_secret_basic" => AuthType::BasicAuth,
        _ => AuthType::RequestBody,
    }))
}

/// Asks `kept`'s authorization server to revoke its refresh token (else its access
/// token), when it takes revocations (RFC 7009), as the client it registered: what came
/// of it, for the person.
fn revoke(server: &str, kept: &Kept) -> Option<String> {
    let endpoint = kept.revocation_endpoint.as_ref()?;
    let token = kept.token.as_ref()?;
    let (revocable, hint) = match &token.refresh {
        Some(refresh) => (refresh, "refresh_token"),
        None => (&token.access, "access_token"),
    };
    let web = web::Web::for_server(&Url::parse(server).ok()?);
    let client = &kept.client;
    let secret = client.secret.as_deref().filter(|_| client.method != "none");
    let mut form = vec![("token", revocable.as_str()), ("token_type_hint", hint)];
    let basic = match (client.method.as_str(), secret) {
        ("client_secret_basic", Some(secret)) => Some((client.id.as_str(), secret)),
        (_, secret) => {
            form.push(("client_id", &client.id));
            form.extend(secret.map(|secret| ("client_secret", secret)));
            None
        }
    };
    let revoked = web
        .url(endpoint, "its revocation endpoint")
        .and_then(|url| web.post_form(&url, &form, basic));
    Some(match revoked {
        Ok(()) => format!("its token revoked at {}", shown(&kept.issuer)),
        Err(why) => format!(
            "its token could not be revoked at {} ({why})",
            shown(&kept.issuer)
        ),
    })
}

/// What is kept of a token response: the scopes it says it granted, else those asked.
fn token_of(token: &impl TokenResponse, asked: Vec<String>, old_refresh: Option<String>) -> Token {
    Token {
        access: token.access_token().secret().clone(),
        refresh: token
            .refresh_token()
            .map(|refresh| refresh.secret().clone())
            .or(old_refresh),
        // Saturating: an authorization server's `expires_in` near u64::MAX is "never".
        expires_at: token
            .expires_in()
            .map(|lasts| now().saturating_add(lasts.as_secs())),
        scopes: token
            .scopes()
            .map(|granted| granted.iter().map(|scope| scope.to_string()).collect())
            .unwrap_or(asked),
    }
}

/// Why a token request failed, in words that hold no secret (the body of an answer
/// that could not be read is not shown: it may be a token).
fn why_not<E: std::error::Error>(
    error: RequestTokenError<E, oauth2::basic::BasicErrorResponse>,
) -> String {
    match error {
        RequestTokenError::ServerResponse(refusal) => {
            let described = refusal
                .error_description()
                .map(|words| format!(": {words}"))
                .unwrap_or_default();
            let said = format!("{}{described}", refusal.error());
            format!("it refused ({})", crate::say::quoted(&said))
        }
        RequestTokenError::Request(error) => format!("it could not be reached ({error})"),
        RequestTokenError::Parse(..) => "its answer was not a token response".into(),
        RequestTokenError::Other(words) => words,
    }
}

/// The scopes in a space-separated list.
fn scopes(list: Option<&str>) -> Vec<String> {
    list.unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

fn listen(port: u16) -> Result<Callback, String> {
    Callback::listen(port)
        .map_err(|error| format!("cannot listen on 127.0.0.1 for the sign-in: {error}"))
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_over_plain_http_elsewhere_is_never_signed_in_to() {
        // RFC 6750 §5.3: its token would cross the network in clear. Refused before
        // anything is asked of it or of anyone it names.
        let settings = Settings {
            given: Given::default(),
            wait: Duration::from_secs(1),
            interactive: true,
        };
        let sign_in = SignIn::of("http://mcp.example.com/mcp", &settings).unwrap();
        let why = sign_in.refused(0, 401, None).unwrap_err();
        assert!(why.contains("over plain http"), "{why}");
        assert!(why.contains("https://"), "{why}");
    }

    #[test]
    fn a_given_client_s_secret_goes_to_no_authorization_server_but_its_own() {
        // RFC 9700 §4.4: signed in at A with the given client; the server's metadata
        // now names B. B is never presented A's client.
        let given = Given {
            id: Some("app".into()),
            secret: Some("s3cret".into()),
            metadata_url: None,
        };
        let kept = Kept {
            resource: "https://mcp.example.com/mcp".into(),
            issuer: "https://a.example.com".into(),
            token_endpoint: "https://a.example.com/token".into(),
            revocation_endpoint: None,
            client: Registered {
                id: "app".into(),
                secret: Some("s3cret".into()),
                method: "client_secret_basic".into(),
                redirect_uri: None,
            },
            token: None,
        };
        let stays = |issuer: &str| SignIn::given_client_stays_with(&given, Some(&kept), issuer);
        assert_eq!(stays("https://a.example.com"), Ok(()));
        let why = stays("https://b.example.com").unwrap_err();
        assert!(why.contains("RFC 9700") && !why.contains("s3cret"), "{why}");
        // A client registered by the proxy, not given, is not bound so.
        let registered = Given::default();
        let free =
            SignIn::given_client_stays_with(&registered, Some(&kept), "https://b.example.com");
        assert_eq!(free, Ok(()));
    }

    /// A token endpoint on loopback that grants every refresh; how many it was asked.
    fn granting_endpoint() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/token", listener.local_addr().unwrap());
        let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = asked.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                // The whole request, its body too, before answering: an answer sent while
                // the client still writes can reach it as a reset.
                let mut request = Vec::new();
                let mut chunk = [0; 4096];
                while let Ok(read) = stream.read(&mut chunk) {
                    request.extend_from_slice(&chunk[..read]);
                    let text = String::from_utf8_lossy(&request);
                    let Some((head, body)) = text.split_once("\r\n\r\n") else {
                        if read == 0 { break } else { continue }
                    };
                    let length = (head.lines())
                        .find_map(|line| {
                            line.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|n| n.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if body.len() >= length || read == 0 {
                        break;
                    }
                }
                let n = counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let body = format!(
                    r#"{{"access_token":"refreshed-{n}","token_type":"Bearer","expires_in":3600}}"#
                );
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        (url, asked)
    }

    #[test]
    fn a_refreshed_token_the_server_refuses_too_leads_to_a_new_sign_in() {
        // The server moved to another authorization server, which the old one does not
        // know: the old one still refreshes the token, which the server refuses again.
        // The second refusal signs in anew (here: nobody may, so it says so) instead of
        // refreshing at the old one again, every call, every run.
        let (token_endpoint, asked) = granting_endpoint();
        let home = tempfile::tempdir().unwrap();
        let server = "http://127.0.0.1:9/mcp";
        let store = Store::at(home.path().join("reasons"));
        let kept = Kept {
            resource: server.into(),
            issuer: "http://127.0.0.1:9".into(),
            token_endpoint,
            revocation_endpoint: None,
            client: Registered {
                id: "c".into(),
                secret: None,
                method: "none".into(),
                redirect_uri: None,
            },
            token: Some(Token {
                access: "old".into(),
                refresh: Some("r".into()),
                expires_at: None,
                scopes: Vec::new(),
            }),
        };
        store.save(server, kept.clone()).unwrap();
        let url = Url::parse(server).unwrap();
        let sign_in = SignIn {
            web: web::Web::for_server(&url),
            server: url,
            key: server.into(),
            settings: Settings {
                given: Given::default(),
                wait: Duration::from_secs(1),
                interactive: false,
            },
            store,
            state: Mutex::new(State {
                kept: Some(kept),
                loaded: true,
                ..State::default()
            }),
        };
        let first = sign_in.bearer();
        assert_eq!(sign_in.refused(first.generation, 401, None), Ok(()));
        let refreshed = sign_in.bearer();
        let sent = refreshed.token.as_ref().map(Secrets::values);
        assert_eq!(
            sent,
            Some(vec![("authorization", "Bearer refreshed-0".into())])
        );
        let why = sign_in
            .refused(refreshed.generation, 401, None)
            .unwrap_err();
        assert!(
            why.contains("not signed in to"),
            "a new sign-in was asked for: {why}"
        );
        assert_eq!(
            asked.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "refreshed once"
        );
    }
}
