//! The MCP server as a state machine (pure): each incoming message becomes one [`Step`] — a reply
//! to write, a tool call to run, a cancellation, or an answer to a request of ours. Running tools,
//! reading stdin and writing stdout are the transport's job ([`super::server`]).
//!
//! Two eras are served from one process, chosen per request by what the client sends: a request
//! whose `_meta` carries `io.modelcontextprotocol/protocolVersion` is served statelessly (the
//! modern era, [`MODERN_VERSIONS`]: capabilities and client identity come with each request,
//! every result carries `resultType`, a confirmation is an `input_required` result the client
//! answers by retrying); any other request belongs to the `initialize` handshake of the legacy
//! era ([`VERSIONS`]), where a confirmation is an elicitation request of ours.

use super::catalog::{Catalog, File, Target};
use super::jsonrpc::{
    INVALID_PARAMS, INVALID_REQUEST, Incoming, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND, RpcError,
    SHUTTING_DOWN, error_response, response,
};
use crate::command::escape_controls;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// Legacy protocol versions (opened by `initialize`) this server speaks, newest first.
pub const VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// Modern protocol versions (per-request `_meta`, no handshake), newest first.
pub const MODERN_VERSIONS: &[&str] = &["2026-07-28"];
/// The `_meta` keys of a modern request and result.
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_SERVER: &str = "io.modelcontextprotocol/serverInfo";
/// Modern error: the request's protocol version is not served.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// Modern error: the request needs a client capability the request did not declare.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// The MCP Skills extension's identifier (SEP-2640).
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// What the transport does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Write this message.
    Reply(Value),
    /// Run a tool and reply with its result.
    Call(Call),
    /// Refuse a call to an unknown tool: audit it, then write `reply`.
    UnknownTool {
        name: String,
        reply: Value,
    },
    /// Read a published skill file: audit it (a refusal by a denied pattern is an error), then
    /// reply with its contents.
    ReadResource {
        id: Value,
        skill: String,
        file: File,
        era: Era,
    },
    /// The client cancelled request `id`: stop it, send nothing.
    Cancel(Value),
    /// The client answered our request `id`.
    Answer {
        id: Value,
        outcome: Result<Value, RpcError>,
    },
    Nothing,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub id: Value,
    pub tool: String,
    pub target: Target,
    pub arguments: Map<String, Value>,
    pub era: Era,
}

/// How one request is served.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Era {
    /// After `initialize`: plain results, consent by an elicitation request of ours.
    #[default]
    Legacy,
    /// Stateless: what the request's `_meta` declared.
    Modern(Modern),
}

/// What a modern request declared about its client, and the answers it brings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Modern {
    /// The elicitation modes this request declared (as [`Client::elicitation`]).
    pub elicitation: Option<Vec<String>>,
    /// `inputResponses` of a retried request: the answers to our `inputRequests`, by key.
    pub input_responses: Map<String, Value>,
}

/// A question a modern call could not have answered within the call itself.
#[derive(Debug, Clone, PartialEq)]
pub enum Unanswered {
    /// Ask the user this elicitation (form) and retry: `input_required`, `inputRequests[key]`.
    Ask { key: String, params: Value },
    /// The request did not declare the capability asking needs; the message says what to do.
    CannotAsk(String),
}

/// What the client declared in `initialize` that the server acts on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Client {
    /// The elicitation modes the client declared (`[]` for a bare `elicitation: {}`, which
    /// means form mode); `None` when it declared no elicitation capability.
    pub elicitation: Option<Vec<String>>,
}

pub struct Session {
    catalog: Arc<Catalog>,
    client: Option<Client>,
    shutting_down: bool,
}

impl Session {
    pub fn new(catalog: Arc<Catalog>) -> Session {
        Session {
            catalog,
            client: None,
            shutting_down: false,
        }
    }

    /// The client, once it has sent `initialize`.
    pub fn client(&self) -> Option<&Client> {
        self.client.as_ref()
    }

    /// From now on new requests are refused (calls already running are the transport's).
    pub fn begin_shutdown(&mut self) {
        self.shutting_down = true;
    }

    pub fn handle(&mut self, msg: Incoming) -> Step {
        match msg {
            Incoming::Request { id, method, params } => self.request(id, &method, params),
            Incoming::Notification { method, params } => match params.get("requestId") {
                Some(id) if method == "notifications/cancelled" => Step::Cancel(id.clone()),
                _ => Step::Nothing,
            },
            Incoming::Response { id, outcome } => Step::Answer { id, outcome },
        }
    }

