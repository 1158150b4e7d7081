//! The doctor's table, printed as it is learnt: first what is known without starting a
//! server, then each started server's rows as soon as it is done, while the servers are
//! checked several at a time. While any is still running, a line on stderr says which,
//! and for how long, so that no one waits without a word. A server's name, its tools'
//! names and what it said are its own, and may hold escapes or line breaks that would
//! draw rows: each is printed as inert text (R12).

use reasons_doctor::Row;
use reasons_doctor::listing::at_most;
use reasons_inert::inert;
use reasons_mcp_transports::say;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// How many servers are checked at once: each is a proxy and a server, often a
/// launcher (`npx`, `uvx`) with a runtime of its own.
const AT_ONCE: usize = 8;

/// How often a line says which servers are still being waited for.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// How many characters of a name, and of a verdict, a row shows; the tool column's
/// width (a longer name runs over it).
const NAME_CAP: usize = 64;
const VERDICT_CAP: usize = 400;
const TOOL_WIDTH: usize = 24;

/// How one server is checked: its name, its entry and the patience it is given, to its
/// rows.
pub type RowsOf = fn(&str, &Value, Duration) -> Vec<Row>;

/// Prints the table: the rows `told`, then the rows `rows_of` gives for each server of
/// `started` (its name and entry), as each is done, each given `patience` to list.
pub fn run(told: Vec<Row>, started: Vec<(String, Value)>, patience: Duration, rows_of: RowsOf) {
    let names = told.iter().map(|row| row.server.as_str());
    let table = Table::new(names.chain(started.iter().map(|(server, _)| server.as_str())));
    table.header();
    for row in &told {
        table.row(row);
    }
    if started.is_empty() {
        return;
    }
    let count = started.len();
    let at_once = AT_ONCE.min(count);
    let bound = at_most(patience).as_secs() * count.div_ceil(at_once) as u64;
    say(&format!(
        "checking {}, {at_once} at a time: each has {} s to list its tools, so this ends \
         within {bound} s",
        match count {
            1 => "1 server".to_string(),
            _ => format!("{count} servers"),
        },
        patience.as_secs(),
    ));
    let queue = Arc::new(Mutex::new(
        started.into_iter().enumerate().collect::<VecDeque<_>>(),
    ));
    let running: Arc<Mutex<Vec<(usize, String, Instant)>>> = Arc::default();
    let (done, finished) = mpsc::channel();
    for _ in 0..at_once {
        let (queue, running, done) = (queue.clone(), running.clone(), done.clone());
        std::thread::spawn(move || {
            loop {
                // Taken in a statement of its own: a guard in the loop's head would hold
                // the queue through the check, one server at a time.
                let next = lock(&queue).pop_front();
                let Some((at, (server, entry))) = next else {
                    return;
                };
                lock(&running).push((at, server.clone(), Instant::now()));
                let rows = rows_of(&server, &entry, patience);
                lock(&running).retain(|(which, _, _)| *which != at);
                if done.send(rows).is_err() {
                    return;
                }
            }
        });
    }
    drop(done);
    let mut left = count;
    while left > 0 {
        match finished.recv_timeout(PROGRESS_EVERY) {
            Ok(rows) => {
                rows.iter().for_each(|row| table.row(row));
                left -= 1;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let waiting: Vec<String> = lock(&running)
                    .iter()
                    .map(|(_, server, since)| {
                        format!(
                            "{} ({} s)",
                            inert(server, NAME_CAP),
                            since.elapsed().as_secs()
                        )
                    })
                    .collect();
                say(&format!("{left} to go; waiting for {}", waiting.join(", ")));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// `mutex`'s value: a worker that panicked holding it left nothing half done in it.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The table's columns, each row printed as it comes.
struct Table {
    server: usize,
}

impl Table {
    /// A table whose server column holds each of `names`.
    fn new<'a>(names: impl Iterator<Item = &'a str>) -> Table {
        let widest = names
            .map(|name| inert(name, NAME_CAP).chars().count())
            .max();
        Table {
            server: widest.unwrap_or(0).max("server".len()),
        }
    }

    fn header(&self) {
        self.print("server", "tool", "reason");
    }

    fn row(&self, row: &Row) {
        self.print(
            &inert(&row.server, NAME_CAP),
            &inert(&row.tool, NAME_CAP),
            &inert(&row.verdict, VERDICT_CAP),
        );
    }

    fn print(&self, server: &str, tool: &str, verdict: &str) {
        let width = self.server;
        println!("{server:width$}  {tool:TOOL_WIDTH$}  {verdict}");
    }
}
