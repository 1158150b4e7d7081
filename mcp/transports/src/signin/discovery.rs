//! Finding who signs the user in for a server, in the order the MCP authorization spec
//! (2025-11-25, 2026-07-28) gives: the server's protected resource metadata (RFC 9728),
//! then its authorization server's metadata (RFC 8414, OpenID Connect Discovery), each
//! checked against what it claims to be before anything in it is used.

use super::web::Web;
use crate::upstream::shown;
use serde::Deserialize;
use url::Url;

/// The server's protected resource metadata, checked.
#[derive(Debug)]
pub struct Resource {
    /// The resource identifier, exactly as published: what the `resource` parameter of
    /// every authorization and token request says (RFC 8707).
    pub id: String,
    /// The authorization servers that issue tokens for it, in its order of preference.
    pub authorization_servers: Vec<String>,
    /// The scopes it names, for a challenge that named none.
    pub scopes_supported: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct ResourceDocument {
    resource: String,
    #[serde(default)]
    authorization_servers: Vec<String>,
    scopes_supported: Option<Vec<String>>,
}

/// The protected resource metadata of the server at `server`: at `named` (the
/// challenge's `resource_metadata`), else at the well-known path under the server's
/// own path, else at the root's. Refused unless it describes this server: a document
/// naming another resource would have the user sign in, and a token be issued, for it.
pub fn resource(web: &Web, server: &Url, named: Option<&str>) -> Result<Resource, String> {
    let places = match named {
        Some(named) => vec![web.url(named, "the challenge's resource_metadata")?],
        None => well_known(server, "oauth-protected-resource", false),
    };
    let (place, document): (Url, ResourceDocument) = first_found(web, &places)?;
    if !covers(&document.resource, server) {
        return Err(format!(
            "its protected resource metadata ({}) is for {:?}, not for this server: \
             nothing was signed in to",
            shown(place.as_str()),
            document.resource
        ));
    }
    if document.authorization_servers.is_empty() {
        return Err(format!(
            "its protected resource metadata ({}) names no authorization server",
            shown(place.as_str())
        ));
    }
    Ok(Resource {
        id: document.resource,
        authorization_servers: document.authorization_servers,
        scopes_supported: document.scopes_supported,
    })
}

/// An authorization server's metadata, checked.
#[derive(Debug, Deserialize)]
pub struct Authority {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub registration_endpoint: Option<String>,
    /// Where a token is revoked (RFC 7009), which `reasons logout` asks for.
    pub revocation_endpoint: Option<String>,
    pub scopes_supported: Option<Vec<String>>,
    pub code_challenge_methods_supported: Option<Vec<String>>,
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
}

/// The metadata of the authorization server `issuer`, from the first of the places the
/// spec lists that has it. Refused when its `issuer` is not `issuer` itself (RFC 8414
/// §3.3: metadata claiming another issuer would send the code and the client's
/// credentials where nobody chose), or when it cannot do PKCE with S256.
pub fn authority(web: &Web, issuer: &str) -> Result<Authority, String> {
    let at = web.url(issuer, "the authorization server")?;
    let mut places = well_known(&at, "oauth-authorization-server", false);
    places.extend(well_known(&at, "openid-configuration", true));
    let (place, authority): (Url, Authority) = first_found(web, &places)?;
    if authority.issuer != issuer {
        return Err(format!(
            "the authorization server's metadata ({}) names the issuer {:?}, not {issuer:?} \
             whose metadata it is: nothing was signed in to",
            shown(place.as_str()),
            authority.issuer
        ));
    }
    // Every endpoint the person's browser, the code or a secret will go to.
    let endpoints = [
        (
            &authority.authorization_endpoint,
            "its authorization endpoint",
        ),
        (&authority.token_endpoint, "its token endpoint"),
    ];
    for (endpoint, what) in endpoints {
        web.url(endpoint, what)?;
    }
    if let Some(endpoint) = &authority.registration_endpoint {
        web.url(endpoint, "its registration endpoint")?;
    }
    if let Some(endpoint) = &authority.revocation_endpoint {
        web.url(endpoint, "its revocation endpoint")?;
    }
    let s256 = authority
        .code_challenge_methods_supported
        .as_ref()
        .is_some_and(|methods| methods.iter().any(|method| method == "S256"));
    if !s256 {
        return Err(format!(
            "the authorization server {issuer} does not say it takes PKCE with S256 \
             (code_challenge_methods_supported), which signing in requires"
        ));
    }
    Ok(authority)
}

/// The well-known places of `document` for `at`, as the spec orders them: inserted
/// between the host and the path (RFC 8414 §3.1, RFC 9728 §3.1), then, for OpenID
/// Connect Discovery, appended to the path; and, for a resource, at the root. A URL
/// without a path has only the root's.
fn well_known(at: &Url, document: &str, appended_too: bool) -> Vec<Url> {
    let path = at.path().trim_end_matches('/');
    let mut origin = at.clone();
    origin.set_query(None);
    origin.set_fragment(None);
    let at_path = |path: &str| {
        let mut url = origin.clone();
        url.set_path(path);
        url
    };
    let mut places = Vec::new();
    if path.is_empty() {
        places.push(at_path(&format!("/.well-known/{document}")));
        return places;
    }
    places.push(at_path(&format!("/.well-known/{document}{path}")));
    if appended_too {
        places.push(at_path(&format!("{path}/.well-known/{document}")));
    } else if document == "oauth-protected-resource" {
        places.push(at_path(&format!("/.well-known/{document}")));
    }
    places
}

/// The first of `places` that answers with the JSON document; why none did.
fn first_found<T: serde::de::DeserializeOwned>(
    web: &Web,
    places: &[Url],
) -> Result<(Url, T), String> {
    let mut tried = Vec::new();
    for place in places {
        match web.get_json(place) {
            Ok(document) => return Ok((place.clone(), document)),
            Err(why) => tried.push(format!("{}: {why}", shown(place.as_str()))),
        }
    }
    Err(format!("no metadata found ({})", tried.join("; ")))
}

/// Whether the resource identifier `resource` covers the server at `server`: the same
/// origin, and the server's path at or under the resource's (a server's metadata at the
/// root names its origin).
fn covers(resource: &str, server: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if resource.origin() != server.origin() || resource.fragment().is_some() {
        return false;
    }
    let under = resource.path().trim_end_matches('/');
    let path = server.path();
    path == under || path.starts_with(&format!("{under}/")) || under.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(at: &str, document: &str, appended: bool) -> Vec<String> {
        well_known(&Url::parse(at).unwrap(), document, appended)
            .iter()
            .map(Url::to_string)
            .collect()
    }

    #[test]
    fn the_well_known_places_are_the_spec_s_in_its_order() {
        assert_eq!(
            places(
                "https://h:1/public/mcp?x=1",
                "oauth-protected-resource",
                false
            ),
            [
                "https://h:1/.well-known/oauth-protected-resource/public/mcp",
                "https://h:1/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            places("https://h/tenant1", "oauth-authorization-server", false),
            ["https://h/.well-known/oauth-authorization-server/tenant1"]
        );
        assert_eq!(
            places("https://h/tenant1/", "openid-configuration", true),
            [
                "https://h/.well-known/openid-configuration/tenant1",
                "https://h/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            places("https://h", "openid-configuration", true),
            ["https://h/.well-known/openid-configuration"]
        );
    }

    #[test]
    fn a_resource_covers_only_its_own_origin_and_path() {
        let server = Url::parse("http://localhost:9/mcp").unwrap();
        assert!(covers("http://localhost:9/mcp", &server));
        assert!(covers("http://localhost:9", &server));
        assert!(covers("http://localhost:9/", &server));
        assert!(!covers("https://evil.example.com/mcp", &server));
        assert!(!covers("http://localhost:10/mcp", &server));
        assert!(!covers("https://localhost:9/mcp", &server));
        assert!(!covers("http://localhost:9/mc", &server));
        assert!(!covers("http://localhost:9/mcp/more", &server));
        assert!(!covers("http://localhost:9/mcp#f", &server));
        assert!(!covers("not a url", &server));
        let under = Url::parse("http://localhost:9/mcp/v2").unwrap();
        assert!(covers("http://localhost:9/mcp", &under));
    }
}