    fn request(&mut self, id: Value, method: &str, params: Map<String, Value>) -> Step {
        let err = |code, msg: String| Step::Reply(error_response(&id, &RpcError::new(code, msg)));
        if self.shutting_down {
            return err(SHUTTING_DOWN, "the server is shutting down".into());
        }
        let era = match modern(&params) {
            None => Era::Legacy,
            Some(Ok(m)) => Era::Modern(m),
            Some(Err(e)) => return Step::Reply(error_response(&id, &e)),
        };
        let ok = |result: Value, cacheable: bool| {
            Step::Reply(response(&id, finish(&era, result, cacheable)))
        };
        if method == "ping" {
            return ok(json!({}), false);
        }
        if method == "server/discover" {
            return match era {
                Era::Modern(_) => ok(self.discover(), true),
                Era::Legacy => err(
                    INVALID_PARAMS,
                    format!(
                        "server/discover needs `_meta` with `{META_VERSION}` and \
                         `{META_CAPABILITIES}`"
                    ),
                ),
            };
        }
        if method == "initialize" {
            return Step::Reply(response(&id, self.initialize(&params)));
        }
        if era == Era::Legacy && self.client.is_none() {
            return err(
                INVALID_REQUEST,
                format!(
                    "`{}` before `initialize`: initialize the session first, or carry \
                     `{META_VERSION}` (one of {}) in the request's `_meta`",
                    escape_controls(method),
                    MODERN_VERSIONS.join(", ")
                ),
            );
        }
        // The modern era names a missing resource with the generic code.
        let not_found = match era {
            Era::Legacy => RESOURCE_NOT_FOUND,
            Era::Modern(_) => INVALID_PARAMS,
        };
        let cat = &self.catalog;
        let uri = || params.get("uri").and_then(Value::as_str);
        let missing = |what: &str, u: &str| {
            let why = format!("no {what} `{}`", escape_controls(u));
            let e = RpcError::new(not_found, why).with_data(json!({"uri": u}));
            Step::Reply(error_response(&id, &e))
        };
        // One page of a list result (see [`super::page`]).
        let list = |all, key| match super::page::page(all, key, &params, super::page::PAGE_SIZE) {
            Ok(result) => ok(result, true),
            Err(e) => Step::Reply(error_response(&id, &e)),
        };
        match method {
            "tools/list" => list(cat.tools_json(), "tools"),
            "tools/call" => self.call(id, params, era),
            "resources/list" => list(cat.resources_json(), "resources"),
            "resources/templates/list" => list(cat.templates_json(), "resourceTemplates"),
            "resources/read" => match uri() {
                None => err(INVALID_PARAMS, "resources/read needs `uri`".into()),
                Some(u) => match cat.file_of(u) {
                    Some((skill, f)) => Step::ReadResource {
                        id,
                        skill: skill.to_owned(),
                        file: f.clone(),
                        era,
                    },
                    None => missing("resource", u),
                },
            },
            "skills/list" => ok(cat.skills_json(), false),
            "skills/get" => match uri() {
                None => err(INVALID_PARAMS, "skills/get needs `uri`".into()),
                Some(u) => match cat.skill_by_uri(u) {
                    Some(s) => ok(s, false),
                    None => missing("skill at", u),
                },
            },
            _ => err(
                METHOD_NOT_FOUND,
                format!("method not found: `{}`", escape_controls(method)),
            ),
        }
    }

    /// `server/discover`: every version served, and what `initialize` would say.
    fn discover(&self) -> Value {
        let mut r = capabilities();
        let versions: Vec<&str> = MODERN_VERSIONS.iter().chain(VERSIONS).copied().collect();
        r["supportedVersions"] = json!(versions);
        r
    }

    fn initialize(&mut self, params: &Map<String, Value>) -> Value {
        let caps = params.get("capabilities").and_then(Value::as_object);
        let elicitation = caps.and_then(elicitation_modes);
        self.client = Some(Client { elicitation });
        let asked = params.get("protocolVersion").and_then(Value::as_str);
        let version = asked
            .filter(|v| VERSIONS.contains(v))
            .unwrap_or(VERSIONS[0]);
        let mut r = capabilities();
        r["protocolVersion"] = json!(version);
        r["serverInfo"] = server_info();
        r
    }

