//! The loopback listener the authorization server sends the browser back to (RFC 8252
//! §7.3): on 127.0.0.1, at a port the system picks, for one sign-in. It waits for the
//! redirect carrying this sign-in's `state`, for a bounded time; any other request (a
//! page's, another local process's) is answered and changes nothing.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// The path of the redirect URI.
const PATH: &str = "/callback";

/// The most of a request's head that is read.
const HEAD_AT_MOST: usize = 16 << 10;

/// How long one connection may take to send its request.
const READ_AT_MOST: Duration = Duration::from_secs(5);

/// How often the listener looks for a connection while it waits.
const POLL: Duration = Duration::from_millis(50);

pub struct Callback {
    listener: TcpListener,
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
        Ok(Callback { listener })
    }

    /// The redirect URI to register and send.
    pub fn redirect_uri(&self) -> String {
        let port = self
            .listener
            .local_addr()
            .map_or(0, |address| address.port());
        format!("http://127.0.0.1:{port}{PATH}")
    }

    /// Waits until `deadline` for the redirect carrying `state`: its code, and the page
    /// to tell the person how signing in ended once the proxy knows; or the error the
    /// authorization server sent instead.
    pub fn wait(&self, state: &str, deadline: Instant) -> Result<(Returned, Page), String> {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    // Each connection is bounded whole, and by the sign-in's own deadline:
                    // one that sends a byte now and then holds nothing past either.
                    let until = deadline.min(Instant::now() + READ_AT_MOST);
                    if let Some(outcome) = answer(stream, state, until) {
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

/// Reads one request and answers it, unless it is this sign-in's redirect with a code,
/// whose page waits for the outcome; the sign-in's outcome when it was this sign-in's.
fn answer(
    mut stream: TcpStream,
    state: &str,
    until: Instant,
) -> Option<Result<(Returned, Page), String>> {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_write_timeout(Some(READ_AT_MOST));
    let target = read_target(&mut stream, until);
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
