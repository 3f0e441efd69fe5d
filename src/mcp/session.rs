//! The MCP server as a state machine (pure): each incoming message becomes one [`Step`] — a reply
//! to write, a tool call to run, a cancellation, or an answer to a request of ours. Running tools,
//! reading stdin and writing stdout are the transport's job ([`super::server`]).

use super::catalog::{Catalog, Target};
use super::jsonrpc::{
    INVALID_PARAMS, INVALID_REQUEST, Incoming, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND, RpcError,
    SHUTTING_DOWN, error_response, response,
};
use crate::command::escape_controls;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// Protocol versions this server speaks, newest first.
pub const VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
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
        uri: String,
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
}

/// What the client said about itself in `initialize`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Client {
    /// The elicitation modes the client declared (`[]` for a bare `elicitation: {}`, which
    /// means form mode); `None` when it declared no elicitation capability.
    pub elicitation: Option<Vec<String>>,
    pub name: String,
    pub version: String,
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
            Incoming::Notification { method, params } => match method.as_str() {
                "notifications/cancelled" => match params.get("requestId") {
                    Some(id) => Step::Cancel(id.clone()),
                    None => Step::Nothing,
                },
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
        if method == "ping" {
            return Step::Reply(response(&id, json!({})));
        }
        if method == "initialize" {
            return Step::Reply(response(&id, self.initialize(&params)));
        }
        if self.client.is_none() {
            return err(
                INVALID_REQUEST,
                format!(
                    "`{}` before `initialize`: initialize the session first",
                    escape_controls(method)
                ),
            );
        }
        let cat = &self.catalog;
        let uri = || params.get("uri").and_then(Value::as_str);
        match method {
            "tools/list" => self.page(id, cat.tools_json(), "tools", &params),
            "tools/call" => self.call(id, params),
            "resources/list" => self.page(id, cat.resources_json(), "resources", &params),
            "resources/templates/list" => {
                self.page(id, cat.templates_json(), "resourceTemplates", &params)
            }
            "resources/read" => match uri() {
                None => err(INVALID_PARAMS, "resources/read needs `uri`".into()),
                Some(u) => match cat.file_of(u) {
                    Some((skill, f)) => Step::ReadResource {
                        id,
                        skill: skill.to_owned(),
                        uri: f.uri.clone(),
                    },
                    None => Step::Reply(error_response(
                        &id,
                        &RpcError::new(
                            RESOURCE_NOT_FOUND,
                            format!("no resource `{}`", escape_controls(u)),
                        )
                        .with_data(json!({"uri": u})),
                    )),
                },
            },
            "skills/list" => Step::Reply(response(&id, cat.skills_json())),
            "skills/get" => match uri() {
                None => err(INVALID_PARAMS, "skills/get needs `uri`".into()),
                Some(u) => match cat.skill_by_uri(u) {
                    Some(s) => Step::Reply(response(&id, s)),
                    None => Step::Reply(error_response(
                        &id,
                        &RpcError::new(
                            RESOURCE_NOT_FOUND,
                            format!("no skill at `{}`", escape_controls(u)),
                        )
                        .with_data(json!({"uri": u})),
                    )),
                },
            },
            _ => err(
                METHOD_NOT_FOUND,
                format!("method not found: `{}`", escape_controls(method)),
            ),
        }
    }

    /// One page of a list result (see [`super::page`]).
    fn page(&self, id: Value, all: Value, key: &str, params: &Map<String, Value>) -> Step {
        match super::page::page(all, key, params, super::page::PAGE_SIZE) {
            Ok(result) => Step::Reply(response(&id, result)),
            Err(e) => Step::Reply(error_response(&id, &e)),
        }
    }

    fn initialize(&mut self, params: &Map<String, Value>) -> Value {
        let caps = params.get("capabilities");
        // `elicitation: {}` (2025-06-18) means form mode; later clients list the modes.
        let elicitation = caps
            .and_then(|c| c.get("elicitation"))
            .and_then(Value::as_object)
            .map(|e| e.keys().cloned().collect());
        let info = params.get("clientInfo");
        let text = |k: &str| {
            info.and_then(|i| i.get(k))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        self.client = Some(Client {
            elicitation,
            name: text("name"),
            version: text("version"),
        });
        let asked = params.get("protocolVersion").and_then(Value::as_str);
        let version = asked
            .filter(|v| VERSIONS.contains(v))
            .unwrap_or(VERSIONS[0]);
        json!({
            "protocolVersion": version,
            "capabilities": {
                "tools": {"listChanged": false},
                "resources": {"listChanged": false, "subscribe": false},
                "extensions": {SKILLS_EXTENSION: {}},
            },
            "serverInfo": {"name": "skillpipe", "version": env!("CARGO_PKG_VERSION")},
            "instructions": "Skills with their instructions and scripts. Call load_skill (or read \
                a skill's SKILL.md resource) before using its tools. Every tool runs under the \
                user's skillpipe policy and sandbox; a refusal says which flag or setting allows it.",
        })
    }

    fn call(&self, id: Value, params: Map<String, Value>) -> Step {
        let bad = |msg: &str| Step::Reply(error_response(&id, &RpcError::new(INVALID_PARAMS, msg)));
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return bad("tools/call needs `name`");
        };
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a.clone(),
            Some(_) => return bad("`arguments` must be an object"),
        };
        match self.catalog.target(name) {
            Some(target) => Step::Call(Call {
                id,
                tool: name.to_string(),
                target,
                arguments,
            }),
            None => Step::UnknownTool {
                name: name.to_string(),
                reply: error_response(
                    &id,
                    &RpcError::new(
                        INVALID_PARAMS,
                        match self.catalog.unavailable(name) {
                            Some(why) => escape_controls(why),
                            None => format!("unknown tool: `{}`", escape_controls(name)),
                        },
                    ),
                ),
            },
        }
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