    fn call(&self, id: Value, params: Map<String, Value>, era: Era) -> Step {
        let bad = |msg: &str| Step::Reply(error_response(&id, &RpcError::new(INVALID_PARAMS, msg)));
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return bad("tools/call needs `name`");
        };
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a.clone(),
            Some(_) => return bad("`arguments` must be an object"),
        };
        let Some(target) = self.catalog.target(name) else {
            let why = match self.catalog.unavailable(name) {
                Some(why) => escape_controls(why),
                None => format!("unknown tool: `{}`", escape_controls(name)),
            };
            let reply = error_response(&id, &RpcError::new(INVALID_PARAMS, why));
            let name = name.to_string();
            return Step::UnknownTool { name, reply };
        };
        let tool = name.to_string();
        Step::Call(Call {
            id,
            tool,
            target,
            arguments,
            era,
        })
    }
}

fn server_info() -> Value {
    json!({"name": "skillpipe", "version": env!("CARGO_PKG_VERSION")})
}

/// Capabilities and instructions, as `initialize` and `server/discover` give them.
fn capabilities() -> Value {
    json!({
        "capabilities": {
            "tools": {"listChanged": false},
            "resources": {"listChanged": false, "subscribe": false},
            "extensions": {SKILLS_EXTENSION: {}},
        },
        "instructions": "Skills with their instructions and scripts. Call load_skill (or read \
            a skill's SKILL.md resource) before using its tools. Every tool runs under the \
            user's skillpipe policy and sandbox; a refusal says which flag or setting allows it.",
    })
}

/// The era a request's `_meta` declares: `None` for a request without a protocol version there
/// (legacy), an error for a modern request that is malformed or names a version not served.
fn modern(params: &Map<String, Value>) -> Option<Result<Modern, RpcError>> {
    let meta = params.get("_meta").and_then(Value::as_object)?;
    let version = meta.get(META_VERSION)?;
    let all: Vec<&str> = MODERN_VERSIONS.iter().chain(VERSIONS).copied().collect();
    let unsupported = |requested: &Value, why: String| {
        Err(RpcError::new(UNSUPPORTED_PROTOCOL_VERSION, why)
            .with_data(json!({"supported": all, "requested": requested})))
    };
    let Some(_) = version.as_str().filter(|v| MODERN_VERSIONS.contains(v)) else {
        let why = match version.as_str() {
            Some(v) if VERSIONS.contains(&v) => format!(
                "unsupported protocol version `{}` in `_meta`: it opens with `initialize`; \
                 per-request `_meta` is served for {}",
                escape_controls(v),
                MODERN_VERSIONS.join(", ")
            ),
            _ => format!(
                "unsupported protocol version {}: this server speaks {}",
                escape_controls(&version.to_string()),
                all.join(", ")
            ),
        };
        return Some(unsupported(version, why));
    };
    let Some(caps) = meta.get(META_CAPABILITIES).and_then(Value::as_object) else {
        return Some(Err(RpcError::new(
            INVALID_PARAMS,
            format!("`_meta` needs `{META_CAPABILITIES}` (an object; `{{}}` declares none)"),
        )));
    };
    let elicitation = elicitation_modes(caps);
    let input_responses = match params.get("inputResponses") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => {
            return Some(Err(RpcError::new(
                INVALID_PARAMS,
                "`inputResponses` must be an object",
            )));
        }
    };
    Some(Ok(Modern {
        elicitation,
        input_responses,
    }))
}

/// The elicitation modes a client's capabilities declare: `elicitation: {}` (2025-06-18) means
/// form mode (`[]`); later clients list the modes; `None` without the capability.
fn elicitation_modes(caps: &Map<String, Value>) -> Option<Vec<String>> {
    let modes = caps.get("elicitation")?.as_object()?;
    Some(modes.keys().cloned().collect())
}

/// A result as the era wants it: the modern era adds `resultType`, the server's identity in
/// `_meta`, and for lists and reads how long they may be cached (`ttlMs` 0: each reflects the
/// policy of this process, and each read is audited).
pub fn finish(era: &Era, mut result: Value, cacheable: bool) -> Value {
    if let (Era::Modern(_), Some(r)) = (era, result.as_object_mut()) {
        r.insert("resultType".into(), json!("complete"));
        let meta = r.entry("_meta").or_insert_with(|| json!({}));
        if let Some(m) = meta.as_object_mut() {
            m.insert(META_SERVER.into(), server_info());
        }
        if cacheable {
            r.insert("ttlMs".into(), json!(0));
            r.insert("cacheScope".into(), json!("private"));
        }
    }
    result
}

