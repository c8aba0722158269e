//! The math domain: gold comparison on every generated answer (the answer equals itself, a
//! perturbed one does not; each right answer written in the other common forms of #69 scores
//! right and its perturbed twin in the same form wrong); each answer-free channel on every gold
//! answer it can speak to (lint never fires on one; units and substitute accept it and refuse it
//! perturbed); the loop through every arm with a planted model, its channels and U as the rules
//! say, and no gold in any request.

use lucid::domains::math::answer::{self, MathValue};
use lucid::domains::math::{lint, substitute, tables, units};
use serde_json::Value as Json;

use crate::support::fake_server::{FakeServer, Reply};
use crate::support::probes::{Probe, require};

/// The generated problems (`lucid models fetch math`).
fn generated() -> (Vec<tables::MathTask>, Vec<tables::MathGold>) {
    tables::read(&lucid::domains::math::data::problems(&lucid::cache_dir::cache_dir()).unwrap()).unwrap()
}

/// A wrong answer of the gold's form: True/False flipped, a time a minute later, the next letter,
/// a list's first item plus one, the last digit of a base-n number changed, else the value plus one.
fn perturbed(module: &str, gold: &str) -> String {
    if module == "numbers__base_conversion" {
        let (head, last) = gold.split_at(gold.len() - 1);
        return format!("{head}{}", if last == "1" { "0" } else { "1" });
    }
    match answer::parse(gold) {
        Some(MathValue::Bool(b)) => if b { "False" } else { "True" }.into(),
        Some(MathValue::Time(m)) => answer::canonical(&MathValue::Time((m + 1) % 1440)),
        Some(MathValue::Choice(c)) => char::from(c as u8 + 1).to_string(),
        Some(MathValue::List(items)) => {
            let mut parts: Vec<String> = items.iter().map(answer::canonical).collect();
            parts[0] = format!("{} + 1", parts[0]);
            parts.join(", ")
        }
        _ if gold.len() == 1 && gold.chars().all(|c| c.is_ascii_lowercase()) => {
            char::from(gold.as_bytes()[0] + 1).to_string()
        }
        _ => format!("({gold}) + 1"),
    }
}

#[test]
fn every_generated_answer_equals_itself_and_not_a_perturbed_one() {
    if !require(Probe::Math) {
        return;
    }
    let (tasks, gold) = generated();
    assert_eq!(tasks.len(), 3150);
    let mut by_value = 0;
    for (t, g) in tasks.iter().zip(&gold) {
        assert!(answer::same(&t.module, &g.answer, &g.answer), "{} does not equal itself ({})", g.answer, t.module);
        let wrong = perturbed(&t.module, &g.answer);
        assert!(!answer::same(&t.module, &g.answer, &wrong), "{} equals {wrong} ({})", g.answer, t.module);
        // The canonical spelling of a value is that value.
        if let Some(v) = answer::parse(&g.answer).filter(|_| t.module != "numbers__base_conversion") {
            assert!(answer::same(&t.module, &g.answer, &answer::canonical(&v)), "{} ({})", g.answer, t.module);
            by_value += 1;
        }
    }
    assert!(by_value > 3000, "{by_value} answers read as values");
}

