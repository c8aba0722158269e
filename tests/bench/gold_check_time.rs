//! The code domain's gold check, timed per problem (`lucid::python::gold::check`) on HumanEval's
//! 164 canonical solutions and one wrong body each (`return None`), against a peer in the same
//! run: the test and the solution in one interpreter run (what the check replaces; unsound, see
//! `src/python/gold.rs`). `just bench-gold-check` prints the table `tests/bench/results/code.md`
//! quotes.
//!
//! usage: cargo run --example gold_check_time -- [PROBLEMS]

use std::time::Instant;

use lucid::python::{PyLimits, Python};

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(164);
    let cache = lucid::cache_dir::cache_dir();
    let code = lucid::model_files::model_path(&lucid::model_files::models_dir(&cache), "code");
    let py: Python = lucid::python::package::interpreter(&cache).expect("run `lucid models fetch code` first");
    let file = lucid::domains::code::data::humaneval_file(&code).expect("HumanEval");
    let problems = lucid::domains::code::data::humaneval::read(&file).expect("HumanEval");
    let limits = PyLimits::default();
    let (mut check_s, mut wrong_s, mut peer_s) = (Vec::new(), Vec::new(), Vec::new());
    let (mut fuel, mut passed, mut caught) = (0u64, 0, 0);
    for p in problems.iter().take(n) {
        let t = Instant::now();
        let v = lucid::python::gold::check(&py, &p.prompt, &p.canonical_solution, &p.test, &p.entry_point, &limits);
        check_s.push(t.elapsed().as_secs_f64());
        fuel += v.fuel;
        passed += usize::from(v.passed);
        let t = Instant::now();
        let w = lucid::python::gold::check(&py, &p.prompt, "    return None\n", &p.test, &p.entry_point, &limits);
        wrong_s.push(t.elapsed().as_secs_f64());
        caught += usize::from(!w.passed);
        let t = Instant::now();
        let program = format!("{}{}\n{}\ncheck({})\n", p.prompt, p.canonical_solution, p.test, p.entry_point);
        py.run_code(&program, b"", &limits);
        peer_s.push(t.elapsed().as_secs_f64());
    }
    let stats = |xs: &mut Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        (mean, xs[xs.len() / 2], xs[xs.len() - 1])
    };
    let (cm, cmed, cmax) = stats(&mut check_s);
    let (wm, wmed, wmax) = stats(&mut wrong_s);
    let (pm, pmed, pmax) = stats(&mut peer_s);
    println!("problems {n}; canonical passed {passed}; wrong bodies failed {caught}; check fuel {fuel}");
    println!("| run | mean s | median s | max s |");
    println!("|---|---|---|---|");
    println!("| gold check, canonical | {cm:.3} | {cmed:.3} | {cmax:.3} |");
    println!("| gold check, wrong body | {wm:.3} | {wmed:.3} | {wmax:.3} |");
    println!("| peer: test and solution in one run | {pm:.3} | {pmed:.3} | {pmax:.3} |");
    println!("ratio check / peer (means): {:.2}", cm / pm);
}
