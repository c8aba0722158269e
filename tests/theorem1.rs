//! Theorem 1's retrieval channel measured on a live loop, by a check a wrong sampler fails. A
//! planted grader (leniency 0.3, sensitivity 0.9) stores mixed labels; two arms of one run draw
//! k = 1 memory per step by softmax over the stored labels at T = 0.5 and T = 1, and an honest arm
//! (Q = U) draws over the same candidate sets with lucid's own sampler. Both wrong masses are
//! counted from draws and held to the exact softmax probabilities; the same check rejects a
//! label-blind sampler and a temperature-blind one (always T = 1) on the same candidate sets.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use arrow::array::{Array, AsArray, RecordBatch, StringArray, UInt8Array, UInt64Array};
use arrow::datatypes::{DataType, Field, Float32Type, Float64Type, Int64Type, Schema, UInt8Type, UInt64Type};
use lucid::analysis::theory::a_ret;
use lucid::domains::registry::register;
use lucid::memory_loop::retrieval::{Policy, Retrieval};
use lucid::rng::SplitMix64;

use crate::support::fake_server::{FakeServer, Reply};
use crate::support::tiny_models::BERT_WORDS;
use crate::toy_domain::Arithmetic;

/// Tasks, so steps: 480 right answers and 960 wrong ones (a multiple of 30 keeps the planted
/// leniency and sensitivity exact).
const N: usize = 1440;
/// The run's seed: the sampler's random numbers are keyed by (seed, step).
const SEED: u64 = 0;
/// Candidates a step draws among (the most similar earlier memories).
const CANDIDATES: usize = 6;
/// Planted leniency P(r=1 | U=0) and sensitivity P(r=1 | U=1), in tenths.
const LENIENCY: i64 = 3;
const SENSITIVITY: i64 = 9;
/// Failure probability allowed to one mass check of a correct sampler. The real run makes four
/// (two arms at two temperatures), so it fails by chance with probability below 1e-6.
const DELTA: f64 = 2.5e-7;

/// Task `i` asks `i + (1000 + 7 i)`, answered right when `i` is a multiple of 3 and one too high
/// otherwise. The grader reads the question and the answer it is shown, and passes a wrong answer
/// when `(i / 3) % 10 < 3` and a right one when it is `< 9`: exactly l = 0.3 and s = 0.9 over
/// the N tasks, each task always graded the same.
fn planted(prompt: &str) -> String {
    let q = prompt.rsplit("Question:").next().unwrap_or("");
    let nums: Vec<i64> =
        q.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).filter_map(|s| s.parse().ok()).collect();
    let (a, b) = (nums[0], nums[1]);
    if !prompt.contains("VERDICT") {
        return (a + b + i64::from(a % 3 != 0)).to_string();
    }
    let right = nums[2] == a + b;
    let pass = (a / 3) % 10 < if right { SENSITIVITY } else { LENIENCY };
    (if pass { "VERDICT: CORRECT" } else { "VERDICT: INCORRECT" }).into()
}

/// Four words of the tiny BERT's vocabulary, drawn by task: its numbers are all [UNK] to that
/// model, so without them every question would embed alike and every step would draw among the
/// same few memories.
fn tail(question_id: i64) -> String {
    let words: Vec<&str> = BERT_WORDS.iter().copied().filter(|w| w.chars().all(|c| c.is_ascii_lowercase())).collect();
    let mut rng = SplitMix64(question_id as u64);
    (0..4).map(|_| words[(rng.next_u64() % words.len() as u64) as usize]).collect::<Vec<_>>().join(" ")
}

fn gold(question_id: i64) -> i64 {
    question_id + 1000 + 7 * question_id
}

/// One step of one arm: its candidates (most similar first) with their stored labels Q and
/// truths U, and the one the run drew.
#[derive(Clone, Debug)]
struct Step {
    step: usize,
    similarity: Vec<f32>,
    q: Vec<u8>,
    u: Vec<u8>,
    run_pick: usize,
}

/// One step's draws: its candidates' labels and truths, the candidate drawn under the stored
/// labels and the one drawn under honest labels (Q = U).
#[derive(Clone, Debug)]
struct Draw {
    q: Vec<u8>,
    u: Vec<u8>,
    stored: usize,
    honest: usize,
}

/// A sampler: which candidate of `step` it draws under `labels`.
type Sampler<'a> = &'a dyn Fn(&Step, &[u8]) -> usize;