#[test]
fn the_channels_accept_every_gold_answer_and_refuse_perturbed_ones() {
    if !require(Probe::Math) {
        return;
    }
    let (tasks, gold) = generated();
    let (mut linted, mut converted, mut substituted) = (0, 0, 0);
    let mut wrong_calls = Vec::new();
    for (t, g) in tasks.iter().zip(&gold) {
        let (m, q, a) = (t.module.as_str(), t.question.as_str(), g.answer.as_str());
        if let Some(form) = lint::expected(m, q) {
            if !lint::fits(&form, a) {
                wrong_calls.push(format!("lint fires on the gold {a:?} of {q:?} ({m}, {form:?})"));
            }
            linted += 1;
        }
        let wrong = perturbed(m, a);
        if m == "measurement__conversion" && units::speaks(q) {
            if units::check(q, a) != Some(true) || units::check(q, &wrong) != Some(false) {
                wrong_calls.push(format!("units on {q:?}: gold {a:?} or {wrong:?} misjudged"));
            }
            converted += 1;
        }
        if let Some(ok) = substitute::check(m, q, a) {
            if !ok || substitute::check(m, q, &wrong) != Some(false) {
                wrong_calls.push(format!("substitute on {q:?} ({m}): gold {a:?} or {wrong:?} misjudged"));
            }
            substituted += 1;
        }
    }
    assert!(
        wrong_calls.is_empty(),
        "{} wrong calls:\n{}",
        wrong_calls.len(),
        wrong_calls[..wrong_calls.len().min(30)].join("\n")
    );
    eprintln!("lint spoke to {linted}, units to {converted}, substitute to {substituted} of {} problems", tasks.len());
    assert!(linted >= 3000, "lint speaks to {linted}");
    assert!(converted >= 80, "units speaks to {converted} of 90 conversions");
    assert!(substituted >= 600, "substitute speaks to {substituted}");
}

/// Per question: the planted answer, and (u, lint, units, substitute) as the rules say.
const PLANTED: &[(&str, &str, u8, bool, bool, bool)] = &[
    ("Solve 2679 = 127*r + 14*r for r.", "19", 1, false, false, false),
    ("What is the highest common divisor of 141552 and 144?", "72", 0, false, false, true),
    ("Divide 19 by 117750.", "38/235500", 1, true, false, false),
    ("How many micrograms are there in 3/8 of a milligram?", "3750", 0, false, true, false),
    ("What is -9876542 - 1?", "Answer: 5.", 0, false, false, false),
    ("Is 33924721 a prime number?", "I think so", 0, true, false, false),
];

/// The gold of the question asked `What is -9876542 - 1?`: it must reach no request.
const CANARY: &str = "9876543";

const PROBLEMS: &str = r#"{"id": "p0", "module": "algebra__linear_1d", "difficulty": "train-easy", "question": "Solve 2679 = 127*r + 14*r for r.", "answer": "19"}
{"id": "p1", "module": "numbers__gcd", "difficulty": "train-easy", "question": "What is the highest common divisor of 141552 and 144?", "answer": "144"}
{"id": "p2", "module": "arithmetic__div", "difficulty": "train-easy", "question": "Divide 19 by 117750.", "answer": "19/117750"}
{"id": "p3", "module": "measurement__conversion", "difficulty": "train-easy", "question": "How many micrograms are there in 3/8 of a milligram?", "answer": "375"}
{"id": "p4", "module": "arithmetic__add_or_sub", "difficulty": "train-easy", "question": "What is -9876542 - 1?", "answer": "-9876543"}
{"id": "p5", "module": "numbers__is_prime", "difficulty": "train-easy", "question": "Is 33924721 a prime number?", "answer": "False"}
"#;

/// The planted model: an answer per question (the prompt's last `Problem: ...` line), every
/// self-grade CORRECT.
fn planted(prompt: &str) -> String {
    if prompt.contains("VERDICT") {
        return "VERDICT: CORRECT".into();
    }
    let last = prompt.lines().rev().find(|l| l.trim_start().starts_with("Problem:")).unwrap_or("");
    let q = last.trim().trim_start_matches("Problem:").trim();
    PLANTED.iter().find(|p| p.0 == q).map_or("?", |p| p.1).into()
}

