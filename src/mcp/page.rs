//! Pagination of the list methods (MCP "Pagination" utility): a large skill collection yields
//! hundreds of tools, so `tools/list`, `resources/list` and `resources/templates/list` answer a
//! page at a time with an opaque `nextCursor`, omitted on the last page (a client that sees one
//! asks again with it as `cursor`). Pure.

use super::jsonrpc::{INVALID_PARAMS, RpcError};
use crate::command::escape_controls;
use serde_json::{Map, Value};

/// Items per page: large enough that a usual collection fits in one answer, small enough that
/// hundreds of tool schemas do not make one huge line.
pub const PAGE_SIZE: usize = 100;

/// The page of `result[key]` (a list) that `params.cursor` asks for, with `nextCursor` when more
/// follow. The cursor is `KEY:OFFSET`; one for another list, or not issued by us, is refused.
pub fn page(
    mut result: Value,
    key: &str,
    params: &Map<String, Value>,
    size: usize,
) -> Result<Value, RpcError> {
    let all = match result.get_mut(key).map(Value::take) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(c) => c
            .as_str()
            .and_then(|c| {
                c.strip_prefix(key)?
                    .strip_prefix(':')?
                    .parse::<usize>()
                    .ok()
            })
            .filter(|&at| at <= all.len())
            .ok_or_else(|| {
                RpcError::new(
                    INVALID_PARAMS,
                    format!(
                        "invalid cursor `{}` for the {key} list: pass the `nextCursor` of the \
                         previous page, or no cursor for the first",
                        // A string as it is (no JSON quotes), anything else as its JSON.
                        escape_controls(&c.as_str().map_or_else(|| c.to_string(), str::to_owned))
                    ),
                )
            })?,
    };
    let size = size.max(1);
    let end = all.len().min(start + size);
    let obj = result.as_object_mut().expect("a list result is an object");
    obj.insert(key.into(), Value::Array(all[start..end].to_vec()));
    if end < all.len() {
        obj.insert("nextCursor".into(), Value::String(format!("{key}:{end}")));
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn pages_follow_the_cursor_until_none_is_given() {
        let all = json!({"tools": [1, 2, 3, 4, 5]});
        let p1 = page(all.clone(), "tools", &Map::new(), 2).unwrap();
        assert_eq!(p1, json!({"tools": [1, 2], "nextCursor": "tools:2"}));
        for (cursor, want) in [
            ("tools:2", json!({"tools": [3, 4], "nextCursor": "tools:4"})),
            // No cursor on the last page.
            ("tools:4", json!({"tools": [5]})),
        ] {
            let p = page(all.clone(), "tools", &params(json!({"cursor": cursor})), 2);
            assert_eq!(p.unwrap(), want, "{cursor}");
        }
        // A list that fits has no cursor at all.
        assert_eq!(
            page(all, "tools", &Map::new(), 100).unwrap(),
            json!({"tools": [1, 2, 3, 4, 5]})
        );
    }

    #[test]
    fn foreign_or_stale_cursors_are_invalid_params() {
        let all = json!({"tools": [1, 2, 3]});
        for bad in [json!("resources:1"), json!("tools:9"), json!("x"), json!(3)] {
            let e = page(all.clone(), "tools", &params(json!({"cursor": bad})), 2).unwrap_err();
            assert_eq!(e.code, INVALID_PARAMS, "{bad}");
            assert!(e.message.contains("nextCursor"), "{}", e.message);
        }
        // Shown in backticks as written, controls escaped: no JSON or Rust quoting.
        for (cursor, shown) in [(json!("bo\u{1b}gus"), "bo␛gus"), (json!(3), "3")] {
            let e = page(all.clone(), "tools", &params(json!({"cursor": cursor})), 2);
            let message = e.unwrap_err().message;
            let want = format!("invalid cursor `{shown}` for");
            assert!(message.starts_with(&want), "{message}");
        }
    }
}
