//! The integration tests: one binary, one module per feature.

mod agent_pipelines;
mod agent_program;
mod agent_rules;
mod architecture;
mod audit;
#[cfg(feature = "ballista")]
mod ballista;
mod code_domain;
mod dag_loop;
mod domain_registry;
mod eval_cli;
mod eval_rule;
mod exactness;
mod factual;
mod hand_labels;
mod hostile_sql;
mod import;
mod literal_grounding;
mod llama_server;
mod llm_http;
mod models;
mod pipeline;
mod python_sandbox;
mod reports;
mod shared_store;
mod slt;
mod spiderman;
mod stage_keys;
mod study;
mod support;
mod tables;
mod theorem1;
mod toy_domain;
mod unchanged;
mod verifiers;
mod view;