#[test]
fn the_math_loop_runs_every_arm_with_its_channels_and_never_shows_gold() {
    let server = FakeServer::start(vec![], Reply::func(planted));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("problems.jsonl"), PROBLEMS).unwrap();
    let bert = crate::support::tiny_models::write_tiny_bert(&d.join("bert"));
    let model = format!("{{backend: openai, model: planted, base_url: '{}/v1'}}", server.url);
    // No `prompts:`: the domain's own folder (pipelines/prompts-math) is found from the project root.
    let agent = format!("{{domain: {{kind: math}}, model: {model}, k: 2");
    let rows = crate::support::study::run_every_arm(
        d,
        "math",
        "{source: math-jsonl, path: problems.jsonl}",
        &agent,
        "",
        &bert,
        "SELECT e.arm, t.question, e.answer, e.form, e.channels, e.flagged, e.stored_q, v.u \
         FROM episodes e JOIN tasks t USING (question_id) \
         JOIN evaluation v ON v.arm = e.arm AND v.seed = e.seed AND v.step = e.step",
    );
    assert_eq!(rows.len(), PLANTED.len() * 4 * 2);
    for r in &rows {
        let &(_, _, u, lint, units, substitute) =
            PLANTED.iter().find(|p| p.0 == r["question"]).unwrap_or_else(|| panic!("{r}"));
        // A channel that cannot speak to the task is absent (silent).
        let fired = |name: &str| {
            let c = r["channels"].as_array().unwrap().iter().find(|c| c["name"] == name).cloned();
            c.map_or(Json::Bool(false), |c| c["fired"].clone())
        };
        let present: Vec<&str> =
            r["channels"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
        let speaks = match r["question"].as_str().unwrap() {
            q if q.starts_with("How many micrograms") => vec!["lint", "units"],
            q if q.starts_with("Solve") || q.contains("common divisor") => vec!["lint", "substitute"],
            _ => vec!["lint"],
        };
        assert_eq!(present, speaks, "{r}");
        assert_eq!(
            (fired("lint"), fired("units"), fired("substitute")),
            (lint.into(), units.into(), substitute.into()),
            "{r}"
        );
        assert_eq!(r["u"], u, "{r}");
        let flagged = lint || units || substitute;
        assert_eq!(r["flagged"], flagged, "{r}");
        let want_q = match r["arm"].as_str().unwrap() {
            "lucid" => u8::from(!flagged),
            "oracle" => u,
            _ => 1,
        };
        assert_eq!(r["stored_q"], want_q, "{r}");
    }
    let five = rows.iter().find(|r| r["question"] == "What is -9876542 - 1?").unwrap();
    assert_eq!((five["answer"].as_str(), five["form"].as_str()), (Some("5"), Some("integer")), "{five}");
    for r in server.requests() {
        let body: Json = r.body;
        assert!(!body.to_string().contains(CANARY), "gold reached a prompt: {body}");
    }
}

/// Integers in a text, in order.
fn integers(text: &str) -> Vec<i64> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '-'))
        .filter_map(|w| w.trim_start_matches('-').parse::<i64>().ok().map(|n| if w.starts_with('-') { -n } else { n }))
        .collect()
}

/// A program computing the problem's answer another way, where the test knows one: gcd and lcm of
/// the two numbers a question names, and a bare arithmetic expression: sums and products in
/// floating point (`0.1 + 0.2` prints `0.30000000000000004`), quotients in exact fractions.
fn second_path(module: &str, question: &str) -> Option<String> {
    let q = question.trim().trim_end_matches(['.', '?']);
    match module {
        "numbers__gcd" | "numbers__lcm" => {
            let n = integers(q);
            let f = if module == "numbers__gcd" { "gcd" } else { "lcm" };
            (n.len() == 2 && !q.contains('=')).then(|| format!("import math\nprint(math.{f}({}, {}))", n[0], n[1]))
        }
        m if m.starts_with("arithmetic__") => {
            let e = q.strip_prefix("What is ").or_else(|| q.strip_prefix("Calculate ")).unwrap_or(q);
            let plain = e.chars().all(|c| c.is_ascii_digit() || " .+-*/()".contains(c));
            if !plain || !e.chars().any(|c| c.is_ascii_digit()) {
                return None;
            }
            // Sums and products of decimals in floating point; a quotient in exact fractions
            // (floats lose digits to cancellation: `5558/(-1855) + 3`).
            Some(if e.contains('/') {
                format!("from fractions import Fraction as F\nprint({})", exact(e))
            } else {
                format!("print({e})")
            })
        }
        _ => None,
    }
}

