//! Who the proxy is to an authorization server, in the spec's order: the client the
//! user registered ahead, else a Client ID Metadata Document's URL
//! where the server takes them, else a client registered
//! there and then (RFC 7591), as a native application with a loopback redirect.

use super::discovery::Authority;
use super::store::Registered;
use super::web::Web;
use serde::Deserialize;

/// A client registered ahead of time, as the user gave it.
#[derive(Clone, Debug, Default)]
pub struct Given {
    /// The client id the authorization server gave the user.
    pub id: Option<String>,
    /// The secret, read from the environment.
    pub secret: Option<String>,
    /// The URL of a Client ID Metadata Document describing the
    /// proxy as the user runs it.
    pub metadata_url: Option<String>,
}

/// The client to sign in as with `authority`, with `redirect_uri` as its redirect.
pub fn client(
    web: &Web,
    authority: &Authority,
    given: &Given,
    redirect_uri: &str,
) -> Result<Registered, String> {
    let supported = authority
        .token_endpoint_auth_methods_supported
        .clone()
        // RFC 8414 §2: absent, the server takes client_secret_basic.
        .unwrap_or_else(|| vec!["client_secret_basic".into()]);
    if let Some(id) = &given.id {
        return Ok(Registered {
            id: id.clone(),
            secret: given.secret.clone(),
            method: method_for(given.secret.is_some(), &supported),
            redirect_uri: None,
        });
    }
    if let Some(url) = given
        .metadata_url
        .as_ref()
        .filter(|_| authority.client_id_metadata_document_supported)
    {
        return Ok(Registered {
            id: url.clone(),
            secret: None,
            method: "none".into(),
            redirect_uri: None,
        });
    }
    let Some(endpoint) = &authority.registration_endpoint else {
        return Err(format!(
            "the authorization server {} registers no clients itself: register one there \
             and give it with --client-id (and --client-secret-env)",
            authority.issuer
        ));
    };
    let endpoint = web.url(endpoint, "its registration endpoint")?;
    // A public client where the server takes one: a secret kept on the user's disk
    // proves little; else the method the server names first of those we have.
    let asked = if supported.iter().any(|method| method == "none") {
        "none".to_string()
    } else {
        method_for(true, &supported)
    };
    let request = serde_json::json!({
        "client_name": "reasons",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": asked,
        "application_type": "native",
    });
    let registered: Registration = web
        .post_json(&endpoint, &request)
        .map_err(|why| format!("registering with {} failed: {why}", authority.issuer))?;
    let method = registered.token_endpoint_auth_method.unwrap_or(asked);
    Ok(Registered {
        id: registered.client_id,
        secret: registered.client_secret,
        method,
        redirect_uri: Some(redirect_uri.to_string()),
    })
}

/// What a registration answers (RFC 7591 §3.2.1), as far as the proxy needs it.
#[derive(Deserialize)]
struct Registration {
    client_id: String,
    client_secret: Option<String>,
    token_endpoint_auth_method: Option<String>,
}

/// How a client authenticates at a token endpoint taking `supported`: without a
/// secret, by its id alone; with one, HTTP Basic unless the server takes only the body.
fn method_for(secret: bool, supported: &[String]) -> String {
    let takes = |method: &str| supported.iter().any(|one| one == method);
    match secret {
        false => "none",
        true if !takes("client_secret_basic") && takes("client_secret_post") => {
            "client_secret_post"
        }
        true => "client_secret_basic",
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_goes_by_basic_unless_the_server_takes_only_the_body() {
        let methods = |list: &[&str]| list.iter().map(|m| m.to_string()).collect::<Vec<_>>();
        assert_eq!(
            method_for(false, &methods(&["client_secret_basic"])),
            "none"
        );
        assert_eq!(
            method_for(true, &methods(&["none", "client_secret_basic"])),
            "client_secret_basic"
        );
        assert_eq!(
            method_for(true, &methods(&["client_secret_post"])),
            "client_secret_post"
        );
        assert_eq!(method_for(true, &methods(&[])), "client_secret_basic");
    }
}