/// lucid's softmax sampler at temperature `t`, with the run's seed.
fn softmax(t: f64) -> impl Fn(&Step, &[u8]) -> usize {
    let policy = Retrieval { policy: Policy::Softmax, temperature: t, candidates: CANDIDATES, ..Retrieval::default() };
    move |s: &Step, labels: &[u8]| {
        let candidates: Vec<(usize, f32)> = s.similarity.iter().copied().enumerate().collect();
        let d = policy.choose(SEED, s.step, &candidates, 1, |i| labels[i]);
        d.iter().position(|d| d.drawn).expect("one draw")
    }
}

/// Draws over `steps` under the stored labels by `stored` (None: the run's own) and under honest
/// labels by `honest`.
fn draws(steps: &[Step], stored: Option<Sampler>, honest: Sampler) -> Vec<Draw> {
    steps
        .iter()
        .map(|s| Draw {
            q: s.q.clone(),
            u: s.u.clone(),
            stored: stored.map_or(s.run_pick, |f| f(s, &s.q)),
            honest: honest(s, &s.u),
        })
        .collect()
}

/// The probability that one softmax draw at temperature `t` over candidates labelled `labels`
/// lands on a wrong one (U = 0): the exact per-step wrong mass. With every wrong label at b and
/// every right one at 1 it is Theorem 1's `A_ret(b, T, W, R)` times the honest mass.
fn wrong_mass(labels: &[u8], u: &[u8], t: f64) -> f64 {
    let w = |q: u8| (f64::from(q) / t).exp();
    let total: f64 = labels.iter().map(|&q| w(q)).sum();
    labels.iter().zip(u).filter(|&(_, &u)| u == 0).map(|(&q, _)| w(q)).sum::<f64>() / total
}

/// One arm's wrong mass: how many draws landed on wrong memories, what the closed form expects,
/// its standard deviation and the tolerance.
#[derive(Debug)]
struct Mass {
    drawn: f64,
    expected: f64,
    sd: f64,
    tolerance: f64,
}

impl Mass {
    /// Wrong draws over the steps, each drawn with its closed-form probability `p` of a wrong pick.
    /// The tolerance is Bernstein's: for independent draws, each within 1 of its mean,
    /// `P(|S - E S| >= x) <= 2 exp(-x^2 / (2 (var + x / 3)))`, solved for a bound of DELTA.
    fn of(picks: impl Iterator<Item = (bool, f64)>) -> Mass {
        let (mut drawn, mut expected, mut var) = (0.0, 0.0, 0.0);
        for (wrong, p) in picks {
            drawn += f64::from(u8::from(wrong));
            expected += p;
            var += p * (1.0 - p);
        }
        let l = (2.0 / DELTA).ln();
        Mass { drawn, expected, sd: var.sqrt(), tolerance: l / 3.0 + (l * l / 9.0 + 2.0 * l * var).sqrt() }
    }

    /// How many standard deviations the count is off the closed form.
    fn z(&self) -> f64 {
        (self.drawn - self.expected) / self.sd
    }

    fn holds(&self) -> bool {
        (self.drawn - self.expected).abs() <= self.tolerance
    }
}

impl std::fmt::Display for Mass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} wrong draws, closed form {:.1} (sd {:.2}, z {:+.1}, tolerance {:.1} = {:.1} sd)",
            self.drawn,
            self.expected,
            self.sd,
            self.z(),
            self.tolerance,
            self.tolerance / self.sd
        )
    }
}

/// Both arms' wrong masses at one temperature.
#[derive(Debug)]
struct Measured {
    stored: Mass,
    honest: Mass,
}

impl Measured {
    /// The amplification the draws show: wrong draws under stored labels over those under honest ones.
    fn a_measured(&self) -> f64 {
        self.stored.drawn / self.honest.drawn
    }

    /// The amplification the closed form gives the same candidate sets.
    fn a_closed(&self) -> f64 {
        self.stored.expected / self.honest.expected
    }

    /// Where `a_measured` lies whenever both masses are within tolerance.
    fn a_range(&self) -> (f64, f64) {
        let (s, h) = (&self.stored, &self.honest);
        (
            (s.expected - s.tolerance) / (h.expected + h.tolerance),
            (s.expected + s.tolerance) / (h.expected - h.tolerance),
        )
    }
}