/// Every number of an expression as an exact `F('...')`.
fn exact(e: &str) -> String {
    let mut out = String::new();
    let mut number = String::new();
    for c in e.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() || c == '.' {
            number.push(c);
            continue;
        }
        if !number.is_empty() {
            out.push_str(&format!("F('{number}')"));
            number.clear();
        }
        out.push(c);
    }
    out.trim_end().to_string()
}

#[test]
fn cross_path_agrees_with_every_gold_it_computes_a_second_way_and_refuses_it_perturbed() {
    use lucid::domains::math::cross_path;
    if !require(Probe::Math) {
        return;
    }
    let (tasks, gold) = generated();
    let limits = cross_path::limits();
    let mut checked = std::collections::BTreeMap::<&str, usize>::new();
    for (t, g) in tasks.iter().zip(&gold) {
        let Some(program) = second_path(&t.module, &t.question) else { continue };
        let text = format!("```python\n{program}\n```");
        let py = &crate::support::python::PY;
        let right = cross_path::check(py, &t.module, &g.answer, &text, &limits);
        let coarse = g.answer.parse::<f64>().is_ok_and(|v| v.abs() >= 2.5e10);
        if coarse && program.starts_with("print(") {
            // A float too coarse to tell neighbouring integers apart is no second path.
            assert!(
                right.is_none() || right == Some((true, String::new())),
                "{} -> {} ({program})",
                t.question,
                g.answer
            );
            continue;
        }
        assert_eq!(right.as_ref().map(|r| r.0), Some(true), "{} -> {} ({program}): {right:?}", t.question, g.answer);
        let wrong = perturbed(&t.module, &g.answer);
        let refused = cross_path::check(py, &t.module, &wrong, &text, &limits);
        assert_eq!(refused.as_ref().map(|r| r.0), Some(false), "{} -> {wrong} ({program})", t.question);
        *checked.entry(t.module.as_str()).or_default() += 1;
    }
    // gcd, lcm and the arithmetic modules' bare expressions (floats among them).
    assert!(checked.len() >= 4 && checked.values().sum::<usize>() >= 200, "{checked:?}");
}

#[test]
fn cross_path_is_silent_where_no_program_runs_to_an_answer_and_the_machine_is_unchanged() {
    use lucid::domains::math::cross_path;
    if !require(Probe::Math) {
        return;
    }
    let py = &crate::support::python::PY;
    let limits = cross_path::limits();
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("written-by-a-program");
    let touched = dir.path().join("touched-by-a-subprocess");
    let hostile = [
        "no program here, just words".to_string(),
        "```python\nprint(1/0)\n```".into(),
        "```python\nwhile True:\n    pass\n```".into(),
        "```python\nx = bytearray(10**9)\nprint(3)\n```".into(),
        "```python\nprint(open('/etc/passwd').read())\n```".into(),
        format!("```python\nopen({:?}, 'w').write('x')\nprint(3)\n```", canary.display().to_string()),
        "```python\nimport socket\nsocket.create_connection(('127.0.0.1', 22))\nprint(3)\n```".into(),
        format!(
            "```python\nimport subprocess\nsubprocess.run(['touch', {:?}])\nprint(3)\n```",
            touched.display().to_string()
        ),
        "```python\nprint('the answer is unknowable')\n```".into(),
        "```python\n```".into(),
    ];
    for text in &hostile {
        assert_eq!(cross_path::check(py, "arithmetic__add_or_sub", "3", text, &limits), None, "{text}");
    }
    assert!(!canary.exists() && !touched.exists(), "a sandboxed program changed the machine");
    // The same program that agrees is deterministic, and a planted wrong answer is named.
    let right = "Here it is:\n```python\nfrom fractions import Fraction\nprint(Fraction(5, 12) + Fraction(1, 12))\n```";
    assert_eq!(cross_path::check(py, "arithmetic__add_or_sub", "1/2", right, &limits), Some((true, String::new())));
    let refused = cross_path::check(py, "arithmetic__add_or_sub", "7/12", right, &limits).unwrap();
    assert_eq!(refused, (false, "the program printed \"1/2\"".to_string()));
}

