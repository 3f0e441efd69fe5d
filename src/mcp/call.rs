//! One `tools/call`: through the [`Dispatcher`] (policy, confirmation, sandbox, caps, timeout,
//! audit with origin `mcp`), and its outcome as an MCP tool result — text content, `outputs` as
//! structured content, and `isError` with the reason for every failure and refusal.

use super::catalog::{Catalog, Target};
use super::session::Call;
use crate::audit::Decision;
use crate::dispatch::{Dispatcher, Origin, Outcome, Ran};
use serde_json::{Value, json};

/// Runs the call and returns the `tools/call` result.
pub async fn run(dispatcher: &Dispatcher, catalog: &Catalog, call: &Call) -> Value {
    match &call.target {
        Target::LoadSkill => load_skill(dispatcher, catalog, call),
        Target::Run(target) => {
            let text = Value::Object(call.arguments.clone()).to_string();
            let (args, stdin) = match crate::chat::tools::parse_arguments(&text, target) {
                Ok(parsed) => parsed,
                Err(why) => {
                    let argv = [target.reference.clone()];
                    let out = dispatcher.refuse(Origin::Mcp, &argv, Decision::Invalid, why);
                    return result_of(&out);
                }
            };
            let mut argv = vec![target.reference.clone()];
            argv.extend(args);
            let out = dispatcher.run_argv(Origin::Mcp, argv, stdin).await;
            // The operator's notices (a sandbox layer missing, the `.env` look cut short) are
            // for whoever runs the server, on its stderr: the result is the tool's output,
            // which the client's model reads.
            if let Outcome::Ran(ran) = &out {
                for w in &ran.result.warnings {
                    eprintln!("skillpipe mcp: warning: {w}");
                }
            }
            result_of(&out)
        }
    }
}

/// `load_skill {name, file?}`: chat's `!{skill NAME [FILE]}` — the same reader, rule and audit
/// line —, the instructions followed by the skill's MCP tools and files.
fn load_skill(dispatcher: &Dispatcher, catalog: &Catalog, call: &Call) -> Value {
    let args = Value::Object(call.arguments.clone());
    let argv = match crate::chat::tools::load_skill_args(&args) {
        Ok(argv) => argv,
        // Without a name, the skills to choose from.
        Err(why) if args.get("name").is_none_or(Value::is_null) => {
            let known: Vec<&str> = catalog.skills.iter().map(|s| s.name.as_str()).collect();
            return error_result(format!("{why}; the skills are: {}", known.join(", ")));
        }
        Err(why) => return error_result(why),
    };
    let (name, file) = (argv[1].clone(), argv.get(2).cloned());
    match dispatcher.read_skill(Origin::Mcp, &argv, false) {
        Outcome::Ran(ran) => {
            let mut text = String::from_utf8_lossy(&ran.result.stdout).into_owned();
            match &file {
                None => text.push_str(&catalog.load_skill_tail(&name).unwrap_or_default()),
                // The reader gave a note for a binary file; its bytes are a resource.
                Some(rel) => {
                    let published = catalog
                        .skill(&name)
                        .and_then(|s| s.files.iter().find(|f| &f.rel == rel))
                        .filter(|f| crate::skills::files::is_binary(&f.bytes));
                    if let Some(f) = published {
                        text.push_str(&format!(
                            "Its bytes, base64-encoded: resources/read {} ({}).\n",
                            f.uri, f.mime
                        ));
                    }
                }
            }
            json!({"content": [{"type": "text", "text": text}], "isError": false})
        }
        Outcome::Blocked { reason, .. } => error_result(reason),
    }
}

/// An `isError` result with one text block.
pub fn error_result(text: String) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

/// The tool result for an outcome. A run that failed keeps its output, with what failed and
/// the sandbox's hint where one fired. The run's warnings are not in it (see [`run`]).
pub fn result_of(outcome: &Outcome) -> Value {
    match outcome {
        // It ran and was stopped (skillpipe was interrupted), so it was not refused.
        Outcome::Blocked {
            decision: Decision::Ran,
            reason,
            ..
        } => error_result(format!("stopped: {reason}")),
        Outcome::Blocked { reason, .. } => error_result(format!("not run: {reason}")),
        Outcome::Ran(ran) => ran_result(ran),
    }
}

fn ran_result(ran: &Ran) -> Value {
    let r = &ran.result;
    let stdout = String::from_utf8_lossy(&r.stdout);
    let stderr = String::from_utf8_lossy(crate::chat::result::own_stderr(r));
    let mut text = String::new();
    if r.success() {
        text.push_str(&stdout);
    } else {
        // The pipeline's wording, as in the chat's reports and capture results.
        let what = crate::pipeline::status_text(r);
        text.push_str(&format!("failed: {what}\n"));
        if !stdout.is_empty() {
            text.push_str(&format!("stdout:\n{stdout}\n"));
        }
        if !stderr.is_empty() {
            text.push_str(&format!("stderr:\n{stderr}\n"));
        }
        // The sandbox's own guess at what the run ran into (the flag that lifts it, or what was
        // in force for a denial), as the chat and `run` say it; a plain failure (a usage error,
        // a division by zero) says nothing about the sandbox: it is no reason to ask for more.
        match &r.advice {
            Some(advice) => text.push_str(&advice.hint),
            // The separator after the last block (always ours).
            None => _ = text.pop(),
        }
    }
    let mut result = json!({
        "content": [{"type": "text", "text": text}],
        "isError": !r.success(),
    });
    if let Some(outputs) = structured(ran) {
        result["structuredContent"] = outputs;
    }
    // An argument the audit log cut (its length and digest, as the log's line and `run --json`
    // give them), what the run wrote, and the hint typed (for clients that act on it rather
    // than show it): for the client and its user, not the model. `_meta` only when any is there.
    let mut meta = json!({});
    if !ran.cut.is_empty() {
        meta["skillpipe/cut"] = json!(ran.cut);
    }
    if !r.changes.list.is_empty() || r.changes.capped.is_some() {
        meta["skillpipe/changes"] = json!(r.changes.list);
        meta["skillpipe/changes_bound_hit"] = json!(r.changes.capped.is_some());
    }
    if let Some(advice) = &r.advice {
        meta["skillpipe/advice"] = json!(advice);
    }
    if meta != json!({}) {
        result["_meta"] = meta;
    }
    result
}

