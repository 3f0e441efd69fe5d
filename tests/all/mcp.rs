//! `skillpipe mcp` driven over stdio the way an MCP client drives it: initialize, list and call
//! tools (allowed, refused, failing, timed out, cancelled, concurrent), ask for consent by
//! elicitation, list and read the skill resources, and survive malformed input and a client that
//! goes away mid-call.

use crate::common;

use common::TestHome;
use common::procs::{eventually, processes_named};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Answers the server's `elicitation/create` params with a result.
type Elicit = Box<dyn FnMut(&Value) -> Value>;

struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    next_id: i64,
    elicit: Option<Elicit>,
    /// Messages that arrived while waiting for another one.
    early: Vec<Value>,
    /// The elicitation requests the server sent.
    asked: Vec<Value>,
}

const WAIT: Duration = Duration::from_secs(20);

impl Client {
    fn start(home: &TestHome, args: &[&str]) -> Client {
        Client::start_with(home, args, None)
    }

    /// Spawns the server and initializes the session (declaring elicitation if `elicit`).
    fn start_with(home: &TestHome, args: &[&str], elicit: Option<Elicit>) -> Client {
        Client::start_logged(home, args, elicit, Stdio::null())
    }

    /// [`Client::start_with`], the server's stderr going to `stderr`.
    fn start_logged(
        home: &TestHome,
        args: &[&str],
        elicit: Option<Elicit>,
        stderr: Stdio,
    ) -> Client {
        let caps = if elicit.is_some() {
            json!({"elicitation": {}})
        } else {
            json!({})
        };
        let mut c = Client::spawn(home, args, elicit, stderr);
        let init = c.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": caps,
                   "clientInfo": {"name": "test", "version": "1"}}),
        );
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
        c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c
    }

    /// Spawns the server and sends nothing.
    fn spawn(home: &TestHome, args: &[&str], elicit: Option<Elicit>, stderr: Stdio) -> Client {
        let mut child = server_cmd(home, args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn skillpipe mcp");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("server wrote a line that is not JSON ({e}): {line}")
                });
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            lines,
            next_id: 0,
            elicit,
            early: Vec::new(),
            asked: Vec::new(),
        }
    }

    /// A request of the 2026-07-28 revision: its own version, capabilities and identity in
    /// `_meta`, no session.
    fn modern(&mut self, method: &str, mut params: Value, caps: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": caps,
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        });
        self.request(method, params)
    }

    /// A modern `tools/call`, retried while the server asks for input: each question is
    /// answered by `elicit` and sent back in `inputResponses` on a new request.
    fn modern_call(&mut self, name: &str, arguments: Value) -> Value {
        let caps = json!({"elicitation": {"form": {}}});
        let mut params = json!({"name": name, "arguments": arguments});
        loop {
            let r = self.modern("tools/call", params.clone(), caps.clone());
            let Some(result) = r.get("result") else {
                return r;
            };
            if result["resultType"] != "input_required" {
                assert_eq!(result["resultType"], "complete", "{r}");
                return r;
            }
            let mut responses = json!({});
            for (key, req) in result["inputRequests"].as_object().unwrap() {
                assert_eq!(req["method"], "elicitation/create", "{r}");
                self.asked.push(req["params"].clone());
                let elicit = self.elicit.as_mut().expect("no elicitation declared");
                responses[key] = elicit(&req["params"]);
            }
            params["inputResponses"] = responses;
            assert!(result.get("requestState").is_none(), "{r}");
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, msg: &Value) {
        self.send_raw(msg.to_string().as_bytes());
    }

    /// Sends a request without waiting; returns its id.
    fn start_request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start_request(method, params);
        self.wait_for(&id)
    }

    /// The next message from the server, answering its elicitations on the way.
    fn next(&mut self) -> Value {
        loop {
            let msg = self
                .lines
                .recv_timeout(WAIT)
                .expect("the server answered in time");
            if msg.get("method") == Some(&json!("elicitation/create")) {
                self.asked.push(msg["params"].clone());
                let result =
                    (self.elicit.as_mut().expect("no elicitation declared"))(&msg["params"]);
                self.send(&json!({"jsonrpc": "2.0", "id": msg["id"], "result": result}));
                continue;
            }
            return msg;
        }
    }

    /// The response to request `id` (other messages are kept for later).
    fn wait_for(&mut self, id: &Value) -> Value {
        if let Some(i) = self.early.iter().position(|m| &m["id"] == id) {
            return self.early.remove(i);
        }
        loop {
            let msg = self.next();
            if &msg["id"] == id {
                return msg;
            }
            self.early.push(msg);
        }
    }

    /// A tools/call's result.
    fn call(&mut self, name: &str, arguments: Value) -> Value {
        let r = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        r.get("result")
            .cloned()
            .unwrap_or_else(|| panic!("no result: {r}"))
    }

    /// Closes stdin and waits (bounded) for the server to exit.
    fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        wait_exit(&mut self.child)
    }
}

/// `skillpipe mcp` on the skills of `home` with a clean environment.
fn server_cmd(home: &TestHome, args: &[&str]) -> Command {
    let mut c = common::spawn::skillpipe();
    c.arg("mcp")
        .args(["--skills-dir", "skills", "--sandbox", "best-effort"])
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("LANG", "C.UTF-8")
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .current_dir(home.path());
    c
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "the server did not exit");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or("")
}

fn script(home: &TestHome, name: &str, body: &str) {
    let p = home.write(&format!("skills/t/scripts/{name}"), body);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A skill `t` with scripts for every kind of outcome and a reference file.
fn setup() -> TestHome {
    let home = TestHome::new();
    home.write(
        "skills/t/SKILL.md",
        "---\nname: t\ndescription: Test tools for the MCP server\nargument-hint: \"[file]\"\n\
         disable-model-invocation: true\nmetadata:\n  version: 1.2\n---\nCall t__echo to echo.\n",
    );
    home.write("skills/t/references/guide.md", "# Guide\nRead me.\n");
    script(
        &home,
        "echo.sh",
        "#!/bin/bash\n# Echo the arguments and the JSON on stdin.\n\n\
         echo \"args: $*\"\nin=$(cat)\n[ -n \"$in\" ] && echo \"stdin: $in\"\necho '{\"count\": '$#'}'\n",
    );
    script(
        &home,
        "fail.sh",
        "#!/bin/bash\n# Fail on purpose.\necho partial\necho boom >&2\nexit 3\n",
    );
    script(
        &home,
        "slow.sh",
        "#!/bin/bash\n# Take too long.\nsleep 30\n",
    );
    script(
        &home,
        "orphan.sh",
        "#!/bin/bash\n# Leave a grandchild behind, then wait.\n\
         setsid bash -c 'exec -a \"$1\" sleep 30' _ \"$1\" </dev/null >/dev/null 2>&1 &\n\
         exec -a \"$1-parent\" sleep 30\n",
    );
    script(
        &home,
        "barrier.sh",
        "#!/bin/bash\n# Meet another call: mark DIR/ME, wait for DIR/OTHER.\n\
         touch \"$1/$2\"\nfor i in $(seq 1000); do [ -e \"$1/$3\" ] && { echo met; exit 0; }; sleep 0.01; done\n\
         echo alone; exit 1\n",
    );
    home
}

fn audit_for(home: &TestHome, script: &str) -> Vec<Value> {
    home.audit()
        .into_iter()
        .filter(|r| r["argv"][0].as_str().is_some_and(|a| a.contains(script)))
        .collect()
}

/// An argument the audit log cuts: the tool result carries the whole length and digest the
/// log's line records (`_meta`), the same figures `run --json` gives.
#[test]
fn a_cut_argument_carries_the_audits_digest() {
    let home = setup();
    let mut c = Client::start(&home, &["--allow-scripts", "-y"]);
    let long = "y".repeat(300);
    let ok = c.call("t__echo", json!({"args": [long]}));
    assert_eq!(ok["isError"], false, "{ok}");
    let rec = &audit_for(&home, "echo")[0];
    assert_eq!(rec["argv_cut"][0]["arg"], 1, "{rec}");
    assert_eq!(rec["argv_cut"][0]["chars"], 300, "{rec}");
    assert_eq!(ok["_meta"]["skillpipe/cut"], rec["argv_cut"], "{ok}");
    // Control: a short argument, nothing cut.
    let short = c.call("t__echo", json!({"args": ["y"]}));
    assert!(short.get("_meta").is_none(), "{short}");
}

/// An operator's notice (here: the look for `.env` files below the working directory stopped
/// at its bound) goes to the server's stderr, never into the tool result the client's model
/// reads. Control: the notice is there, on stderr, for the same run.
#[test]
fn an_operators_notice_goes_to_stderr_not_into_the_result() {
    let home = setup();
    for i in 0..4100 {
        home.write(&format!("bulk/f{i}"), "");
    }
    let log = home.path().join("server.err");
    let file = std::fs::File::create(&log).unwrap();
    // The scripts work where the server was started, so that folder is in their view and
    // walked for .env files.
    let flags = ["--allow-scripts", "-y", "--workdir", "caller"];
    let mut c = Client::start_logged(&home, &flags, None, file.into());
    let ok = c.call("t__echo", json!({"args": ["a"]}));
    assert_eq!(ok["isError"], false, "{ok}");
    assert_eq!(text(&ok), "args: a\n{\"count\": 1}\n", "{ok}");
    let again = c.call("t__echo", json!({"args": ["b"]}));
    assert_eq!(text(&again), "args: b\n{\"count\": 1}\n", "{again}");
    c.close();
    let stderr = std::fs::read_to_string(&log).unwrap();
    let rec = &audit_for(&home, "echo")[0];
    if rec["sandbox"]
        .as_str()
        .is_none_or(|s| !s.contains("mounts"))
    {
        eprintln!("skipped the control: no private mounts here ({rec}), so no .env notice");
        return;
    }
    assert!(
        stderr.contains("skillpipe mcp: warning: looked for .env files in the first"),
        "{stderr}"
    );
}

/// A script whose doc comment runs past the description limit is offered cut at a sentence,
/// with an ellipsis, never inside a word or a character.
#[test]
fn long_tool_descriptions_are_cut_at_a_boundary() {
    let home = setup();
    let doc = "Überträgt jede Tabelle einer Arbeitsmappe in CSV-Dateien, eine je Blatt. \
               Formeln werden mit den gespeicherten Werten übernommen; verbundene Zellen \
               erhalten den Wert ihrer Zelle oben links. Datumsangaben erscheinen als \
               ISO-Datum, Zahlen ohne Tausendertrennzeichen. Der Ausgabeordner wird angelegt, \
               wenn er fehlt; vorhandene Dateien werden ersetzt — außer mit --keep.";
    assert!(doc.chars().count() > 300);
    script(
        &home,
        "sheets.py",
        &format!("#!/usr/bin/env python3\n\"\"\"{doc}\"\"\"\n"),
    );
    let mut c = Client::start(&home, &["--allow-scripts"]);
    let tools = c.request("tools/list", json!({}));
    let tool = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "t__sheets")
        .unwrap()
        .clone();
    let description = tool["description"].as_str().unwrap();
    let (kept, suffix) = description
        .split_once(" …")
        .unwrap_or_else(|| panic!("{description}"));
    assert_eq!(suffix, " (scripts/sheets.py of skill t)");
    assert!(kept.ends_with('.'), "{description}");
    assert!(doc.starts_with(kept), "{description}");
    assert!(c.close().success());
}

