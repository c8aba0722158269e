//! A synthetic study run for the report benchmark (`just bench-report`): `episodes` and
//! `evaluation` tables of `--rows` episode rows over 2 seeds x 3 arms (no-memory, memento, lucid),
//! written in row groups of 250,000 so memory stays bounded. Outcomes follow the planted model of
//! tests/golden/reports.py (two-channel coupling, leniency 0.76, sensitivity 0.90, three detector
//! channels), driven by SplitMix64 so a size always gives the same tables.
//!
//! usage: cargo run --release --example gen_report_run -- OUT_DIR [ROWS]

use std::fs::File;
use std::sync::Arc;

use arrow::array::Float32Array;
use arrow::array::{
    ArrayRef, BooleanArray, Int64Array, ListArray, RecordBatch, StringArray, StructArray, UInt8Array, UInt64Array,
};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field};
use lucid::rng::SplitMix64;
use lucid::seam::tables::retrieved_fields;
use parquet::arrow::ArrowWriter;

const CHUNK: usize = 250_000;

fn uniform(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

#[derive(Default)]
struct Chunk {
    step: Vec<u64>,
    qid: Vec<i64>,
    offsets: Vec<i32>,
    m_step: Vec<u64>,
    m_qid: Vec<i64>,
    m_label: Vec<u8>,
    grade: Vec<&'static str>,
    r: Vec<Option<u8>>,
    q: Vec<u8>,
    flags: [Vec<bool>; 4],
    u: Vec<u8>,
    diff: Vec<&'static str>,
}

impl Chunk {
    fn batches(self, seed: u64, arm: &str) -> (RecordBatch, RecordBatch) {
        let n = self.step.len();
        let seeds: ArrayRef = Arc::new(UInt64Array::from(vec![seed; n]));
        let arms: ArrayRef = Arc::new(StringArray::from(vec![arm; n]));
        let steps: ArrayRef = Arc::new(UInt64Array::from(self.step));
        let qids: ArrayRef = Arc::new(Int64Array::from(self.qid));
        let m = self.m_step.len();
        let structs = StructArray::new(
            retrieved_fields(),
            vec![
                Arc::new(UInt64Array::from(self.m_step)),
                Arc::new(Int64Array::from(self.m_qid)),
                Arc::new(Float32Array::from(vec![0.5f32; m])),
                Arc::new(UInt8Array::from(self.m_label)),
                Arc::new(BooleanArray::from(vec![true; m])),
            ],
            None,
        );
        let item = Arc::new(Field::new("item", DataType::Struct(retrieved_fields()), false));
        let list = ListArray::new(item, OffsetBuffer::new(self.offsets.into()), Arc::new(structs), None);
        let [fe, fd, fl, ff] = self.flags;
        let episodes = RecordBatch::try_from_iter(vec![
            ("seed", seeds.clone()),
            ("arm", arms.clone()),
            ("step", steps.clone()),
            ("question_id", qids.clone()),
            ("retrieved", Arc::new(list) as ArrayRef),
            ("grade", Arc::new(StringArray::from(self.grade)) as ArrayRef),
            ("r", Arc::new(UInt8Array::from(self.r)) as ArrayRef),
            ("stored_q", Arc::new(UInt8Array::from(self.q)) as ArrayRef),
            ("flag_exec", Arc::new(BooleanArray::from(fe)) as ArrayRef),
            ("flag_degenerate", Arc::new(BooleanArray::from(fd)) as ArrayRef),
            ("flag_literal", Arc::new(BooleanArray::from(fl)) as ArrayRef),
            ("flagged", Arc::new(BooleanArray::from(ff)) as ArrayRef),
        ])
        .expect("episodes");
        let evaluation = RecordBatch::try_from_iter(vec![
            ("seed", seeds),
            ("arm", arms),
            ("step", steps),
            ("question_id", qids),
            ("db_id", Arc::new(StringArray::from(vec!["db"; n])) as ArrayRef),
            ("difficulty", Arc::new(StringArray::from(self.diff)) as ArrayRef),
            ("u", Arc::new(UInt8Array::from(self.u)) as ArrayRef),
        ])
        .expect("evaluation");
        (episodes, evaluation)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let out = std::path::PathBuf::from(args.get(1).expect("usage: gen_report_run OUT_DIR [ROWS]"));
    let rows: usize = args.get(2).map_or(10_000_000, |r| r.parse().expect("ROWS"));
    let arms = ["no-memory", "memento", "lucid"];
    let per = rows / (2 * arms.len());
    for seed in 0..2u64 {
        for arm in arms {
            let mut rng = SplitMix64(seed * 1000 + arm.len() as u64);
            let (mut u, mut q) = (Vec::with_capacity(per), Vec::with_capacity(per));
            let path = |t: &str| {
                let d = out.join(t);
                std::fs::create_dir_all(&d).unwrap();
                d.join(format!("seed-{seed}_arm-{arm}.parquet"))
            };
            let (mut w_ep, mut w_ev): (Option<ArrowWriter<File>>, Option<ArrowWriter<File>>) = (None, None);
            let mut chunk = Chunk { offsets: vec![0], ..Default::default() };
            for t in 0..per {
                let (mut bad, mut good, mut k) = (0.0f64, 0.0f64, 0.0f64);
                if arm != "no-memory" && t > 0 {
                    for _ in 0..4.min(t) {
                        let j = (rng.next_u64() % t as u64) as usize;
                        let label: u8 = q[j];
                        chunk.m_step.push(j as u64);
                        chunk.m_qid.push(j as i64);
                        chunk.m_label.push(label);
                        k += 1.0;
                        if label == 1 {
                            if u[j] == 0 { bad += 1.0 } else { good += 1.0 }
                        }
                    }
                }
                let (c_bad, c_good) = if k > 0.0 { (bad / k, good / k) } else { (0.0, 0.0) };
                let p_err = (0.30 + 0.40 * c_bad - 0.15 * c_good).clamp(0.0, 1.0);
                let ut: u8 = if uniform(&mut rng) < p_err { 0 } else { 1 };
                let roll = uniform(&mut rng);
                let (grade, r) = if roll < 0.05 {
                    ("unparseable", None)
                } else if roll < 0.08 {
                    ("skipped", None)
                } else {
                    let r = u8::from(uniform(&mut rng) < if ut == 0 { 0.76 } else { 0.90 });
                    (if r == 1 { "correct" } else { "incorrect" }, Some(r))
                };
                let wrong = ut == 0;
                let fe = uniform(&mut rng) < if wrong { 0.30 } else { 0.03 };
                let fd = uniform(&mut rng) < if wrong { 0.20 } else { 0.02 };
                let fl = uniform(&mut rng) < if wrong { 0.10 } else { 0.05 };
                let flagged = fe || fd || fl;
                let qt = if arm == "lucid" && flagged { 0 } else { r.unwrap_or(0) };
                u.push(ut);
                q.push(qt);
                chunk.step.push(t as u64);
                chunk.qid.push(t as i64);
                chunk.offsets.push(chunk.m_step.len() as i32);
                chunk.grade.push(grade);
                chunk.r.push(r);
                chunk.q.push(qt);
                for (f, v) in chunk.flags.iter_mut().zip([fe, fd, fl, flagged]) {
                    f.push(v);
                }
                chunk.u.push(ut);
                chunk.diff.push(["simple", "moderate", "challenging"][t % 3]);
                if chunk.step.len() == CHUNK || t + 1 == per {
                    let (ep, ev) = std::mem::replace(&mut chunk, Chunk { offsets: vec![0], ..Default::default() })
                        .batches(seed, arm);
                    let w = w_ep.get_or_insert_with(|| {
                        ArrowWriter::try_new(File::create(path("episodes")).unwrap(), ep.schema(), None).unwrap()
                    });
                    w.write(&ep).unwrap();
                    let w = w_ev.get_or_insert_with(|| {
                        ArrowWriter::try_new(File::create(path("evaluation")).unwrap(), ev.schema(), None).unwrap()
                    });
                    w.write(&ev).unwrap();
                }
            }
            w_ep.unwrap().close().unwrap();
            w_ev.unwrap().close().unwrap();
        }
    }
    println!("{} episode rows in {}", per * 6, out.display());
}
