//! Signing in to a server ahead (`reasons login URL`, for clients that start servers
//! with no terminal to sign in from) and out (`reasons logout URL`), and the flags
//! `reasons mcp --url` signs in with when the server asks.

use anyhow::Context;
use reasons_mcp_transports::{Given, SignIn, SignInSettings};
use std::time::Duration;

/// How `reasons mcp --url` and `reasons login` sign in to a server that asks.
#[derive(clap::Args)]
pub struct SignInArgs {
    /// A client registered ahead with the server's authorization server: its id (else
    /// a Client ID Metadata Document, or a client registered there and then).
    #[arg(long, value_name = "ID")]
    client_id: Option<String>,
    /// With --client-id: the environment variable holding the client's secret.
    #[arg(long, value_name = "VARIABLE", requires = "client_id")]
    client_secret_env: Option<String>,
    /// The URL of a Client ID Metadata Document describing this client, used as its
    /// id where the authorization server takes them.
    #[arg(long, value_name = "URL")]
    client_metadata_url: Option<String>,
    /// The most seconds a person has to finish signing in in the browser; the request
    /// that needed it is then answered with an error saying what to do.
    #[arg(long, value_name = "SECONDS", default_value_t = 300,
          value_parser = clap::value_parser!(u16).range(1..))]
    sign_in_wait: u16,
}

impl SignInArgs {
    /// Whether any of these flags was given (they mean something only for a --url).
    pub fn given(&self) -> bool {
        self.client_id.is_some() || self.client_metadata_url.is_some()
    }

    /// The settings these flags give; `interactive`: whether a 401 opens a sign-in.
    pub fn settings(&self, interactive: bool) -> anyhow::Result<SignInSettings> {
        let secret = match &self.client_secret_env {
            Some(variable) => Some(std::env::var(variable).with_context(|| {
                format!(
                    "--client-secret-env {variable}: the environment has no {variable} (or it is not UTF-8)"
                )
            })?),
            None => None,
        };
        Ok(SignInSettings {
            given: Given {
                id: self.client_id.clone(),
                secret,
                metadata_url: self.client_metadata_url.clone(),
            },
            wait: Duration::from_secs(self.sign_in_wait.into()),
            interactive,
        })
    }
}

/// Sign in to a server that asks for it, in your browser, so that `reasons mcp --url`
/// finds the sign-in when a client starts it with no terminal to sign in from.
#[derive(clap::Args)]
pub struct LoginArgs {
    /// The server's MCP endpoint.
    #[arg(value_name = "URL")]
    url: String,
    #[command(flatten)]
    sign_in: SignInArgs,
}

/// Forget the sign-in kept for a server.
#[derive(clap::Args)]
pub struct LogoutArgs {
    /// The server's MCP endpoint, as it was signed in to.
    #[arg(value_name = "URL")]
    url: String,
}

impl crate::Run for LoginArgs {
    fn run(self) -> anyhow::Result<u8> {
        let settings = self.sign_in.settings(true)?;
        let sign_in = SignIn::of(&self.url, &settings).map_err(anyhow::Error::msg)?;
        let done = sign_in.login().map_err(anyhow::Error::msg)?;
        reasons_mcp_transports::say(&done);
        Ok(0)
    }
}

impl crate::Run for LogoutArgs {
    fn run(self) -> anyhow::Result<u8> {
        let done = SignIn::logout(&self.url).map_err(anyhow::Error::msg)?;
        reasons_mcp_transports::say(&done);
        Ok(0)
    }
}
