//! Showing the person the page to sign in at: the URL always goes to stderr (a terminal,
//! or the client's log of the server), and a browser is asked to open it: `BROWSER`
//! where it is set (a `:`-separated list of commands, `%s` standing for the URL, else
//! the URL appended, as the convention has it), else the platform's opener. The
//! browser's own output goes nowhere: the proxy's stdout is its client's.

use std::process::{Command, Stdio};

/// Asks for `url` to be opened, and says so on stderr.
pub fn show(url: &str, server: &str) {
    crate::say::say(&format!(
        "{server} asks you to sign in: open this page to do it (it was opened in your \
         browser if one could be):\n  {url}"
    ));
    let commands = match std::env::var("BROWSER") {
        Ok(browser) if !browser.trim().is_empty() => browser
            .split(':')
            .filter_map(|command| command_line(command, url))
            .collect(),
        _ => vec![platform_opener(url)],
    };
    for mut command in commands {
        let spawned = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        if let Ok(mut child) = spawned {
            // Reaped when it ends; the sign-in does not wait for a browser to close.
            std::thread::spawn(move || child.wait());
            return;
        }
    }
}

/// One `BROWSER` entry, split as the shell would, with the URL in place of `%s` or after.
fn command_line(entry: &str, url: &str) -> Option<Command> {
    let mut words = shlex::split(entry)?;
    if words.is_empty() {
        return None;
    }
    if words.iter().any(|word| word.contains("%s")) {
        for word in &mut words {
            *word = word.replace("%s", url);
        }
    } else {
        words.push(url.to_string());
    }
    let mut command = Command::new(&words[0]);
    command.args(&words[1..]);
    Some(command)
}

fn platform_opener(url: &str) -> Command {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let mut command = Command::new(opener);
    command.arg(url);
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(entry: &str) -> Option<Vec<String>> {
        let command = command_line(entry, "https://as/authorize?a=1&b=2")?;
        let mut argv = vec![command.get_program().to_string_lossy().into_owned()];
        argv.extend(
            command
                .get_args()
                .map(|arg| arg.to_string_lossy().into_owned()),
        );
        Some(argv)
    }

    #[test]
    fn browser_entries_are_command_lines_taking_the_url_as_one_argument() {
        assert_eq!(
            argv("firefox").unwrap(),
            ["firefox", "https://as/authorize?a=1&b=2"]
        );
        assert_eq!(
            argv("'/opt/my browser/run' --new-tab %s").unwrap(),
            [
                "/opt/my browser/run",
                "--new-tab",
                "https://as/authorize?a=1&b=2"
            ]
        );
        assert_eq!(argv("  "), None);
        assert_eq!(argv("unclosed 'quote"), None);
    }
}
