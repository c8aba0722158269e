# lucid tasks. The README's two commands do not need `just`; these are conveniences.

# The offline demo (main job): EX of the bundled sample predictions on the bundled benchmark.
demo:
    cargo run --release -- eval --bundled --pred data/mini/sample_predictions.json --per-question runs/demo-eval.jsonl

# The whole test suite, offline.
test:
    cargo test

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

bench: bench-eval bench-pipeline

# Pipeline overhead: cold run, identical rerun, one more seed; figures in tests/bench/results/pipeline.md.
bench-pipeline:
    cargo build --release
    tests/bench/bench_pipeline.sh target/release/lucid tests/bench/results/pipeline.md
