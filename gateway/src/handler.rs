//! The component's export: each request wasi:http hands it, routed by path and method.

use crate::settings::Settings;
use crate::{exchange, health, wire};
use wasip2::exports::http::incoming_handler::Guest;
use wasip2::http::types::{IncomingRequest, Method, ResponseOutparam};

wasip2::http::proxy::export!(Gateway);

/// The path MCP is served at.
const PATH: &str = "/mcp";

struct Gateway;

impl Guest for Gateway {
    fn handle(request: IncomingRequest, out: ResponseOutparam) {
        let environment = wasip2::cli::environment::get_environment();
        let settings = match Settings::from(&environment) {
            Ok(settings) => settings,
            // Every request gets the same clear error until the engine's settings
            // are right: nothing is forwarded under settings the gateway cannot read.
            Err(why) => return wire::refuse(out, 500, &format!("reasons-gateway: {why}")),
        };
        let path = request.path_with_query().unwrap_or_default();
        let path = path.split('?').next().unwrap_or_default();
        // A load balancer's probes: a GET each, with no Origin to check.
        if matches!(path, health::LIVE | health::READY) {
            return match (request.method(), path) {
                (Method::Get, health::LIVE) => health::live(out),
                (Method::Get, _) => health::ready(&settings, out),
                _ => wire::refuse(out, 405, "health is asked with GET"),
            };
        }
        if path != PATH {
            return wire::refuse(out, 404, &format!("reasons-gateway serves MCP at {PATH}"));
        }
        // A browser's page sends `Origin`; the gateway serves native clients, and a page
        // only of its own origin on a loopback name, so that no other page can spend
        // the credentials its browser holds, or the gateway's own, for the upstream.
        let origin = wire::joined(&request, "origin");
        let authority = request.authority().unwrap_or_default();
        if !origin.is_empty()
            && !reasons_mcp::http::admission::loopback_same_origin(&origin, &authority)
        {
            let why =
                format!("reasons-gateway serves no web page: a page at {origin:?} may not call it");
            return wire::refuse(out, 403, &why);
        }
        match request.method() {
            Method::Post => exchange::post(&settings, request, out),
            Method::Get => exchange::stream(&settings, request, out),
            Method::Delete => exchange::delete(&settings, request, out),
            _ => wire::refuse(out, 405, "MCP is served over POST, GET and DELETE"),
        }
    }
}