/// The acceptance check: draws at temperature `t` are accepted when the wrong draws under stored
/// labels and those under honest labels each lie within their tolerance of the closed form
/// (summed per-step probabilities of a wrong pick under softmax(label / T)). A correct sampler is
/// rejected with probability at most 2 DELTA = 5e-7. Both masses within tolerance put the
/// measured amplification within [`Measured::a_range`] of the closed form's.
fn accepts(draws: &[Draw], t: f64) -> Result<Measured, String> {
    let arm = |pick: fn(&Draw) -> (&[u8], usize)| {
        Mass::of(draws.iter().map(|d| {
            let (labels, i) = pick(d);
            (d.u[i] == 0, wrong_mass(labels, &d.u, t))
        }))
    };
    let m = Measured { stored: arm(|d| (&d.q[..], d.stored)), honest: arm(|d| (&d.u[..], d.honest)) };
    match (m.stored.holds(), m.honest.holds()) {
        (true, true) => Ok(m),
        _ => Err(format!(
            "T = {t}: stored labels: {}; honest labels: {}; A_ret measured {:.3}, closed form {:.3}",
            m.stored,
            m.honest,
            m.a_measured(),
            m.a_closed()
        )),
    }
}

fn column<'a>(b: &'a RecordBatch, name: &str) -> &'a dyn Array {
    b.column_by_name(name).unwrap_or_else(|| panic!("no column {name}")).as_ref()
}

/// One arm of the planted run: its temperature, its steps with candidates, and the tables the
/// report SQL reads (its draws, and U per step in the shape of `evaluation`).
struct Arm {
    t: f64,
    steps: Vec<Step>,
    draws: RecordBatch,
    evaluation: RecordBatch,
}

/// The planted run, made once for the tests of this file.
fn planted_run() -> &'static [Arm] {
    static RUN: OnceLock<Vec<Arm>> = OnceLock::new();
    RUN.get_or_init(run)
}

fn run() -> Vec<Arm> {
    register::<Arithmetic>();
    let server = FakeServer::start(vec![], Reply::func(planted));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let questions: String = (0..N as i64)
        .map(|i| {
            let b = 1000 + 7 * i;
            format!(
                "{{\"id\": {i}, \"question\": \"What is {i} + {b}? {}\", \"answer\": \"{}\", \"topic\": \"sums\"}}\n",
                tail(i),
                gold(i)
            )
        })
        .collect();
    std::fs::write(d.join("sums.jsonl"), questions).unwrap();
    let bert = crate::support::tiny_models::write_tiny_bert(&d.join("bert"));
    let prompts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/toy_domain/prompts");
    let yaml = format!(
        "name: sums
seeds: [{SEED}]
arms: [cool, warm]
stages:
  - id: benchmark
    kind: benchmark
    config: {{source: sums, path: sums.jsonl}}
{front}  - id: agent
    kind: memory_loop
    matrix: [seed, arm]
    inputs: [tasks, order, retrieval]
    config:
      domain: {{kind: arithmetic}}
      model: {{backend: openai, model: toy, base_url: '{url}/v1', max_concurrency: 8}}
      prompts: '{prompts}'
      k: 1
      concurrency: 8
      arms:
        cool: {{mode: memento, retrieval: {{policy: softmax, temperature: 0.5, candidates: {CANDIDATES}}}}}
        warm: {{mode: memento, retrieval: {{policy: softmax, temperature: 1.0, candidates: {CANDIDATES}}}}}
",
        front = crate::support::order_embed_retrieve_k(&bert, Some(CANDIDATES)),
        url = server.url,
        prompts = prompts.display()
    );
    std::fs::write(d.join("sums.yaml"), yaml).unwrap();
    crate::support::run_in_process(d, "sums.yaml");
    [("cool", 0.5), ("warm", 1.0)].into_iter().map(|(name, t)| read_arm(d, name, t)).collect()
}