#[test]
fn tools_and_resources_are_listed_and_read() {
    let home = setup();
    let mut c = Client::start(&home, &["--allow-scripts"]);

    let tools = c.request("tools/list", json!({}));
    let tools = tools["result"]["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for want in ["t__echo", "t__fail", "t__slow", "load_skill"] {
        assert!(names.contains(&want), "{names:?}");
    }
    let echo = tools.iter().find(|t| t["name"] == "t__echo").unwrap();
    assert!(
        echo["description"]
            .as_str()
            .unwrap()
            .contains("Echo the arguments and the JSON on stdin."),
        "{echo}"
    );
    assert_eq!(echo["inputSchema"]["properties"]["args"]["type"], "array");

    let res = c.request("resources/list", json!({}));
    let listed = &res["result"]["resources"][0];
    assert_eq!(listed["uri"], "skill://t/SKILL.md");
    assert_eq!(listed["name"], "t");
    assert_eq!(listed["description"], "Test tools for the MCP server");

    let read = c.request("resources/read", json!({"uri": "skill://t/SKILL.md"}));
    let content = &read["result"]["contents"][0];
    assert!(content["text"].as_str().unwrap().contains("Call t__echo"));
    assert_eq!(content["mimeType"], "text/markdown");
    let guide = c.request(
        "resources/read",
        json!({"uri": "skill://t/references/guide.md"}),
    );
    assert_eq!(
        guide["result"]["contents"][0]["text"],
        "# Guide\nRead me.\n"
    );
    let missing = c.request(
        "resources/read",
        json!({"uri": "skill://t/../../etc/passwd"}),
    );
    assert_eq!(missing["error"]["code"], -32002, "{missing}");

    // The Skills extension's manifest: every file with its size and sha256 digest.
    let skills = c.request("skills/list", json!({}));
    let t = &skills["result"]["skills"][0];
    assert_eq!(t["uri"], "skill://t/SKILL.md");
    assert_eq!(
        t["frontmatter"]["description"],
        "Test tools for the MCP server"
    );
    // Verbatim, as the extension asks: keys skillpipe does not use, and types as written.
    assert_eq!(t["frontmatter"]["argument-hint"], "[file]", "{t}");
    assert_eq!(t["frontmatter"]["disable-model-invocation"], true, "{t}");
    assert_eq!(t["frontmatter"]["metadata"]["version"], 1.2, "{t}");
    let guide_entry = t["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == "skill://t/references/guide.md")
        .expect("guide in the manifest")
        .clone();
    assert_eq!(guide_entry["size"], 17);
    let sum = Command::new("sha256sum")
        .arg(home.path().join("skills/t/references/guide.md"))
        .output()
        .unwrap();
    let hex = String::from_utf8_lossy(&sum.stdout)[..64].to_string();
    assert_eq!(guide_entry["digest"], format!("sha256:{hex}"));

    let loaded = c.call("load_skill", json!({"name": "t"}));
    assert_eq!(loaded["isError"], false);
    assert!(text(&loaded).contains("Call t__echo to echo."), "{loaded}");
    assert!(text(&loaded).contains("- t__echo"), "{loaded}");
    let unknown = c.call("load_skill", json!({"name": "zz"}));
    assert_eq!(unknown["isError"], true);
    assert!(text(&unknown).contains("(loaded: t)"), "{unknown}");

    assert!(c.close().success());
}

/// `load_skill` reads a file as chat's `!{skill NAME FILE}` does (another letter case found
/// when unique), under one rule with resources: a hidden file or one the sandbox hides from
/// scripts is never handed over. Reads are audited like chat's.
#[test]
fn load_skill_reads_files_under_the_rule_of_chat_and_is_audited() {
    let home = setup();
    home.write(
        "skills/t/forms.md",
        "# Forms
",
    );
    home.write(
        "skills/t/.env",
        "TOKEN=secret
",
    );
    home.write(
        "skills/t/secret.pem",
        "KEY
",
    );
    std::os::unix::fs::symlink(".env", home.path().join("skills/t/env.txt")).unwrap();
    std::fs::write(
        home.path().join("skills/t/img.png"),
        b"\x89PNG\r\n\x1a\n\0\0\0\0",
    )
    .unwrap();
    let pem = home
        .path()
        .join("skills/t/secret.pem")
        .canonicalize()
        .unwrap();
    let pem_s = pem.display().to_string();
    home.write(
        "config/skillpipe/agents/reader.toml",
        &format!(
            "name = \"reader\"\ndescription = \"Reads t\"\nskills = [\"t\"]\ninstructions = \"x\"\n\
             [script_policy]\ndeny_read = [\"{pem_s}\"]\n"
        ),
    );
    let mut c = Client::start(&home, &["--agent", "reader"]);

    let tools = c.request("tools/list", json!({}));
    let load = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "load_skill")
        .unwrap()
        .clone();
    assert_eq!(load["inputSchema"]["properties"]["file"]["type"], "string");

    let forms = c.call("load_skill", json!({"name": "t", "file": "FORMS.md"}));
    assert_eq!(forms["isError"], false, "{forms}");
    assert_eq!(text(&forms), "# Forms\n");
    for hidden in [".env", "env.txt", "secret.pem"] {
        let r = c.call("load_skill", json!({"name": "t", "file": hidden}));
        assert_eq!(r["isError"], true, "{hidden}: {r}");
        assert!(
            !text(&r).contains("secret") || hidden == "secret.pem",
            "{r}"
        );
        assert!(
            !text(&r).contains("TOKEN") && !text(&r).contains("KEY"),
            "{r}"
        );
        let uri = format!("skill://t/{hidden}");
        let read = c.request("resources/read", json!({"uri": uri}));
        assert!(read["error"].is_object(), "{hidden}: {read}");
    }
    // Positive control: a plain file is read both ways.
    let guide = c.request(
        "resources/read",
        json!({"uri": "skill://t/references/guide.md"}),
    );
    assert_eq!(
        guide["result"]["contents"][0]["text"],
        "# Guide\nRead me.\n"
    );
    // A binary file: a note (what it is, its size) and the resource with its bytes, never
    // the raw bytes as text.
    let png = c.call("load_skill", json!({"name": "t", "file": "img.png"}));
    assert_eq!(png["isError"], false, "{png}");
    assert_eq!(
        text(&png),
        "[img.png of skill `t` is a binary file (PNG image, 12 bytes), not text: it cannot be \
         read here. A script of the skill can use it by that path.]\n\
         Its bytes, base64-encoded: resources/read skill://t/img.png (image/png).\n"
    );
    let read = c.request("resources/read", json!({"uri": "skill://t/img.png"}));
    assert_eq!(
        read["result"]["contents"][0]["blob"], "iVBORw0KGgoAAAAA",
        "{read}"
    );
    let body = c.call("load_skill", json!({"name": "t"}));
    assert!(text(&body).contains("Call t__echo to echo."), "{body}");
    assert!(text(&body).contains("skill://t/forms.md"), "{body}");
    assert!(!text(&body).contains(".env"), "{body}");
    assert!(c.close().success());

    let reads: Vec<Value> = home
        .audit()
        .into_iter()
        .filter(|r| r["argv"][0] == "skill")
        .map(|r| json!([r["argv"], r["decision"], r["kind"]]))
        .collect();
    assert!(
        reads.contains(&json!([["skill", "t", "FORMS.md"], "ran", "mcp"])),
        "{reads:?}"
    );
    assert!(
        reads.contains(&json!([
            ["skill", "t", "references/guide.md"],
            "ran",
            "mcp"
        ])),
        "{reads:?}"
    );
    assert!(
        reads.contains(&json!([["skill", "t", ".env"], "invalid", "mcp"])),
        "{reads:?}"
    );
    assert!(
        reads.contains(&json!([["skill", "t"], "ran", "mcp"])),
        "{reads:?}"
    );
}

