//! The loopback listener the authorization server sends the browser back to (RFC 8252
//! §7.3): on 127.0.0.1, at a port the system picks, for one sign-in. It waits for the
//! redirect carrying this sign-in's `state`, for a bounded time; any other request (a
//! page's, another local process's) is answered and changes nothing.
//!
//! The browser is not handed the authorization URL itself: its state and PKCE challenge
//! would be in the browser's arguments, which every user of the machine can read, and
//! another could sign in as themselves with them and deliver their own code first (login
//! CSRF). It is handed a link of this listener's, random and good once, that redirects to
//! the authorization URL; a second use of the link ends the sign-in, since someone else
//! took it.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// The path of the redirect URI.
const PATH: &str = "/callback";

/// Where the one-time link to the authorization URL is, below a random segment.
const START: &str = "/start/";

/// The most of a request's head that is read.
const HEAD_AT_MOST: usize = 16 << 10;

/// How long one connection may take to send its request.
const READ_AT_MOST: Duration = Duration::from_secs(5);

/// How often the listener looks for a connection while it waits.
const POLL: Duration = Duration::from_millis(50);

pub struct Callback {
    listener: TcpListener,
    /// The one-time link's random segment, and the authorization URL it leads to.
    link: Option<(String, String)>,
}

/// What the authorization server sent back.
#[derive(Debug, PartialEq)]
pub struct Returned {
    pub code: String,
    /// RFC 9207's `iss`, when the server sent it.
    pub iss: Option<String>,
}

impl Callback {
    /// Listens on `port` of 127.0.0.1 (0: one the system picks).
    pub fn listen(port: u16) -> std::io::Result<Callback> {
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        listener.set_nonblocking(true)?;
        Ok(Callback {
            listener,
            link: None,
        })
    }

    fn port(&self) -> u16 {
        self.listener
            .local_addr()
            .map_or(0, |address| address.port())
    }

    /// A link of this listener's that leads, once, to `authorization`: what the browser
    /// is handed in its place.
    pub fn link_to(&mut self, authorization: String) -> String {
        let mut random = [0u8; 16];
        getrandom::fill(&mut random).expect("the operating system's random source");
        let segment: String = random.iter().map(|byte| format!("{byte:02x}")).collect();
        let link = format!("http://127.0.0.1:{}{START}{segment}", self.port());
        self.link = Some((segment, authorization));
        link
    }

    /// The redirect URI to register and send.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{PATH}", self.port())
    }

    /// Waits until `deadline` for the redirect carrying `state`: its code, and the page
    /// to tell the person how signing in ended once the proxy knows; or the error the
    /// authorization server sent instead.
    pub fn wait(&self, state: &str, deadline: Instant) -> Result<(Returned, Page), String> {
        let mut followed = false;
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    // Each connection is bounded whole, and by the sign-in's own deadline:
                    // one that sends a byte now and then holds nothing past either.
                    let until = deadline.min(Instant::now() + READ_AT_MOST);
                    let link = self.link.as_ref().map(|(segment, to)| Link {
                        segment,
                        to,
                        followed: &mut followed,
                    });
                    if let Some(outcome) = answer(stream, state, link, until) {
                        return outcome;
                    }
                }
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        return Err("nobody finished signing in in time".into());
                    }
                    std::thread::sleep(POLL);
                }
                Err(error) => return Err(format!("the sign-in's listener failed ({error})")),
            }
        }
    }
}

/// The browser's request that brought the code back, answered once the proxy knows how
/// signing in ended: the page says "Signed in" only for a sign-in that was (its `iss`
/// checked, its code traded for a token).
#[derive(Debug)]
pub struct Page(TcpStream);

impl Page {
    /// Tells the person how signing in ended.
    pub fn tell(self, outcome: &Result<(), String>) {
        let (status, page) = match outcome {
            Ok(()) => ("200 OK", "Signed in. You can close this tab."),
            Err(_) => ("400 Bad Request", "Signing in failed; reasons says why."),
        };
        respond(self.0, status, page);
    }
}

fn respond(mut stream: TcpStream, status: &str, page: &str) {
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n{page}",
        page.len()
    );
}

/// The one-time link to the authorization URL, and whether it was followed already.
struct Link<'a> {
    segment: &'a str,
    to: &'a str,
    followed: &'a mut bool,
}

