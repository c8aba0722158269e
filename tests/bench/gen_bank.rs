//! A synthetic memory bank with known properties (`lucid::audit::synth`): a decorrelated
//! truthful verifier, an echoing verifier, a noise verifier, re-grading judges, planted
//! leniency and sensitivity. For the audit benchmark (`just bench-audit`) and for trying
//! `lucid audit` on a bank whose answers are known.
//!
//! usage: cargo run --release --example gen_bank -- OUT.{parquet,csv} [MEMORIES] [VERIFIERS] [--continuous]

use lucid::audit::synth::{Planted, generate};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first() else {
        eprintln!("usage: gen_bank OUT.{{parquet,csv}} [MEMORIES] [VERIFIERS] [--continuous]");
        std::process::exit(2);
    };
    let nums: Vec<usize> = args[1..].iter().filter_map(|a| a.parse().ok()).collect();
    let spec = Planted {
        memories: nums.first().copied().unwrap_or(3000),
        verifiers: nums.get(1).copied().unwrap_or(3),
        continuous: args.iter().any(|a| a == "--continuous"),
        ..Planted::default()
    };
    let batch = generate(&spec);
    let path = std::path::Path::new(out);
    if out.ends_with(".csv") {
        let file = std::fs::File::create(path).expect("create the bank file");
        arrow::csv::Writer::new(file).write(&batch).expect("write csv");
    } else {
        lucid::table::write_parquet(path, &batch).expect("write parquet");
    }
    eprintln!("{} memories x {} verifiers -> {out}", spec.memories, spec.verifiers.max(3));
}
