//! Directive flags (`--input-path x --threshold 0.9`) read as the JSON object a tool's schema
//! describes.

use serde_json::{Map, Value};

/// The `type` of a schema property, when it names one (`["number","null"]` → `number`).
pub(super) fn type_of(prop: &Value) -> Option<&str> {
    match prop.get("type")? {
        Value::String(s) => Some(s),
        _ => types_of(Some(prop)).into_iter().find(|t| *t != "null"),
    }
}

/// Every `type` a schema property lists, in its order (`["integer","null"]`, or the one).
fn types_of(prop: Option<&Value>) -> Vec<&str> {
    match prop.and_then(|p| p.get("type")) {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Directive flags → a JSON object, typed by `schema`'s properties. Pure.
///
/// `--input-path x` and `--input-path=x` give `"input_path": "x"` (kebab-case to snake_case;
/// a property written with hyphens in the schema keeps them). Values become what the property's
/// `type` says: `integer`, `number`, `boolean` (a bare `--flag` is true, `--no-flag` false),
/// `array` (the flag repeated, one value each, items typed by `items`: `--tags a --tags b`; a
/// second word after one value is refused, saying so), `object` (JSON text); a list of types
/// (`["integer","null"]`) is tried in its order, the first that reads the value wins; without a
/// type (or without a schema) a bare flag is true, a number stays a number, anything else is text.
/// `Err((field, message))` names the flag that was wrong.
pub fn flags_to_json(
    schema: Option<&Value>,
    args: &[String],
) -> Result<Map<String, Value>, (Option<String>, String)> {
    let props = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    let mut out = Map::new();
    let mut i = 0;
    // The array flag whose value came just before, as written (`tags`).
    let mut after_array: Option<(String, String)> = None;
    while i < args.len() {
        let word = &args[i];
        i += 1;
        let Some(flag) = word.strip_prefix("--").filter(|f| !f.is_empty()) else {
            if let Some((key, flag)) = after_array {
                return Err((
                    Some(key),
                    format!(
                        "unexpected argument `{word}`: `--{flag}` takes one value; give a list by repeating the flag: `--{flag} a --{flag} b`"
                    ),
                ));
            }
            return Err((
                None,
                format!(
                    "unexpected argument `{word}`: this tool takes --name value flags{}",
                    known_flags(props)
                ),
            ));
        };
        after_array = None;
        let (flag, inline) = match flag.split_once('=') {
            Some((f, v)) => (f, Some(v.to_owned())),
            None => (flag, None),
        };
        let (key, negated) = key_for(flag, props);
        let prop = props.and_then(|p| p.get(&key));
        if props.is_some() && prop.is_none() && schema_closed(schema) {
            return Err((
                Some(key),
                format!("unknown flag `--{flag}`{}", known_flags(props)),
            ));
        }
        let ty = prop.and_then(type_of);
        let next_is_value = args.get(i).is_some_and(|n| !n.starts_with("--"));
        let value = match ty {
            Some("boolean") => {
                // `["boolean","null"]`: `--flag null` is the other type's value.
                let others: Vec<&str> = types_of(prop)
                    .into_iter()
                    .filter(|t| *t != "boolean")
                    .collect();
                let other_value = |n: &String| {
                    !n.starts_with("--") && !others.is_empty() && typed_as(n, &others).is_ok()
                };
                let text = inline.or_else(|| {
                    let next = args
                        .get(i)
                        .filter(|n| *n == "true" || *n == "false" || other_value(n))?;
                    i += 1;
                    Some(next.clone())
                });
                match text.as_deref() {
                    None | Some("true") => Value::Bool(!negated),
                    Some("false") => Value::Bool(negated),
                    Some(other) if !negated && !others.is_empty() => {
                        typed_as(other, &types_of(prop)).map_err(|m| (Some(key.clone()), m))?
                    }
                    Some(other) => {
                        return Err((Some(key), format!("`{other}` is not true or false")));
                    }
                }
            }
            _ => {
                let text = match inline {
                    Some(v) => v,
                    None if next_is_value => {
                        i += 1;
                        args[i - 1].clone()
                    }
                    None if ty.is_none() => {
                        out.insert(key, Value::Bool(true));
                        continue;
                    }
                    None => return Err((Some(key), format!("`--{flag}` needs a value"))),
                };
                let item_types = match ty {
                    Some("array") => types_of(prop.and_then(|p| p.get("items"))),
                    _ => types_of(prop),
                };
                let value = typed_as(&text, &item_types).map_err(|m| (Some(key.clone()), m))?;
                if ty == Some("array") {
                    after_array = Some((key.clone(), flag.to_owned()));
                    // Only arrays are ever stored under an array property's key.
                    if let Value::Array(items) = out
                        .entry(key.clone())
                        .or_insert_with(|| Value::Array(Vec::new()))
                    {
                        items.push(value);
                    }
                    continue;
                }
                value
            }
        };
        if out.contains_key(&key) {
            return Err((Some(key), format!("`--{flag}` is given twice")));
        }
        out.insert(key, value);
    }
    Ok(out)
}

/// The property key for a flag: the schema's own spelling if it has one, else snake_case.
/// `--no-x` means `x: false` when `x` is a boolean property. Returns (key, negated).
fn key_for(flag: &str, props: Option<&Map<String, Value>>) -> (String, bool) {
    let snake = flag.replace('-', "_");
    if let Some(props) = props {
        for candidate in [flag, snake.as_str()] {
            if props.contains_key(candidate) {
                return (candidate.to_owned(), false);
            }
        }
        if let Some(rest) = flag.strip_prefix("no-") {
            let base = rest.replace('-', "_");
            for candidate in [rest, base.as_str()] {
                if props
                    .get(candidate)
                    .is_some_and(|p| type_of(p) == Some("boolean"))
                {
                    return (candidate.to_owned(), true);
                }
            }
        }
    }
    (snake, false)
}

/// Whether the schema refuses keys it does not list (`additionalProperties: false`).
fn schema_closed(schema: Option<&Value>) -> bool {
    schema
        .and_then(|s| s.get("additionalProperties"))
        .is_some_and(|v| v == &Value::Bool(false))
}

fn known_flags(props: Option<&Map<String, Value>>) -> String {
    match props {
        Some(p) if !p.is_empty() => format!(
            " (its flags: {})",
            p.keys()
                .map(|k| format!("--{}", k.replace('_', "-")))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => String::new(),
    }
}

/// One flag value as the first of `types` that reads it (none: as [`typed`] without a type).
/// The refusal names every type tried: "`abc` is not an integer or null".
fn typed_as(text: &str, types: &[&str]) -> Result<Value, String> {
    match types {
        [] => typed(text, None),
        [one] => typed(text, Some(one)),
        many => many
            .iter()
            .find_map(|t| typed(text, Some(t)).ok())
            .ok_or_else(|| {
                let nouns: Vec<&str> = many.iter().map(|t| type_noun(t)).collect();
                format!("`{text}` is not {}", nouns.join(" or "))
            }),
    }
}

/// A JSON Schema type as a refusal names it.
fn type_noun(ty: &str) -> &str {
    match ty {
        "integer" => "an integer",
        "number" => "a number",
        "boolean" => "true or false",
        "object" => "a JSON object",
        "array" => "a JSON array",
        "string" => "text",
        other => other,
    }
}

/// One flag value as JSON of type `ty` (`None`: a number if it is one, else text).
fn typed(text: &str, ty: Option<&str>) -> Result<Value, String> {
    match ty {
        Some("integer") => text
            .trim()
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("`{text}` is not an integer")),
        Some("number") => match serde_json::from_str::<Value>(text.trim()) {
            Ok(v @ Value::Number(_)) => Ok(v),
            _ => Err(format!("`{text}` is not a number")),
        },
        Some("boolean") => match text {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(format!("`{text}` is not true or false")),
        },
        Some("object") | Some("array") => {
            serde_json::from_str(text).map_err(|e| format!("`{text}` is not JSON: {e}"))
        }
        Some("null") if text == "null" => Ok(Value::Null),
        Some("null") => Err(format!("`{text}` is not null")),
        Some("string") => Ok(Value::String(text.to_owned())),
        _ => match serde_json::from_str::<Value>(text.trim()) {
            Ok(v @ Value::Number(_)) if ty.is_none() => Ok(v),
            _ => Ok(Value::String(text.to_owned())),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::argv;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "input_path": {"type": "string"},
                "threshold": {"type": "number"},
                "limit": {"type": "integer"},
                "verbose": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "opts": {"type": "object"}
            },
            "required": ["input_path"]
        })
    }

    #[test]
    fn flags_become_typed_snake_case_keys() {
        let s = schema();
        let m = flags_to_json(
            Some(&s),
            &argv(&[
                "--input-path",
                "data.csv",
                "--threshold",
                "0.9",
                "--limit=3",
                "--verbose",
                "--tags",
                "a",
                "--tags",
                "b",
                "--opts",
                "{\"x\":1}",
            ]),
        )
        .unwrap();
        assert_eq!(
            Value::Object(m),
            json!({"input_path": "data.csv", "threshold": 0.9, "limit": 3, "verbose": true,
                   "tags": ["a", "b"], "opts": {"x": 1}})
        );
        let m = flags_to_json(Some(&s), &argv(&["--no-verbose", "--input-path", "-"])).unwrap();
        assert_eq!(
            Value::Object(m),
            json!({"verbose": false, "input_path": "-"})
        );
    }

    #[test]
    fn a_list_of_types_is_tried_in_its_order() {
        let s = json!({"type": "object", "properties": {
            "v": {"type": ["number", "string"]},
            "n": {"type": ["integer", "null"]},
            "b": {"type": ["boolean", "null"]},
            "ids": {"type": "array", "items": {"type": ["integer", "string"]}}}});
        let m = flags_to_json(Some(&s), &argv(&["--v", "abc", "--n", "null"])).unwrap();
        assert_eq!(Value::Object(m), json!({"v": "abc", "n": null}));
        let m = flags_to_json(Some(&s), &argv(&["--v", "2.5", "--n", "7"])).unwrap();
        assert_eq!(Value::Object(m), json!({"v": 2.5, "n": 7}));
        let m = flags_to_json(
            Some(&s),
            &argv(&["--b", "null", "--ids", "1", "--ids", "x"]),
        );
        assert_eq!(
            Value::Object(m.unwrap()),
            json!({"b": null, "ids": [1, "x"]})
        );
        let m = flags_to_json(Some(&s), &argv(&["--b"])).unwrap();
        assert_eq!(Value::Object(m), json!({"b": true}));
        // Neither type reads it: both are named.
        let e = flags_to_json(Some(&s), &argv(&["--n", "abc"])).unwrap_err();
        assert_eq!(
            e,
            (Some("n".into()), "`abc` is not an integer or null".into())
        );
    }

    #[test]
    fn without_a_schema_numbers_and_bare_flags_are_typed() {
        let m = flags_to_json(None, &argv(&["--n", "2", "--name", "x y", "--dry-run"])).unwrap();
        assert_eq!(
            Value::Object(m),
            json!({"n": 2, "name": "x y", "dry_run": true})
        );
    }

    /// A word that is not a number for a number and an unknown flag of a closed schema are
    /// tests/all/tools.rs schema_violations_go_back_to_the_model_naming_the_field's.
    #[test]
    fn bad_flags_name_the_field() {
        let s = schema();
        let e = flags_to_json(Some(&s), &argv(&["--limit", "2.5"])).unwrap_err();
        assert_eq!(e.0.as_deref(), Some("limit"));
        let e = flags_to_json(Some(&s), &argv(&["data.csv"])).unwrap_err();
        assert!(e.1.contains("unexpected argument `data.csv`"), "{e:?}");
        assert!(e.1.contains("--input-path"), "{e:?}");
        // A list is the flag repeated; a second value after one is refused, saying so.
        let e = flags_to_json(Some(&s), &argv(&["--tags", "a", "b"])).unwrap_err();
        assert_eq!(e.0.as_deref(), Some("tags"));
        assert!(e.1.contains("`--tags a --tags b`"), "{e:?}");
        let m = flags_to_json(Some(&s), &argv(&["--tags", "a", "--tags=b"])).unwrap();
        assert_eq!(m["tags"], json!(["a", "b"]));
        let e = flags_to_json(Some(&s), &argv(&["--limit", "1", "--limit", "2"])).unwrap_err();
        assert!(e.1.contains("given twice"), "{e:?}");
    }
}
