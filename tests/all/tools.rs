//! Script tools (`SKILL/tools/{id}/`) end to end through the built binary: loading and
//! validation, typed input from directive flags, schema violations, native tool calls against
//! the in-test model server (OpenAI and Anthropic result shapes), `run --json` and `run --agent`,
//! and the audit, warning and refusal details.

use crate::common;
use crate::common::pty;

use common::{Reply, Server, TestHome};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The documented layout, in the user's own skills folder (`$XDG_CONFIG_HOME/skillpipe/skills`,
/// trusted without a project): `skills/data/tools/{id}/` with tool.yaml, schema.json, description.md
/// and the script. `stats` echoes its stdin, environment and argv as pretty-printed JSON.
fn data_skill(home: &TestHome) {
    home.write(
        "config/skillpipe/skills/data/SKILL.md",
        "---\nname: data\ndescription: Small tools for CSV files.\n---\nUse the tools.\n",
    );
    home.write(
        "config/skillpipe/skills/data/tools/stats/tool.yaml",
        "id: stats\nname: CSV statistics\nruntime: python3\nscript: stats.py\ntimeout: 10\n\
         env:\n  STATS_MODE: strict\nenabled: true\n",
    );
    home.write(
        "config/skillpipe/skills/data/tools/stats/schema.json",
        r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "input_path": {"type": "string", "description": "CSV file"},
    "threshold": {"type": "number", "minimum": 0, "maximum": 1},
    "verbose": {"type": "boolean"}
  },
  "required": ["input_path"],
  "additionalProperties": false
}
"#,
    );
    home.write(
        "config/skillpipe/skills/data/tools/stats/description.md",
        "Count the rows of a CSV file above a threshold.\n",
    );
    home.write(
        "config/skillpipe/skills/data/tools/stats/stats.py",
        "import json, os, sys\ndata = json.load(sys.stdin)\n\
         print(json.dumps({\"got\": data, \"mode\": os.environ.get(\"STATS_MODE\"), \"argv\": sys.argv[1:]}, indent=2))\n",
    );
    home.write(
        "config/skillpipe/skills/data/tools/slow/tool.yaml",
        "id: slow\nscript: slow.sh\ntimeout: 1\ninput: args\n",
    );
    home.write(
        "config/skillpipe/skills/data/tools/slow/slow.sh",
        "sleep 30\n",
    );
    home.write(
        "config/skillpipe/skills/data/tools/hidden/tool.yaml",
        "id: hidden\nscript: hidden.sh\nenabled: false\n",
    );
    home.write(
        "config/skillpipe/skills/data/tools/hidden/hidden.sh",
        "echo hidden ran\n",
    );
    home.write(
        "config/skillpipe/skills/data/tools/fail/tool.yaml",
        "id: fail\nscript: fail.sh\ndescription: Always fails.\n",
    );
    home.write(
        "config/skillpipe/skills/data/tools/fail/fail.sh",
        "echo broken >&2\nexit 4\n",
    );
}

fn run_json(home: &TestHome, args: &[&str]) -> (Value, std::process::Output) {
    let out = home.cmd().arg("run").args(args).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}): {}", stdout(&out)));
    (v, out)
}

