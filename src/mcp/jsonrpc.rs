//! JSON-RPC 2.0 framing for MCP over stdio (pure): one line in, one [`Incoming`] out, and the
//! response and error objects going back.
//!
//! Every request that can be answered is answered: a line that is not JSON gets a parse error,
//! and one that is JSON but too deep or too long for the parser still gets its error under its
//! own `id` (found by [`scan_id`], which reads the top level without building the value), so
//! that a client never waits on a request the server silently dropped.

use serde_json::{Map, Value, json};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// MCP: the resource named by `uri` does not exist.
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// Implementation-defined server error: the server is shutting down.
pub const SHUTTING_DOWN: i64 = -32000;

/// An error object, sent as `{"code", "message", "data"?}`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    /// Boxed: a `Value` is large (an ordered map), and errors travel in every `Result`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Box<Value>>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(Box::new(data));
        self
    }
}

/// One message from the peer.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Map<String, Value>,
    },
    Notification {
        method: String,
        params: Map<String, Value>,
    },
    /// The answer to a request of ours (elicitation).
    Response {
        id: Value,
        outcome: Result<Value, RpcError>,
    },
}

/// A line that is not a usable message: answer `error` under `id` (null when unknown).
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    pub id: Value,
    pub error: RpcError,
}

pub fn response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub fn error_response(id: &Value, error: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": error})
}

/// A request of ours to the peer.
pub fn request(id: &Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Parses one line (without its newline).
pub fn parse(line: &[u8]) -> Result<Incoming, Rejected> {
    let value: Value = serde_json::from_slice(line).map_err(|e| {
        // Valid JSON nested past the parser's depth limit still names its id.
        let (id, error) = if e.to_string().contains("recursion limit") {
            let why = "the message nests deeper than 128 levels";
            (scan_id(line), RpcError::new(INVALID_PARAMS, why))
        } else {
            (None, RpcError::new(PARSE_ERROR, format!("not JSON: {e}")))
        };
        let id = id.unwrap_or(Value::Null);
        Rejected { id, error }
    })?;
    from_value(value)
}

/// The answer to a line longer than the limit: its id, if the kept prefix shows it.
pub fn too_long(prefix: &[u8], len: usize, limit: usize) -> Rejected {
    Rejected {
        id: scan_id(prefix).unwrap_or(Value::Null),
        error: RpcError::new(
            INVALID_REQUEST,
            format!("message of {len} bytes is over the limit of {limit} bytes"),
        ),
    }
}

fn invalid(id: Value, why: &str) -> Rejected {
    Rejected {
        id,
        error: RpcError::new(INVALID_REQUEST, format!("invalid request: {why}")),
    }
}

fn from_value(value: Value) -> Result<Incoming, Rejected> {
    let mut obj = match value {
        Value::Object(o) => o,
        Value::Array(_) => return Err(invalid(Value::Null, "batches are not supported")),
        _ => return Err(invalid(Value::Null, "not a JSON-RPC object")),
    };
    let id = obj.remove("id");
    if let Some(id) = &id
        && !(id.is_string() || id.is_i64() || id.is_u64())
    {
        return Err(invalid(Value::Null, "`id` must be a string or an integer"));
    }
    let reply_id = id.clone().unwrap_or(Value::Null);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid(reply_id, "`jsonrpc` must be \"2.0\""));
    }
    let params = match obj.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p,
        Some(_) => {
            return Err(Rejected {
                id: reply_id,
                error: RpcError::new(INVALID_PARAMS, "`params` must be an object"),
            });
        }
    };
    match (obj.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => Ok(Incoming::Request { id, method, params }),
        (Some(Value::String(method)), None) => Ok(Incoming::Notification { method, params }),
        (Some(_), _) => Err(invalid(reply_id, "`method` must be a string")),
        (None, Some(id)) => {
            let outcome = match (obj.remove("result"), obj.remove("error")) {
                (Some(r), None) => Ok(r),
                (None, Some(e)) => Err(error_of(&e)),
                _ => return Err(invalid(reply_id, "a response needs `result` or `error`")),
            };
            Ok(Incoming::Response { id, outcome })
        }
        (None, None) => Err(invalid(Value::Null, "no `method`")),
    }
}

fn error_of(e: &Value) -> RpcError {
    let code = e.get("code").and_then(Value::as_i64);
    let message = e.get("message").and_then(Value::as_str).unwrap_or("error");
    let data = e.get("data").cloned().map(Box::new);
    RpcError {
        data,
        ..RpcError::new(code.unwrap_or(INTERNAL_ERROR), message)
    }
}

