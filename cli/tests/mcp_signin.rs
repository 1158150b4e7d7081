//! `reasons mcp --url` in front of a server that signs its users in: the TypeScript
//! SDK's own example (`--oauth --oauth-strict`, with its demo authorization server, as it
//! ships on npm), signed in to as a person would, in `tests/mcp/browser.mjs` standing for
//! the browser. The conformance suite's client role (`conformance.rs`) holds each rule of
//! the spec; these hold what a user sees and what must never leak.

use reasons_test_support::mcp::*;
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A user's home for the proxy: its config folder, where the browser logs each page it
/// was asked to open, and where the proxy's stderr goes.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The pages the browser was asked to open: each the link it was given, and where
    /// that led (the authorization server's page), when it led anywhere.
    fn opened(&self) -> Vec<(String, Option<String>)> {
        std::fs::read_to_string(self.path("browser.log"))
            .unwrap_or_default()
            .lines()
            .map(|line| match line.split_once(' ') {
                Some((link, to)) => (link.to_string(), Some(to.to_string())),
                None => (line.to_string(), None),
            })
            .collect()
    }

    /// `reasons login url` in this home, which must succeed.
    fn login(&self, url: &str) {
        let login = self.reasons(&["login", url]).output().unwrap();
        let said = String::from_utf8_lossy(&login.stderr);
        assert!(login.status.success(), "{said}");
    }

    /// `reasons args...` in this home, its browser `browser.mjs`, logging what it opens.
    fn reasons(&self, args: &[&str]) -> Command {
        let mut command = Command::new(reasons());
        command
            .args(args)
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.path(".config"))
            .env(
                "BROWSER",
                format!("node {}", peers().join("browser.mjs").display()),
            )
            .env("BROWSER_LOG", self.path("browser.log"));
        command
    }

    /// `reasons mcp --url url` as a client starts it, in this home, its stderr kept in
    /// the file `stderr`.
    fn proxy(&self, url: &str, stderr: &str) -> Session {
        let audit = self.path("audit.jsonl");
        let mut command = self.reasons(&["mcp", "--audit", audit.to_str().unwrap(), "--url", url]);
        command.stderr(std::fs::File::create(self.path(stderr)).unwrap());
        Session::start_command(command)
    }

    /// The tests' own server (`oauth-server.mjs`), its tokens lasting a second, logging
    /// to `server.jsonl` here.
    fn short_lived_server(&self) -> Listening {
        let log = self.path("server.jsonl");
        let server = node(
            "oauth-server.mjs",
            &[log.to_str().unwrap(), "--expires-in", "1"],
        );
        Listening::start(&server, "/mcp")
    }

    /// A real OpenID provider (`oidc-provider.mjs`), its access tokens lasting a few
    /// seconds, logging to `provider.jsonl` here; on `port` when given: the same
    /// provider started again, knowing nothing it knew.
    fn provider(&self, port: Option<&str>) -> Listening {
        let log = self.path("provider.jsonl");
        let mut args = vec![log.to_str().unwrap(), "--access-seconds", "3"];
        args.extend(port.map(|port| ["--port", port]).into_iter().flatten());
        Listening::start(&node("oidc-provider.mjs", &args), "")
    }

    /// The TypeScript SDK's server taking only `issuer`'s tokens (`oidc-server.mjs`),
    /// logging to `server.jsonl` here.
    fn jwt_server(&self, issuer: &str) -> Listening {
        let log = self.path("server.jsonl");
        Listening::start(
            &node("oidc-server.mjs", &[log.to_str().unwrap(), issuer]),
            "/mcp",
        )
    }

    /// What that server logged with `key`: its token requests (`grant`), its calls.
    fn logged(&self, key: &str) -> Vec<Value> {
        self.logged_in("server.jsonl", key)
    }

    /// What `file` here logged with `key`.
    fn logged_in(&self, file: &str, key: &str) -> Vec<Value> {
        std::fs::read_to_string(self.path(file))
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .filter(|entry| entry.get(key).is_some())
            .collect()
    }

    fn kept(&self) -> PathBuf {
        self.path(".config/reasons/sign-in.json")
    }
}