/// The reply to a call: its result, or in the modern era the question that must be answered
/// first (`input_required`, answered by retrying with `inputResponses[key]`), or the capability
/// the request lacked for it.
pub fn call_reply(call: &Call, result: Value, unanswered: Option<Unanswered>) -> Value {
    match unanswered {
        None => response(&call.id, finish(&call.era, result, false)),
        Some(Unanswered::Ask { key, params }) => {
            let mut r = json!({
                "resultType": "input_required",
                "inputRequests": {key: {"method": "elicitation/create", "params": params}},
            });
            r["_meta"] = json!({META_SERVER: server_info()});
            response(&call.id, r)
        }
        Some(Unanswered::CannotAsk(why)) => error_response(
            &call.id,
            &RpcError::new(MISSING_REQUIRED_CLIENT_CAPABILITY, why)
                .with_data(json!({"requiredCapabilities": {"elicitation": {"form": {}}}})),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::tools::ToolTarget;
    use crate::mcp::catalog::Tool;

    fn session() -> Session {
        let cat = Catalog {
            tools: vec![Tool {
                name: "s__x".into(),
                description: "x".into(),
                input_schema: json!({"type": "object"}),
                target: Target::Run(ToolTarget {
                    skill: "s".into(),
                    reference: "s/scripts/x.sh".into(),
                    json_input: false,
                    has_input_property: true,
                }),
            }],
            ..Default::default()
        };
        Session::new(Arc::new(cat))
    }

    fn req(id: i64, method: &str, params: Value) -> Incoming {
        Incoming::Request {
            id: json!(id),
            method: method.into(),
            params: params.as_object().cloned().unwrap_or_default(),
        }
    }

    fn reply(step: Step) -> Value {
        match step {
            Step::Reply(v) => v,
            other => panic!("not a reply: {other:?}"),
        }
    }

    #[test]
    fn initialize_negotiates_and_records_elicitation() {
        let mut s = session();
        let r = reply(s.handle(req(1, "tools/list", json!({}))));
        assert_eq!(r["error"]["code"], INVALID_REQUEST);
        let r = reply(s.handle(req(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
                   "clientInfo": {"name": "c", "version": "1"}}),
        )));
        assert_eq!(r["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(
            r["result"]["capabilities"]["extensions"][SKILLS_EXTENSION],
            json!({})
        );
        assert_eq!(s.client().unwrap().elicitation, Some(vec![]));
        let r = reply(s.handle(req(
            2,
            "initialize",
            json!({"protocolVersion": "1999-01-01",
            "capabilities": {"elicitation": {"url": {}}}}),
        )));
        assert_eq!(r["result"]["protocolVersion"], VERSIONS[0]);
        assert_eq!(
            s.client().unwrap().elicitation,
            Some(vec!["url".to_string()])
        );
    }

    #[test]
    fn calls_unknown_tools_and_shutdown() {
        let mut s = session();
        s.handle(req(1, "initialize", json!({})));
        let step = s.handle(req(
            2,
            "tools/call",
            json!({"name": "s__x", "arguments": {"args": ["a"]}}),
        ));
        let Step::Call(c) = step else { panic!() };
        assert!(matches!(c.target, Target::Run(t) if t.reference == "s/scripts/x.sh"));
        assert_eq!(c.arguments["args"], json!(["a"]));
        let step = s.handle(req(3, "tools/call", json!({"name": "nope"})));
        assert!(
            matches!(step, Step::UnknownTool { ref name, ref reply } if name == "nope"
            && reply["error"]["code"] == INVALID_PARAMS)
        );
        let r = reply(s.handle(req(
            4,
            "tools/call",
            json!({"name": "s__x", "arguments": [1]}),
        )));
        assert_eq!(r["error"]["code"], INVALID_PARAMS);
        let r = reply(s.handle(req(5, "nope/nope", json!({}))));
        assert_eq!(r["error"]["code"], METHOD_NOT_FOUND);
        let r = reply(s.handle(req(
            6,
            "resources/read",
            json!({"uri": "skill://z/SKILL.md"}),
        )));
        assert_eq!(r["error"]["code"], RESOURCE_NOT_FOUND);
        s.begin_shutdown();
        let r = reply(s.handle(req(7, "tools/list", json!({}))));
        assert_eq!(r["error"]["code"], SHUTTING_DOWN);
    }

    fn modern(caps: Value) -> Value {
        json!({"_meta": {META_VERSION: "2026-07-28", META_CAPABILITIES: caps}})
    }

    #[test]
    fn a_modern_request_is_served_without_initialize() {
        let mut s = session();
        let r = reply(s.handle(req(1, "server/discover", modern(json!({})))));
        assert_eq!(r["result"]["resultType"], "complete");
        let versions = r["result"]["supportedVersions"].as_array().unwrap();
        assert!(versions.contains(&json!("2026-07-28")) && versions.contains(&json!("2025-11-25")));
        assert_eq!(r["result"]["_meta"][META_SERVER]["name"], "skillpipe");
        let r = reply(s.handle(req(2, "tools/list", modern(json!({})))));
        assert_eq!(r["result"]["tools"][0]["name"], "s__x");
        assert_eq!(r["result"]["resultType"], "complete");
        assert_eq!(r["result"]["cacheScope"], "private");
        let mut p = modern(json!({"elicitation": {}}));
        p["name"] = json!("s__x");
        p["inputResponses"] = json!({"k": {"action": "accept"}});
        let Step::Call(c) = s.handle(req(3, "tools/call", p)) else {
            panic!()
        };
        let Era::Modern(m) = &c.era else { panic!() };
        assert_eq!(m.elicitation, Some(vec![]));
        assert_eq!(m.input_responses["k"]["action"], "accept");
        // Still no session: a legacy request is refused.
        let r = reply(s.handle(req(4, "tools/list", json!({}))));
        assert_eq!(r["error"]["code"], INVALID_REQUEST);
    }

    #[test]
    fn modern_requests_that_are_malformed_or_of_another_version_are_refused() {
        let mut s = session();
        let r = reply(s.handle(req(1, "server/discover", json!({}))));
        assert_eq!(r["error"]["code"], INVALID_PARAMS);
        let mut p = modern(json!({}));
        p["_meta"][META_VERSION] = json!("1900-01-01");
        let r = reply(s.handle(req(2, "tools/list", p.clone())));
        assert_eq!(r["error"]["code"], UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(r["error"]["data"]["requested"], "1900-01-01");
        p["_meta"][META_VERSION] = json!("2025-11-25");
        let r = reply(s.handle(req(3, "tools/list", p)));
        assert_eq!(r["error"]["code"], UNSUPPORTED_PROTOCOL_VERSION);
        let r = reply(s.handle(req(
            4,
            "tools/list",
            json!({"_meta": {META_VERSION: "2026-07-28"}}),
        )));
        assert_eq!(r["error"]["code"], INVALID_PARAMS);
        let mut p = modern(json!({}));
        p["uri"] = json!("skill://z/SKILL.md");
        let r = reply(s.handle(req(5, "resources/read", p)));
        assert_eq!(r["error"]["code"], INVALID_PARAMS);
    }

    #[test]
    fn a_modern_call_reply_is_complete_input_required_or_missing_capability() {
        let call = Call {
            id: json!(7),
            tool: "t".into(),
            target: Target::LoadSkill,
            arguments: Map::new(),
            era: Era::Modern(Modern::default()),
        };
        let r = call_reply(&call, json!({"content": [], "isError": false}), None);
        assert_eq!(r["result"]["resultType"], "complete");
        let ask = Unanswered::Ask {
            key: "confirm-1".into(),
            params: json!({"mode": "form"}),
        };
        let r = call_reply(&call, json!({}), Some(ask));
        assert_eq!(r["result"]["resultType"], "input_required");
        assert_eq!(
            r["result"]["inputRequests"]["confirm-1"]["method"],
            "elicitation/create"
        );
        let r = call_reply(&call, json!({}), Some(Unanswered::CannotAsk("x".into())));
        assert_eq!(r["error"]["code"], MISSING_REQUIRED_CLIENT_CAPABILITY);
        let legacy = Call {
            era: Era::Legacy,
            ..call
        };
        let r = call_reply(&legacy, json!({"isError": false}), None);
        assert!(r["result"].get("resultType").is_none());
    }

    #[test]
    fn cancellations_and_answers() {
        let mut s = session();
        let n = Incoming::Notification {
            method: "notifications/cancelled".into(),
            params: json!({"requestId": 9}).as_object().cloned().unwrap(),
        };
        assert_eq!(s.handle(n), Step::Cancel(json!(9)));
        let a = Incoming::Response {
            id: json!("e1"),
            outcome: Ok(json!({"action": "accept"})),
        };
        assert!(matches!(s.handle(a), Step::Answer { .. }));
    }
}