#[test]
fn calls_run_fail_time_out_and_are_audited() {
    let home = setup();
    script(&home, "say.sh", "#!/bin/bash\n# Say hello.\necho hello\n");
    let mut c = Client::start(&home, &["--allow-scripts", "-y", "--timeout", "1"]);

    let ok = c.call("t__echo", json!({"args": ["a", "b c"], "input": {"k": 1}}));
    assert_eq!(ok["isError"], false, "{ok}");
    assert!(
        text(&ok).contains("args: a b c\nstdin: {\"k\":1}\n"),
        "{ok}"
    );
    assert_eq!(ok["structuredContent"], json!({"count": 2}));

    let failed = c.call("t__fail", json!({}));
    assert_eq!(failed["isError"], true);
    let t = text(&failed);
    assert!(t.starts_with("failed: exit 3"), "{t}");
    assert!(
        t.contains("stdout:\npartial") && t.contains("stderr:\nboom"),
        "{t}"
    );
    // A plain failure (nothing like a denial in its stderr) says nothing of the sandbox.
    assert!(!t.contains("sandbox"), "{t}");
    // No structured content where the text is the result: some clients would give the model
    // only an empty object. A text success, a failure, a refusal.
    assert!(failed.get("structuredContent").is_none(), "{failed}");
    let said = c.call("t__say", json!({}));
    assert_eq!(text(&said), "hello\n", "{said}");
    assert!(said.get("structuredContent").is_none(), "{said}");

    let start = Instant::now();
    let slow = c.call("t__slow", json!({}));
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "the timeout fired"
    );
    assert_eq!(slow["isError"], true);
    assert!(text(&slow).contains("timed out"), "{slow}");
    // The script wrote nothing: no stderr block made of the runner's status.
    assert!(!text(&slow).contains("stderr:"), "{slow}");

    let bad = c.call("t__echo", json!({"args": [{"x": 1}]}));
    assert_eq!(bad["isError"], true);
    assert!(text(&bad).contains("list of strings"), "{bad}");
    assert!(bad.get("structuredContent").is_none(), "{bad}");
    assert!(slow.get("structuredContent").is_none(), "{slow}");

    let unknown = c.request("tools/call", json!({"name": "t__nope"}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("t__nope")
    );
    assert!(c.close().success());

    let audit = home.audit();
    assert!(audit.iter().all(|r| r["kind"] == "mcp"), "{audit:?}");
    let echo = &audit_for(&home, "echo.sh")[0];
    assert_eq!(echo["decision"], "ran");
    assert_eq!(echo["argv"], json!(["t/scripts/echo.sh", "a", "b c"]));
    assert_eq!(audit_for(&home, "fail.sh")[0]["exit_code"], 3);
    assert_eq!(audit_for(&home, "slow.sh")[0]["exit_code"], 124);
    assert!(
        audit
            .iter()
            .any(|r| r["argv"] == json!(["t__nope"]) && r["decision"] == "invalid"),
        "{audit:?}"
    );
}

/// With scripts off nothing could run: tools/list offers `load_skill` only, stderr says why,
/// and a call by name still gets the policy's reason.
#[test]
fn scripts_off_offers_only_load_skill_and_says_so() {
    let home = setup();
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    let listed = |args: &[&str]| {
        let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let out = assert_cmd::Command::from_std(server_cmd(&home, args))
            .write_stdin(input)
            .output()
            .unwrap();
        let reply = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|m| m["id"] == 2)
            .unwrap();
        let names: Vec<String> = reply["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        (names, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (names, err) = listed(&["-y"]);
    assert_eq!(names, ["load_skill"], "{err}");
    assert!(
        err.contains("no script or tool is offered (only load_skill)")
            && err.contains("--allow-scripts"),
        "{err}"
    );
    // The control: scripts on, the same skills offer their scripts and nothing is said.
    let (names, err) = listed(&["--allow-scripts", "-y"]);
    assert!(names.iter().any(|n| n == "t__echo"), "{names:?}");
    assert!(!err.contains("is offered"), "{err}");
    // Without -y and a client that cannot ask: the missing confirmation is worth a warning
    // only when something runnable is offered.
    let (_, err) = listed(&[]);
    assert!(!err.contains("cannot ask the user"), "{err}");
    let (_, err) = listed(&["--allow-scripts"]);
    assert!(err.contains("cannot ask the user"), "{err}");
}

#[test]
fn refusals_are_tool_errors_that_name_what_allows_them() {
    let home = setup();
    // Nothing allowed: the call is refused, and nothing ran.
    let mut c = Client::start(&home, &[]);
    let r = c.call("t__echo", json!({"args": ["x"]}));
    assert_eq!(r["isError"], true);
    assert!(text(&r).contains("--allow-scripts"), "{r}");
    c.close();
    // Denied by a pattern.
    let mut c = Client::start(
        &home,
        &["--allow-scripts", "-y", "--deny", "t/scripts/echo.sh"],
    );
    let r = c.call("t__echo", json!({}));
    assert_eq!(r["isError"], true);
    assert!(text(&r).starts_with("not run: "), "{r}");
    // Positive control: another script of the same skill runs.
    let other = c.call("t__fail", json!({}));
    assert!(text(&other).starts_with("failed: exit 3"), "{other}");
    c.close();
    // confirm = "ask" and a client that cannot ask: refused, naming the flag.
    let mut c = Client::start(&home, &["--allow-scripts"]);
    let r = c.call("t__echo", json!({}));
    assert_eq!(r["isError"], true);
    assert!(text(&r).contains("add -y"), "{r}");
    c.close();

    let decisions: Vec<String> = audit_for(&home, "echo.sh")
        .iter()
        .map(|r| r["decision"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(decisions, ["denied", "denied", "declined"]);
    assert!(
        !home
            .audit()
            .iter()
            .any(|r| r["decision"] == "ran" && r["argv"][0] == "t/scripts/echo.sh")
    );
}

#[test]
fn consent_is_asked_by_elicitation() {
    let home = setup();
    let answers = std::rc::Rc::new(std::cell::RefCell::new(vec![
        json!({"action": "decline"}),
        json!({"action": "accept", "content": {"always": true}}),
    ]));
    let queue = answers.clone();
    let elicit: Elicit = Box::new(move |_| queue.borrow_mut().remove(0));
    let mut c = Client::start_with(&home, &["--allow-scripts"], Some(elicit));

    let declined = c.call("t__echo", json!({"args": ["one"]}));
    assert_eq!(declined["isError"], true);
    assert!(text(&declined).contains("declined"), "{declined}");
    let ran = c.call("t__echo", json!({"args": ["two"]}));
    assert_eq!(ran["isError"], false, "{ran}");
    // "Always" covers the script for the rest of the session: no third question.
    let again = c.call("t__echo", json!({"args": ["three"]}));
    assert_eq!(again["isError"], false, "{again}");
    assert_eq!(c.asked.len(), 2);

    let message = c.asked[0]["message"].as_str().unwrap();
    assert!(
        message.contains("run `t/scripts/echo.sh one`?"),
        "{message}"
    );
    assert!(message.contains("skill: t"), "{message}");
    assert!(message.contains("cwd: "), "{message}");
    assert!(message.contains("network: none"), "{message}");
    assert!(message.contains("writes: "), "{message}");
    assert_eq!(
        c.asked[0]["requestedSchema"]["properties"]["always"]["type"],
        "boolean"
    );
    c.close();
    let decisions: Vec<Value> = audit_for(&home, "echo.sh")
        .iter()
        .map(|r| r["decision"].clone())
        .collect();
    assert_eq!(decisions, [json!("declined"), json!("ran"), json!("ran")]);
}

/// A tool whose tool.yaml asks (`execution.confirm: true`, claude-prompts-mcp's key) is asked
/// about by elicitation even under -y; a client that cannot ask gets a refusal that says so
/// and does not advise -y.
#[test]
fn a_tool_that_asks_is_confirmed_by_elicitation_even_with_y() {
    let home = setup();
    home.write(
        "skills/t/tools/careful/tool.yaml",
        "id: careful\nscript: careful.sh\ninput: args\nexecution:\n  confirm: true\n",
    );
    home.write("skills/t/tools/careful/careful.sh", "echo careful \"$@\"\n");
    let elicit: Elicit = Box::new(|_| json!({"action": "accept", "content": {"always": false}}));
    let mut c = Client::start_with(&home, &["--allow-scripts", "-y"], Some(elicit));
    let ran = c.call("t__careful", json!({"args": ["x"]}));
    assert_eq!(ran["isError"], false, "{ran}");
    assert_eq!(text(&ran), "careful x\n");
    // Another script of the skill is not asked about under -y (the control).
    let echo = c.call("t__echo", json!({"args": ["y"]}));
    assert_eq!(echo["isError"], false, "{echo}");
    assert_eq!(c.asked.len(), 1, "{:?}", c.asked);
    assert!(
        c.asked[0]["message"]
            .as_str()
            .unwrap()
            .contains("run `t:careful x`?"),
        "{:?}",
        c.asked
    );
    c.close();

    let mut c = Client::start(&home, &["--allow-scripts", "-y"]);
    let r = c.call("t__careful", json!({"args": ["x"]}));
    assert_eq!(r["isError"], true, "{r}");
    let t = text(&r);
    assert!(
        t.contains("tool `t:careful` asks to be confirmed before each run")
            && t.contains("elicitation"),
        "{t}"
    );
    assert!(!t.contains("add -y"), "{t}");
    c.close();
}

/// A 2026-07-28 client, written from that revision: no handshake, `server/discover` first, every
/// request with its `_meta`, `resultType` on every result, consent as `input_required` results
/// answered by retrying with `inputResponses` — while a 2025 client of the same process still
/// initializes and is asked by elicitation requests.
#[test]
fn a_modern_client_is_served_statelessly_and_asked_by_input_required() {
    let home = setup();
    let answers = std::rc::Rc::new(std::cell::RefCell::new(vec![
        json!({"action": "decline"}),
        json!({"action": "accept", "content": {"always": false}}),
    ]));
    let queue = answers.clone();
    let elicit: Elicit = Box::new(move |_| queue.borrow_mut().remove(0));
    let mut c = Client::spawn(&home, &["--allow-scripts"], Some(elicit), Stdio::null());
    let d = c.modern("server/discover", json!({}), json!({}));
    assert_eq!(d["result"]["resultType"], "complete", "{d}");
    assert!(
        d["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28")),
        "{d}"
    );
    assert_eq!(
        d["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "skillpipe"
    );
    let tools = c.modern("tools/list", json!({}), json!({}));
    assert_eq!(tools["result"]["resultType"], "complete", "{tools}");
    assert!(tools["result"]["ttlMs"].is_u64(), "{tools}");
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"t__echo"), "{names:?}");
    let read = c.modern(
        "resources/read",
        json!({"uri": "skill://t/SKILL.md"}),
        json!({}),
    );
    assert_eq!(read["result"]["resultType"], "complete", "{read}");

    // Asked, declined on the retry; asked again, accepted on the retry.
    let declined = c.modern_call("t__echo", json!({"args": ["one"]}));
    assert_eq!(declined["result"]["isError"], true, "{declined}");
    let ran = c.modern_call("t__echo", json!({"args": ["two"]}));
    assert_eq!(ran["result"]["isError"], false, "{ran}");
    assert!(text(&ran["result"]).contains("args: two"), "{ran}");
    assert_eq!(c.asked.len(), 2);
    assert!(
        c.asked[1]["message"]
            .as_str()
            .unwrap()
            .contains("run `t/scripts/echo.sh two`?"),
        "{:?}",
        c.asked
    );
    // An answer counts only for the question it answers: brought to another command, that
    // command is asked about, not run.
    let first = c.modern(
        "tools/call",
        json!({"name": "t__echo", "arguments": {"args": ["three"]}}),
        json!({"elicitation": {}}),
    );
    let key = first["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let other = c.modern(
        "tools/call",
        json!({"name": "t__echo", "arguments": {"args": ["four"]},
               "inputResponses": {key: {"action": "accept"}}}),
        json!({"elicitation": {}}),
    );
    assert_eq!(other["result"]["resultType"], "input_required", "{other}");
    // A request that declares no elicitation gets the capability it lacks.
    let bare = c.modern(
        "tools/call",
        json!({"name": "t__echo", "arguments": {"args": ["five"]}}),
        json!({}),
    );
    assert_eq!(bare["error"]["code"], -32021, "{bare}");
    assert!(
        bare["error"]["message"].as_str().unwrap().contains("-y"),
        "{bare}"
    );
    // An unsupported version is named with the ones served.
    let mut old = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "1900-01-01",
        "io.modelcontextprotocol/clientCapabilities": {}}});
    old["x"] = json!(1);
    let r = c.request("tools/list", old);
    assert_eq!(r["error"]["code"], -32022, "{r}");
    // The legacy handshake still works in the same process, and its results are unchanged.
    let init = c.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "old", "version": "1"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    let legacy = c.request("tools/list", json!({}));
    assert!(legacy["result"].get("resultType").is_none(), "{legacy}");
    // The server wrote no request of its own to this client.
    assert!(
        c.early.iter().all(|m| m.get("method").is_none()),
        "{:?}",
        c.early
    );
    c.close();
    let decisions: Vec<Value> = audit_for(&home, "echo.sh")
        .iter()
        .map(|r| r["decision"].clone())
        .collect();
    // Each question that went back to the client is a call not run, then the answer decides.
    assert_eq!(
        decisions.iter().filter(|d| **d == json!("ran")).count(),
        1,
        "{decisions:?}"
    );
}