/// Reads one request and answers it, unless it is this sign-in's redirect with a code,
/// whose page waits for the outcome; the sign-in's outcome when it was this sign-in's.
/// The one-time link redirects to the authorization URL the first time, and ends the
/// sign-in the second.
fn answer(
    mut stream: TcpStream,
    state: &str,
    link: Option<Link<'_>>,
    until: Instant,
) -> Option<Result<(Returned, Page), String>> {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_write_timeout(Some(READ_AT_MOST));
    let target = read_target(&mut stream, until);
    if let (Some(link), Some(target)) = (link, target.as_deref())
        && target.strip_prefix(START) == Some(link.segment)
    {
        if std::mem::replace(link.followed, true) {
            respond(stream, "410 Gone", "This sign-in link was used already.");
            return Some(Err(
                "its sign-in link was opened twice: someone else on this machine may have \
                 taken it, so this sign-in was ended; sign in again"
                    .into(),
            ));
        }
        let _ = write!(
            stream,
            "HTTP/1.1 302 Found\r\nLocation: {}\r\nContent-Length: 0\r\n\
             Connection: close\r\nCache-Control: no-store\r\nReferrer-Policy: no-referrer\r\n\r\n",
            link.to
        );
        return None;
    }
    match target
        .as_deref()
        .and_then(|target| outcome_of(target, state))
    {
        Some(Ok(returned)) => Some(Ok((returned, Page(stream)))),
        Some(Err(why)) => {
            respond(
                stream,
                "400 Bad Request",
                "Signing in failed; reasons says why.",
            );
            Some(Err(why))
        }
        None => {
            respond(stream, "404 Not Found", "Not this sign-in.");
            None
        }
    }
}

/// The request target of the GET `stream` sends, once its head is whole, by `until`.
fn read_target(stream: &mut TcpStream, until: Instant) -> Option<String> {
    let mut head = Vec::new();
    let mut chunk = [0; 2048];
    while head.len() < HEAD_AT_MOST {
        let left = until.checked_duration_since(Instant::now())?;
        stream
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .ok()?;
        let read = stream.read(&mut chunk).ok()?;
        if read == 0 {
            return None;
        }
        head.extend_from_slice(&chunk[..read]);
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(&head) {
            Ok(httparse::Status::Complete(_)) if request.method == Some("GET") => {
                return request.path.map(str::to_string);
            }
            Ok(httparse::Status::Partial) => continue,
            _ => return None,
        }
    }
    None
}

