# lucid tasks. The README's two commands do not need `just`; these are conveniences.

# The offline demo (main job): the study's shape with local SmolLM2 + MiniLM on the bundled benchmark.
demo:
    cargo run --release -- demo

# The whole test suite, offline.
test:
    cargo test

# Ballista (cargo feature `ballista`, off by default): its own target folder, since the feature
# rebuilds DataFusion with default features plus tonic, prost, arrow-flight and axum (~25 min cold
# on 2 cores). Runs the test that compares Ballista (standalone, and `lucid ballista
# scheduler|executor` processes) with DataFusion on lucid's SQL functions.
test-ballista:
    CARGO_TARGET_DIR=target/ballista cargo test --features ballista --test integration ballista

# What CI runs.
ci:
    cargo fmt --check
    cargo clippy --all-targets -- -D warnings
    cargo test

# EX benchmark on SpiderMan-train against BIRD's official evaluator; figures in tests/bench/results/eval.md.
# BIRD_EVAL=path/to/evaluation.py points at the official script (never committed here).
bench-eval:
    cargo build --release
    python3 tests/bench/bench_eval.py --lucid target/release/lucid --data ../shared/data/spiderman-train --out tests/bench/results/eval.md

bench: bench-eval bench-pipeline bench-models bench-demo-calls bench-loop bench-report bench-audit bench-dag bench-kill bench-workers bench-view bench-box

# Memory-loop overhead: 3 arms x 2 seeds x 6,716 questions, scripted instant model; tests/bench/results/loop.md.
bench-loop:
    tests/bench/bench_loop.sh

# Pipeline overhead: cold run, identical rerun, one more seed; figures in tests/bench/results/pipeline.md.
bench-pipeline:
    cargo build --release
    tests/bench/bench_pipeline.sh target/release/lucid tests/bench/results/pipeline.md