/// One right answer written in another form and its perturbed twin: (form, right text, wrong text).
type Twin = (&'static str, String, String);

/// Each way of writing `right` beside the same way of writing `wrong`.
fn paired(form: &'static str, right: Vec<String>, wrong: Vec<String>) -> Vec<Twin> {
    assert_eq!(right.len(), wrong.len());
    right.into_iter().zip(wrong).map(|(r, w)| (form, r, w)).collect()
}

/// The twins of one problem's gold, each form where the gold has it: Markdown bold around a
/// labelled answer (and `**` inside one, a power), scientific notation, LaTeX fractions and `÷`,
/// superscript powers, lists in prose, 1/0 for True/False, choice letters, clock times.
fn twins(module: &str, gold: &str) -> Vec<Twin> {
    let mut out = bold_twins(module, gold);
    if module != "numbers__base_conversion" {
        for forms in [scientific_twins, fraction_twins, superscript_twins, list_twins, boolean_twins] {
            out.extend(forms(gold));
        }
        out.extend(choice_twins(module, gold));
        out.extend(time_twins(gold));
    }
    out
}

/// The gold in bold, around a label or itself, against the perturbed answer so written; and a
/// polynomial's `**` (a power) against the gold with every `**` dropped.
fn bold_twins(module: &str, gold: &str) -> Vec<Twin> {
    let write = |a: &str| {
        ["Answer: {}", "**Answer:** {}", "**Answer: {}**", "Answer: **{}**", "**{}**", "Work.\n**Answer**: {}"]
            .map(|f| f.replace("{}", a))
            .to_vec()
    };
    let mut out = paired("bold", write(gold), write(&perturbed(module, gold)));
    if gold.contains("**") {
        out.push(("power, not bold", format!("Answer: {gold}"), format!("Answer: {}", gold.replace("**", ""))));
    }
    out
}

/// A number (no fraction) as Rust's `{:e}` writes it (`1.5046e4`), with `E+`, and an integer as
/// `15046e0`; the twin's last mantissa digit changed.
fn scientific_twins(gold: &str) -> Vec<Twin> {
    let is_number = answer::number(&answer::parse(gold)).is_some() && !gold.contains('/') && gold.len() <= 15;
    let Some(x) = gold.parse::<f64>().ok().filter(|_| is_number) else { return vec![] };
    let e = format!("{x:e}");
    let (mantissa, exponent) = e.split_once('e').unwrap();
    let last = mantissa.chars().last().and_then(|c| c.to_digit(10)).unwrap();
    let bumped = format!("{}{}e{exponent}", &mantissa[..mantissa.len() - 1], (last + 1) % 10);
    let write = |s: &str| {
        let mut forms = vec![s.to_string(), s.replacen('e', if exponent.starts_with('-') { "E" } else { "E+" }, 1)];
        if let Ok(n) = gold.parse::<i64>() {
            forms.push(format!("{}e0", if s == e { n } else { n + 1 }));
        }
        forms
    };
    paired("scientific", write(&e), write(&bumped))
}

/// A fraction `a/b` as `\frac{a}{b}` (`\dfrac`, `\tfrac`, in `$` or `\boxed{}`) and as `a÷b`;
/// the twin's denominator one more.
fn fraction_twins(gold: &str) -> Vec<Twin> {
    let Some((n, d)) = gold.split_once('/').and_then(|(n, d)| Some((n.parse::<i64>().ok()?, d.parse::<i64>().ok()?)))
    else {
        return vec![];
    };
    let write = |d: i64| {
        let (sign, a) = (if n < 0 { "-" } else { "" }, n.abs());
        vec![
            format!("{sign}\\frac{{{a}}}{{{d}}}"),
            format!("$\\dfrac{{{n}}}{{{d}}}$"),
            format!("Answer: $\\boxed{{{sign}\\tfrac{{{a}}}{{{d}}}}}$"),
            format!("{n}÷{d}"),
            format!("{n} ÷ {d}"),
        ]
    };
    paired("fraction", write(d), write(d + 1))
}

/// Superscript digits for a number.
fn superscript(n: u32) -> String {
    n.to_string().chars().map(|c| "⁰¹²³⁴⁵⁶⁷⁸⁹".chars().nth(c.to_digit(10).unwrap() as usize).unwrap()).collect()
}

/// A polynomial's powers in superscripts (`u³ + u² - 225`), the twin's first power one more; a
/// decimal as digits times a power of ten (`695×10⁻⁵`), the twin's power one less.
fn superscript_twins(gold: &str) -> Vec<Twin> {
    let powers: Vec<(usize, u32)> = gold
        .match_indices("**")
        .filter_map(|(i, _)| gold[i + 2..].chars().next().and_then(|c| c.to_digit(10)).map(|e| (i, e)))
        .collect();
    if !powers.is_empty() && powers.iter().all(|&(i, _)| !gold[i + 3..].starts_with(|c: char| c.is_ascii_digit())) {
        let write = |bump: u32| {
            let mut s = gold.to_string();
            for (k, &(i, e)) in powers.iter().enumerate().rev() {
                s.replace_range(i..i + 3, &superscript(e + if k == 0 { bump } else { 0 }));
            }
            vec![s]
        };
        return paired("superscript", write(0), write(1));
    }
    let decimal = answer::number(&answer::parse(gold)).is_some() && !gold.contains('/');
    let Some((whole, frac)) = gold.split_once('.').filter(|_| decimal) else { return vec![] };
    let digits = format!("{whole}{frac}").trim_start_matches(['-', '0']).to_string();
    let sign = if gold.starts_with('-') { "-" } else { "" };
    let write = |k: usize| vec![format!("{sign}{digits}×10⁻{}", superscript(k as u32))];
    paired("superscript", write(frac.len()), write(frac.len() + 1))
}

/// A list as `a; b; c`, `a, b and c`, `a, b, and c`; the twin's last item one more.
fn list_twins(gold: &str) -> Vec<Twin> {
    let Some(MathValue::List(items)) = answer::parse(gold) else { return vec![] };
    let mut items: Vec<String> = items.iter().map(answer::canonical).collect();
    let write = |items: &[String]| {
        let (last, head) = items.split_last().unwrap();
        vec![items.join("; "), format!("{} and {last}", head.join(", ")), format!("{}, and {last}", head.join(", "))]
    };
    let right = write(&items);
    let last = items.last_mut().unwrap();
    *last = lucid::domains::math::exact::parse(&format!("{last} + 1")).unwrap().to_string();
    paired("list", right, write(&items))
}

/// True/False as 1/0, the twin the other digit; a number 1 or 0 against True/False, which it is not.
fn boolean_twins(gold: &str) -> Vec<Twin> {
    match answer::parse(gold) {
        Some(MathValue::Bool(b)) => paired("boolean", vec![u8::from(b).to_string()], vec![u8::from(!b).to_string()]),
        _ if gold == "1" || gold == "0" => {
            vec![("number, not boolean", gold.into(), if gold == "1" { "True" } else { "False" }.into())]
        }
        _ => vec![],
    }
}

/// A letter gold (`b`) as `B`, `b)`, `(B)`, `B.`, `Option B`, `option (b)`, `**(b)**` and
/// `Answer: (B)`; the twin the next letter.
fn choice_twins(module: &str, gold: &str) -> Vec<Twin> {
    let letter = gold.chars().next().filter(|c| gold.len() == 1 && c.is_ascii_lowercase());
    let Some(c) = letter.filter(|_| module.starts_with("comparison__")) else { return vec![] };
    let write = |c: char| {
        let u = c.to_ascii_uppercase();
        vec![
            u.to_string(),
            format!("{c})"),
            format!("({u})"),
            format!("{u}."),
            format!("Option {u}"),
            format!("option ({c})"),
            format!("**({c})**"),
            format!("Answer: ({u})"),
        ]
    };
    paired("choice", write(c), write(char::from(c as u8 + 1)))
}

/// A clock time on the 24-hour clock (`04:55`, `4:55`, `16:28`) and in 12-hour forms (`4:55
/// a.m.`, `4:55am`, `04:55 AM`, `4:55 A.M.`); the twins a minute later and twelve hours on; and
/// a PM time's 12-hour digits bare, which read as the morning.
fn time_twins(gold: &str) -> Vec<Twin> {
    let Some(MathValue::Time(m)) = answer::parse(gold) else { return vec![] };
    let write = |m: u32| {
        let (h, min) = (m / 60, m % 60);
        let (h12, am) = ((h + 11) % 12 + 1, h < 12);
        let (lower, upper) = if am { ("a.m.", "AM") } else { ("p.m.", "PM") };
        vec![
            format!("{h:02}:{min:02}"),
            format!("{h}:{min:02}"),
            format!("{h12}:{min:02} {lower}"),
            format!("{h12}:{min:02}{}", upper.to_ascii_lowercase()),
            format!("{h12:02}:{min:02} {upper}"),
            format!("{h12}:{min:02} {}", lower.to_ascii_uppercase()),
        ]
    };
    let mut out = paired("time", write(m), write((m + 1) % 1440));
    out.extend(paired("time", write(m), write((m + 720) % 1440)));
    let bare = format!("{}:{:02}", (m / 60 + 11) % 12 + 1, m % 60);
    if bare != write(m)[1] {
        out.push(("time", gold.into(), bare));
    }
    out
}

#[test]
fn issue_69_right_answers_in_every_common_form_score_right_and_their_perturbed_twins_wrong() {
    use lucid::domains::math::{MathConfig, MathDomain};
    use lucid::seam::{Domain, Judge};
    if !require(Probe::Math) {
        return;
    }
    let domain = MathDomain::new(MathConfig::default()).unwrap();
    let score = |t: &tables::MathTask, g: &tables::MathGold, text: &str| {
        let artifact = domain.extract(text).ok();
        domain.score(t, g, artifact.as_deref()).unwrap()
    };
    let (tasks, gold) = generated();
    let mut checked = std::collections::BTreeMap::<&str, usize>::new();
    let mut written = std::collections::BTreeSet::new();
    let mut misjudged = Vec::new();
    for (t, g) in tasks.iter().zip(&gold) {
        for (form, right, wrong) in twins(&t.module, &g.answer) {
            if score(t, g, &right) != 1 {
                misjudged.push(format!("{form}: {right:?} scored wrong for {:?} ({})", g.answer, t.module));
            }
            if score(t, g, &wrong) != 0 {
                misjudged.push(format!("{form}: {wrong:?} scored right for {:?} ({})", g.answer, t.module));
            }
            *checked.entry(form).or_default() += 1;
            written.insert(right);
        }
    }
    assert!(
        misjudged.is_empty(),
        "{} misjudged:\n{}",
        misjudged.len(),
        misjudged[..misjudged.len().min(40)].join("\n")
    );
    eprintln!("twins checked per form: {checked:?}");
    let forms =
        ["bold", "power, not bold", "scientific", "fraction", "superscript", "list", "boolean", "choice", "time"];
    for form in forms.into_iter().chain(["number, not boolean"]) {
        assert!(checked.get(form).is_some_and(|n| *n >= 20), "{form}: {checked:?}");
    }
    // The issue's own examples are among them.
    let examples = [
        "Answer: u**3 + u**2 - 225",
        "15046e0",
        "\\frac{2}{7}",
        "2÷7",
        "2; 7; 2381",
        "2, 7 and 2381",
        "04:55",
        "4:55 a.m.",
    ];
    for e in examples.into_iter().chain(["u³ + u² - 225", "B", "b)"]) {
        assert!(written.contains(e), "{e} was not checked");
    }
}