#[test]
fn malformed_input_gets_errors_and_the_session_goes_on() {
    let home = setup();
    let mut c = Client::start(&home, &["--allow-scripts", "-y"]);

    c.send_raw(b"this is not json");
    let e = c.next();
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );

    c.send_raw(br#"[{"jsonrpc":"2.0","id":90,"method":"ping"}]"#);
    assert_eq!(c.next()["error"]["code"], -32600);

    c.send_raw(br#"{"jsonrpc":"2.0","id":91,"method":"no/such"}"#);
    assert_eq!(c.wait_for(&json!(91))["error"]["code"], -32601);

    c.send_raw(br#"{"jsonrpc":"2.0","id":92,"method":"tools/call","params":{"name":"t__echo","arguments":"x"}}"#);
    assert_eq!(c.wait_for(&json!(92))["error"]["code"], -32602);

    // Nested far deeper than any parser's limit: answered under its own id.
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":93,"method":"tools/call","params":{{"name":"t__echo","arguments":{{"input":{}1{}}}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    c.send_raw(deep.as_bytes());
    let e = c.wait_for(&json!(93));
    assert!(
        e["error"]["message"].as_str().unwrap().contains("deeper"),
        "{e}"
    );

    // Over the size limit: answered under its own id, the rest of the line skipped.
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":94,"method":"tools/call","params":{{"name":"t__echo","arguments":{{"args":["{}"]}}}}}}"#,
        "a".repeat(9 << 20)
    );
    c.send_raw(huge.as_bytes());
    let e = c.wait_for(&json!(94));
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("over the limit"),
        "{e}"
    );

    // Still serving.
    let ok = c.call("t__echo", json!({"args": ["after"]}));
    assert!(text(&ok).contains("args: after"), "{ok}");
    assert!(c.close().success());
    // Nothing ran for the rejected lines.
    assert_eq!(audit_for(&home, "echo.sh").len(), 1);
}

#[test]
fn calls_run_concurrently() {
    let home = setup();
    let dir = home.path().join("meet");
    std::fs::create_dir(&dir).unwrap();
    let d = dir.to_str().unwrap();
    let mut c = Client::start(&home, &["--allow-scripts", "-y", "--allow-filesystem"]);
    // Each call waits for the other: they finish only if both run at once.
    let a = c.start_request(
        "tools/call",
        json!({"name": "t__barrier", "arguments": {"args": [d, "a", "b"]}}),
    );
    let b = c.start_request(
        "tools/call",
        json!({"name": "t__barrier", "arguments": {"args": [d, "b", "a"]}}),
    );
    for id in [a, b] {
        let r = c.wait_for(&id);
        assert_eq!(text(&r["result"]), "met\n", "{r}");
    }
    c.close();
}

#[test]
fn a_cancelled_call_is_killed_and_audited_and_the_session_goes_on() {
    let home = setup();
    let marker = format!("mcp-cancel-{}", std::process::id());
    let mut c = Client::start(&home, &["--allow-scripts", "-y"]);
    let id = c.start_request(
        "tools/call",
        json!({"name": "t__orphan", "arguments": {"args": [marker]}}),
    );
    assert!(eventually(|| processes_named(&format!("{marker}-parent"))
        .len()
        == 1));
    c.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": id, "reason": "user stopped it"}}),
    );
    assert!(
        eventually(|| processes_named(&marker).is_empty()),
        "left running: {:?}",
        processes_named(&marker)
    );
    // No reply to the cancelled call; the next request is answered.
    let pong = c.request("ping", json!({}));
    assert_eq!(pong["result"], json!({}));
    assert!(c.early.iter().all(|m| m["id"] != id), "{:?}", c.early);
    assert!(c.close().success());
    let rec = &audit_for(&home, "orphan.sh")[0];
    assert_eq!(rec["reason"], "cancelled", "{rec}");
    cancelled_line_says_when_it_ended(&home, rec);
}

/// A `cancelled` completed line carries the time the run ended (after its `started` line's, by
/// at least the time it ran) and how long it ran.
fn cancelled_line_says_when_it_ended(home: &TestHome, rec: &Value) {
    let started = home
        .audit_all()
        .into_iter()
        .find(|r| r["phase"] == "started" && r["argv"] == rec["argv"])
        .expect("a started line");
    let ms = rec["duration_ms"]
        .as_u64()
        .unwrap_or_else(|| panic!("no duration_ms: {rec}"));
    assert!(ms > 0, "{rec}");
    assert!(
        rec["ts"].as_str().unwrap() > started["ts"].as_str().unwrap(),
        "ends after it started: {started} {rec}"
    );
}

/// The client goes away (both pipes closed) while a call runs: the call's tree is killed at
/// once, not left to its timeout, and audited `cancelled`; the server exits 0.
#[test]
fn a_client_that_goes_away_mid_call_leaves_nothing_running() {
    let home = setup();
    let marker = format!("mcp-gone-{}", std::process::id());
    let mut child = server_cmd(&home, &["--allow-scripts", "-y"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "t__orphan", "arguments": {"args": [marker]}}});
    writeln!(stdin, "{init}\n{call}").unwrap();
    assert!(eventually(|| processes_named(&format!("{marker}-parent"))
        .len()
        == 1));
    let start = Instant::now();
    drop(stdin);
    drop(child.stdout.take());
    let status = wait_exit(&mut child);
    assert!(status.success(), "{status:?}");
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(
        eventually(|| processes_named(&marker).is_empty()),
        "left running: {:?}",
        processes_named(&marker)
    );
    let rec = &audit_for(&home, "orphan.sh")[0];
    assert_eq!(
        (rec["decision"].clone(), rec["reason"].clone()),
        (json!("ran"), json!("cancelled"))
    );
    cancelled_line_says_when_it_ended(&home, rec);
}