/// An arm's steps from its tables: U from the episodes' answers against the benchmark's sums, Q
/// from `stored_q`, the candidate sets from `draws`, and the pick from what the episode was shown.
fn read_arm(d: &Path, arm: &str, t: f64) -> Arm {
    let read = |table: &str| {
        lucid::table::read_parquet(&d.join(format!("runs/sums/{table}/seed-{SEED}_arm-{arm}.parquet"))).unwrap()
    };
    let eps = read("episodes");
    let step = column(&eps, "step").as_primitive::<UInt64Type>();
    let qid = column(&eps, "question_id").as_primitive::<Int64Type>();
    let value = column(&eps, "value").as_string::<i32>();
    let stored = column(&eps, "stored_q").as_primitive::<UInt8Type>();
    let retrieved = column(&eps, "retrieved").as_list::<i32>();
    let (mut u, mut q, mut shown) = (HashMap::new(), HashMap::new(), HashMap::new());
    for i in 0..eps.num_rows() {
        let s = step.value(i) as usize;
        let right = value.is_valid(i) && value.value(i).parse::<i64>().ok() == Some(gold(qid.value(i)));
        assert_eq!(right, qid.value(i) % 3 == 0, "the planted answers");
        u.insert(s, u8::from(right));
        q.insert(s, stored.value(i));
        let r = retrieved.value(i);
        let r_steps = r.as_struct().column_by_name("step").unwrap().as_primitive::<UInt64Type>();
        shown.insert(s, r_steps.values().iter().map(|&x| x as usize).collect::<Vec<_>>());
    }
    assert_eq!(u.len(), N);
    // The grader's leniency and sensitivity, as stored.
    let rate = |truth: u8| {
        let of: Vec<u8> = u.iter().filter(|&(_, &v)| v == truth).map(|(s, _)| q[s]).collect();
        (of.iter().map(|&x| usize::from(x)).sum::<usize>(), of.len())
    };
    let (right, wrong) = (N / 3, N - N / 3);
    assert_eq!(rate(0), (wrong * LENIENCY as usize / 10, wrong), "leniency");
    assert_eq!(rate(1), (right * SENSITIVITY as usize / 10, right), "sensitivity");

    let dr = read("draws");
    let (ds, rank, cand, sim, label, drawn) = (
        column(&dr, "step").as_primitive::<UInt64Type>(),
        column(&dr, "rank").as_primitive::<arrow::datatypes::UInt32Type>(),
        column(&dr, "candidate_step").as_primitive::<UInt64Type>(),
        column(&dr, "similarity").as_primitive::<Float32Type>(),
        column(&dr, "label").as_primitive::<UInt8Type>(),
        column(&dr, "drawn").as_boolean(),
    );
    let mut by_step: HashMap<usize, Vec<usize>> = HashMap::new();
    for i in 0..dr.num_rows() {
        by_step.entry(ds.value(i) as usize).or_default().push(i);
    }
    let mut steps: Vec<Step> = by_step
        .into_iter()
        .map(|(s, mut rows)| {
            rows.sort_by_key(|&i| rank.value(i));
            let candidate = |i: usize| cand.value(i) as usize;
            for &i in &rows {
                assert_eq!(label.value(i), q[&candidate(i)], "step {s}: the label drawn on is the one stored");
            }
            let picks: Vec<usize> = (0..rows.len()).filter(|&j| drawn.value(rows[j])).collect();
            assert_eq!(picks.len(), 1, "step {s}: k = 1");
            assert_eq!(shown[&s], [candidate(rows[picks[0]])], "step {s}: the draw is the memory shown");
            Step {
                step: s,
                similarity: rows.iter().map(|&i| sim.value(i)).collect(),
                q: rows.iter().map(|&i| label.value(i)).collect(),
                u: rows.iter().map(|&i| u[&candidate(i)]).collect(),
                run_pick: picks[0],
            }
        })
        .collect();
    steps.sort_by_key(|s| s.step);
    assert_eq!(steps.len(), N - 1, "every step but the first has candidates");
    assert!(steps.iter().all(|s| s.q.len() == CANDIDATES.min(s.step)));

    let mut order: Vec<usize> = u.keys().copied().collect();
    order.sort();
    let evaluation = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("arm", DataType::Utf8, false),
            Field::new("seed", DataType::UInt64, false),
            Field::new("step", DataType::UInt64, false),
            Field::new("u", DataType::UInt8, false),
        ])),
        vec![
            Arc::new(StringArray::from(vec![arm; N])),
            Arc::new(UInt64Array::from(vec![SEED; N])),
            Arc::new(order.iter().map(|&s| s as u64).collect::<UInt64Array>()),
            Arc::new(order.iter().map(|s| u[s]).collect::<UInt8Array>()),
        ],
    )
    .unwrap();
    Arm { t, steps, draws: dr, evaluation }
}

