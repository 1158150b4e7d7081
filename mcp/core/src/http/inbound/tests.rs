use super::*;
use crate::jsonrpc::{Line, read_line};

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// What `check` makes of `body` under `headers` (name, value).
fn rejected(body: &str, headers: &[(&str, &str)]) -> Result<(), Rejected> {
    let Ok(Line::One(read)) = read_line(body.as_bytes()) else {
        panic!("one message: {body}");
    };
    let header = |name: &str| {
        headers
            .iter()
            .find(|(given, _)| given.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.to_string())
    };
    check(&read, header)
}

/// [`rejected`]: `Ok(())`, or the status, the error's code and its id's JSON.
fn checked(body: &str, headers: &[(&str, &str)]) -> Result<(), (u16, i64, String)> {
    rejected(body, headers).map_err(|rejected| {
        let id = rejected.refusal.id.map(|id| id.json().to_string());
        (
            rejected.status,
            rejected.refusal.code,
            id.unwrap_or_default(),
        )
    })
}

fn call(name: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"{name}",{META}}}}}"#
    )
}

const CALL_HEADERS: [(&str, &str); 3] = [
    ("MCP-Protocol-Version", "2026-07-28"),
    ("Mcp-Method", "tools/call"),
    ("Mcp-Name", "echo"),
];

// R18, R20: the proxy takes what the server would take, and what it must refuse (its
// rebuilt headers would hide the disagreement from the server) it refuses as the
// specification says, under the request's id.
#[test]
fn a_modern_request_whose_headers_agree_with_its_body_passes() {
    assert_eq!(checked(&call("echo"), &CALL_HEADERS), Ok(()));
    // Header names in any case; a value the client had to encode, decoded.
    let lower = [
        ("mcp-protocol-version", "2026-07-28"),
        ("MCP-METHOD", "tools/call"),
        ("mcp-name", "=?base64?5LiW55WM?="),
    ];
    assert_eq!(checked(&call("世界"), &lower), Ok(()));
    let list = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#);
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ];
    assert_eq!(checked(&list, &headers), Ok(()));
    let read = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{{"uri":"test://a",{META}}}}}"#
    );
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "resources/read"),
        ("Mcp-Name", "test://a"),
    ];
    assert_eq!(checked(&read, &headers), Ok(()));
}

// R20: an earlier revision's message carries no envelope and is not held to headers
// it never had to send.
#[test]
fn an_earlier_revisions_message_passes_as_it_is() {
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
    assert_eq!(checked(initialize, &[]), Ok(()));
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#;
    assert_eq!(
        checked(call, &[("MCP-Protocol-Version", "2025-11-25")]),
        Ok(())
    );
    let answer = r#"{"jsonrpc":"2.0","id":5,"result":{}}"#;
    assert_eq!(checked(answer, &[("Mcp-Method", "nonsense")]), Ok(()));
}

// R18: each way a header can disagree with the body is refused with 400 and
// HeaderMismatch, under the request's id.
#[test]
fn headers_that_are_missing_or_disagree_are_refused_as_a_mismatch() {
    let without = |name: &str| -> Vec<(&str, &str)> {
        CALL_HEADERS
            .iter()
            .filter(|(given, _)| *given != name)
            .copied()
            .collect()
    };
    let with = |name: &'static str, value: &'static str| -> Vec<(&'static str, &'static str)> {
        let mut headers = without(name);
        headers.push((name, value));
        headers
    };
    let cases: Vec<Vec<(&str, &str)>> = vec![
        without("Mcp-Method"),
        without("Mcp-Name"),
        without("MCP-Protocol-Version"),
        with("Mcp-Method", "tools/list"),
        // Values are exact: another case is another method.
        with("Mcp-Method", "TOOLS/CALL"),
        with("Mcp-Name", "other"),
        with("Mcp-Name", "=?base64?b3RoZXI=?="),
        with("Mcp-Name", "=?base64?not base64?="),
        with("MCP-Protocol-Version", "2025-11-25"),
    ];
    assert_eq!(cases.len(), 9);
    for headers in cases {
        assert_eq!(
            checked(&call("echo"), &headers),
            Err((400, HEADER_MISMATCH, "7".to_string())),
            "{headers:?}"
        );
    }
}

