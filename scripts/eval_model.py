#!/usr/bin/env python3
"""Measures how well a model uses skillpipe's directives (issues #13 and #34).

THE RULE: the cases are split in two. scripts/eval/tune.json (and tune-catalog.json) hold the
cases prompts, guides, examples and coaching may be tuned on. scripts/eval/heldout.json holds
cases that are only reported: nobody changes a prompt, a skill's example or a coaching piece
while reading them, and a change is judged by its held-out figure on both model sizes. A held-out
case whose text or answers were read while tuning moves to the tune set, and a new one takes its
place. For a held-out set the table prints marks only; answers go to --out.

Runs every case of a case file through `skillpipe chat` against an OpenAI-compatible endpoint,
one process and one audit log per case, and scores each case from its audit log and its answer:

- right: every directive the case needs ran: its own (`kind`, `expect`, `arg`, `answer`) and each
  of `also` (same fields): the expected script, the right kind (capture or side effect) and,
  where named, the right argument or result (a copied example is wrong); a `load` case (catalog
  mode) read the skill named by `expect` with `!{skill NAME}`;
- all ran: every needed script ran at all, whatever its arguments (so a case that looked the
  word up but never pronounced it shows as such);
- false: a case that needs no directive (a plain question, a question about the syntax) made any
  audit line at all (ran, denied or invalid);
- used: a capture ran and its output (re-computed by running the same script on the same
  arguments) appears in the final answer, in the model's own words: when the model said nothing
  after it and skillpipe showed the output instead (its notice on stderr), it is not counted;
- empty: the model gave no answer: the output is blank (skillpipe's "no answer: ..." or "the
  model wrote no text" notice goes to stderr).

The summary also counts refusals by reason (the policy's, the per-answer bounds), so a guard
shows how often it acted.

Shipped agents are copied with `temperature` (and `max_tokens`) replaced, so runs are repeatable.
Needs only Python 3 and a built skillpipe; see docs/model-fit-and-evaluation.md.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(ROOT, "scripts/eval/tune.json")
SKILLS = os.path.join(ROOT, "skills")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base-url", default=os.environ.get("SKILLPIPE_BASE_URL", "http://127.0.0.1:8088/v1"),
                   help="OpenAI-compatible endpoint (default: $SKILLPIPE_BASE_URL or %(default)s)")
    p.add_argument("--model", default=os.environ.get("SKILLPIPE_MODEL", "qwen2.5-coder-0.5b"),
                   help="model name the endpoint serves (default: $SKILLPIPE_MODEL or %(default)s)")
    p.add_argument("--bin", default=os.environ.get("SKILLPIPE_BIN", os.path.join(ROOT, "target/debug/skillpipe")),
                   help="skillpipe binary to score (default: $SKILLPIPE_BIN, else this checkout's debug build, built first)")
    p.add_argument("--cases", default=CASES, help="case set, JSON (default: scripts/eval/tune.json; scripts/eval/heldout.json is only reported)")
    p.add_argument("--root", default=ROOT, help="checkout whose agents/ and skills/ are used (default: this one)")
    p.add_argument("--skills-dir", help="skills folder every case uses (default: ROOT/skills), e.g. a copy of a "
                   "public collection for scripts/eval/tune-catalog.json")
    p.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (default: %(default)s)")
    p.add_argument("--max-tokens", type=int, default=300, help="cap on each answer (0: keep the agent's; default: %(default)s)")
    p.add_argument("--only", action="append", default=[], help="run only cases whose id starts with this (repeatable)")
    p.add_argument("--out", help="keep per-case audit logs, answers and a summary.json here")
    p.add_argument("--timeout", type=int, default=300, help="seconds per case (default: %(default)s)")
    p.add_argument("--tools", action="store_true", help="pass --tools (native tool calls)")
    p.add_argument("--coach", default="small-model",
                   help="skillpipe's --coach for every case: off, small-model or pieces joined by commas (default: %(default)s)")
    p.add_argument("--extra", action="append", default=[], help="one more skillpipe flag for every case (repeatable)")
    p.add_argument("--rescore", metavar="DIR", help="run nothing: score again the answers and audit logs an earlier "
                   "--out DIR kept (cases with no answer there, e.g. a run cut short, are left out)")
    return p.parse_args()


def agent_copy(name, temperature, max_tokens, into):
    """The shipped agent NAME with its [params] temperature/max_tokens replaced; returns the path."""
    src = os.path.join(ROOT, "agents", name + ".toml")
    with open(src, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, section, had_params = [], None, False
    ours = ["temperature = %s" % temperature] + (["max_tokens = %d" % max_tokens] if max_tokens else [])
    for line in lines:
        header = re.match(r"^\s*\[([^\]]+)\]\s*$", line)
        if header:
            section = header.group(1).strip()
            out.append(line)
            if section == "params":
                had_params = True
                out.extend(ours)
            continue
        if section == "params" and re.match(r"^\s*temperature\s*=", line):
            continue
        if section == "params" and max_tokens and re.match(r"^\s*max_tokens\s*=", line):
            continue
        out.append(line)
    if not had_params:
        out.append("[params]")
        out.extend(ours)
    path = os.path.join(into, name + ".toml")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    return path


def audit_lines(path):
    """One record per decision: a run's "started" line is dropped, its "completed" line kept."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        records = [json.loads(l) for l in f if l.strip()]
    return [r for r in records if r.get("phase") != "started"]