/// What the redirect to `target` says, if it is this sign-in's (its path, its `state`).
fn outcome_of(target: &str, state: &str) -> Option<Result<Returned, String>> {
    let url = url::Url::parse(&format!("http://127.0.0.1{target}")).ok()?;
    if url.path() != PATH {
        return None;
    }
    let found = |name: &str| {
        let mut values = url.query_pairs().filter(|(key, _)| key == name);
        let value = values.next().map(|(_, value)| value.into_owned());
        // A parameter given twice is not the authorization server's answer.
        values.next().map_or(Ok(value), |_| Err(()))
    };
    if found("state") != Ok(Some(state.to_string())) {
        return None;
    }
    let (Ok(code), Ok(iss), Ok(error)) = (found("code"), found("iss"), found("error")) else {
        return Some(Err("the redirect repeats a parameter".into()));
    };
    if let Some(error) = error {
        let description = found("error_description")
            .ok()
            .flatten()
            .unwrap_or_default();
        let said = crate::say::quoted(&format!("{error} {description}"));
        return Some(Err(format!("the authorization server refused ({said})")));
    }
    Some(match code {
        Some(code) => Ok(Returned { code, iss }),
        None => Err("the redirect carries no code".into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(callback: &Callback, target: &str) -> String {
        let port = callback.listener.local_addr().unwrap().port();
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(stream, "GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer
    }

    #[test]
    fn only_this_sign_in_s_redirect_ends_the_wait() {
        let callback = Callback::listen(0).unwrap();
        assert!(callback.redirect_uri().starts_with("http://127.0.0.1:"));
        let deadline = Instant::now() + Duration::from_secs(60);
        std::thread::scope(|scope| {
            let waited = scope.spawn(|| callback.wait("s1", deadline));
            // Another page, another sign-in's state, no state: answered, not taken.
            for target in ["/", "/callback?code=c&state=other", "/callback?code=c"] {
                let answer = get(&callback, target);
                assert!(answer.starts_with("HTTP/1.1 404"), "{target}: {answer}");
            }
            // Its page waits for how signing in ended: "Signed in" only once it was.
            let browser = scope.spawn(|| {
                get(
                    &callback,
                    "/callback?code=the%20code&state=s1&iss=https%3A%2F%2Fas",
                )
            });
            let (returned, page) = waited.join().unwrap().unwrap();
            assert_eq!(
                returned,
                Returned {
                    code: "the code".into(),
                    iss: Some("https://as".into())
                }
            );
            page.tell(&Ok(()));
            let answer = browser.join().unwrap();
            assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        });
    }

    #[test]
    fn a_refusal_or_a_repeated_parameter_ends_it_with_why() {
        assert_eq!(
            outcome_of(
                "/callback?state=s&error=access_denied&error_description=no%0Athanks",
                "s"
            ),
            Some(Err(
                "the authorization server refused (access_denied no thanks)".into()
            ))
        );
        assert_eq!(
            outcome_of("/callback?state=s&code=a&code=b", "s"),
            Some(Err("the redirect repeats a parameter".into()))
        );
        assert_eq!(outcome_of("/callback?state=s&state=s&code=a", "s"), None);
        assert_eq!(
            outcome_of("/callback?state=s", "s"),
            Some(Err("the redirect carries no code".into()))
        );
    }

    #[test]
    fn the_browser_gets_a_link_good_once_and_a_second_use_ends_the_sign_in() {
        // The authorization URL (state, challenge) is in no argument: the link leads to
        // it once; whoever opens it a second time ends this sign-in.
        let mut callback = Callback::listen(0).unwrap();
        let authorization = "https://as.example/authorize?state=s&code_challenge=c".to_string();
        let link = callback.link_to(authorization.clone());
        assert!(
            !link.contains("state") && !link.contains("challenge"),
            "{link}"
        );
        let path = link
            .split_once(&format!(":{}", callback.port()))
            .unwrap()
            .1
            .to_string();
        let deadline = Instant::now() + Duration::from_secs(60);
        std::thread::scope(|scope| {
            let waited = scope.spawn(|| callback.wait("s", deadline));
            let first = get(&callback, &path);
            assert!(first.starts_with("HTTP/1.1 302"), "{first}");
            assert!(
                first.contains(&format!("Location: {authorization}\r\n")),
                "{first}"
            );
            // Another link of the listener's is no link.
            let other = get(&callback, "/start/0123");
            assert!(other.starts_with("HTTP/1.1 404"), "{other}");
            let second = get(&callback, &path);
            assert!(second.starts_with("HTTP/1.1 410"), "{second}");
            let why = waited.join().unwrap().unwrap_err();
            assert!(why.contains("opened twice"), "{why}");
        });
    }

    #[test]
    fn nobody_signing_in_ends_the_wait_at_its_deadline() {
        let callback = Callback::listen(0).unwrap();
        let why = callback.wait("s", Instant::now()).unwrap_err();
        assert!(why.contains("in time"), "{why}");
    }

    #[test]
    fn a_connection_that_dribbles_holds_nothing_past_the_sign_in_s_deadline() {
        // A local process sends a byte of a request head every 200 ms for 30 s, far past
        // the sign-in's deadline of 1 s: the wait ends while it still dribbles.
        let callback = Callback::listen(0).unwrap();
        let port = callback.listener.local_addr().unwrap().port();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let dribbled = done.clone();
        std::thread::spawn(move || {
            let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
            for _ in 0..150 {
                if stream.write_all(b"G").is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            dribbled.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        let waited = callback.wait("state", Instant::now() + Duration::from_secs(1));
        assert!(waited.is_err(), "{waited:?}");
        assert!(
            !done.load(std::sync::atomic::Ordering::SeqCst),
            "it waited out the dribbler"
        );
    }

    #[test]
    fn the_page_says_signing_in_failed_when_it_did_after_the_redirect() {
        // An `iss` that is not the issuer's, a code the authorization server refuses: the
        // redirect was this sign-in's, and the page tells the truth.
        let callback = Callback::listen(0).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        std::thread::scope(|scope| {
            let waited = scope.spawn(|| callback.wait("s", deadline));
            let browser = scope.spawn(|| get(&callback, "/callback?code=c&state=s"));
            let (_, page) = waited.join().unwrap().unwrap();
            page.tell(&Err(
                "the authorization server would not issue a token".into()
            ));
            let answer = browser.join().unwrap();
            assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
            assert!(
                answer.contains("failed") && !answer.contains("Signed in"),
                "{answer}"
            );
        });
    }
}
