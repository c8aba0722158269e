//! The integration tests: one binary, one module per feature.

mod agent_rules;
mod architecture;
mod audit;
mod common;
mod dag_loop;
mod eval_cli;
mod eval_rule;
mod exactness;
mod fake_server;
mod hostile_sql;
mod literal_grounding;
mod llm_http;
mod models;
mod pipeline;
mod probes;
mod reports;
mod spiderman;
mod study;
mod tables;
mod tiny_models;