def script_base(argv0):
    return argv0.rstrip("/").rsplit("/", 1)[-1]


def rerun(rec):
    """Runs the audited script again, directly, and returns its stdout ('' when it cannot)."""
    skill, argv = rec.get("skill"), rec.get("argv") or []
    if not skill or not argv:
        return ""
    rel = argv[0][len(skill) + 1:] if argv[0].startswith(skill + "/") else argv[0]
    path = os.path.join(SKILLS, skill, rel)
    if not os.path.isfile(path):
        return ""
    interp = {"py": "python3", "sh": "bash"}.get(path.rsplit(".", 1)[-1])
    cmd = ([interp] if interp else []) + [path] + argv[1:]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=os.path.dirname(path))
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return r.stdout


def normalise(text):
    text = text.lower().replace("\u2019", "'")
    return re.sub(r"(?<=\d),(?=\d{3})", "", text)  # 1,820 -> 1820


def value_of(output):
    """The part of a script's output an answer should contain: the first line, after `word: `."""
    first = output.strip().split("\n", 1)[0].strip()
    m = re.match(r"^[\w' -]+: (.+)$", first)
    return m.group(1) if m else first


def used_in(value, answer):
    value, answer = normalise(value).strip(), normalise(answer)
    if not value:
        return False
    if re.fullmatch(r"-?\d+(\.\d+)?", value):
        forms = {value}
        if "." in value:
            num = float(value)
            forms |= {"%.2f" % num, "%.1f" % num, ("%.2f" % num).rstrip("0").rstrip(".")}
        return any(re.search(r"(?<![\d.])" + re.escape(f) + r"(?!\d)", answer) for f in forms)
    words = [w for w in re.findall(r"[a-z']+", value) if len(w) > 3]
    if not words:
        return value in answer
    return sum(w in answer for w in words) / len(words) >= 0.6


def is_empty(answer):
    # skillpipe's "no answer" is a notice on stderr (src/chat/result.rs, no_answer), so an
    # empty answer is blank stdout.
    return not answer.strip()


# skillpipe's notice when it showed a capture's output because the model said nothing after it
# (src/chat/notice.rs, ShowedOutput): the answer's words are then the command's, not the model's.
SHOWED_OUTPUT = "the command's output is shown as the answer"

# Written in place of stderr when a case ran out of time (--timeout).
TIMED_OUT = "eval: timed out after %d s\n"