/// The per-step closed form is Theorem 1's as printed where the theorem's assumptions hold
/// (every wrong candidate at one b, every right one at 1).
#[test]
fn the_per_step_closed_form_is_theorem_1s_a_ret() {
    for t in [0.5, 1.0] {
        for (wrong, right) in (0..=6).flat_map(|w| (0..=6 - w).map(move |r| (w, r))).filter(|&(w, r)| w + r > 0) {
            let u: Vec<u8> = [vec![0; wrong], vec![1; right]].concat();
            let honest = wrong_mass(&u, &u, t);
            for b in [0u8, 1] {
                let q: Vec<u8> = u.iter().map(|&x| if x == 0 { b } else { 1 }).collect();
                let a = a_ret(f64::from(b), t, wrong as f64, right as f64);
                assert!((wrong_mass(&q, &u, t) - a * honest).abs() < 1e-12, "W {wrong} R {right} b {b} T {t}");
            }
        }
    }
}

/// Regression (Theorem 1 test could not fail for a wrong sampler): the check rejects a sampler
/// that ignores labels (uniform over the candidates) and one that ignores the temperature (always
/// T = 1), each drawing over the planted run's candidate sets with the run's seed.
#[test]
fn theorem_1_check_rejects_label_blind_and_temperature_blind_samplers() {
    for arm in planted_run() {
        let real = softmax(arm.t);
        let label_blind = |s: &Step, _: &[u8]| real(s, &vec![0; s.q.len()]);
        let err = accepts(&draws(&arm.steps, Some(&label_blind), &label_blind), arm.t).expect_err("label-blind");
        eprintln!("label-blind sampler rejected: {err}");
        let temperature_blind = softmax(1.0);
        let d = draws(&arm.steps, Some(&temperature_blind), &temperature_blind);
        if arm.t == 1.0 {
            // At T = 1 it is the real sampler.
            accepts(&d, arm.t).unwrap();
        } else {
            let err = accepts(&d, arm.t).expect_err("temperature-blind");
            eprintln!("temperature-blind sampler rejected: {err}");
        }
    }
}

/// The live loop's draws, and lucid's sampler under honest labels on the same candidate sets,
/// match the closed form at both temperatures (so their amplification lies within the range the
/// masses' tolerances allow around Theorem 1's), and the report SQL reads the same numbers from
/// the run's tables.
#[test]
fn softmax_reuse_amplifies_wrong_memories_as_theorem_1_says() {
    let arms = planted_run();
    let mut measured = Vec::new();
    for arm in arms {
        let m = accepts(&draws(&arm.steps, None, &softmax(arm.t)), arm.t).unwrap_or_else(|e| panic!("{e}"));
        let (lo, hi) = m.a_range();
        eprintln!(
            "T = {}: stored labels: {}; honest labels: {}; A_ret measured {:.3}, closed form {:.3}, range [{lo:.3}, {hi:.3}]",
            arm.t,
            m.stored,
            m.honest,
            m.a_measured(),
            m.a_closed()
        );
        assert!((lo..=hi).contains(&m.a_measured()));
        assert!(m.a_closed() > 1.1, "T = {}: the planted labels must amplify ({:.3})", arm.t, m.a_closed());
        measured.push(m);
    }

    // The report SQL computes the run's measured and exact amplification from its tables; both
    // divide by the honest mass in closed form, not by the honest arm's draws.
    let cat = |f: fn(&Arm) -> &RecordBatch| {
        let all: Vec<RecordBatch> = arms.iter().map(|a| f(a).clone()).collect();
        arrow::compute::concat_batches(&all[0].schema(), &all).unwrap()
    };
    let sql = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/reports/paper/retrieval_mass.sql"),
    )
    .unwrap();
    let tables = [("draws".into(), cat(|a| &a.draws)), ("evaluation".into(), cat(|a| &a.evaluation))];
    let out = lucid::runs::sql_over(&tables, &sql).unwrap();
    let f = |name: &str, i: usize| {
        arrow::compute::cast(out.column_by_name(name).unwrap(), &DataType::Float64)
            .unwrap()
            .as_primitive::<Float64Type>()
            .value(i)
    };
    for (i, m) in measured.iter().enumerate() {
        // Rows: (cool, 0), (cool, pooled), (warm, 0), (warm, pooled).
        let row = 2 * i;
        assert!(column(&out, "seed").is_valid(row));
        let measured_a = m.stored.drawn / m.honest.expected;
        assert!((f("measured_a", row) - measured_a).abs() < 1e-3, "{} vs {measured_a}", f("measured_a", row));
        assert!((f("exact_a", row) - m.a_closed()).abs() < 1e-3, "{} vs {}", f("exact_a", row), m.a_closed());
    }
}