/// The end of stdin is the end of the client's requests, not of their answers: every call it
/// sent is answered (a script run, a failure, `load_skill`), a confirmation that can no longer
/// be answered is a "no" at once, and the server exits 0 — so `printf … | skillpipe mcp` works.
#[test]
fn stdin_closed_lets_received_calls_finish_and_be_answered() {
    let home = setup();
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "load_skill", "arguments": {"name": "t"}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "t__echo", "arguments": {"args": ["hi"]}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
               "params": {"name": "t__fail", "arguments": {}}}),
    ];
    let input: String = requests.iter().map(|r| format!("{r}\n")).collect();
    let run = |args: &[&str], caps: Value| {
        let mut input = input.clone();
        if !caps.is_null() {
            let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                              "params": {"capabilities": caps}});
            input = input.replacen(&requests[0].to_string(), &init.to_string(), 1);
        }
        let start = Instant::now();
        let out = assert_cmd::Command::from_std(server_cmd(&home, args))
            .write_stdin(input)
            .timeout(WAIT)
            .output()
            .unwrap();
        assert!(start.elapsed() < Duration::from_secs(10), "{out:?}");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let replies: Vec<Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let by_id = |id: i64| -> Value {
            let r = replies.iter().find(|r| r["id"] == json!(id));
            r.unwrap_or_else(|| panic!("no reply to {id}: {replies:?}"))
                .clone()
        };
        (by_id(2), by_id(3), by_id(4))
    };

    let (skill, echo, fail) = run(&["--allow-scripts", "-y"], Value::Null);
    assert!(
        text(&skill["result"]).contains("Call t__echo to echo."),
        "{skill}"
    );
    assert_eq!(echo["result"]["isError"], false, "{echo}");
    assert!(text(&echo["result"]).contains("args: hi"), "{echo}");
    assert_eq!(fail["result"]["isError"], true, "{fail}");
    let failed = text(&fail["result"]);
    assert!(failed.starts_with("failed: exit 3"), "{fail}");
    // A plain failure: nothing suggests lifting a restriction.
    assert!(
        !failed.contains("--allow") && !failed.contains("lift"),
        "{fail}"
    );
    assert_eq!(audit_for(&home, "echo.sh")[0]["decision"], "ran");

    // Asked by elicitation, but the client's input has ended: declined at once.
    let (_, echo, _) = run(&["--allow-scripts"], json!({"elicitation": {}}));
    assert_eq!(echo["result"]["isError"], true, "{echo}");
    assert!(
        text(&echo["result"]).contains("not run: the client is gone"),
        "{echo}"
    );
}

#[test]
fn sigterm_mid_call_answers_and_exits() {
    let home = setup();
    let marker = format!("mcp-term-{}", std::process::id());
    let mut c = Client::start(&home, &["--allow-scripts", "-y"]);
    let id = c.start_request(
        "tools/call",
        json!({"name": "t__orphan", "arguments": {"args": [marker]}}),
    );
    assert!(eventually(|| processes_named(&format!("{marker}-parent"))
        .len()
        == 1));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(c.child.id() as i32, libc::SIGTERM) };
    // Answered as a stopped call, the tree killed, the audit line written, exit 128 + 15.
    let r = c.wait_for(&id);
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        text(&r["result"]).starts_with("stopped: interrupted by SIGTERM"),
        "{r}"
    );
    assert_eq!(wait_exit(&mut c.child).code(), Some(143));
    assert!(eventually(|| processes_named(&marker).is_empty()));
    let rec = &audit_for(&home, "orphan.sh")[0];
    assert!(rec["reason"].as_str().unwrap().contains("SIGTERM"), "{rec}");
}

/// After the end of stdin the server waits for the calls it received, but a signal still stops
/// them at once.
#[test]
fn sigterm_after_stdin_closed_still_stops_at_once() {
    let home = setup();
    let marker = format!("mcp-eof-term-{}", std::process::id());
    let mut c = Client::start(&home, &["--allow-scripts", "-y"]);
    let id = c.start_request(
        "tools/call",
        json!({"name": "t__orphan", "arguments": {"args": [marker]}}),
    );
    assert!(eventually(|| processes_named(&format!("{marker}-parent"))
        .len()
        == 1));
    drop(c.stdin.take());
    // Still running: the end of stdin did not cancel it.
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        c.child.try_wait().unwrap().is_none(),
        "exited at the end of stdin"
    );
    assert_eq!(processes_named(&format!("{marker}-parent")).len(), 1);
    let start = Instant::now();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(c.child.id() as i32, libc::SIGTERM) };
    let r = c.wait_for(&id);
    assert!(
        text(&r["result"]).starts_with("stopped: interrupted by SIGTERM"),
        "{r}"
    );
    assert_eq!(wait_exit(&mut c.child).code(), Some(143));
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(eventually(|| processes_named(&marker).is_empty()));
}