def needs_of(case):
    """Every directive a case needs: the case's own, then each of its `also`."""
    if case["kind"] not in ("capture", "side_effect"):
        return []
    return [case] + case.get("also", [])


def meet(need, records):
    """The records that ran the script `need` expects (any arguments), and of those the ones
    that are right (argument and result as named), with their re-computed outputs."""
    want_kind = "capture" if need["kind"] == "capture" else "side_effect"
    ran = [r for r in records
           if r.get("kind") in (want_kind, "tool") and r.get("decision") == "ran"
           and r.get("argv") and script_base(r["argv"][0]) == need["expect"]]
    right = ran
    if "arg" in need:
        right = [r for r in right if any(need["arg"].lower() in a.lower() for a in r["argv"][1:])]
    outputs = [rerun(r) for r in right] if need["kind"] == "capture" else [""] * len(right)
    if "answer" in need:
        keep = [(r, o) for r, o in zip(right, outputs) if used_in(need["answer"], value_of(o))]
        right, outputs = [r for r, _ in keep], [o for _, o in keep]
    return ran, right, outputs


def score(case, records, answer, errors=""):
    kind = case["kind"]
    row = {"id": case["id"], "kind": kind, "runs": len(records), "empty": is_empty(answer),
           "ran": sum(r.get("decision") == "ran" for r in records),
           "refused": [r.get("reason") or r.get("decision", "?") for r in records if r.get("decision") != "ran"]}
    row["got"] = "; ".join(
        "%s%s%s" % ("!" if r.get("kind") == "capture" else "%", " ".join(r.get("argv") or [])[:40],
                    "" if r.get("decision") == "ran" else " (" + r.get("decision", "?") + ")")
        for r in records
    )
    if kind in ("none", "syntax"):
        # Any directive where none was wanted, even one skillpipe refused, is a false trigger.
        row["false"] = bool(records)
        return row
    if kind == "load":
        # Catalog mode: the skill's instructions were read with !{skill NAME}.
        right = [r for r in records if r.get("decision") == "ran" and (r.get("argv") or [])[:2] == ["skill", case["expect"]]]
        row["right"] = row["all_ran"] = bool(right)
        row["needs"], row["met"] = 1, int(bool(right))
        row["stray"] = len(records) - len(right)
        return row
    needs = needs_of(case)
    met = [meet(n, records) for n in needs]
    row["needs"] = len(needs)
    row["met"] = sum(bool(right) for _, right, _ in met)
    row["right"] = row["met"] == len(needs)
    row["all_ran"] = all(ran for ran, _, _ in met)
    used_records = {id(r) for _, right, _ in met for r in right}
    row["stray"] = sum(id(r) not in used_records for r in records)
    captures = [(right, outputs) for n, (_, right, outputs) in zip(needs, met) if n["kind"] == "capture"]
    if captures:
        row["shown"] = SHOWED_OUTPUT in errors
        # Every capture the case needs ran right and its result is in the model's own answer.
        used = all(right and any(used_in(value_of(o), answer) for o in outputs) for right, outputs in captures)
        row["used"] = (used and not row["shown"]) if all(right for right, _ in captures) else None
    return row


def pct(n, d):
    return "%d/%d (%d%%)" % (n, d, round(100.0 * n / d)) if d else "0/0"


def prompt_sizes(binary, agents, env):
    sizes = {}
    for name, args in agents:
        path = os.path.join(ROOT, "agents", name + ".toml")
        if not os.path.exists(path):
            continue
        # The shipped agents with the shipped skills, whatever --skills-dir the cases use.
        r = subprocess.run([binary, "agents", "show", path, "--skills-dir", os.path.join(ROOT, "skills")] + args,
                           capture_output=True, text=True, cwd=ROOT, env=env)
        m = re.search(r"system prompt \((?:~\d+ tokens, )?(\d+) bytes", r.stdout)
        f = re.search(r"few-shot \((\d+) messages, about (\d+) bytes", r.stdout)
        sizes[name] = "%s + few-shot %s" % (m.group(1) if m else "?", f.group(2) if f else 0)
    return sizes