#[test]
fn tool_folders_are_shown_and_validated_with_file_line_and_key() {
    let home = TestHome::new();
    data_skill(&home);
    let out = home
        .cmd()
        .args(["skills", "show", "data"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("  stats: CSV statistics\n"), "{text}");
    assert!(
        text.contains("usage: !{data:stats --input-path TEXT [--threshold NUMBER] [--verbose]}"),
        "{text}"
    );
    assert!(
        text.contains("  hidden: hidden  (disabled by `enabled: false` in its tool.yaml)"),
        "{text}"
    );
    assert!(
        text.contains("timeout: 10 s") && text.contains("env: STATS_MODE"),
        "{text}"
    );

    let out = home
        .cmd()
        .args(["skills", "validate", "config/skillpipe/skills/data"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));

    // A typo must not leave a tool enabled: the tool is left out, each problem named.
    home.write(
        "config/skillpipe/skills/data/tools/broken/tool.yaml",
        "id: broken\nscript: b.sh\nenabeld: false\ntimeout: 0\n",
    );
    home.write("config/skillpipe/skills/data/tools/broken/b.sh", "echo b\n");
    home.write(
        "config/skillpipe/skills/data/tools/broken/schema.json",
        "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"n\": {\"type\": \"strng\"}\n  }\n}\n",
    );
    let out = home
        .cmd()
        .args(["skills", "validate", "config/skillpipe/skills/data"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "config/skillpipe/skills/data/tools/broken/tool.yaml:3: unknown key `enabeld`"
        ),
        "{text}"
    );
    assert!(
        text.contains("config/skillpipe/skills/data/tools/broken/tool.yaml:4: key `timeout` must be whole seconds"),
        "{text}"
    );
    assert!(
        text.contains(
            "config/skillpipe/skills/data/tools/broken/schema.json:4: not a valid JSON Schema: at `properties.n.type`"
        ),
        "{text}"
    );
    let out = home
        .cmd()
        .args(["run", "data", "broken", "--allow-scripts", "-y"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a broken tool must not run");
    assert!(stderr(&out).contains("tool skipped"), "{}", stderr(&out));
    // Called by its name, it is said to exist and why it was left out, in one line.
    assert!(
        stderr(&out).contains(
            "tool `broken` of `data` exists but was skipped at load: tools/broken/tool.yaml:3: unknown key `enabeld`"
        ),
        "{}",
        stderr(&out)
    );
    let out = home
        .cmd()
        .args(["filter", "--allow-scripts", "-y"])
        .write_stdin("!{data:broken}")
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("exists but was skipped at load: tools/broken/tool.yaml:3:"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn directive_flags_become_typed_json_on_stdin_with_the_tools_env() {
    let home = TestHome::new();
    data_skill(&home);
    let out = home
        .cmd()
        .args(["filter", "--allow-scripts", "-y"])
        .write_stdin("R: !{data:stats --input-path data.csv --threshold 0.9 --verbose}\n")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let json_part: Value = serde_json::from_str(text.trim_start_matches("R: ").trim()).unwrap();
    assert_eq!(
        json_part["got"],
        json!({"input_path": "data.csv", "threshold": 0.9, "verbose": true})
    );
    assert_eq!(json_part["mode"], "strict");
    assert_eq!(json_part["argv"], json!([]), "flags are not passed as argv");
    let audit = home.audit();
    assert_eq!(audit[0]["decision"], "ran");
    assert_eq!(
        audit[0]["stdin"],
        r#"{"input_path":"data.csv","threshold":0.9,"verbose":true}"#
    );
}

/// A model offered native tools may write a tool's function name (`data__stats`) as a
/// directive: that is the tool, run as `data:stats`.
#[test]
fn a_tools_function_name_written_as_a_directive_runs_the_tool() {
    let home = TestHome::new();
    data_skill(&home);
    let out = home
        .cmd()
        .args(["filter", "--allow-scripts", "-y"])
        .write_stdin("R: !{data__stats --input-path d.csv}\n")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let json_part: Value =
        serde_json::from_str(stdout(&out).trim_start_matches("R: ").trim()).unwrap();
    assert_eq!(json_part["got"], json!({"input_path": "d.csv"}));
    // The control: a name that is no tool's stays an unknown command.
    let out = home
        .cmd()
        .args(["filter", "--allow-scripts", "-y"])
        .write_stdin("!{data__nope}")
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("not in allowed_commands"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn schema_violations_go_back_to_the_model_naming_the_field() {
    let home = TestHome::new();
    data_skill(&home);
    let server = Server::start([
        Reply::text(["Checking !{data:stats --input-path d.csv --threshold high}"]),
        Reply::text([" I passed a bad threshold."]),
    ]);
    let out = home
        .cmd()
        .args(["chat", "--base-url", &server.url, "--model", "m"])
        .args(["--skill", "data", "--allow-scripts", "-y", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = server.requests();
    // The system prompt lists the tool in flag form, not the disabled one.
    let system = reqs[0]["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains(
            "| data:stats --input-path TEXT [--threshold NUMBER] [--verbose] | Count the rows"
        ),
        "{system}"
    );
    assert!(!system.contains("data:hidden"), "{system}");
    let msgs = reqs[1]["messages"].as_array().unwrap();
    let result = msgs.last().unwrap()["content"].as_str().unwrap();
    assert!(
        result.contains(
            "un: invalid input for tool `stats`: field `threshold`: `high` is not a number"
        ),
        "{result}"
    );
    assert_eq!(home.audit()[0]["decision"], "invalid");

    // Violations found by the schema itself: every one is named.
    let (v, out) = run_json(
        &home,
        &[
            "data",
            "stats",
            "--json",
            "--allow-scripts",
            "-y",
            "--",
            "--threshold",
            "2",
        ],
    );
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(v["decision"], "invalid");
    let why = v["refused"].as_str().unwrap();
    assert!(
        why.contains("field `threshold`: 2 is greater than the maximum of 1"),
        "{why}"
    );
    assert!(
        why.contains("field `input_path`: required, and missing"),
        "{why}"
    );
    let (v, _) = run_json(
        &home,
        &[
            "data",
            "stats",
            "--json",
            "--allow-scripts",
            "-y",
            "--",
            "--colour",
            "red",
        ],
    );
    assert!(
        v["refused"]
            .as_str()
            .unwrap()
            .contains("unknown flag `--colour`"),
        "{v}"
    );
}

#[test]
fn disabled_tools_are_hidden_and_timeouts_apply() {
    let home = TestHome::new();
    data_skill(&home);
    let out = home
        .cmd()
        .args(["filter", "--allow-scripts", "-y"])
        .write_stdin("[!{data:hidden}]\n")
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "[]\n");
    assert!(
        stderr(&out).contains("tool `hidden` of skill `data` is disabled"),
        "{}",
        stderr(&out)
    );
    let start = Instant::now();
    let (v, _) = run_json(&home, &["data", "slow", "--json", "--allow-scripts", "-y"]);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "the tool's 1 s timeout did not apply"
    );
    assert_eq!(v["exit_code"], 124);
    assert_eq!(v["stderr"], "Timeout", "{v}");
    // The tool's own timeout stopped it: the hint names its tool.yaml, not --timeout.
    let out = home
        .cmd()
        .args(["filter", "--allow-scripts", "-y", "--timeout", "10"])
        .write_stdin("!{data:slow 4}")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(
        err.contains(
            "stopped at the timeout of tool `data:slow` (its tool.yaml's timeout, 1 s): a larger \
             timeout there allows longer (up to the policy's 10 s)"
        ),
        "{err}"
    );
    assert!(!err.contains("--timeout SECS"), "{err}");
}

#[test]
fn openai_tools_offer_the_schema_and_mark_failures() {
    let home = TestHome::new();
    data_skill(&home);
    let server = Server::start([
        Reply::text(["Let me see."])
            .tool_call(
                "c1",
                "data__stats",
                [r#"{"input": {"input_path": "a.csv"}}"#],
            )
            .tool_call(
                "c2",
                "data__stats",
                [r#"{"input_path": "b.csv", "threshold": 0.5}"#],
            )
            .tool_call("c3", "data__stats", [r#"{"threshold": 0.5}"#])
            .tool_call("c4", "data__fail", ["{}"]),
        Reply::text(["Done."]),
    ]);
    let out = home
        .cmd()
        .args(["chat", "--base-url", &server.url, "--model", "m"])
        .args(["--tools", "--allow-scripts", "-y", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = server.requests();
    let tools = reqs[0]["tools"].as_array().unwrap();
    let stats = tools
        .iter()
        .find(|t| t["function"]["name"] == "data__stats")
        .expect("the tool is offered");
    assert_eq!(
        stats["function"]["parameters"]["properties"]["threshold"]["maximum"], 1,
        "its own schema.json is the parameters"
    );
    let fail = tools
        .iter()
        .find(|t| t["function"]["name"] == "data__fail")
        .unwrap();
    // No schema: its JSON is taken as text (an object without properties is not portable).
    assert_eq!(
        fail["function"]["parameters"]["properties"]["input"]["type"],
        "string"
    );
    assert_eq!(fail["function"]["parameters"]["required"], json!(["input"]));
    assert!(
        !tools
            .iter()
            .any(|t| t["function"]["name"] == "data__hidden")
    );

    let msgs = reqs[1]["messages"].as_array().unwrap();
    let result = |id: &str| -> Value {
        let m = msgs.iter().find(|m| m["tool_call_id"] == id).unwrap();
        serde_json::from_str(m["content"].as_str().unwrap()).unwrap()
    };
    // With and without the `input` wrapper.
    assert_eq!(
        result("c1")["outputs"]["got"],
        json!({"input_path": "a.csv"})
    );
    assert_eq!(
        result("c2")["outputs"]["got"],
        json!({"input_path": "b.csv", "threshold": 0.5})
    );
    assert!(result("c1").get("is_error").is_none());
    // Refused and failed calls are marked as errors, and say why.
    let r3 = result("c3");
    assert_eq!(r3["is_error"], true);
    assert!(
        r3["error"].as_str().unwrap().contains("field `input_path`"),
        "{r3}"
    );
    let r4 = result("c4");
    assert_eq!(r4["is_error"], true);
    assert_eq!(r4["exit_code"], 4);
}

/// A failed tool call's advice reaches the model in its own words: the user's names flags the
/// model cannot pass (positive control: the user's line names one).
#[test]
fn a_tool_results_advice_names_no_flag() {
    let home = TestHome::new();
    data_skill(&home);
    let server = Server::start([
        Reply::text(["Waiting."]).tool_call("s1", "data__slow", ["{}"]),
        Reply::text(["Done."]),
    ]);
    let out = home
        .cmd()
        .args(["chat", "--base-url", &server.url, "--model", "m"])
        .args(["--tools", "--allow-scripts", "-y", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("--allow-network"), "{}", stderr(&out));
    let msgs = server.requests()[1]["messages"].as_array().unwrap().clone();
    let m = msgs.iter().find(|m| m["tool_call_id"] == "s1").unwrap();
    let result: Value = serde_json::from_str(m["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["exit_code"], 124, "{result}");
    let hint = result["hint"].as_str().unwrap();
    assert!(
        hint.contains("allow_network") && !hint.contains("--"),
        "{hint}"
    );
}

#[test]
fn anthropic_tool_results_carry_is_error() {
    let home = TestHome::new();
    data_skill(&home);
    let server = Server::start([
        Reply::text(["Looking."])
            .tool_call("t1", "data__stats", [r#"{"input_path": "a.csv"}"#])
            .tool_call("t2", "data__fail", ["{}"]),
        Reply::text(["Done."]),
    ]);
    let out = home
        .cmd()
        .env("ANTHROPIC_API_KEY", "ak-test")
        .args([
            "chat",
            "--model",
            "anthropic:claude-test",
            "--base-url",
            &server.base,
        ])
        .args(["--tools", "--allow-scripts", "-y", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let rec = server.recorded();
    let tools = rec[0].body["tools"].as_array().unwrap();
    let stats = tools.iter().find(|t| t["name"] == "data__stats").unwrap();
    assert_eq!(stats["input_schema"]["required"], json!(["input_path"]));
    let msgs = rec[1].body["messages"].as_array().unwrap();
    let results: Vec<&Value> = msgs
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .filter(|b| b["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 2, "{msgs:?}");
    let ok = results.iter().find(|b| b["tool_use_id"] == "t1").unwrap();
    assert!(ok.get("is_error").is_none(), "{ok}");
    let failed = results.iter().find(|b| b["tool_use_id"] == "t2").unwrap();
    assert_eq!(failed["is_error"], true, "{failed}");
}

#[test]
fn run_json_always_prints_one_object_and_run_takes_an_agent() {
    let home = TestHome::new();
    data_skill(&home);
    // Refused by the policy.
    let (v, out) = run_json(
        &home,
        &["data", "stats", "--json", "--", "--input-path", "x"],
    );
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(v["success"], false);
    assert_eq!(v["decision"], "denied");
    assert!(
        v["refused"].as_str().unwrap().contains("--allow-scripts"),
        "{v}"
    );
    // Unknown script, bad --input: still one object.
    let (v, out) = run_json(&home, &["data", "nope", "--json", "--allow-scripts"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        v["refused"]
            .as_str()
            .unwrap()
            .contains("has no tool or script `nope`"),
        "{v}"
    );
    let (v, out) = run_json(&home, &["data", "stats", "--json", "--input", "{"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(v["decision"], "invalid", "{v}");
    assert!(
        v["refused"]
            .as_str()
            .unwrap()
            .contains("--input is not valid JSON"),
        "{v}"
    );
    // A command line the parser refuses: one object too, the exit still a usage error.
    let (v, out) = run_json(&home, &["data", "stats", "--json", "--workdir", "bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(v["error"].as_str().unwrap().contains("bogus"), "{v}");
    // The parser's whole message (which argument is missing), and a global flag first.
    let out = home
        .cmd()
        .args(["run", "--skills-dir", "skills", "data", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert!(v["error"].as_str().unwrap().contains("<SCRIPT>"), "{v}");
    // An argument that is no UTF-8 is no crash.
    use std::os::unix::ffi::OsStrExt;
    let out = home
        .cmd()
        .args(["run", "--json", "--bogus"])
        .arg(std::ffi::OsStr::from_bytes(b"\xff"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(serde_json::from_slice::<Value>(&out.stdout).is_ok());

    // An agent's policy applies to `run`; its max_output_bytes cut makes a named warning.
    home.write(
        "config/skillpipe/agents/big.toml",
        "name = \"big\"\ndescription = \"d\"\ninstructions = \"i\"\nskills = [\"data\"]\n\
         [script_policy]\nallow_scripts = true\nconfirm = \"never\"\nmax_output_bytes = 20\n",
    );
    let (v, out) = run_json(
        &home,
        &[
            "data",
            "stats",
            "--json",
            "--agent",
            "big",
            "--",
            "--input-path",
            "x",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(v["truncated"]["stdout"], true);
    let err = stderr(&out);
    assert!(
        err.contains("skill `data`, script `data:stats`: stdout was ")
            && err.contains("bytes, over max_output_bytes (20 bytes)"),
        "{err}"
    );
    assert_eq!(home.audit().last().unwrap()["agent"], "big");
}

/// A signal that stops `run --json` still leaves one JSON object on stdout, saying so.
#[test]
fn run_json_stopped_by_a_signal_prints_one_object() {
    let home = TestHome::new();
    data_skill(&home);
    let out = home.stop_once_started(
        &[
            "run",
            "data",
            "slow",
            "--json",
            "--allow-scripts",
            "-y",
            "--sandbox",
            "best-effort",
        ],
        b"",
        "data:slow",
    );
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}): {}", stdout(&out)));
    assert_eq!(v["success"], false);
    assert_eq!(v["interrupted"], "SIGTERM");
    assert!(
        stderr(&out).contains("stopped by SIGTERM"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn outputs_take_whole_stdout_json_and_audit_cuts_long_input() {
    let home = TestHome::new();
    data_skill(&home);
    let long = "x".repeat(400);
    let (v, out) = run_json(
        &home,
        &[
            "data",
            "stats",
            "--json",
            "--allow-scripts",
            "-y",
            "--",
            "--input-path",
            &long,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // Pretty-printed JSON on stdout is the outputs.
    assert_eq!(v["outputs"]["mode"], "strict");
    assert_eq!(v["outputs"]["got"]["input_path"], long.as_str());
    let stdin = home.audit()[0]["stdin"].as_str().unwrap().to_owned();
    assert_eq!(stdin.chars().count(), 256);
    assert!(
        stdin.starts_with("{\"input_path\":\"xxx") && stdin.ends_with('…'),
        "{stdin}"
    );
}

/// The sha256 of `bytes` as `sha256sum` prints it (an oracle apart from skillpipe's own).
fn sha256sum(bytes: &[u8]) -> String {
    use std::io::Write as _;
    let mut c = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = c.wait_with_output().unwrap();
    let hex = String::from_utf8_lossy(&out.stdout);
    format!("sha256:{}", hex.split_whitespace().next().unwrap())
}

/// An argument longer than the audit log keeps (a harmless start, then what it really does)
/// is cut there, and its whole length and sha256 are recorded; `run --json` carries the same.
/// Control: the kept text alone does not show the end that ran.
#[test]
fn a_cut_argument_keeps_its_length_and_digest_in_the_audit_and_run_json() {
    let home = TestHome::new();
    home.write(
        "config/skillpipe/skills/sh/SKILL.md",
        "---\nname: sh\ndescription: runs code\n---\nRun it.\n",
    );
    home.write(
        "config/skillpipe/skills/sh/scripts/eval.sh",
        "eval \"$1\"\n",
    );
    let code = format!("#{}\necho RAN-THE-END", " harmless comment".repeat(20));
    let (v, out) = run_json(
        &home,
        &[
            "sh",
            "eval.sh",
            "--json",
            "--allow-scripts",
            "-y",
            "--",
            &code,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(v["stdout"], "RAN-THE-END\n");
    let audit = home.audit();
    let logged = audit[0]["argv"][1].as_str().unwrap();
    assert!(!logged.contains("RAN-THE-END"), "{logged}");
    let want = serde_json::json!([{
        "arg": 1,
        "chars": code.chars().count(),
        "bytes": code.len(),
        "sha256": sha256sum(code.as_bytes()),
    }]);
    assert_eq!(audit[0]["argv_cut"], want, "{:?}", audit[0]);
    assert_eq!(v["cut"], want, "{v}");
    // A short argument is whole: nothing cut, nothing recorded.
    let (v, _) = run_json(
        &home,
        &[
            "sh",
            "eval.sh",
            "--json",
            "--allow-scripts",
            "-y",
            "--",
            "echo hi",
        ],
    );
    assert_eq!(v["cut"], serde_json::json!([]));
    assert!(
        home.audit()[1].get("argv_cut").is_none(),
        "{:?}",
        home.audit()
    );
}

#[test]
fn root_scripts_are_found_after_scripts_and_allowed_tools_are_listed() {
    let home = TestHome::new();
    home.write(
        "config/skillpipe/skills/greet/SKILL.md",
        "---\nname: greet\ndescription: Greets.\n---\nGreet.\n",
    );
    home.write(
        "config/skillpipe/skills/greet/hello.py",
        "# Say hello.\nprint('hello from the root')\n",
    );
    home.write(
        "config/skillpipe/skills/greet/scripts/other.sh",
        "echo other\n",
    );
    let out = home
        .cmd()
        .args(["skills", "show", "greet"])
        .output()
        .unwrap();
    let text = stdout(&out);
    let (a, b) = (
        text.find("scripts/other.sh").unwrap(),
        text.find("hello.py").unwrap(),
    );
    assert!(a < b, "scripts/ comes first: {text}");
    // Listed by the name a directive resolves.
    assert!(text.contains("greet:hello.py"), "{text}");
    // `scripts/*` covers scripts under scripts/ only; the hint names the root script by id.
    let out = home
        .cmd()
        .args(["filter", "--allow-scripts", "-y"])
        .write_stdin("!{greet:hello}\n")
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "\n");
    assert!(
        stderr(&out).contains("--allow 'greet:hello'"),
        "{}",
        stderr(&out)
    );
    let out = home
        .cmd()
        .args(["filter", "-y", "--allow", "greet:hello"])
        .write_stdin("!{greet:hello}\n")
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "hello from the root\n", "{}", stderr(&out));

    home.write(
        "config/skillpipe/skills/locked/SKILL.md",
        "---\nname: locked\ndescription: Read only.\nallowed-tools: Read Grep\n---\nRead.\n",
    );
    home.write("config/skillpipe/skills/locked/scripts/x.sh", "echo x\n");
    let (v, _) = run_json(&home, &["locked", "x", "--json", "--allow-scripts", "-y"]);
    let why = v["refused"].as_str().unwrap();
    assert!(
        why.contains("its allowed-tools (Read Grep) has no Bash entry"),
        "{why}"
    );
}

/// `run SKILL SCRIPT` runs a root script as the directive `SKILL:ID` would, under the same
/// pattern; the refusal's hint names a pattern that then lets it run, for each kind of target.
#[test]
fn run_takes_root_scripts_and_each_hint_names_a_working_pattern() {
    let home = TestHome::new();
    data_skill(&home);
    home.write(
        "config/skillpipe/skills/data/root.py",
        "# At the root.\nimport sys\nprint('root', sys.argv[1:])\n",
    );
    home.write(
        "config/skillpipe/skills/data/scripts/sub/deep.sh",
        "echo deep\n",
    );
    // An agent of the user's own narrows allowed_commands to nothing skill-related.
    home.write(
        "config/skillpipe/agents/narrow.toml",
        "name = \"narrow\"\ndescription = \"d\"\nskills = [\"data\"]\ninstructions = \"i\"\n\
         [script_policy]\nallow_scripts = true\nallowed_commands = [\"say\"]\n",
    );
    for (script, hint, expect) in [
        ("root", "data:root", "root []\n"),
        ("root.py", "data:root", "root []\n"),
        ("data:root", "data:root", "root []\n"),
        ("deep", "data/scripts/sub/deep.sh", "deep\n"),
        ("fail", "data:fail", ""),
    ] {
        let base = ["--agent", "narrow", "data", script, "-y"];
        let out = home.cmd().arg("run").args(base).output().unwrap();
        let err = stderr(&out);
        let quoted = format!("--allow '{hint}'");
        assert!(err.contains(&quoted), "{script}: {err}");
        let out = home
            .cmd()
            .arg("run")
            .args(base)
            .args(["--allow", hint])
            .output()
            .unwrap();
        assert_eq!(stdout(&out), expect, "{script}: {}", stderr(&out));
        if expect.is_empty() {
            // The tool `fail` ran: its own stderr, no refusal.
            assert!(stderr(&out).starts_with("broken\n"), "{}", stderr(&out));
        }
    }
}

/// Tool folders and `#!` lines written for other systems say `python`: it runs as `python3`, the
/// name `allowed_interpreters` knows. An interpreter that is really not allowed is refused with
/// the list and where to add it.
#[test]
fn runtime_python_runs_as_python3_and_a_missing_interpreter_says_how_to_allow_it() {
    let home = TestHome::new();
    data_skill(&home);
    home.write(
        "config/skillpipe/skills/data/tools/py/tool.yaml",
        "id: py\nruntime: python\nscript: py.py\ninput: args\n",
    );
    home.write(
        "config/skillpipe/skills/data/tools/py/py.py",
        "import sys\nprint('py', sys.version_info[0])\n",
    );
    home.write(
        "config/skillpipe/skills/data/scripts/bang",
        "#!/usr/bin/env python\nimport sys\nprint('bang', sys.version_info[0])\n",
    );
    home.write(
        "config/skillpipe/skills/data/scripts/pl",
        "#!/usr/bin/env perl\nprint 1;\n",
    );
    for (script, expect) in [("py", "py 3\n"), ("bang", "bang 3\n")] {
        let out = home
            .cmd()
            .args(["run", "data", script, "-y", "--allow-scripts"])
            .output()
            .unwrap();
        assert_eq!(stdout(&out), expect, "{script}: {}", stderr(&out));
    }
    let out = home
        .cmd()
        .args(["run", "data", "pl", "-y", "--allow-scripts"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(
        err.contains("interpreter `perl` is not in allowed_interpreters (python3, bash, sh, node)")
            && err.contains("allowed_interpreters under [script_policy]"),
        "{err}"
    );
}

/// skillpipe's own line after a script's stderr that ends mid-line starts a line of its own,
/// on a pipe too; the script's bytes are all there, in order.
#[test]
fn a_notice_after_stderr_without_a_final_newline_starts_its_own_line() {
    let home = TestHome::new();
    home.write(
        "config/skillpipe/skills/files/SKILL.md",
        "---\nname: files\ndescription: Opens files.\n---\nOpen.\n",
    );
    home.write(
        "config/skillpipe/skills/files/scripts/opener.py",
        "import sys\nsys.stderr.write('cannot open ' + sys.argv[1])\nsys.exit(1)\n",
    );
    // Where skillpipe runs, not in the skill's folder: the run fails and a hint follows.
    home.write("data.csv", "a,b\n");
    let out = home
        .cmd()
        .args([
            "run",
            "files",
            "opener",
            "-y",
            "--allow-scripts",
            "--",
            "data.csv",
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(
        err.starts_with("cannot open data.csv\nskillpipe: "),
        "{err:?}"
    );
}

#[test]
fn an_agent_folder_holds_tools_in_the_same_layout() {
    let home = TestHome::new();
    home.write(
        "config/skillpipe/agents/quizzer.toml",
        "name = \"quizzer\"\ndescription = \"Asks questions\"\ninstructions = \"Quiz me.\"\n\
         [script_policy]\nallow_scripts = true\nconfirm = \"never\"\n",
    );
    home.write(
        "config/skillpipe/agents/quizzer/tools/pick/tool.yaml",
        "id: pick\nscript: pick.sh\ndescription: Pick a question.\n",
    );
    home.write(
        "config/skillpipe/agents/quizzer/tools/pick/schema.json",
        r#"{"type": "object", "properties": {"level": {"type": "integer"}}, "required": ["level"]}"#,
    );
    home.write(
        "config/skillpipe/agents/quizzer/tools/pick/pick.sh",
        "cat\n",
    );
    let out = home
        .cmd()
        .args(["filter", "--agent", "quizzer"])
        .write_stdin("Q: !{quizzer:pick --level 3}\n")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Q: {\"level\":3}\n");
    let out = home
        .cmd()
        .args(["agents", "show", "quizzer"])
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains("| quizzer:pick --level INTEGER | Pick a question. |"),
        "{}",
        stdout(&out)
    );
    let (v, _) = run_json(
        &home,
        &[
            "quizzer", "pick", "--json", "--agent", "quizzer", "--", "--level", "x",
        ],
    );
    assert!(
        v["refused"].as_str().unwrap().contains("field `level`"),
        "{v}"
    );
    // A broken tool of the agent: the refusal names the folder, and validating that folder
    // shows the problem with file and line.
    home.write(
        "config/skillpipe/agents/quizzer/tools/bad/tool.yaml",
        "id: bad\nscript: pick.sh\nenabeld: true\n",
    );
    let out = home
        .cmd()
        .args(["filter", "--agent", "quizzer"])
        .write_stdin("!{quizzer:bad}\n")
        .output()
        .unwrap();
    let folder = home.path().join("config/skillpipe/agents/quizzer");
    let folder = folder.canonicalize().unwrap();
    let want = format!("`skillpipe skills validate {}`", folder.display());
    assert!(
        stderr(&out).contains("tool `bad` of `quizzer` exists but was skipped")
            && stderr(&out).contains(&want),
        "{}",
        stderr(&out)
    );
    let out = home
        .cmd()
        .args(["skills", "validate"])
        .arg(&folder)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("tools/bad/tool.yaml:3: unknown key `enabeld`"),
        "{}",
        stdout(&out)
    );
    // A collection that holds a skill named `tools` is still validated skill by skill.
    home.write(
        "col/tools/SKILL.md",
        "---\nname: tools\ndescription: Tools.\n---\nBody.\n",
    );
    home.write("col/bad/SKILL.md", "---\nname: Bad_Name\n---\nBody.\n");
    let out = home
        .cmd()
        .args(["skills", "validate", "col"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("col/bad/SKILL.md"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_script_with_a_schema_beside_it_reads_typed_json() {
    let home = TestHome::new();
    home.write(
        "config/skillpipe/skills/conv/SKILL.md",
        "---\nname: conv\ndescription: Converts units.\n---\nConvert.\n",
    );
    home.write(
        "config/skillpipe/skills/conv/scripts/convert.py",
        "# Convert a length.\n\nimport json, sys\nd = json.load(sys.stdin)\nprint(d['value'] * 1000, d['to_unit'])\n",
    );
    home.write(
        "config/skillpipe/skills/conv/scripts/convert.schema.json",
        r#"{"type": "object",
            "properties": {"value": {"type": "number"}, "to_unit": {"enum": ["m", "cm"]}},
            "required": ["value", "to_unit"]}"#,
    );
    let out = home
        .cmd()
        .args(["filter", "--allow-scripts", "-y"])
        .write_stdin("!{scripts/convert.py --value 3 --to-unit m} / !{conv:convert --value 1 --to-unit mm}\n")
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "3000 m / \n", "{}", stderr(&out));
    assert!(
        stderr(&out).contains("field `to_unit`: \"mm\" is not one of"),
        "{}",
        stderr(&out)
    );
    let server = Server::start([Reply::text(["ok"])]);
    let out = home
        .cmd()
        .args(["chat", "--base-url", &server.url, "--model", "m"])
        .args(["--skill", "conv", "--tools", "--allow-scripts", "-y", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let req = &server.requests()[0];
    let system = req["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("| scripts/convert.py --value NUMBER --to-unit TEXT | Convert a length. |"),
        "{system}"
    );
    let tool = &req["tools"][0]["function"];
    assert_eq!(tool["name"], "conv__convert");
    assert_eq!(tool["parameters"]["required"], json!(["value", "to_unit"]));
}

/// `run --input` reads its JSON as a native tool call's arguments: a tool's input with or
/// without the `input` wrapper, a plain script's `input` (or bare keys) on stdin and its `args`
/// as argv; and a schema's flags are listed in the schema's own property order.
#[test]
fn run_input_is_read_like_native_tool_arguments() {
    let home = TestHome::new();
    data_skill(&home);
    let allow = ["--allow-scripts", "-y"];
    for input in [
        r#"{"input_path": "a.csv", "threshold": 0.5}"#,
        r#"{"input": {"input_path": "a.csv", "threshold": 0.5}}"#,
    ] {
        let (v, out) = run_json(
            &home,
            &[
                "data", "stats", "--json", "--input", input, allow[0], allow[1],
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{input}: {}", stderr(&out));
        assert_eq!(
            v["outputs"]["got"],
            json!({"input_path": "a.csv", "threshold": 0.5}),
            "{input}"
        );
    }
    // A wrapper next to other keys is a field, refused by the closed schema, naming it.
    let (v, out) = run_json(
        &home,
        &[
            "data",
            "stats",
            "--json",
            "--input",
            r#"{"input": {"input_path": "a.csv"}, "verbose": true}"#,
            allow[0],
            allow[1],
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(v["refused"].as_str().unwrap().contains("input"), "{v}");

    // A plain script: `input` or the bare keys on stdin, `args` before the ones after `--`.
    home.write(
        "config/skillpipe/skills/data/scripts/echo.py",
        "import sys\nprint(sys.stdin.read() + ' ' + ' '.join(sys.argv[1:]))\n",
    );
    for (input, expected) in [
        (r#"{"input": {"a": 1}}"#, r#"{"a":1} x y"#),
        (r#"{"a": 1}"#, r#"{"a":1} x y"#),
        (r#"{"args": ["w"], "input": {"a": 1}}"#, r#"{"a":1} w x y"#),
    ] {
        let out = home
            .cmd()
            .args(["run", "data", "echo", "--input", input])
            .args(allow)
            .args(["--", "x", "y"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{input}: {}", stderr(&out));
        assert_eq!(stdout(&out).trim(), expected, "{input}");
    }

    // Flags in the schema's order (here not alphabetical), in `skills show` and the usage.
    home.write(
        "config/skillpipe/skills/data/tools/order/tool.yaml",
        "id: order\nscript: run.sh\n",
    );
    home.write("config/skillpipe/skills/data/tools/order/run.sh", "cat\n");
    home.write(
        "config/skillpipe/skills/data/tools/order/schema.json",
        r#"{"type": "object", "properties": {"zeta": {"type": "string"},
            "alpha": {"type": "integer"}, "mid": {"type": "boolean"}}, "required": ["zeta"]}"#,
    );
    let out = home
        .cmd()
        .args(["skills", "show", "data"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("usage: !{data:order --zeta TEXT [--alpha INTEGER] [--mid]}"),
        "{text}"
    );
}

/// A skill whose allowed-tools has no Bash: its scripts are not in the system prompt (full or
/// catalog) nor offered as tools, and a native call to one anyway is refused with the
/// allowed-tools reason, not as an unknown tool.
#[test]
fn a_skill_whose_allowed_tools_forbid_scripts_shows_none_and_says_why() {
    let home = TestHome::new();
    home.write(
        "config/skillpipe/skills/locked/SKILL.md",
        "---\nname: locked\ndescription: locked skill\nallowed-tools: Read\n---\nRead only.\n",
    );
    home.write(
        "config/skillpipe/skills/locked/scripts/hi.sh",
        "# Say hi.\necho hi\n",
    );
    home.write(
        "config/skillpipe/skills/open/SKILL.md",
        "---\nname: open\ndescription: open skill\n---\nRuns.\n",
    );
    home.write(
        "config/skillpipe/skills/open/scripts/yo.sh",
        "# Say yo.\necho yo\n",
    );
    for named in [&["--skill", "locked", "--skill", "open"][..], &[][..]] {
        let server = Server::start([
            Reply::text(["Trying."]).tool_call("c1", "locked__hi", ["{}"]),
            Reply::text(["Done."]),
        ]);
        let out = home
            .cmd()
            .args(["chat", "--base-url", &server.url, "--model", "m"])
            .args(["--tools", "--allow-scripts", "-y", "go"])
            .args(named)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let reqs = server.requests();
        let system = reqs[0]["messages"][0]["content"].as_str().unwrap();
        assert!(!system.contains("hi.sh"), "{system}");
        // Positive control: the other skill's script is listed.
        assert!(system.contains("scripts/yo.sh"), "{system}");
        let msgs = reqs[1]["messages"].as_array().unwrap();
        let m = msgs.iter().find(|m| m["tool_call_id"] == "c1").unwrap();
        let r: Value = serde_json::from_str(m["content"].as_str().unwrap()).unwrap();
        assert_eq!(r["is_error"], true);
        let why = r["error"].as_str().unwrap();
        assert!(
            why.contains("its allowed-tools (Read) has no Bash entry"),
            "{why}"
        );
        assert!(!why.contains("unknown tool"), "{why}");
    }
}

/// A script at the skill root, written as a SKILL.md body or a model would (its file name,
/// `SKILL/FILE`, behind an interpreter): every refusal names it `SKILL:FILE` and suggests a
/// pattern under which the very same directive then runs; listings name it so too.
#[test]
fn a_root_script_is_named_and_allowed_by_a_reference_that_resolves() {
    let home = TestHome::new();
    home.write(
        "config/skillpipe/skills/data/SKILL.md",
        "---\nname: data\ndescription: Data.\n---\nRun rootscript.sh.\n",
    );
    home.write(
        "config/skillpipe/skills/data/rootscript.sh",
        "# Echo at the root.\necho root \"$@\"\n",
    );
    for directive in [
        "!{rootscript.sh a}",
        "!{data/rootscript.sh a}",
        "!{data:rootscript a}",
        "!{sh rootscript.sh a}",
        "!{bash data/rootscript.sh a}",
    ] {
        let out = home
            .cmd()
            .args(["filter", "--allow-scripts", "-y"])
            .write_stdin(format!("{directive}\n"))
            .output()
            .unwrap();
        let err = stderr(&out);
        assert!(
            err.contains("`data:rootscript.sh a` is not in allowed_commands (allow it with --allow 'data:rootscript')"),
            "{directive}: {err}"
        );
        let out = home
            .cmd()
            .args(["filter", "-y", "--allow", "data:rootscript"])
            .write_stdin(format!("{directive}\n"))
            .output()
            .unwrap();
        assert_eq!(stdout(&out), "root a\n", "{directive}: {}", stderr(&out));
    }
    // A file name that is no root script stays a system command.
    let out = home
        .cmd()
        .args(["filter", "--allow-scripts", "-y"])
        .write_stdin("!{other.sh a}\n")
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("(allow it with --allow 'other.sh')"),
        "{}",
        stderr(&out)
    );
}

/// Placeholders that stand for the skill folder in real SKILL.md files (OpenAI's gh-fix-ci
/// writes `python "<path-to-skill>/scripts/inspect_pr_checks.py" --repo .`) are that skill's
/// script, under `scripts/*`.
#[test]
fn a_skill_folder_placeholder_in_front_of_a_script_is_that_script() {
    let home = TestHome::new();
    home.write(
        "config/skillpipe/skills/gh-fix-ci/SKILL.md",
        "---\nname: gh-fix-ci\ndescription: Fix CI.\n---\nRun `python \"<path-to-skill>/scripts/inspect_pr_checks.py\" --repo \".\"`.\n",
    );
    home.write(
        "config/skillpipe/skills/gh-fix-ci/scripts/inspect_pr_checks.py",
        "import sys\nprint('inspect', sys.argv[1:])\n",
    );
    for directive in [
        "!{python \"<path-to-skill>/scripts/inspect_pr_checks.py\" --repo .}",
        "!{python3 {baseDir}/scripts/inspect_pr_checks.py --repo .}",
        "!{python '$SKILL_DIR/scripts/inspect_pr_checks.py' --repo .}",
        "!{python \"<gh-fix-ci-path>/scripts/inspect_pr_checks.py\" --repo .}",
        "!{\"<path-to-skill>/scripts/inspect_pr_checks.py\" --repo .}",
    ] {
        let out = home
            .cmd()
            .args(["filter", "--allow-scripts", "-y"])
            .write_stdin(format!("{directive}\n"))
            .output()
            .unwrap();
        assert_eq!(
            stdout(&out),
            "inspect ['--repo', '.']\n",
            "{directive}: {}",
            stderr(&out)
        );
    }
    // A placeholder path no loaded skill has is said so, not run as a call of python.
    let out = home
        .cmd()
        .args(["filter", "--allow-scripts", "-y"])
        .write_stdin("!{python \"<path-to-skill>/scripts/nope.py\"}\n")
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("invalid: ")
            && stderr(&out).contains("no loaded skill has scripts/nope.py"),
        "{}",
        stderr(&out)
    );
    // Unquoted, a `$` form is shell syntax: refused, saying how to write it.
    let out = home
        .cmd()
        .args(["filter", "--allow-scripts", "-y"])
        .write_stdin("!{python $SKILL_DIR/scripts/inspect_pr_checks.py}\n")
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains(
            "`$SKILL_DIR` stands for the skill's folder: write the script's path without it"
        ),
        "{}",
        stderr(&out)
    );
    // Control: without the placeholder the same path is the user's own file, not run.
    let out = home
        .cmd()
        .args(["filter", "--allow-scripts", "-y"])
        .write_stdin("!{python \"<elsewhere>/scripts/inspect_pr_checks.py\"}\n")
        .output()
        .unwrap();
    assert!(stderr(&out).contains("blocked"), "{}", stderr(&out));
}

/// A tool folder with neither description.md nor a `description` key is described by its
/// script's doc comment, as a plain script is (in the prompt, --tools and `skills show`).
#[test]
fn a_tool_without_a_description_is_described_by_its_script() {
    let home = TestHome::new();
    home.write(
        "config/skillpipe/skills/calc/SKILL.md",
        "---\nname: calc\ndescription: Sums.\n---\nAdd.\n",
    );
    home.write(
        "config/skillpipe/skills/calc/tools/add/tool.yaml",
        "id: add\nscript: add.py\n",
    );
    home.write(
        "config/skillpipe/skills/calc/tools/add/add.py",
        "#!/usr/bin/env python3\n\"\"\"Add two numbers from the JSON input.\"\"\"\nimport json, sys\n",
    );
    let server = Server::start([Reply::text(["ok"])]);
    let out = home
        .cmd()
        .args(["chat", "--base-url", &server.url, "--model", "m"])
        .args(["--tools", "--allow-scripts", "--skill", "calc", "go"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let req = &server.requests()[0];
    let system = req["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("| calc:add [--KEY VALUE]... | Add two numbers from the JSON input. |"),
        "{system}"
    );
    let tool = req["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "calc__add")
        .unwrap();
    assert_eq!(
        tool["function"]["description"],
        "Add two numbers from the JSON input. (tool add of skill calc)"
    );
    let out = home
        .cmd()
        .args(["skills", "show", "calc"])
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains("Add two numbers from the JSON input."),
        "{}",
        stdout(&out)
    );
}

/// A refused tool is named the way a pattern allows it (`AGENT:ID`, `SKILL:ID`), also when the
/// directive wrote its script's path (`python3 SKILL/tools/ID/FILE`): that path is the tool.
#[test]
fn a_refused_tool_is_named_as_it_is_allowed_also_when_written_by_its_path() {
    let home = TestHome::new();
    data_skill(&home);
    home.write(
        "config/skillpipe/agents/tt.toml",
        "name = \"tt\"\ndescription = \"d\"\nskills = [\"data\"]\ninstructions = \"i\"\n\
         [script_policy]\nallow_scripts = true\nconfirm = \"never\"\nallowed_commands = [\"say\"]\n",
    );
    home.write(
        "config/skillpipe/agents/tt/tools/hello/tool.yaml",
        "id: hello\nscript: hello.sh\ninput: args\n",
    );
    home.write(
        "config/skillpipe/agents/tt/tools/hello/hello.sh",
        "echo hello \"$@\"\n",
    );
    let filter = |body: &str, extra: &[&str]| {
        home.cmd()
            .args(["filter", "--agent", "tt"])
            .args(extra)
            .write_stdin(format!("{body}\n"))
            .output()
            .unwrap()
    };
    let out = filter("!{tt:hello x}", &[]);
    let err = stderr(&out);
    assert!(
        err.contains("`tt:hello x` is not in allowed_commands (allow it with --allow 'tt:hello')"),
        "{err}"
    );
    assert!(!err.contains("scripts/hello"), "{err}");
    // The pattern named works (the positive control).
    let out = filter("!{tt:hello x}", &["--allow", "tt:hello"]);
    assert_eq!(stdout(&out), "hello x\n", "{}", stderr(&out));

    // The tool's script by its path, from the skills folder (as a listing shows it) and by
    // its absolute path: the tool `data:stats`, refused under that name.
    let skills = home.path().join("config/skillpipe/skills");
    let abs = skills.join("data/tools/stats/stats.py");
    for path in ["data/tools/stats/stats.py", abs.to_str().unwrap()] {
        let body = format!("!{{python3 {path} --input-path a.csv}}");
        let out = home
            .cmd()
            .current_dir(&skills)
            .args(["filter", "--agent", "tt"])
            .write_stdin(format!("{body}\n"))
            .output()
            .unwrap();
        let err = stderr(&out);
        assert!(
            err.contains("`data:stats --input-path a.csv` is not in allowed_commands (allow it with --allow 'data:stats')"),
            "{path}: {err}"
        );
        let out = home
            .cmd()
            .current_dir(&skills)
            .args(["filter", "--agent", "tt", "--allow", "data:stats"])
            .write_stdin(format!("{body}\n"))
            .output()
            .unwrap();
        let v: Value = serde_json::from_str(&stdout(&out))
            .unwrap_or_else(|e| panic!("{path}: {e}: {}{}", stdout(&out), stderr(&out)));
        assert_eq!(v["got"], json!({"input_path": "a.csv"}), "{path}");
    }
}

/// A tool folder as claude-prompts-mcp ships them: `timeout` in milliseconds, `runtime: auto`
/// (by extension) and `shell`, an `execution` block whose `confirm: true` asks before each run
/// even under -y. Loads, validates and runs; what could never run is refused by `skills
/// validate`, not at run time.
#[test]
fn claude_prompts_mcp_tool_folders_load_and_run() {
    let home = TestHome::new();
    home.write(
        "config/skillpipe/skills/cp/SKILL.md",
        "---\nname: cp\ndescription: Tools in claude-prompts-mcp's layout.\n---\nUse them.\n",
    );
    home.write(
        "config/skillpipe/skills/cp/tools/letters/tool.yaml",
        "# Counts letters.\nid: letters\nname: Letter counter\nruntime: auto\nscript: count.py\n\
         timeout: 5000\nenabled: true\n\nexecution:\n  trigger: schema_match\n  confirm: true\n  \
         strict: false\n",
    );
    home.write(
        "config/skillpipe/skills/cp/tools/letters/schema.json",
        r#"{"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}"#,
    );
    home.write(
        "config/skillpipe/skills/cp/tools/letters/count.py",
        "import json, sys\nprint(json.dumps({\"letters\": len(json.load(sys.stdin)[\"word\"])}))\n",
    );
    home.write(
        "config/skillpipe/skills/cp/tools/which/tool.yaml",
        "id: which\nname: Which shell\nruntime: shell\nscript: which\ninput: args\n\
         execution:\n  trigger: explicit\n",
    );
    home.write(
        "config/skillpipe/skills/cp/tools/which/which",
        "[ -n \"$BASH_VERSION\" ] && echo bash\n",
    );
    let out = home
        .cmd()
        .args(["skills", "validate", "cp"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let out = home.cmd().args(["skills", "show", "cp"]).output().unwrap();
    let text = stdout(&out);
    assert!(text.contains("    timeout: 5 s\n"), "{text}");
    assert!(
        text.contains("    confirm: asked before each run"),
        "{text}"
    );
    assert!(text.contains("    runtime: bash\n"), "{text}");

    // `shell` runs under bash; `trigger: explicit` is how every tool runs here (called by name).
    let filter = |body: &str| {
        home.cmd()
            .args(["filter", "--allow-scripts", "-y"])
            .write_stdin(format!("{body}\n"))
            .output()
            .unwrap()
    };
    let out = filter("!{cp:which}");
    assert_eq!(stdout(&out), "bash\n", "{}", stderr(&out));
    // The tool asks even under -y; with no terminal to ask on, it is declined, saying why
    // (and not advising -y, which cannot help).
    let out = filter("!{cp:letters --word hello}");
    let err = stderr(&out);
    assert_eq!(stdout(&out), "\n", "{err}");
    assert!(
        err.contains(
            "tool `cp:letters` asks to be confirmed before each run (execution.confirm in its \
             tool.yaml; -y does not lift that), and it could not be asked: no terminal"
        ),
        "{err}"
    );
    assert!(!err.contains("pass -y"), "{err}");
    // Without the question (the positive control) it runs, by its extension's interpreter.
    home.write(
        "config/skillpipe/skills/cp/tools/letters/tool.yaml",
        "id: letters\nruntime: auto\nscript: count.py\ntimeout: 5000\n",
    );
    let out = filter("!{cp:letters --word hello}");
    assert_eq!(stdout(&out), "{\"letters\": 5}\n", "{}", stderr(&out));

    // A script whose interpreter nothing names is refused by validate, with its line.
    home.write(
        "config/skillpipe/skills/cp/tools/which/tool.yaml",
        "id: which\nruntime: auto\nscript: which\n",
    );
    let out = home
        .cmd()
        .args(["skills", "validate", "cp"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("tools/which/tool.yaml:3: key `script`: no interpreter for `which`"),
        "{}",
        stdout(&out)
    );
}

/// No test reaches the terminal the tests run in. This test runs itself again on a pty of its
/// own (as `cargo test` in a terminal runs), and there starts skillpipe the way every test
/// does ([`TestHome::cmd`], the shared detaching helper) with a command that asks for
/// confirmation: nothing is drawn on that terminal, and the command is declined for want of
/// one. Control: the same skillpipe started without the helper opens the terminal and asks
/// there.
#[test]
fn no_test_reaches_the_terminal_it_runs_in() {
    if let Some(how) = std::env::var_os("SKILLPIPE_TEST_ON_PTY") {
        let home = TestHome::new();
        let out = if how == "detached" {
            home.cmd()
                .args(["filter", "--allow", "echo"])
                .write_stdin("a %{echo hi} b\n")
                .output()
                .unwrap()
        } else {
            // The control: what a test did before the helper (no new session).
            let mut c = std::process::Command::new(common::spawn::BIN);
            c.env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", home.path())
                .env("LANG", "C.UTF-8")
                .env("XDG_STATE_HOME", home.path().join("state"))
                .env("XDG_CONFIG_HOME", home.path().join("config"))
                .current_dir(home.path())
                .args(["filter", "--allow", "echo"]);
            assert_cmd::Command::from_std(c)
                .write_stdin("a %{echo hi} b\n")
                .output()
                .unwrap()
        };
        let rec = &home.audit()[0];
        println!("DECISION={} EXIT={:?}", rec["decision"], out.status.code());
        println!("REASON={}", rec["reason"]);
        return;
    }
    for (how, asked) in [("detached", false), ("attached", true)] {
        let mut c = std::process::Command::new(std::env::current_exe().unwrap());
        c.args([
            "--exact",
            "tools::no_test_reaches_the_terminal_it_runs_in",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SKILLPIPE_TEST_ON_PTY", how);
        let mut p = pty::Pty::spawn(c);
        if asked {
            p.expect("(Enter = no)");
            // Past the prompt's guard against keys typed ahead.
            std::thread::sleep(std::time::Duration::from_millis(400));
            p.send(b"n");
        }
        assert!(p.wait_exit().success(), "{how}: {}", p.text());
        let text = p.text();
        assert_eq!(text.contains("(Enter = no)"), asked, "{how}: {text}");
        assert!(text.contains("DECISION=\"declined\""), "{how}: {text}");
        if !asked {
            assert!(text.contains("no terminal"), "{how}: {text}");
        }
    }
}
