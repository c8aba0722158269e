#!/usr/bin/env bash
# llama.cpp's own server against lucid's OpenAI-compatible backend. Builds `llama-server` once,
# offline, from the llama.cpp sources that llama-cpp-python 0.3.36's sdist vendors (PyPI,
# sha256-checked; cmake from PyPI; CPU with AVX2, no web UI, no OpenSSL) into .llama-server/
# (ignored), starts it on the SmolLM2 GGUF that `lucid models fetch` installs, runs
# tests/bench/llama_server_check.rs against it (tests/bench/results/llama_server.md) and records
# the server's raw answers to lucid's requests for the CI test (tests/fixtures/llama_server/).
# usage: tests/bench/llama_server.sh [RESPONSES.sqlite [PROMPTS]]
set -euo pipefail
cd "$(dirname "$0")/../.."
responses="${1:-${LUCID_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lucid}/responses.sqlite}"
prompts="${2:-100000}"
dir=.llama-server
ver=0.3.36
sha=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
url=https://files.pythonhosted.org/packages/ec/e9/e7de2b0463ea3ffbf0ede6cb21b58c1258a8f6521aae45ca773a59fe7cf3/llama_cpp_python-$ver.tar.gz
mkdir -p "$dir"
if [ ! -x "$dir/bin/llama-server" ]; then
  python3 -m pip install --quiet --disable-pip-version-check 'cmake>=3.18'
  [ -f "$dir/src.tar.gz" ] || curl -sSL -o "$dir/src.tar.gz" "$url"
  echo "$sha  $dir/src.tar.gz" | sha256sum -c --quiet -
  tar xzf "$dir/src.tar.gz" -C "$dir"
  src="$dir/llama_cpp_python-$ver/vendor/llama.cpp"
  start=$(date +%s)
  cmake -S "$src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
    -DGGML_CUDA=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF >/dev/null
  cmake --build "$dir/build" --target llama-server -j"$(nproc)" >/dev/null
  echo "llama-server built in $(( $(date +%s) - start )) s on $(nproc) cores" | tee "$dir/build-time.txt"
  mkdir -p "$dir/bin" && cp "$dir/build/bin/llama-server" "$dir/bin/"
fi
models="${LUCID_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lucid}/models"
gguf="$models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
[ -f "$gguf" ] || { echo "no SmolLM2 GGUF at $gguf: run lucid models fetch" >&2; exit 1; }
port=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
"$dir/bin/llama-server" -m "$gguf" --host 127.0.0.1 --port "$port" -np 2 -c 4096 -t "$(nproc)" --no-webui \
  > "$dir/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do sleep 0.5; kill -0 $server; done
base="http://127.0.0.1:$port/v1"
# The raw answers to the request bodies lucid sends (src/llm/openai.rs, src/llm/forced_choice.rs).
fx=tests/fixtures/llama_server
mkdir -p "$fx"
post() { curl -s -H 'Content-Type: application/json' -d "$2" "$base/chat/completions" > "$fx/$1.json"; }
# A grader prompt of the factual set as lucid sends it for forced choice (the prefix as a final
# assistant message the server continues).
msgs=$(python3 - <<'PY'
import json
t = open("pipelines/prompts-factual/grader.txt").read().split("-#}", 1)[1].lstrip()
s = open("pipelines/prompts-factual/system.txt").read().split("-#}", 1)[-1].strip()
u = t.replace("{{ question }}", "What is the capital of France?").replace("{{ answer }}", "Paris")
print(json.dumps([{"role": "system", "content": s}, {"role": "user", "content": u}, {"role": "assistant", "content": "VERDICT:"}]))
PY
)
post chat '{"model":"smollm2","messages":[{"role":"user","content":"What is the capital of France? Answer in one word."}],"max_tokens":16,"temperature":0.0,"seed":0,"n":1}'
post stop '{"model":"smollm2","messages":[{"role":"user","content":"Count from 1 to 10, separated by commas."}],"max_tokens":48,"temperature":0.0,"seed":0,"n":1,"stop":["3"]}'
post forced_choice "{\"model\":\"smollm2\",\"messages\":$msgs,\"max_tokens\":1,\"temperature\":0.0,\"seed\":0,\"n\":1,\"continue_final_message\":true,\"add_generation_prompt\":false,\"logprobs\":true,\"top_logprobs\":20}"
post overflow "{\"model\":\"smollm2\",\"messages\":[{\"role\":\"user\",\"content\":\"$(python3 -c "print('word ' * 20000)")\"}],\"max_tokens\":4,\"temperature\":0.0,\"seed\":0,\"n\":1}"
# Forced choice scored exactly (src/llm/llama_server.rs): the server's template, tokens, and one
# forced token's log-probability per step, for the same grader prompt.
python3 - "$base" "$fx/forced_choice_exact.json" "$msgs" <<'PY'
import json, sys, urllib.request
root, out, msgs = sys.argv[1].removesuffix("/v1"), sys.argv[2], json.loads(sys.argv[3])[:2]
def post(path, body):
    r = urllib.request.urlopen(urllib.request.Request(root + path, json.dumps(body).encode(), {"Content-Type": "application/json"}))
    return json.loads(r.read())
rec = {"messages": msgs, "apply_template": post("/apply-template", {"messages": msgs}), "tokenize": {}, "completion": []}
prompt = rec["apply_template"]["prompt"]
def tok(content, special):
    r = post("/tokenize", {"content": content, "add_special": special})
    rec["tokenize"][content] = r
    return r["tokens"]
ids, done = tok(prompt, True), set()
for choice in ["VERDICT: CORRECT", "VERDICT: INCORRECT"]:
    joint = tok(prompt + choice, True)
    cont = joint[len(ids):]
    for j, t in enumerate(cont):
        if tuple(cont[:j + 1]) in done:
            continue
        done.add(tuple(cont[:j + 1]))
        r = post("/completion", {"prompt": ids + cont[:j], "n_predict": 1, "n_probs": 1, "logit_bias": [[t, 1000.0]],
                                 "temperature": 0.0, "seed": 0, "cache_prompt": True, "post_sampling_probs": False})
        keep = {k: r[k] for k in ("content", "completion_probabilities", "tokens_evaluated")}
        rec["completion"].append({"prompt": ids + cont[:j], "token": t, "response": keep})
json.dump(rec, open(out, "w"), separators=(",", ":"))
PY
# A debug build of the check: a release example rebuilds DataFusion with the dev-dependencies'
# features (25 min). It only talks HTTP: the local answers come from a demo run's response cache
# (RESPONSES, default: the demo of `lucid run pipelines/demo.yaml --set seeds=[0,1,2]` in the
# default cache), which holds each grader request with the local model's forced-choice answer.
cargo build --quiet --example llama_server_check
target/debug/examples/llama_server_check "$base" tests/bench/results/llama_server.md "$responses" "$prompts"
[ -f "$dir/build-time.txt" ] && cat "$dir/build-time.txt" >> tests/bench/results/llama_server.md