# Model speed vs sentence-transformers and llama-cpp-python (installed into .venv-bench for the
# benchmark only; llama-cpp-python compiles from source, AVX2 with GGML_NATIVE off, and again
# with GGML_NATIVE on in .venv-bench-native — AVX-512 VNNI, as lucid's kernels use it — a second
# peer row that says so when it fails); figures in tests/bench/results/models.md.
bench-models:
    cargo build --release
    target/release/lucid models fetch
    test -x .venv-bench/bin/python || (python3 -m venv .venv-bench && CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" .venv-bench/bin/pip install -q sentence-transformers llama-cpp-python)
    test -x .venv-bench-native/bin/python || (python3 -m venv .venv-bench-native && CMAKE_ARGS="-DGGML_NATIVE=ON" .venv-bench-native/bin/pip install -q llama-cpp-python)
    python3 tests/bench/bench_models.py --lucid target/release/lucid --data ../shared/data/spiderman-train --peer-python .venv-bench/bin/python --llama-native-python .venv-bench-native/bin/python --out tests/bench/results/models.md

# One chat model (default the 1.5B, #74) against llama.cpp, paired in one sitting: lucid's figures
# then llama-cpp-python's (compiled from PyPI sources with GGML_NATIVE=ON into .venv-bench-native),
# round by round; its section in tests/bench/results/models.md is replaced, the rest kept.
bench-model-pair model="qwen2.5-coder-1.5b":
    cargo build --release
    target/release/lucid models fetch {{model}}
    test -x .venv-bench-native/bin/python || (python3 -m venv .venv-bench-native && CMAKE_ARGS="-DGGML_NATIVE=ON" .venv-bench-native/bin/pip install -q llama-cpp-python)
    python3 tests/bench/bench_model_pair.py --lucid target/release/lucid --model {{model}} --llama-python .venv-bench-native/bin/python --rounds 2 --out tests/bench/results/models.md

# The demo's model-call time on 20 fixed memento episodes (seed 0), SmolLM2 and Qwen2.5-Coder, every
# call computed; BEFORE=path/to/an/older/lucid adds its figures for a before/after pair. Figures in
# tests/bench/results/demo_calls.md (the JSON lines are appended; the table there is written by hand).
bench-demo-calls:
    cargo build --release
    tests/bench/bench_demo_calls.sh target/release/lucid smollm2 | tee -a tests/bench/results/demo_calls.jsonl
    tests/bench/bench_demo_calls.sh target/release/lucid qwen --model qwen2.5-coder | tee -a tests/bench/results/demo_calls.jsonl
    if [ -n "${BEFORE:-}" ]; then tests/bench/bench_demo_calls.sh "$BEFORE" smollm2-before | tee -a tests/bench/results/demo_calls.jsonl; fi

# The machine every absolute figure is quoted with: cores, memory, one thread's memory read bandwidth.
machine:
    python3 tests/bench/machine.py

# A cold release build of two commits, one after the other on an idle machine (default: what
# build.md holds, the shipped profile 7943728 against the last variant measured and not shipped,
# 8585627): tests/bench/results/build.md with the decisions in tests/bench/build_note.md, and the
# README's build figure from the SHIPPED one (before or after).
bench-build before="7943728" after="8585627" shipped="before":
    tests/bench/build_time.sh {{before}} /tmp/lucid-build/before
    tests/bench/build_time.sh {{after}} /tmp/lucid-build/after
    python3 tests/bench/build_report.py /tmp/lucid-build/before /tmp/lucid-build/after --shipped {{shipped}} --note tests/bench/build_note.md

# The demo end to end as a newcomer meets it after the build (fresh clone, empty model cache, pip's
# cache off) for two release builds in build_time.sh's layout, previous then current, alternating
# PAIRS times (current: e.g. `tests/bench/build_time.sh HEAD /tmp/lucid-build/current`):
# tests/bench/results/demo.md and the README's demo figure.
bench-demo previous="/tmp/lucid-build/before" current="/tmp/lucid-build/current" pairs="1":
    tests/bench/demo_time.sh {{previous}} {{current}} /tmp/lucid-demo {{pairs}}
    python3 tests/bench/demo_report.py /tmp/lucid-demo

# The report over a generated run of 10 million episode rows: wall time and peak memory; tests/bench/results/report.md.
bench-report:
    tests/bench/bench_report.sh

# llama.cpp's llama-server (built once from PyPI sources into .llama-server/) against lucid's
# OpenAI-compatible backend, forced choice included; tests/bench/results/llama_server.md and the
# recorded answers tests/fixtures/llama_server/ (the CI test's). Not in CI.
llama-server:
    tests/bench/llama_server.sh

# lucid's peak memory while agent programs flood their proxy, paired with the honest example agent; tests/bench/results/agent_box.md.
bench-box:
    tests/bench/bench_box.sh

# The referees on everything (#69): lucid's tool-use verdicts against BFCL's own on every generated
# reply, the ones only BFCL's decoder reads included (one sandbox process each: slow), and the code
# domain's gold check against its held-out attacks; the counts go to tests/bench/results/referees.log.
bench-referees:
    LUCID_REFEREE=all cargo test --test integration -- --nocapture tools_domain::the_checker code_verdicts 2>&1 | tee tests/bench/results/referees.log

# lucid view over a generated run of 10,000 episodes in headless Chromium: page open and filter, one
# episode's body served, and --export (wall and CPU); BEFORE=path/to/an/older/lucid adds its export
# time. tests/bench/results/view.md.
bench-view:
    tests/bench/bench_view.sh

# lucid audit of a generated bank of 1 million memories x 8 verifiers, 2,000 bootstrap resamples; tests/bench/results/audit.md.
bench-audit:
    tests/bench/bench_audit.sh

# The code domain's gold check per HumanEval problem (canonical and wrong bodies) against a one-run
# peer; the table of tests/bench/results/code.md.
bench-gold-check:
    cargo run --quiet --example gold_check_time -- 164

# Coverage of the hand-label audit's 95 % intervals (lucid audit --sample / --labels) over the grid of
# lucid::audit::coverage::grid, 1,000 samples a cell; tests/bench/results/hand_labels.md. A slice is a test.
audit-coverage:
    cargo run --quiet --example hand_label_coverage -- 1000 tests/bench/results/hand_labels.md

# The DAG-scheduled memory loop: 1,534 episodes against a 200 ms loopback server at concurrency 128/32/8/1; tests/bench/results/dag.md.
bench-dag:
    tests/bench/bench_dag.sh

# The kill tests 20 times in a row while a second build loads both cores; pass count in tests/bench/results/kill.md.
bench-kill:
    tests/bench/bench_kill.sh 20

# 1 worker vs 2 workers sharing tests/bench/workers.yaml through an S3 store (SeaweedFS on
# loopback), calls answered after 0.2 s by a loopback server; tests/bench/results/workers.md.
bench-workers:
    tests/bench/bench_workers.sh