// R18: a body whose header promises an envelope it lacks, or whose envelope lacks the
// client's capabilities, is invalid params; a revision the proxy does not read is
// unsupported, naming the ones it does.
#[test]
fn an_envelope_missing_or_of_an_unknown_revision_is_refused() {
    let bare = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}"#;
    let modern = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ];
    assert_eq!(
        checked(bare, &modern),
        Err((400, INVALID_PARAMS, "3".into()))
    );
    let no_capabilities = r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    assert_eq!(
        checked(no_capabilities, &modern),
        Err((400, INVALID_PARAMS, "4".into()))
    );
    let future = r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let headers = [
        ("MCP-Protocol-Version", "2099-01-01"),
        ("Mcp-Method", "tools/list"),
    ];
    assert_eq!(
        checked(future, &headers),
        Err((400, UNSUPPORTED_VERSION, "5".into()))
    );
    let refused = rejected(future, &headers).unwrap_err();
    let answer: serde_json::Value = serde_json::from_str(&refused.refusal.answer()).unwrap();
    assert_eq!(
        answer["error"]["data"],
        serde_json::json!({"supported": ["2026-07-28"], "requested": "2099-01-01"})
    );
}

#[test]
fn an_answers_status_is_the_specifications_for_its_error() {
    assert_eq!(status_of_error(-32601), 404);
    for code in [HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION] {
        assert_eq!(status_of_error(code), 400);
    }
    // An error a handler gives (an unknown tool, a failed read) is the server's answer.
    for code in [-32602, -32603, -32000, 1] {
        assert_eq!(status_of_error(code), 200);
    }
}

#[test]
fn an_answer_goes_under_the_status_its_reading_gives() {
    use crate::delivery::About;
    let status = |line: &[u8]| {
        let Ok(Line::One(read)) = read_line(line) else {
            panic!("one message");
        };
        let About::Answer { code, .. } = About::of(&read) else {
            panic!("an answer");
        };
        answer_status(code)
    };
    let not_found = br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}}"#;
    assert_eq!(status(not_found), 404);
    let result = br#"{"jsonrpc":"2.0","id":7.0,"result":{}}"#;
    assert_eq!(status(result), 200);
    let handler = br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no tool"}}"#;
    assert_eq!(status(handler), 200);
    // A code that is no integer is no error the specification gives a status.
    let odd = br#"{"jsonrpc":"2.0","id":7,"error":{"code":"-32601","message":"no"}}"#;
    assert_eq!(status(odd), 200);
}

#[test]
fn a_header_given_twice_is_read_as_both_values() {
    assert_eq!(joined([&b"record"[..]]).as_deref(), Some("record"));
    assert_eq!(
        joined([&b"record"[..], b"secret"]).as_deref(),
        Some("record, secret")
    );
    assert_eq!(joined(std::iter::empty()), None);
}

// R18: every method that names something in a header is held to it, not `tools/call`
// alone: a prompt's name and a resource's URI, missing or another, are a mismatch.
#[test]
fn a_prompt_s_name_and_a_resource_s_uri_must_agree_with_mcp_name() {
    let prompt = format!(
        r#"{{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{{"name":"greet",{META}}}}}"#
    );
    let resource = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{{"uri":"test://a","name":"greet",{META}}}}}"#
    );
    // Each: the body, its method, what its header names, what it does not (the
    // resource's `name` member is no URI: its header names the URI alone), its id.
    let cases = [
        (&prompt, "prompts/get", "greet", ["other", "test://a"], "8"),
        (
            &resource,
            "resources/read",
            "test://a",
            ["other", "greet"],
            "9",
        ),
    ];
    assert_eq!(cases.len(), 2);
    for (body, method, named, wrong, id) in cases {
        let with = |name: Option<&str>| {
            let mut headers = vec![
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", method),
            ];
            headers.extend(name.map(|name| ("Mcp-Name", name)));
            checked(body, &headers)
        };
        assert_eq!(with(Some(named)), Ok(()), "{method}");
        for wrong in [None, Some(wrong[0]), Some(wrong[1])] {
            let refused = Err((400, HEADER_MISMATCH, id.to_string()));
            assert_eq!(with(wrong), refused, "{method} with {wrong:?}");
        }
    }
}

// R18: a notification's headers are held to its body too; it is refused under no id.
#[test]
fn a_notification_whose_headers_disagree_is_refused_under_no_id() {
    let note =
        format!(r#"{{"jsonrpc":"2.0","method":"notifications/initialized","params":{{{META}}}}}"#);
    let version = ("MCP-Protocol-Version", "2026-07-28");
    let agreeing = [version, ("Mcp-Method", "notifications/initialized")];
    assert_eq!(checked(&note, &agreeing), Ok(()));
    for method in [None, Some("notifications/cancelled")] {
        let mut headers = vec![version];
        headers.extend(method.map(|method| ("Mcp-Method", method)));
        assert_eq!(
            checked(&note, &headers),
            Err((400, HEADER_MISMATCH, String::new())),
            "{method:?}"
        );
    }
}