/// `outputs` as MCP structured content, only for a run that succeeded and printed JSON: some
/// clients pass only `structuredContent` to the model when it is there, so an empty object (a
/// text result) or a failure's would hide the text and stderr from it. No tool declares an
/// `outputSchema`, so the field is never required. It is an object: any other JSON value is
/// wrapped as `{"result": …}`.
fn structured(ran: &Ran) -> Option<Value> {
    if !ran.result.success() {
        return None;
    }
    match crate::dispatch::result_json(ran)["outputs"].take() {
        Value::Object(m) if m.is_empty() => None,
        v @ Value::Object(_) => Some(v),
        v => Some(json!({ "result": v })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::RunResult;

    fn ran(exit_code: i32, stdout: &str, timed_out: bool) -> Ran {
        Ran {
            result: RunResult {
                exit_code,
                stdout: stdout.as_bytes().to_vec(),
                stderr: b"oops".to_vec(),
                timed_out,
                ..Default::default()
            },
            skill: Some("s".into()),
            script_path: None,
            cut: Box::default(),
        }
    }

    /// What the run wrote is metadata for the client, not content for the model.
    #[test]
    fn changes_are_in_meta_not_content() {
        use crate::sandbox::changes::{Change, ChangeKind, Changes, Why};
        let mut r = ran(0, "ok\n", false);
        r.result.changes = Changes::new(vec![Change {
            path: "/p/x.pth".into(),
            kind: ChangeKind::Created,
            flagged: true,
            why: Some(Why::Pth),
        }]);
        let v = ran_result(&r);
        let c = &v["_meta"]["skillpipe/changes"][0];
        assert_eq!(
            (&c["path"], &c["kind"], &c["why"]),
            (&json!("/p/x.pth"), &json!("created"), &json!("pth"))
        );
        assert_eq!(c["flagged"], true);
        assert!(!v["content"][0]["text"].as_str().unwrap().contains("x.pth"));
        // Control: nothing written, no metadata.
        assert!(ran_result(&ran(0, "ok\n", false)).get("_meta").is_none());
    }

    #[test]
    fn outputs_that_are_not_objects_are_wrapped() {
        let v = ran_result(&ran(0, "42\n", false));
        assert_eq!(v["structuredContent"], json!({"result": 42}));
        let v = ran_result(&ran(0, "[1, 2]", false));
        assert_eq!(v["structuredContent"], json!({"result": [1, 2]}));
    }

    #[test]
    fn the_sandbox_hint_is_passed_on() {
        let mut r = ran(1, "", false);
        r.result.advice = Some(crate::exec::Advice {
            kind: "network",
            setting: Some("allow_network"),
            path: None,
            hint: "sandbox: the run likely needed the network".into(),
            for_model: "not for the client".into(),
        });
        let v = ran_result(&r);
        let text = v["content"][0]["text"].as_str().unwrap();
        assert!(
            text.ends_with("sandbox: the run likely needed the network"),
            "{text}"
        );
        // Typed in `_meta`, without the words.
        let typed = json!({"kind": "network", "setting": "allow_network", "path": null});
        assert_eq!(v["_meta"]["skillpipe/advice"], typed);
    }

    #[test]
    fn failures_say_what_failed_and_nothing_of_the_sandbox_without_a_hint() {
        let v = ran_result(&ran(3, "partial", false));
        assert_eq!(v["isError"], true);
        let text = v["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("failed: exit 3"), "{text}");
        assert!(text.contains("stdout:\npartial") && text.contains("stderr:\noops"));
        // Nothing pointed at the sandbox (a usage error): it is not mentioned, no flag offered.
        assert!(!text.contains("sandbox"), "{text}");
        assert!(
            !text.contains("--allow") && !text.contains("lift"),
            "{text}"
        );
        let v = ran_result(&ran(124, "", true));
        assert!(
            v["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("timed out")
        );
        assert!(v.get("structuredContent").is_none(), "{v}");
    }

    #[test]
    fn structured_content_only_for_json_from_a_run_that_succeeded() {
        // Text only: no `{}` that would stand in for the text with some clients.
        let v = ran_result(&ran(0, "hello\n", false));
        assert!(v.get("structuredContent").is_none(), "{v}");
        assert_eq!(v["content"][0]["text"], "hello\n");
        // A failure that printed JSON: the text (with stderr) is the result, not its outputs.
        let v = ran_result(&ran(2, "{\"n\":1}\n", false));
        assert!(v.get("structuredContent").is_none(), "{v}");
        assert!(v["content"][0]["text"].as_str().unwrap().contains("oops"));
        // Refused and stopped calls carry none either.
        let refused = result_of(&Outcome::Blocked {
            decision: Decision::Denied,
            reason: "no".into(),
            for_model: "no".into(),
            denied: None,
        });
        assert!(refused.get("structuredContent").is_none(), "{refused}");
        // A positive control: JSON from a success is there.
        let v = ran_result(&ran(0, "{\"n\":1}\n", false));
        assert_eq!(v["structuredContent"], json!({"n": 1}));
    }
}