def run_case(a, case, log, work, env, agents_dir, copies):
    """Runs one case's chat; returns its answer, its stderr and the seconds it took, and keeps
    the answer beside the audit log."""
    cmd = [a.bin, "chat", "--base-url", a.base_url, "--model", a.model, "--yes",
           "--skills-dir", SKILLS, "--audit-log", log]
    if os.path.exists(log):
        os.remove(log)
    if case.get("agent"):
        name = case["agent"]
        if name not in copies:
            copies[name] = agent_copy(name, a.temperature, a.max_tokens, agents_dir)
        cmd += ["--agent", copies[name]]
    for v in case.get("vars", []):
        cmd += ["--var", v]
    cmd += ["--coach", a.coach] + case.get("args", []) + a.extra + (["--tools"] if a.tools else []) + [case["prompt"]]
    started = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=work, env=env, timeout=a.timeout)
        answer, errors = r.stdout, r.stderr
    except subprocess.TimeoutExpired as e:
        answer = (e.stdout or b"").decode("utf-8", "replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        errors = TIMED_OUT % a.timeout
    with open(log[: -len(".audit.jsonl")] + ".answer.txt", "w", encoding="utf-8") as f:
        f.write(answer + "\n--- stderr ---\n" + errors)
    return answer, errors, time.time() - started


def main():
    global ROOT, SKILLS
    a = parse_args()
    ROOT = os.path.abspath(a.root)
    SKILLS = os.path.abspath(a.skills_dir or os.path.join(ROOT, "skills"))
    # Cases run in scratch folders, so a relative binary path is resolved here, against the caller's folder.
    a.bin = os.path.abspath(a.bin)
    if not os.path.exists(a.bin):
        sys.exit("eval: no skillpipe binary at %s (run `cargo build`, or pass --bin)" % a.bin)
    with open(a.cases, encoding="utf-8") as f:
        case_file = json.load(f)
    cases, held_out = case_file["cases"], bool(case_file.get("held_out"))
    if a.only:
        cases = [c for c in cases if any(c["id"].startswith(o) for o in a.only)]
    work = tempfile.mkdtemp(prefix="skillpipe-eval-")
    out = a.out or os.path.join(work, "out")
    os.makedirs(out, exist_ok=True)
    # Settings that would change the endpoint or the model are dropped (the flags name them);
    # the API key stays, so a hosted endpoint can be scored too.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SKILLPIPE_", "OPENAI_", "R9S_")) or k == "OPENAI_API_KEY"}
    env.update(XDG_CONFIG_HOME=os.path.join(work, "config"), XDG_STATE_HOME=os.path.join(work, "state"), NO_COLOR="1")
    # The agents are the user's own (their config folder), so their script policy applies as shipped.
    agents_dir = os.path.join(work, "config", "skillpipe", "agents")
    os.makedirs(agents_dir)
    copies = {}
    rows = []
    print("eval: %d %s cases against %s (model %s, temperature %s, coach %s) with %s" % (
        len(cases), "held-out" if held_out else "tune", a.base_url, a.model, a.temperature, a.coach, a.bin), file=sys.stderr)
    if a.rescore:
        out = a.rescore
        cases = [c for c in cases if os.path.exists(os.path.join(out, c["id"] + ".answer.txt"))]
    for case in cases:
        log = os.path.join(out, case["id"] + ".audit.jsonl")
        if a.rescore:
            with open(os.path.join(out, case["id"] + ".answer.txt"), encoding="utf-8") as f:
                answer, _, errors = f.read().partition("\n--- stderr ---\n")
            secs = 0.0
        else:
            answer, errors, secs = run_case(a, case, log, work, env, agents_dir, copies)
        row = score(case, audit_lines(log), answer, errors)
        row["secs"] = round(secs, 1)
        # A slow server, not the model's choice: counted apart so a loaded machine does not pass
        # for a worse prompt.
        row["timed_out"] = errors.startswith(TIMED_OUT.split("%")[0])
        row["answer"] = answer.strip().replace("\n", " ")[:70]
        rows.append(row)
        # A held-out case's directives and answer are not shown: they stay in --out, to be read
        # only after the figures are final (the rule at the top).
        shown = "" if held_out else row["got"][:50]
        print("  %-20s %-11s runs=%d %s %.0fs" % (row["id"], row["kind"], row["runs"], shown, secs), file=sys.stderr)

    def mark(v):
        return "-" if v is None else ("yes" if v else "no")

    print("%-20s %-11s %-5s %-5s %-5s %-5s %-4s %-5s %s" % ("case", "kind", "right", "false", "used", "empty", "runs", "needs",
                                                          "all ran" if held_out else "directives / answer"))
    for r in rows:
        needs = "%d/%d" % (r["met"], r["needs"]) if "needs" in r else "-"
        text = mark(r.get("all_ran")) if held_out else "%s | %s" % (r["got"][:48] or "-", r["answer"])
        print("%-20s %-11s %-5s %-5s %-5s %-5s %-4d %-5s %s" % (
            r["id"], r["kind"], mark(r.get("right")), mark(r.get("false")), mark(r.get("used")),
            mark(r["empty"]), r["runs"], needs, text))
    need = [r for r in rows if r["kind"] in ("capture", "side_effect", "load")]
    multi = [r for r in need if r["needs"] > 1]
    free = [r for r in rows if r["kind"] in ("none", "syntax")]
    caps = [r for r in rows if "used" in r]
    ran_caps = [r for r in caps if r["used"] is not None]
    syntax = [r for r in rows if r["kind"] == "syntax"]
    refusals = {}
    for r in rows:
        for why in r["refused"]:
            refusals[why] = refusals.get(why, 0) + 1
    sizes = prompt_sizes(a.bin, [("researcher", []), ("study-buddy", []), ("vocab-tutor", [])], env)
    summary = {
        "set": "held-out" if held_out else "tune",
        "coach": a.coach,
        "right_directive": pct(sum(r["right"] for r in need), len(need)),
        "needed_directives_right": pct(sum(r["met"] for r in need), sum(r["needs"] for r in need)),
        "multi_need_all_ran": pct(sum(r["all_ran"] for r in multi), len(multi)),
        "multi_need_right": pct(sum(r["right"] for r in multi), len(multi)),
        "false_trigger": pct(sum(r["false"] for r in free), len(free)),
        "false_trigger_that_ran": pct(sum(r["ran"] > 0 for r in free), len(free)),
        "syntax_directives": sum(r["runs"] for r in syntax),
        "syntax_runs": sum(r["ran"] for r in syntax),
        "result_used_of_ran": pct(sum(bool(r.get("used")) for r in ran_caps), len(ran_caps)),
        "result_used_of_capture_cases": pct(sum(bool(r.get("used")) for r in caps), len(caps)),
        "results_shown_by_skillpipe": sum(bool(r.get("shown")) for r in caps),
        "empty_answers": sum(r["empty"] for r in rows),
        "timed_out": sum(r["timed_out"] for r in rows),
        "stray_runs_in_need_cases": sum(r["stray"] for r in need),
        "refusals": refusals,
        "system_prompt_bytes": sizes,
        "seconds": round(sum(r["secs"] for r in rows)),
    }
    print()
    for k, v in summary.items():
        print("%-30s %s" % (k, v))
    # A rescore keeps the run's own summary.json.
    with open(os.path.join(out, "rescored.json" if a.rescore else "summary.json"), "w", encoding="utf-8") as f:
        json.dump({"summary": summary, "rows": rows, "model": a.model, "base_url": a.base_url,
                   "temperature": a.temperature, "coach": a.coach, "cases": a.cases, "bin": a.bin}, f, indent=1)
    if a.out:
        print("per-case audit logs and answers: %s" % out, file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