/// The `"id"` member of the top-level object in `bytes`, read without parsing the rest: works on
/// JSON too deep for the parser and on a prefix cut at the size limit. Only string and integer
/// ids count; `None` when there is none before the bytes end.
pub fn scan_id(bytes: &[u8]) -> Option<Value> {
    let mut depth = 0usize;
    let mut expect_key = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let end = string_end(bytes, i)?;
                let is_key = depth == 1 && expect_key;
                expect_key = false;
                if is_key && &bytes[i + 1..end] == b"id" {
                    return scalar_after_colon(&bytes[end + 1..]);
                }
                i = end + 1;
                continue;
            }
            b'{' => {
                depth += 1;
                expect_key = depth == 1;
            }
            b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            b',' if depth == 1 => expect_key = true,
            _ => {}
        }
        i += 1;
    }
    None
}

/// Index of the closing quote of the string opening at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut j = start + 1;
    while j < bytes.len() {
        match bytes[j] {
            b'\\' => j += 2,
            b'"' => return Some(j),
            _ => j += 1,
        }
    }
    None
}

fn scalar_after_colon(rest: &[u8]) -> Option<Value> {
    let rest = rest
        .trim_ascii_start()
        .strip_prefix(b":")?
        .trim_ascii_start();
    let len = match rest.first()? {
        b'"' => string_end(rest, 0)? + 1,
        b'-' | b'0'..=b'9' => rest
            .iter()
            .position(|b| !matches!(b, b'-' | b'0'..=b'9'))
            .unwrap_or(rest.len()),
        _ => return None,
    };
    let v: Value = serde_json::from_slice(&rest[..len]).ok()?;
    (v.is_string() || v.is_i64() || v.is_u64()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_notifications_and_responses() {
        let r = parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
        assert_eq!(
            r,
            Incoming::Request {
                id: json!(1),
                method: "ping".into(),
                params: Map::new()
            }
        );
        let n = parse(br#"{"jsonrpc":"2.0","method":"x","params":{"a":1}}"#).unwrap();
        assert!(matches!(n, Incoming::Notification { params, .. } if params["a"] == 1));
        let ok = parse(br#"{"jsonrpc":"2.0","id":"s1","result":{}}"#).unwrap();
        assert!(matches!(ok, Incoming::Response { outcome: Ok(_), .. }));
        let err =
            parse(br#"{"jsonrpc":"2.0","id":"s1","error":{"code":-1,"message":"no"}}"#).unwrap();
        assert!(matches!(err, Incoming::Response { outcome: Err(e), .. } if e.message == "no"));
    }

    #[test]
    fn malformed_lines_are_answered() {
        let e = parse(b"{not json").unwrap_err();
        assert_eq!((e.id.clone(), e.error.code), (Value::Null, PARSE_ERROR));
        let e = parse(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).unwrap_err();
        assert!(e.error.message.contains("batches"));
        let e = parse(br#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#).unwrap_err();
        assert_eq!((e.id, e.error.code), (json!(7), INVALID_REQUEST));
        let e = parse(br#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#).unwrap_err();
        assert_eq!(e.id, Value::Null);
        let e = parse(br#"{"jsonrpc":"2.0","id":3,"method":"x","params":[1]}"#).unwrap_err();
        assert_eq!((e.id, e.error.code), (json!(3), INVALID_PARAMS));
        let e = parse(br#"{"jsonrpc":"2.0","id":3}"#).unwrap_err();
        assert_eq!(e.error.code, INVALID_REQUEST);
    }

    #[test]
    fn scan_id_reads_only_the_top_level() {
        for (bytes, want) in [
            (&br#"{"params":{"id":9},"id":"abc""#[..], Some(json!("abc"))),
            (br#"{"x":"\"id\": 5", "id" : 12 ,"#, Some(json!(12))),
            (br#"{"params":{"id":9}"#, None),
            (br#"{"id":null}"#, None),
            (br#"{"a":"id","b":1"#, None),
        ] {
            assert_eq!(scan_id(bytes), want, "{}", String::from_utf8_lossy(bytes));
        }
        assert_eq!(
            too_long(br#"{"jsonrpc":"2.0","id":5,"params":{"x":"aaa"#, 10, 5).id,
            json!(5)
        );
    }
}