/// As in `filter`: an agent file outside the user's config (here named by path) may not turn
/// scripts on; the same file in the user's config folder may.
#[test]
fn only_the_user_can_allow_scripts() {
    let home = setup();
    let agent = "name = \"runner\"\ndescription = \"Runs t\"\nskills = [\"t\"]\ninstructions = \"x\"\n\
                 [script_policy]\nallow_scripts = true\nconfirm = \"never\"\n";
    let foreign = home.write("project/runner.toml", agent);
    let mut c = Client::start(&home, &["--agent", foreign.to_str().unwrap()]);
    let r = c.call("t__echo", json!({"args": ["x"]}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("--allow-scripts"), "{r}");
    c.close();

    home.write("config/skillpipe/agents/runner.toml", agent);
    let mut c = Client::start(&home, &["--agent", "runner"]);
    let r = c.call("t__echo", json!({"args": ["x"]}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(text(&r).contains("args: x"), "{r}");
    c.close();
    let decisions: Vec<Value> = audit_for(&home, "echo.sh")
        .iter()
        .map(|r| json!([r["decision"], r["agent"]]))
        .collect();
    assert_eq!(
        decisions,
        [json!(["denied", "runner"]), json!(["ran", "runner"])]
    );
}

fn tool_names(c: &mut Client) -> Vec<String> {
    let tools = c.request("tools/list", json!({}));
    tools["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{tools}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Only tools the policy's patterns could allow are offered: an agent whose allowed_commands
/// name one script offers that one (and load_skill, which runs nothing), a deny of a script
/// hides it whatever its arguments, a deny of some arguments does not; a call to a hidden tool
/// is refused with the policy's reason, not as unknown. Confirmation is no reason to hide.
#[test]
fn only_tools_the_policy_could_allow_are_offered() {
    let home = setup();
    home.write(
        "config/skillpipe/agents/narrow.toml",
        "name = \"narrow\"\ndescription = \"d\"\nskills = [\"t\"]\ninstructions = \"x\"\n\
         [script_policy]\nallow_scripts = true\nconfirm = \"ask\"\nallowed_commands = [\"t:echo --x *\"]\n",
    );
    let mut c = Client::start(&home, &["--agent", "narrow"]);
    assert_eq!(tool_names(&mut c), ["t__echo", "load_skill"]);
    let r = c.call("t__fail", json!({}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        text(&r).contains("not in allowed_commands (allow it with --allow 't:fail')"),
        "{r}"
    );
    // The skill's listing names only what is offered.
    let body = c.call("load_skill", json!({"name": "t"}));
    assert!(text(&body).contains("- t__echo\n"), "{body}");
    assert!(!text(&body).contains("t__fail"), "{body}");
    c.close();

    // Today's default listing: every script (the positive control), then denies.
    let mut c = Client::start(&home, &["--allow-scripts", "-y"]);
    let all = tool_names(&mut c);
    for want in ["t__echo", "t__fail", "t__slow", "load_skill"] {
        assert!(all.contains(&want.to_string()), "{all:?}");
    }
    c.close();
    let args = [
        "--allow-scripts",
        "-y",
        "--deny",
        "t:fail",
        "--deny",
        "t:slow --long",
    ];
    let mut c = Client::start(&home, &args);
    let names = tool_names(&mut c);
    assert!(!names.contains(&"t__fail".to_string()), "{names:?}");
    assert!(names.contains(&"t__slow".to_string()), "{names:?}");
    assert_eq!(names.len(), all.len() - 1, "{names:?}");
    let r = c.call("t__fail", json!({}));
    assert!(text(&r).contains("matches denied pattern `t:fail`"), "{r}");
    c.close();
}

/// A tool folder (`tools/{id}/` with tool.yaml, schema.json, description.md) is offered with its
/// own schema and description; its input is validated before it runs; its JSON output is the
/// structured content; a disabled one is not offered.
#[test]
fn tool_folders_are_tools_with_their_schema() {
    let home = setup();
    home.write(
        "skills/t/tools/stats/tool.yaml",
        "id: stats\nname: CSV statistics\nruntime: python3\nscript: stats.py\n",
    );
    let schema = json!({
        "type": "object",
        "properties": {
            "input_path": {"type": "string"},
            "threshold": {"type": "number", "minimum": 0, "maximum": 1}
        },
        "required": ["input_path"],
        "additionalProperties": false
    });
    home.write("skills/t/tools/stats/schema.json", &schema.to_string());
    home.write(
        "skills/t/tools/stats/description.md",
        "Count the rows of a CSV file above a threshold.\n",
    );
    home.write(
        "skills/t/tools/stats/stats.py",
        "import json, sys\nprint(json.dumps({\"got\": json.load(sys.stdin)}, indent=2))\n",
    );
    home.write(
        "skills/t/tools/off/tool.yaml",
        "id: off\nscript: off.sh\nenabled: false\n",
    );
    home.write("skills/t/tools/off/off.sh", "echo ran\n");
    home.write(
        "skills/t/tools/typo/tool.yaml",
        "id: typo\nscript: typo.sh\nenabeld: false\n",
    );
    home.write("skills/t/tools/typo/typo.sh", "echo ran\n");
    let mut c = Client::start(&home, &["--allow-scripts", "-y"]);

    let tools = c.request("tools/list", json!({}));
    let tools = tools["result"]["tools"].as_array().unwrap().clone();
    let stats = tools
        .iter()
        .find(|t| t["name"] == "t__stats")
        .expect("the tool folder is offered");
    assert_eq!(stats["inputSchema"], schema);
    assert!(
        stats["description"]
            .as_str()
            .unwrap()
            .contains("Count the rows of a CSV file above a threshold."),
        "{stats}"
    );
    assert!(!tools.iter().any(|t| t["name"] == "t__off"), "{tools:?}");

    let ok = c.call("t__stats", json!({"input_path": "a.csv", "threshold": 0.5}));
    assert_eq!(ok["isError"], false, "{ok}");
    assert_eq!(
        ok["structuredContent"],
        json!({"got": {"input_path": "a.csv", "threshold": 0.5}})
    );
    // Models also send the input wrapped.
    let wrapped = c.call("t__stats", json!({"input": {"input_path": "b.csv"}}));
    assert_eq!(
        wrapped["structuredContent"],
        json!({"got": {"input_path": "b.csv"}}),
        "{wrapped}"
    );
    let bad = c.call("t__stats", json!({"input_path": "a.csv", "threshold": 2}));
    assert_eq!(bad["isError"], true, "{bad}");
    assert!(text(&bad).contains("threshold"), "{bad}");
    // A disabled tool, and one skipped for a typo in its tool.yaml, are not "unknown": the
    // answer says why (a truly unknown name is the control).
    for (name, why) in [
        ("t__off", "is disabled (enabled: false"),
        (
            "t__typo",
            "exists but was skipped at load: tools/typo/tool.yaml:",
        ),
        ("t__nope", "unknown tool: `t__nope`"),
    ] {
        let r = c.request("tools/call", json!({"name": name, "arguments": {}}));
        let msg = r["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains(why), "{name}: {r}");
    }
    c.close();

    let decisions: Vec<Value> = home
        .audit()
        .iter()
        .filter(|r| r["argv"][0] == "t:stats")
        .map(|r| r["decision"].clone())
        .collect();
    assert_eq!(decisions, [json!("ran"), json!("ran"), json!("invalid")]);
}

/// An agent folder's tools are offered as tools; the folder itself is no skill, so neither its
/// agent file nor its tool files are published as resources.
#[test]
fn an_agent_folders_tools_are_tools_not_skill_resources() {
    let home = setup();
    home.write(
        "config/skillpipe/agents/quizzer.toml",
        "name = \"quizzer\"\ndescription = \"Asks\"\ninstructions = \"Quiz.\"\nskills = [\"t\"]\n",
    );
    home.write(
        "config/skillpipe/agents/quizzer/tools/pick/tool.yaml",
        "id: pick\nscript: pick.sh\ndescription: Pick a question.\n",
    );
    home.write(
        "config/skillpipe/agents/quizzer/tools/pick/pick.sh",
        "echo picked\n",
    );
    let mut c = Client::start(&home, &["--agent", "quizzer", "--allow-scripts", "-y"]);
    let tools = c.request("tools/list", json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"quizzer__pick"), "{names:?}");
    let picked = c.call("quizzer__pick", json!({}));
    assert!(text(&picked).contains("picked"), "{picked}");
    let resources = c.request("resources/list", json!({}));
    let uris: Vec<&str> = resources["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(
        uris.iter().any(|u| u.starts_with("skill://t/")),
        "the control: {uris:?}"
    );
    assert!(
        !uris.iter().any(|u| u.starts_with("skill://quizzer/")),
        "{uris:?}"
    );
    // Nor does load_skill hand out its files: it says what it is and names its tools.
    let loaded = c.call(
        "load_skill",
        json!({"name": "quizzer", "file": "tools/pick/pick.sh"}),
    );
    assert_eq!(loaded["isError"], true, "{loaded}");
    assert!(text(&loaded).contains("quizzer:pick"), "{loaded}");
    c.close();
}

/// A large collection: `tools/list` and `resources/list` come a page at a time, each page's
/// `nextCursor` leads to the next, the last has none, and every tool and skill is listed once.
/// Methods the server does not offer (subscriptions, prompts, completion, logging) get a
/// JSON-RPC error at once, and the session goes on.
#[test]
fn large_lists_are_paginated_and_unsupported_methods_answer_errors() {
    let home = setup();
    const SKILLS: usize = 130;
    for i in 0..SKILLS {
        home.write(
            &format!("skills/s{i:03}/SKILL.md"),
            &format!("---\nname: s{i:03}\ndescription: Skill number {i}\n---\nBody.\n"),
        );
        home.write(&format!("skills/s{i:03}/scripts/go.sh"), "echo go\n");
    }
    let mut c = Client::start(&home, &["--allow-scripts"]);

    let walk = |c: &mut Client, method: &str, key: &str, field: &str| -> (Vec<String>, usize) {
        let mut seen = Vec::new();
        let mut pages = 0;
        let mut cursor: Option<Value> = None;
        loop {
            let params = match &cursor {
                Some(cur) => json!({"cursor": cur}),
                None => json!({}),
            };
            let r = c.request(method, params);
            let result = &r["result"];
            let items = result[key].as_array().unwrap_or_else(|| panic!("{r}"));
            assert!(
                !items.is_empty() && items.len() <= 100,
                "{method}: {}",
                items.len()
            );
            seen.extend(items.iter().map(|t| t[field].as_str().unwrap().to_string()));
            pages += 1;
            match result.get("nextCursor") {
                Some(next) => cursor = Some(next.clone()),
                None => break,
            }
            assert!(pages < 10, "{method} never ends");
        }
        (seen, pages)
    };
    let (tools, pages) = walk(&mut c, "tools/list", "tools", "name");
    assert!(pages >= 2, "{} tools in {pages} page(s)", tools.len());
    let mut unique = tools.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), tools.len(), "a tool listed twice");
    // `t`'s five scripts, one per `sNNN`, and load_skill.
    assert_eq!(tools.len(), 5 + SKILLS + 1, "{tools:?}");
    assert!(tools.contains(&"s129__go".to_string()) && tools.contains(&"load_skill".into()));

    let (resources, pages) = walk(&mut c, "resources/list", "resources", "uri");
    assert!(pages >= 2);
    assert_eq!(resources.len(), SKILLS + 1);
    assert!(resources.contains(&"skill://s129/SKILL.md".to_string()));

    let bad = c.request("tools/list", json!({"cursor": "resources:100"}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let bad = c.request("tools/list", json!({"cursor": "tools:99999"}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let bad = c.request("tools/list", json!({"cursor": "bogus"}));
    let msg = bad["error"]["message"].as_str().unwrap();
    assert!(
        msg.starts_with("invalid cursor `bogus` for the tools list"),
        "{msg}"
    );

    let templates = c.request("resources/templates/list", json!({}));
    assert_eq!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"],
        "skill://{skill}/{+path}"
    );
    for method in [
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "completion/complete",
        "logging/setLevel",
    ] {
        let r = c.request(method, json!({"uri": "skill://t/SKILL.md"}));
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
    }
    assert_eq!(c.request("ping", json!({}))["result"], json!({}));
    assert!(c.close().success());
}

/// The registration snippets of the README and of docs/mcp.md (the JSON of Claude Desktop /
/// Cursor / Claude Code, the `claude mcp add` and `codex mcp add` lines, Codex's TOML table)
/// parse in their client's format and their command line starts a server that answers
/// `tools/list`.
#[test]
fn readme_registration_snippets_start_the_server() {
    let read = |file: &str| {
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file))
            .unwrap()
    };
    let readme = read("README.md");
    let guide = read("docs/mcp.md");
    // Every fenced block of `lang` in `text` that holds `needle`.
    let blocks = |text: &str, lang: &str, needle: &str| -> Vec<String> {
        text.split(&format!("```{lang}\n"))
            .skip(1)
            .map(|b| b[..b.find("```").unwrap()].to_string())
            .filter(|b| b.contains(needle))
            .collect()
    };
    let home = setup();
    let skills = home.path().join("skills").display().to_string();
    let mut command_lines: Vec<(String, Vec<String>)> = Vec::new();
    for (file, text, want) in [
        (
            "README.md",
            &readme[readme.find("## MCP").expect("an MCP section")..],
            3,
        ),
        ("docs/mcp.md", &guide[..], 4),
    ] {
        let before = command_lines.len();
        for json in blocks(text, "json", "mcpServers") {
            let desktop: Value = serde_json::from_str(&json).expect("valid JSON");
            let server = &desktop["mcpServers"]["skillpipe"];
            assert!(
                server["command"].as_str().unwrap().starts_with('/'),
                "absolute: {server}"
            );
            let args = server["args"].as_array().unwrap().iter();
            command_lines.push((
                format!("{file} json"),
                args.map(|a| a.as_str().unwrap().to_string()).collect(),
            ));
        }
        for toml_text in blocks(text, "toml", "[mcp_servers.skillpipe]") {
            let codex: toml::Table = toml_text.parse().expect("valid TOML");
            let table = &codex["mcp_servers"]["skillpipe"];
            assert_eq!(table["command"].as_str(), Some("skillpipe"));
            let args = table["args"].as_array().unwrap().iter();
            command_lines.push((
                format!("{file} toml"),
                args.map(|a| a.as_str().unwrap().to_string()).collect(),
            ));
        }
        for block in blocks(text, "bash", "mcp add") {
            for line in block.lines().filter(|l| l.contains("mcp add")) {
                let (client, cmd) = line.split_once(" -- ").expect("NAME -- COMMAND");
                assert!(
                    client.starts_with("claude mcp add ") || client.starts_with("codex mcp add "),
                    "{client}"
                );
                let words: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
                assert_eq!(words[0], "skillpipe", "{line}");
                command_lines.push((format!("{file} {client}"), words[1..].to_vec()));
            }
        }
        assert_eq!(
            command_lines.len() - before,
            want,
            "{file}: {command_lines:?}"
        );
    }

    // The agent the TOML names, in the user's own config folder.
    home.write(
        "config/skillpipe/agents/researcher.toml",
        "name = \"researcher\"\ndescription = \"d\"\ninstructions = \"i\"\nskills = [\"t\"]\n",
    );
    home.write(
        "config/skillpipe/skills/t/SKILL.md",
        "---\nname: t\ndescription: d\n---\nb\n",
    );
    for (client, args) in command_lines {
        // The snippets' example paths stand for the user's skills folder.
        let args: Vec<String> = args
            .into_iter()
            .map(|a| {
                if a.ends_with("/skills") {
                    skills.clone()
                } else {
                    a
                }
            })
            .collect();
        assert_eq!(args[0], "mcp", "{client}: {args:?}");
        let out = common::spawn::skillpipe()
            .args(&args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("XDG_STATE_HOME", home.path().join("state"))
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                let mut stdin = child.stdin.take().unwrap();
                stdin.write_all(
                    b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n\
                      {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n",
                )?;
                drop(stdin);
                child.wait_with_output()
            })
            .unwrap();
        assert!(
            out.status.success(),
            "{client}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let list: Value = serde_json::from_str(text.lines().nth(1).unwrap_or("")).unwrap();
        let tools = &list["result"]["tools"];
        let has = |name: &str| tools.as_array().unwrap().iter().any(|t| t["name"] == name);
        if args.contains(&"--skills-dir".to_string()) {
            assert!(has("t__echo"), "{client}: {text}");
        } else {
            // The agent's skill, found in the user's config folder.
            assert!(
                has("load_skill") && tools.to_string().contains("\"enum\":[\"t\"]"),
                "{client}: {text}"
            );
        }
    }
}

/// docs/mcp.md's "try it by hand" lines, run as written (from the repository, so `skills` is
/// the shipped folder): the tools/call in it gets its result.
#[test]
fn readme_try_it_by_hand_shows_a_call_result() {
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/mcp.md")).unwrap();
    let snippet = guide
        .split("```sh\n")
        .skip(1)
        .map(|b| &b[..b.find("```").unwrap()])
        .find(|b| b.contains("tools/call"))
        .expect("a ```sh block with a tools/call");
    let home = TestHome::new();
    let bin_dir = assert_cmd::cargo::cargo_bin("skillpipe")
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .args(["-c", snippet])
        .env_clear()
        .env("PATH", path)
        .env("HOME", home.path())
        .env("LANG", "C.UTF-8")
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let replies: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let call = replies
        .iter()
        .find(|r| r["id"] == json!(3))
        .unwrap_or_else(|| panic!("no reply to the call: {replies:?}"));
    if text(&call["result"]).contains("cannot sandbox") {
        eprintln!("skipped: this machine cannot enforce the default sandbox: {call}");
        return;
    }
    assert_eq!(call["result"]["isError"], false, "{call}");
    assert_eq!(call["result"]["structuredContent"], json!({"result": 1024}));
}

/// Two scripts with one stem, a skill name long enough to fill a function name, and a skill
/// whose allowed-tools has no Bash: every script that can run is offered under its own name
/// (the one it runs), and none of the locked skill's is.
#[test]
fn every_script_is_offered_under_a_name_of_its_own() {
    let home = setup();
    let long = "l".repeat(64);
    home.write(
        "skills/many/SKILL.md",
        "---\nname: many\ndescription: Same stems\n---\nBody\n",
    );
    home.write(
        &format!("skills/{long}/SKILL.md"),
        &format!("---\nname: {long}\ndescription: Long name\n---\nBody\n"),
    );
    home.write(
        "skills/locked/SKILL.md",
        "---\nname: locked\ndescription: No Bash\nallowed-tools: Read\n---\nBody\n",
    );
    home.write("skills/locked/scripts/hi.sh", "#!/bin/sh\necho hi\n");
    for (rel, says) in [
        ("many/scripts/a/run.sh", "A"),
        ("many/scripts/b/run.sh", "B"),
        (&format!("{long}/scripts/first.sh"), "first"),
        (&format!("{long}/scripts/second.sh"), "second"),
    ] {
        home.write(
            &format!("skills/{rel}"),
            &format!("#!/bin/sh\necho {says}\n"),
        );
    }
    let mut c = Client::start(&home, &["--allow-scripts", "-y"]);
    let tools = c.request("tools/list", json!({}));
    let names: Vec<String> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(!names.iter().any(|n| n.starts_with("locked")), "{names:?}");
    // Called anyway, the locked skill's script is refused with the allowed-tools reason.
    let r = c.call("locked__hi", json!({}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        text(&r).contains("its allowed-tools (Read) has no Bash entry"),
        "{r}"
    );
    assert!(names.iter().all(|n| n.len() <= 64), "{names:?}");
    let mut ran = Vec::new();
    for name in names
        .iter()
        .filter(|n| n.starts_with("many") || n.starts_with("lll"))
    {
        let r = c.call(name, json!({}));
        assert_eq!(r["isError"], false, "{name}: {r}");
        ran.push(text(&r).trim().to_owned());
    }
    ran.sort();
    assert_eq!(ran, ["A", "B", "first", "second"], "{names:?}");
    c.close();
}

/// A JSON-input tool's arguments are all on stdin: the question shows them (as JSON, so
/// escaped), not only the tool's name.
#[test]
fn consent_for_a_json_tool_shows_its_input() {
    let home = setup();
    home.write(
        "skills/t/tools/stats/tool.yaml",
        "id: stats\nruntime: python3\nscript: stats.py\n",
    );
    home.write(
        "skills/t/tools/stats/schema.json",
        r#"{"type": "object", "properties": {"input_path": {"type": "string"}}}"#,
    );
    home.write("skills/t/tools/stats/stats.py", "print('{}')\n");
    let elicit: Elicit = Box::new(|_| json!({"action": "decline"}));
    let mut c = Client::start_with(&home, &["--allow-scripts"], Some(elicit));
    let r = c.call("t__stats", json!({"input_path": "secret\u{1b}[2J.csv"}));
    assert_eq!(r["isError"], true, "{r}");
    let message = c.asked[0]["message"].as_str().unwrap();
    assert!(message.contains("run `t:stats`?"), "{message}");
    assert!(
        message.contains(r#"input: {"input_path":"secret\u001b[2J.csv"}"#),
        "{message}"
    );
    c.close();
}

/// More calls than run at once, then SIGTERM: the running ones are stopped and audited (with
/// how long they ran); the ones still waiting for a turn never start — answered -32000
/// "shutting down", with no audit line.
#[test]
fn sigterm_with_calls_waiting_for_a_turn_starts_none_of_them() {
    const RUNNING: usize = 16;
    let home = setup();
    let marker = format!("mcp-queue-{}", std::process::id());
    let mut c = Client::start(&home, &["--allow-scripts", "-y"]);
    let ids: Vec<Value> = (0..RUNNING + 2)
        .map(|i| {
            c.start_request(
                "tools/call",
                json!({"name": "t__orphan", "arguments": {"args": [format!("{marker}-{i}")]}}),
            )
        })
        .collect();
    assert!(eventually(|| processes_named(&marker)
        .iter()
        .filter(|p| p.contains("-parent"))
        .count()
        == RUNNING));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(c.child.id() as i32, libc::SIGTERM) };
    let replies: Vec<Value> = ids.iter().map(|id| c.wait_for(id)).collect();
    let stopped = replies
        .iter()
        .filter(|r| text(&r["result"]).starts_with("stopped: interrupted by SIGTERM"))
        .count();
    let unstarted: Vec<&Value> = replies.iter().filter(|r| r["error"].is_object()).collect();
    assert_eq!(stopped, RUNNING, "{replies:?}");
    assert_eq!(unstarted.len(), 2, "{replies:?}");
    for r in unstarted {
        assert_eq!(r["error"]["code"], -32000, "{r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("shutting down"),
            "{r}"
        );
    }
    assert_eq!(wait_exit(&mut c.child).code(), Some(143));
    assert!(eventually(|| processes_named(&marker).is_empty()));
    let started = home
        .audit_all()
        .into_iter()
        .filter(|r| r["phase"] == "started")
        .count();
    assert_eq!(started, RUNNING, "only the running ones started");
    let lines = audit_for(&home, "orphan.sh");
    assert_eq!(lines.len(), RUNNING, "one decision per running call");
    for rec in &lines {
        assert!(rec["reason"].as_str().unwrap().contains("SIGTERM"), "{rec}");
        assert!(rec["duration_ms"].is_u64(), "{rec}");
    }
}

/// A script at the skill root is described and refused under the name a directive resolves
/// (`t:root.sh`), and the pattern the refusal suggests lets the call run.
#[test]
fn a_root_script_is_named_as_a_directive_names_it() {
    let home = setup();
    home.write(
        "skills/t/root.sh",
        "#!/bin/sh\n# At the root.\necho root \"$@\"\n",
    );
    // `scripts/*` does not cover a root script: it is not offered, and a call says why.
    let mut c = Client::start(&home, &["--allow-scripts", "-y", "--allow", "x"]);
    let names = tool_names(&mut c);
    assert!(!names.contains(&"t__root".to_string()), "{names:?}");
    assert!(names.contains(&"t__echo".to_string()), "{names:?}");
    let r = c.call("t__root", json!({"args": ["a"]}));
    assert_eq!(r["isError"], true);
    assert!(
        text(&r)
            .contains("`t:root.sh a` is not in allowed_commands (allow it with --allow 't:root'"),
        "{r}"
    );
    c.close();
    let mut c = Client::start(&home, &["-y", "--allow", "t:root"]);
    let tools = c.request("tools/list", json!({}));
    let root = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "t__root")
        .unwrap()
        .clone();
    assert_eq!(root["description"], "At the root. (t:root.sh of skill t)");
    let r = c.call("t__root", json!({"args": ["a"]}));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(text(&r).trim(), "root a");
    c.close();
}

/// A client that declares elicitation in `url` mode only cannot be asked to confirm (a choice
/// needs `form`): the refusal says which mode it lacks, not that it declared none.
#[test]
fn a_client_with_url_elicitation_only_is_told_form_is_missing() {
    let home = setup();
    let input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {"url": {}}},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "t__echo", "arguments": {}}}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect::<String>();
    let mut child = server_cmd(&home, &["--allow-scripts"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut call = Value::Null;
    for line in stdout.lines() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if v["id"] == 2 {
            call = v;
            break;
        }
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let why = text(&call["result"]).to_string();
    assert_eq!(call["result"]["isError"], true, "{call}");
    assert!(
        why.contains(
            "it declared elicitation in `url` mode only, and a confirmation needs `form` mode"
        ),
        "{why}"
    );
    assert!(!why.contains("declared no elicitation capability"), "{why}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("in `url` mode only"), "{err}");
}

/// What the strictest function-calling APIs refuse in a tool declaration, written down from
/// their documentation:
/// - Gemini function declarations (ai.google.dev, `FunctionDeclaration` and `Schema`): the
///   parameters are an OBJECT schema; an OBJECT needs non-empty `properties` ("should be
///   non-empty for OBJECT type"); `type` is one type, not a list; `enum` is for strings; a
///   name starts with a letter or underscore and holds letters, digits, `_`, `.` or `-`, at
///   most 64.
/// - OpenAI function calling in strict mode (platform.openai.com, Structured Outputs'
///   supported schemas): the root is an object; every array names its `items`; `required`
///   names only declared properties; `additionalProperties`, where given, is `false`; only the
///   supported keywords; names match `^[a-zA-Z0-9_-]{1,64}$`. Its two rules that would forbid
///   optional arguments (every property required, `additionalProperties: false` on every
///   object) bind only requests that send `strict: true`, which skillpipe does not.
/// - Anthropic tool use (docs.anthropic.com, `input_schema`): the root is `type: object`;
///   names match `^[a-zA-Z0-9_-]{1,64}$`; a description says what the tool does.
///
/// The keywords allowed are those all three accept.
fn portability_problems(name: &str, description: &str, schema: &Value) -> Vec<String> {
    const KEYWORDS: &[&str] = &[
        "type",
        "description",
        "properties",
        "required",
        "items",
        "enum",
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "additionalProperties",
        "title",
    ];
    const TYPES: &[&str] = &["object", "array", "string", "number", "integer", "boolean"];
    fn walk(path: &str, s: &Value, out: &mut Vec<String>) {
        let Some(obj) = s.as_object() else {
            out.push(format!("{path}: not a schema object"));
            return;
        };
        for k in obj.keys() {
            if !KEYWORDS.contains(&k.as_str()) {
                out.push(format!(
                    "{path}: keyword `{k}` is not accepted by all three"
                ));
            }
        }
        let ty = obj.get("type").and_then(Value::as_str);
        if !ty.is_some_and(|t| TYPES.contains(&t)) {
            out.push(format!("{path}: `type` must be one of {TYPES:?}"));
        }
        match ty {
            Some("object") => {
                let props = obj.get("properties").and_then(Value::as_object);
                match props {
                    Some(p) if !p.is_empty() => {
                        for (k, v) in p {
                            walk(&format!("{path}.{k}"), v, out);
                        }
                    }
                    _ => out.push(format!("{path}: an object needs non-empty `properties`")),
                }
                for r in obj
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let declared = r
                        .as_str()
                        .is_some_and(|r| props.is_some_and(|p| p.contains_key(r)));
                    if !declared {
                        out.push(format!("{path}: `required` names undeclared {r}"));
                    }
                }
                if obj
                    .get("additionalProperties")
                    .is_some_and(|a| *a != json!(false))
                {
                    out.push(format!("{path}: `additionalProperties` other than false"));
                }
            }
            Some("array") => match obj.get("items") {
                Some(items) => walk(&format!("{path}[]"), items, out),
                None => out.push(format!("{path}: an array needs `items`")),
            },
            _ => {}
        }
        if let Some(values) = obj.get("enum").and_then(Value::as_array)
            && (ty != Some("string") || !values.iter().all(Value::is_string))
        {
            out.push(format!("{path}: `enum` only of strings, on a string"));
        }
    }
    let mut out = Vec::new();
    let first_ok = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    let chars_ok = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !(first_ok && chars_ok && (1..=64).contains(&name.len())) {
        out.push(format!("name `{name}` is not portable"));
    }
    if description.trim().is_empty() {
        out.push("no description".into());
    }
    walk("$", schema, &mut out);
    out
}

/// Every tool offered — the shipped skills' and the fixtures' (plain scripts, a tool folder
/// with its schema, a JSON tool without one), over MCP and as chat's native tools, which are
/// the same declarations — passes the strictest rules of OpenAI, Anthropic and Gemini; and
/// the old shape of a plain script (an `input` object without properties) would not (the
/// control).
#[test]
fn every_offered_tool_schema_is_portable() {
    let home = setup();
    home.write(
        "skills/t/tools/stats/tool.yaml",
        "id: stats\nname: CSV statistics\nruntime: python3\nscript: stats.py\n",
    );
    home.write(
        "skills/t/tools/stats/schema.json",
        &json!({
            "type": "object",
            "properties": {
                "input_path": {"type": "string", "description": "the CSV file"},
                "columns": {"type": "array", "items": {"type": "string"}},
                "mode": {"type": "string", "enum": ["fast", "exact"]}
            },
            "required": ["input_path"],
            "additionalProperties": false
        })
        .to_string(),
    );
    home.write("skills/t/tools/stats/stats.py", "print('ok')\n");
    home.write(
        "skills/t/tools/raw/tool.yaml",
        "id: raw\ndescription: Echo the JSON it reads\nscript: raw.py\n",
    );
    home.write(
        "skills/t/tools/raw/raw.py",
        "import json, sys\nprint(json.dumps(json.load(sys.stdin)))\n",
    );
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/skills");
    let mut c = Client::start(&home, &["--allow-scripts", "-y", "--skills-dir", shipped]);
    let tools = c.request("tools/list", json!({}));
    let tools = tools["result"]["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for want in ["t__echo", "t__stats", "t__raw", "calc__calc", "load_skill"] {
        assert!(names.contains(&want), "{names:?}");
    }
    for t in &tools {
        let problems = portability_problems(
            t["name"].as_str().unwrap(),
            t["description"].as_str().unwrap_or(""),
            &t["inputSchema"],
        );
        assert!(problems.is_empty(), "{}: {problems:?}", t["name"]);
    }
    // The schemas say how arguments are passed.
    let echo = tools.iter().find(|t| t["name"] == "t__echo").unwrap();
    let how = echo["inputSchema"]["description"].as_str().unwrap();
    assert!(
        how.contains("command-line") && how.contains("stdin"),
        "{how}"
    );
    // A JSON tool without a schema takes its JSON as text, and it reaches stdin as JSON.
    let raw = c.call("t__raw", json!({"input": "{\"n\": 2}"}));
    assert_eq!(raw["isError"], false, "{raw}");
    assert_eq!(text(&raw).trim(), "{\"n\": 2}");
    // A plain script's `input` text reaches stdin as written.
    let echoed = c.call("t__echo", json!({"args": ["a"], "input": "line one"}));
    assert!(text(&echoed).contains("stdin: line one"), "{echoed}");
    c.close();
    // Control: the shape offered before would be refused by one of them.
    let old = json!({"type": "object", "properties": {
        "args": {"type": "array", "items": {"type": "string"}},
        "input": {"type": "object", "description": "JSON given on stdin"}}});
    assert!(!portability_problems("t__echo", "Echo", &old).is_empty());
}
