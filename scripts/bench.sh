#!/usr/bin/env bash
# Times `skillpipe filter` against `cat` on the same input, through a pipe, in one run, and
# reports ratios; then checks linearity (10 MB vs 100 MB), peak memory on hostile shapes, and
# the latency of a single byte. Usage: scripts/bench.sh [SIZE_MB]   (default 200)
# SKILLPIPE_BIN=path times another build (e.g. an older one) instead of the current release build;
# the scanner-alone figure always comes from the current tree.
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${1:-200}
cargo build --release -q
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c "import json,sys; print(json.load(sys.stdin)['target_directory'])")
bin=${SKILLPIPE_BIN:-$target_dir/release/skillpipe}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_STATE_HOME=$work/state

# gen SHAPE MB FILE — generated inputs (python3: deterministic, fast).
gen() {
  python3 - "$1" "$2" "$3" <<'PY'
import sys
shape, mb, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
size = mb * 1024 * 1024
unit = {
  "prose": ("The quick brown fox jumps over the lazy dog, and then it wanders off into the "
            "forest where the trees are tall and the air smells of pine. " * 8 + "\n\n"),
  "noise": ("100% sure! {braces} and `code` with 50%% off! wow!! a%b !x {y} ``tick`` %<> \n"),
  "unclosed": None,
  "nested": "%{",
}[shape]
with open(path, "wb") as f:
    if shape == "unclosed":
        f.write(b"%{")
        unit = "x" * 1023 + "\n"
    block = (unit * (65536 // len(unit) + 1)).encode()
    written = 0
    while written < size:
        n = min(len(block), size - written)
        f.write(block[:n]); written += n
PY
}

# best of 3 wall-clock seconds for: cat FILE | CMD > /dev/null
best() {
  local file=$1; shift
  local best=""
  for _ in 1 2 3; do
    local s e
    s=$(date +%s.%N)
    cat "$file" | "$@" > /dev/null 2>&1
    e=$(date +%s.%N)
    best=$(python3 -c "import sys; a=float('$e')-float('$s'); b='$best'; print(a if not b else min(a,float(b)))")
  done
  echo "$best"
}

echo "== throughput: ${size_mb} MB of prose through a pipe (cat and filter alternate, 7 runs each)"
gen prose "$size_mb" "$work/prose"
python3 - "$size_mb" "$work/prose" "$bin" <<'PY'
import statistics, subprocess, sys, time
mb, path, bin = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def run(cmd):
    t = time.perf_counter()
    subprocess.run(f"cat '{path}' | {cmd} > /dev/null 2>&1", shell=True, check=True)
    return time.perf_counter() - t
cat, sp = [], []
for _ in range(7):  # alternate, so that load from elsewhere hits both alike
    cat.append(run("cat"))
    sp.append(run(f"'{bin}' filter"))
c, s = min(cat), min(sp)
print(f"cat:              {mb/c:8.0f} MB/s  ({c:.3f} s, best)")
print(f"skillpipe filter: {mb/s:8.0f} MB/s  ({s:.3f} s, best)")
print(f"ratio filter/cat: {c/s*100:5.1f} % of cat's throughput, best of each (target >= 50 %)")
print(f"                  {statistics.median(cat)/statistics.median(sp)*100:5.1f} % with medians")
PY

echo "== linearity and peak memory (10 MB vs 100 MB per shape, net of the time for empty input)"
: > "$work/empty"
t0=$(best "$work/empty" "$bin" filter)
for shape in prose noise unclosed nested; do
  gen "$shape" 10 "$work/s10"
  gen "$shape" 100 "$work/s100"
  t10=$(best "$work/s10" "$bin" filter)
  t100=$(best "$work/s100" "$bin" filter)
  /usr/bin/time -o "$work/rss" -f '%M' "$bin" filter < "$work/s100" > /dev/null 2>&1
  rss=$(tail -1 "$work/rss")
  python3 - "$shape" "$t0" "$t10" "$t100" "$rss" <<'PY'
import sys
shape, t0, a, b, rss = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
a, b = max(a - t0, 1e-4), max(b - t0, 1e-4)
print(f"{shape:9s} 10 MB {a:.3f} s ({10/a:5.0f} MB/s), 100 MB {b:.3f} s ({100/b:5.0f} MB/s), "
      f"ratio {b/a:5.1f} (linear ~10), peak RSS {rss/1024:.1f} MB")
PY
done

echo "== peak memory on 1 GB: '%{' that never closes, then 1 GB"
python3 -c "
import sys
sys.stdout.buffer.write(b'%{')
block = b'y' * 1048576
for _ in range(1024): sys.stdout.buffer.write(block)
" | /usr/bin/time -o "$work/rss" -f '%M' "$bin" filter > /dev/null 2>&1
rss=$(tail -1 "$work/rss")
echo "peak RSS $((rss / 1024)) MB (target < 20 MB)"

echo "== latency: one byte in, one byte out (median of 200)"
python3 - "$bin" <<'PY'
import os, subprocess, sys, time, statistics
p = subprocess.Popen([sys.argv[1], "filter"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
lat = []
for i in range(200):
    t = time.perf_counter()
    os.write(p.stdin.fileno(), b"a")
    os.read(p.stdout.fileno(), 1)
    lat.append((time.perf_counter() - t) * 1000)
p.stdin.close(); p.wait()
print(f"median {statistics.median(lat):.3f} ms, max {max(lat):.3f} ms (target: a few ms)")
PY

echo "== startup: skillpipe --version (median of 50)"
python3 - "$bin" <<'PY'
import subprocess, sys, time, statistics
ts = []
for _ in range(50):
    t = time.perf_counter()
    subprocess.run([sys.argv[1], "--version"], stdout=subprocess.DEVNULL, check=True)
    ts.append((time.perf_counter() - t) * 1000)
print(f"median {statistics.median(ts):.2f} ms (target < 10 ms)")
PY

echo "== scanner alone: prose, 64 KiB chunks, no I/O (criterion; the first run compiles the bench)"
cargo bench -q --bench scan -- --noplot scan/prose 2>/dev/null | grep -E "^scan/|thrpt"

echo "== chat: first token on screen after it leaves a local server (median of 20)"
python3 - "$bin" <<'PY'
import http.server, json, os, statistics, subprocess, sys, threading, time
sent = {}
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        time.sleep(0.05)  # the model "thinks"
        def ev(obj):
            self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n"); self.wfile.flush()
        sent["t"] = time.time()
        ev({"choices": [{"index": 0, "delta": {"content": "X"}}]})
        ev({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        self.wfile.write(b"data: [DONE]\n\n"); self.wfile.flush()
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=srv.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
lat = []
for _ in range(20):
    p = subprocess.Popen([sys.argv[1], "chat", "--base-url", url, "--model", "m", "hi"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    os.read(p.stdout.fileno(), 1)
    lat.append((time.time() - sent["t"]) * 1000)
    p.wait()
srv.shutdown()
print(f"median {statistics.median(lat):.2f} ms, max {max(lat):.2f} ms (target < 5 ms)")
PY

echo "== skillpipe run of a no-op script vs the interpreter directly (median of 30 each)"
mkdir -p "$work/skills/noop/scripts"
printf -- '---\nname: noop\ndescription: does nothing\n---\nNothing.\n' > "$work/skills/noop/SKILL.md"
printf '# Does nothing.\nexit 0\n' > "$work/skills/noop/scripts/noop.sh"
python3 - "$bin" "$work" <<'PY'
import subprocess, sys, time, statistics, shutil
bin, work = sys.argv[1], sys.argv[2]
script = f"{work}/skills/noop/scripts/noop.sh"
def med(cmd):
    ts = []
    for _ in range(30):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, cwd=work)
        ts.append((time.perf_counter() - t) * 1000)
    return statistics.median(ts)
direct = med([shutil.which("bash"), script])
base = ["run", "noop", "noop", "--skills-dir", f"{work}/skills", "--allow-scripts", "-y"]
sandboxed = med([bin] + base)
plain = med([bin] + base + ["--allow-network", "--allow-filesystem"])
print(f"bash directly {direct:.2f} ms; skillpipe run {plain:.2f} ms unsandboxed (+{plain-direct:.2f}), "
      f"{sandboxed:.2f} ms sandboxed (+{sandboxed-direct:.2f}) (target: < 5 ms over direct)")
PY