/// Initializes `session` and lists its tools.
fn tools_of(session: &mut Session) -> Vec<Value> {
    let answer: Value = serde_json::from_str(&session.ask(INITIALIZE)).unwrap();
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
    session.send(INITIALIZED);
    let listed: Value =
        serde_json::from_str(&session.ask(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#))
            .unwrap();
    listed["result"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("{listed}"))
}

/// Every file under `dir`, with its bytes.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    found
}

fn holds(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

#[test]
fn a_server_that_signs_in_is_signed_in_to_once_and_its_token_stays_in_the_store() {
    // A remote server that asks (401) is signed in to in the browser, on the first
    // request; its tools gain `reason` (R1) and a call with one runs.
    let server = oauth_example();
    let home = Home::new();
    let mut session = home.proxy(&server.url, "first.err");
    let tools = tools_of(&mut session);
    assert!(!tools.is_empty());
    let greet = tools.iter().find(|tool| tool["name"] == "greet").unwrap();
    assert!(
        greet["inputSchema"]["properties"]["reason"].is_object(),
        "{greet}"
    );
    let call = call(
        3,
        "greet",
        r#"{"name":"Ada","reason":"to say hello"}"#,
        false,
    );
    let answer: Value = serde_json::from_str(&session.ask(&call)).unwrap();
    assert_eq!(result_text(&answer), "Hello, Ada!", "{answer}");

    // One page was opened, the authorization server's, asking as the spec says: PKCE
    // with S256, and the token for this server alone.
    // The browser was handed a link of the proxy's, good once, not the authorization
    // URL, whose state and challenge every user of the machine could read in its
    // arguments.
    let opened = home.opened();
    assert_eq!(opened.len(), 1, "{opened:?}");
    let (link, authorization) = &opened[0];
    assert!(
        link.starts_with("http://127.0.0.1:") && !link.contains('?'),
        "{link}"
    );
    let page = url::Url::parse(authorization.as_deref().unwrap()).unwrap();
    let query: std::collections::HashMap<_, _> = page.query_pairs().into_owned().collect();
    assert_eq!(query["code_challenge_method"], "S256");
    assert_eq!(query["resource"], server.url);
    assert!(
        query["redirect_uri"].starts_with("http://127.0.0.1:"),
        "{query:?}"
    );
    let stderr = std::fs::read_to_string(home.path("first.err")).unwrap();
    assert!(
        stderr.contains(link.as_str()),
        "the link is shown on stderr too: {stderr}"
    );

    // The token is kept for the owner alone, and is nowhere else: not in the proxy's
    // arguments or environment, not on its stderr, in no other file (the audit log and
    // the browser's among them).
    let kept = home.kept();
    assert_eq!(
        std::fs::metadata(&kept).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let store: Value = serde_json::from_slice(&std::fs::read(&kept).unwrap()).unwrap();
    let token = store["servers"][&server.url]["token"]["access"]
        .as_str()
        .unwrap_or_else(|| panic!("{store}"))
        .to_string();
    assert!(token.len() >= 16);
    let proc = PathBuf::from(format!("/proc/{}", session.pid()));
    for what in ["cmdline", "environ"] {
        let bytes = std::fs::read(proc.join(what)).unwrap();
        assert!(
            !bytes.is_empty() && !holds(&bytes, &token),
            "the token is in its {what}"
        );
    }
    // The audit log is among the files, and has the call.
    let audit = std::fs::read_to_string(home.path("audit.jsonl")).unwrap();
    assert!(audit.contains("greet"), "{audit}");
    let files = files_under(home.dir.path());
    assert!(
        files.len() >= 3,
        "{:?}",
        files.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    for (path, bytes) in &files {
        assert!(
            path == &kept || !holds(bytes, &token),
            "{} holds the token",
            path.display()
        );
    }
    drop(session);

    // The next run takes the kept sign-in: no page is opened.
    let mut again = home.proxy(&server.url, "second.err");
    assert!(!tools_of(&mut again).is_empty());
    assert_eq!(home.opened().len(), 1, "{:?}", home.opened());
}

#[test]
fn a_server_nobody_may_sign_in_to_here_says_how_to_sign_in_ahead() {
    // R19: where nobody is there to sign in (`--no-sign-in`, or doctor's
    // REASONS_NO_SIGN_IN), no page is opened: every request is answered, naming the 401
    // and `reasons login`.
    let server = oauth_example();
    let home = Home::new();
    let no_sign_in = || {
        let mut command = home.reasons(&["mcp", "--no-sign-in", "--url", &server.url]);
        command.stderr(Stdio::null());
        Session::start_command(command)
    };
    let mut session = no_sign_in();
    let answer: Value = serde_json::from_str(&session.ask(INITIALIZE)).unwrap();
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    for named in ["HTTP 401", "reasons login", "--bearer-env"] {
        assert!(message.contains(named), "{named}: {answer}");
    }
    assert_eq!(home.opened().len(), 0);
    drop(session);
    // `reasons login` from a terminal signs in; the proxy then needs nobody.
    let login = home.reasons(&["login", &server.url]).output().unwrap();
    let said = String::from_utf8_lossy(&login.stderr);
    assert!(
        login.status.success() && said.contains("signed in to"),
        "{said}"
    );
    assert_eq!(home.opened().len(), 1);
    assert!(!tools_of(&mut no_sign_in()).is_empty());
    // And `reasons logout` forgets it.
    let logout = home.reasons(&["logout", &server.url]).output().unwrap();
    assert!(String::from_utf8_lossy(&logout.stderr).contains("signed out of"));
    let store: Value = serde_json::from_slice(&std::fs::read(home.kept()).unwrap()).unwrap();
    assert_eq!(store["servers"], serde_json::json!({}));
}

#[test]
fn logout_revokes_the_refresh_token_where_the_authorization_server_takes_revocations() {
    // RFC 7009: `reasons logout` asks the authorization server to revoke the refresh
    // token before it forgets it, and says so; a token of the sign-in no longer works.
    let home = Home::new();
    let server = home.short_lived_server();
    home.login(&server.url);
    let store: Value = serde_json::from_slice(&std::fs::read(home.kept()).unwrap()).unwrap();
    let refresh = store["servers"][&server.url]["token"]["refresh"].clone();
    assert!(refresh.is_string(), "{store}");
    let logout = home.reasons(&["logout", &server.url]).output().unwrap();
    let said = String::from_utf8_lossy(&logout.stderr);
    assert!(
        logout.status.success() && said.contains("signed out of"),
        "{said}"
    );
    assert!(said.contains("revoked"), "{said}");
    let revoked = home.logged("revoked");
    assert_eq!(revoked.len(), 1, "{said}: {revoked:?}");
    assert_eq!(revoked[0]["revoked"], "refresh_token", "{revoked:?}");
    assert_eq!(revoked[0]["hint"], "refresh_token", "{revoked:?}");
    assert_eq!(
        revoked[0]["client"], true,
        "the client names itself: {revoked:?}"
    );
}

#[test]
fn a_legacy_http_sse_server_that_asks_is_signed_in_to_as_a_streamable_one_is() {
    // The 2024-11-05 transport: its stream's GET and its messages' POSTs ask for the
    // token; the proxy signs in on the first 401 and the session goes on, where it
    // answered every request with the 401.
    let home = Home::new();
    let server = home.short_lived_server();
    let url = server.url.replace("/mcp", "/sse");
    let mut session = home.proxy(&url, "legacy.err");
    let tools = tools_of(&mut session);
    assert_eq!(tools.len(), 1, "{tools:?}");
    assert!(
        tools[0]["inputSchema"]["properties"]["reason"].is_object(),
        "{tools:?}"
    );
    let answer: Value = serde_json::from_str(&session.ask(&call(
        3,
        "echo",
        r#"{"text":"hi","reason":"why"}"#,
        false,
    )))
    .unwrap();
    assert_eq!(result_text(&answer), r#"{"text":"hi"}"#, "{answer}");
    assert_eq!(home.opened().len(), 1, "{:?}", home.opened());
}

#[test]
fn a_client_the_authorization_server_forgot_is_registered_again() {
    // The provider restarted and forgot its dynamic registrations: the refresh is refused
    // with `invalid_client`, and the proxy registers again and signs in anew, where it
    // went on with the dead client (each sign-in landing on the provider's error page)
    // until `reasons logout`.
    let home = Home::new();
    let server = home.short_lived_server();
    home.login(&server.url);
    let base = server.url.trim_end_matches("/mcp");
    let forgot = ureq::post(&format!("{base}/forget-clients"))
        .send_empty()
        .unwrap();
    assert_eq!(forgot.status(), 204);
    // The access token lasts a second: the proxy's first request must refresh.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let mut session = home.proxy(&server.url, "again.err");
    assert!(!tools_of(&mut session).is_empty());
    assert_eq!(home.logged("registered").len(), 2, "registered again");
    assert_eq!(
        home.opened().len(),
        2,
        "signed in anew: {:?}",
        home.opened()
    );
}

#[test]
fn a_sign_in_that_cannot_be_kept_still_serves_the_session_that_made_it() {
    // The store cannot be written (its file's place is taken by a folder): the token the
    // person just signed in for serves this proxy, said on stderr, where the request that
    // made the sign-in was answered with an error; `reasons login`, whose work is keeping
    // it, fails, naming the store.
    let home = Home::new();
    std::fs::create_dir_all(home.kept()).unwrap();
    let server = home.short_lived_server();
    let mut session = home.proxy(&server.url, "unkept.err");
    assert!(!tools_of(&mut session).is_empty());
    session.finish();
    let said = std::fs::read_to_string(home.path("unkept.err")).unwrap();
    assert!(said.contains("could not be kept"), "{said}");
    let login = home.reasons(&["login", &server.url]).output().unwrap();
    let said = String::from_utf8_lossy(&login.stderr);
    assert!(
        !login.status.success() && said.contains("sign-in.json"),
        "{said}"
    );
}

#[test]
fn wrap_names_a_remote_server_that_will_ask_its_user_to_sign_in() {
    // A client's health check has no one to sign in: wrap names each remote server that
    // will ask, with the command to sign in ahead; one given credentials of its own, or
    // signed in to already, is not named.
    let home = Home::new();
    let server = home.short_lived_server();
    let config = home.path("mcp.json");
    let servers = serde_json::json!({"mcpServers": {
        "signs": {"url": server.url},
        "given": {"url": server.url, "headers": {"Authorization": "Bearer mine"}},
    }});
    std::fs::write(&config, servers.to_string()).unwrap();
    let wrap = || {
        let output = home
            .reasons(&["wrap", "--config", config.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let said = wrap();
    let named: Vec<&str> = said
        .lines()
        .filter(|line| line.contains("sign in"))
        .collect();
    assert_eq!(named.len(), 1, "{said}");
    assert!(
        named[0].starts_with("signs: ")
            && named[0].contains(&format!("`reasons login {}`", server.url)),
        "{said}"
    );
    home.login(&server.url);
    let again = wrap();
    assert!(!again.contains("sign in"), "{again}");
    assert!(
        again.contains("signs: already runs behind reasons mcp"),
        "{again}"
    );
}

/// Asserts that `grants` (the server's token requests) are the code once, then
/// refreshes, each granted: no refresh token was sent twice.
fn code_then_refreshes(grants: &[Value], at_least: usize) {
    assert!(grants.len() >= at_least, "{grants:?}");
    assert_eq!(grants[0]["grant"], "authorization_code", "{grants:?}");
    let refreshes = grants[1..]
        .iter()
        .all(|grant| grant["grant"] == "refresh_token");
    assert!(refreshes, "{grants:?}");
    let granted = grants.iter().all(|grant| grant["good"] == true);
    assert!(granted, "{grants:?}");
}

/// Calls `echo` through `session` as request `id`, and checks what came back.
fn echo(session: &mut Session, id: u32, arguments: &str) {
    let call = call(id, "echo", arguments, false);
    let answer: Value = serde_json::from_str(&session.ask(&call)).unwrap();
    assert_eq!(result_text(&answer), r#"{"text":"hi"}"#, "{answer}");
}

#[test]
fn an_expiring_token_is_refreshed_with_each_refresh_token_used_once() {
    // The tests' own server issues tokens lasting a second and refresh tokens good once:
    // each request finds its token about to expire and refreshes it first, with the
    // newest refresh token (rotation kept). A refresh token sent twice is refused and
    // logged; a refresh that failed would have opened the browser again. Through it all
    // every call reaches the server without its reason (R8), as its echo shows.
    let home = Home::new();
    let server = home.short_lived_server();
    let mut session = home.proxy(&server.url, "proxy.err");
    tools_of(&mut session);
    for id in 3..6 {
        echo(&mut session, id, r#"{"text":"hi","reason":"to test"}"#);
    }
    // The code once, then a refresh before each later request (the list and 3 calls).
    code_then_refreshes(&home.logged("grant"), 5);
    assert_eq!(home.opened().len(), 1, "{:?}", home.opened());
    let calls = home.logged("call");
    assert_eq!(calls.len(), 3);
    for call in &calls {
        assert_eq!(call["arguments"], serde_json::json!({"text": "hi"}));
    }
}

#[test]
fn two_proxies_of_one_user_share_the_sign_in_and_never_reuse_a_refresh_token() {
    // Two sessions of a client (two proxies) refresh the same sign-in in turn: each takes
    // the store's lock, and the newest refresh token, or the tokens the other just got;
    // neither sends a refresh token the other used, and nobody is asked to sign in twice.
    let home = Home::new();
    let server = home.short_lived_server();
    let mut first = home.proxy(&server.url, "first.err");
    tools_of(&mut first);
    let mut second = home.proxy(&server.url, "second.err");
    tools_of(&mut second);
    for id in 3..7 {
        let session = if id % 2 == 0 { &mut first } else { &mut second };
        echo(session, id, r#"{"text":"hi"}"#);
    }
    code_then_refreshes(&home.logged("grant"), 5);
    assert_eq!(home.opened().len(), 1, "{:?}", home.opened());
}

#[test]
fn a_sign_in_nobody_finishes_ends_in_an_answer_saying_what_to_do() {
    // R19: the page is shown, nobody signs in (a browser that opens nothing), and at the
    // end of --sign-in-wait (1 s here, far under the test's patience) the request is
    // answered: why, and the ways out. The next request within the quiet time opens no
    // second page and gets the same answer.
    let server = oauth_example();
    let home = Home::new();
    let mut command = home.reasons(&["mcp", "--sign-in-wait", "1", "--url", &server.url]);
    // A browser that notes the page and opens nothing.
    let noted = home.path("noted.log");
    let browser = format!("sh -c 'echo page >> {}'", noted.display());
    command.env("BROWSER", browser).stderr(Stdio::null());
    let mut session = Session::start_command(command);
    for id in [1, 2] {
        let initialize = INITIALIZE.replace(r#""id":1"#, &format!(r#""id":{id}"#));
        let answer: Value = serde_json::from_str(&session.ask(&initialize)).unwrap();
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        for named in [
            "HTTP 401",
            "did not finish",
            "--sign-in-wait",
            "reasons login",
        ] {
            assert!(message.contains(named), "{named}: {answer}");
        }
    }
    let pages = std::fs::read_to_string(&noted).unwrap();
    assert_eq!(pages.lines().count(), 1, "{pages}");
    // Nothing was signed in to, so nothing is kept.
    assert!(!home.kept().exists());
}

#[test]
fn a_signal_during_a_sign_in_ends_the_proxy_at_once() {
    // R20: the client's request started a sign-in nobody finishes (--sign-in-wait 600 s,
    // far over the test's patience); SIGTERM ends the proxy within the patience of
    // `Session::wait` (30 s), and the request is answered. It waited out the whole
    // --sign-in-wait: ending the session took the lock the sign-in held.
    let server = oauth_example();
    let home = Home::new();
    let mut command = home.reasons(&["mcp", "--sign-in-wait", "600", "--url", &server.url]);
    let noted = home.path("noted.log");
    let browser = format!("sh -c 'echo page >> {}'", noted.display());
    command.env("BROWSER", browser).stderr(Stdio::null());
    let mut session = Session::start_command(command);
    session.send(INITIALIZE);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !noted.exists() {
        assert!(std::time::Instant::now() < until, "no sign-in started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: a signal to the proxy this test started.
    unsafe { libc::kill(session.pid() as libc::pid_t, libc::SIGTERM) };
    let answer: Value = serde_json::from_str(&session.next_line().expect("an answer")).unwrap();
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(answer.get("error").is_some(), "{answer}");
    let status = session.wait();
    assert!(!status.success(), "{status:?}");
}

#[test]
fn login_keeps_the_sign_in_where_a_client_s_proxy_finds_it_whatever_xdg_says() {
    // One store: `reasons login` run in a shell with XDG_CONFIG_HOME set elsewhere keeps
    // the sign-in in ~/.config/reasons, where a proxy a client starts with an environment
    // of its own (no XDG_CONFIG_HOME) finds it and opens no browser.
    let server = oauth_example();
    let home = Home::new();
    let elsewhere = home.path("elsewhere");
    let login = home
        .reasons(&["login", &server.url])
        .env("XDG_CONFIG_HOME", &elsewhere)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(login.status.success(), "{login:?}");
    assert!(home.kept().exists(), "not in ~/.config/reasons");
    assert!(!elsewhere.join("reasons").exists());
    let mut command = home.reasons(&["mcp", "--url", &server.url]);
    command.env_remove("XDG_CONFIG_HOME").stderr(Stdio::null());
    let mut session = Session::start_command(command);
    assert!(!tools_of(&mut session).is_empty());
    assert_eq!(home.opened().len(), 1, "signed in once, by login");
}

#[test]
fn a_real_openid_provider_signs_in_refreshes_starts_again_and_revokes() {
    // node-oidc-provider (dynamic registration, PKCE, RFC 8707 JWT access tokens lasting
    // 3 s, RFC 9207 iss, rotated refresh tokens, revocation) in front of the TypeScript
    // SDK's server checking each JWT's signature, issuer, audience, expiry and scope; the
    // person signs in and consents at the provider's own pages (`browser.mjs`).
    let home = Home::new();
    let provider = home.provider(None);
    let server = home.jwt_server(&provider.url);
    let mut session = home.proxy(&server.url, "proxy.err");
    let tools = tools_of(&mut session);
    assert_eq!(tools.len(), 1, "{tools:?}");
    assert!(tools[0]["inputSchema"]["properties"]["reason"].is_object());
    let echo = |session: &mut Session, id: u32| {
        let call = call(id, "echo", r#"{"text":"hi","reason":"to test"}"#, false);
        let answer: Value = serde_json::from_str(&session.ask(&call)).unwrap();
        assert_eq!(result_text(&answer), "hi", "{answer}");
    };
    echo(&mut session, 3);
    // The provider granted a refresh token (`offline_access` with `prompt=consent`,
    // OpenID Connect Core §11): the proxy refreshes each token about to expire without
    // the browser, which opened once.
    std::thread::sleep(std::time::Duration::from_secs(4));
    echo(&mut session, 4);
    let grants = home.logged_in("provider.jsonl", "grant");
    assert!(grants.len() >= 2, "{grants:?}");
    assert_eq!(grants[0]["grant"], "authorization_code", "{grants:?}");
    assert!(
        grants[1..]
            .iter()
            .all(|grant| grant["grant"] == "refresh_token")
    );
    assert!(
        grants.iter().all(|grant| grant.get("refused").is_none()),
        "{grants:?}"
    );
    assert_eq!(home.opened().len(), 1, "{:?}", home.opened());
    // Started again, the provider knows neither the client nor its grant: the refresh
    // is refused, the proxy registers again and the person signs in anew, once.
    let port = provider.url.rsplit(':').next().unwrap().to_string();
    drop(provider);
    let _provider = home.provider(Some(&port));
    echo(&mut session, 5);
    assert_eq!(home.opened().len(), 2, "{:?}", home.opened());
    assert_eq!(home.logged_in("provider.jsonl", "registered").len(), 2);
    // R8: the server never saw a reason, in any call.
    let calls = home.logged("call");
    assert_eq!(calls.len(), 3, "{calls:?}");
    for call in &calls {
        assert_eq!(call["call"], serde_json::json!({"text": "hi"}), "{calls:?}");
    }
    drop(session);
    // Logout revokes the refresh token (RFC 7009): the provider then refuses it.
    let store: Value = serde_json::from_slice(&std::fs::read(home.kept()).unwrap()).unwrap();
    let kept = &store["servers"][&server.url];
    let (refresh, client) = (
        kept["token"]["refresh"].as_str(),
        kept["client"]["id"].as_str(),
    );
    let (refresh, client) = (refresh.unwrap().to_string(), client.unwrap().to_string());
    let logout = home.reasons(&["logout", &server.url]).output().unwrap();
    let said = String::from_utf8_lossy(&logout.stderr);
    assert!(
        logout.status.success() && said.contains("revoked"),
        "{said}"
    );
    let revoked = home.logged_in("provider.jsonl", "revoked");
    assert_eq!(revoked.len(), 1, "{said}");
    assert_eq!(revoked[0]["revoked"], 200, "{revoked:?}");
    let token_endpoint = kept["token_endpoint"].as_str().unwrap();
    let form = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh.as_str()),
        ("client_id", client.as_str()),
    ];
    let refused = (ureq::post(token_endpoint).config())
        .http_status_as_error(false)
        .build()
        .send_form(form)
        .unwrap();
    assert_eq!(
        refused.status(),
        400,
        "a revoked refresh token was honoured"
    );
    let why = refused.into_body().read_to_string().unwrap();
    assert!(why.contains("invalid_grant"), "{why}");
}
