//! The binary's body: dispatch a parsed command line to its command and turn errors into a
//! message and an exit code (0 success, 1 failure, 2 usage, 3 invalid input: [`Error::exit_code`]).

use std::ffi::OsString;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::commands;
use crate::error::Error;

/// Run the command line `args`; returns the process exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    let args: Vec<OsString> = args.into_iter().collect();
    // lucid re-executed as an agent program's box (src/agent/sandbox.rs), not a command.
    if args.get(1).is_some_and(|a| a == crate::agent::sandbox::LAUNCHER) {
        return crate::agent::sandbox::launcher(&args[2..]);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let result = match cli.command {
        Command::Eval(a) => commands::eval::run(&a),
        Command::Load(a) => commands::load::run(&a),
        Command::Exec(a) => commands::exec::run(&a),
        Command::Import(a) => match commands::import::run(&a) {
            Ok(true) => Ok(()),
            Ok(false) => return 1,
            Err(e) => Err(e),
        },
        Command::Demo(a) => match commands::demo::run(&a) {
            Ok(true) => Ok(()),
            Ok(false) => return 1,
            Err(e) => Err(e),
        },
        Command::Run(a) => match commands::run::run(&a) {
            Ok(true) => Ok(()),
            Ok(false) => return 1,
            Err(e) => Err(e),
        },
        Command::Query(a) => commands::query::run(&a),
        Command::View(a) => commands::view::run(&a),
        Command::Status(a) => commands::status::run(&a),
        Command::Cache(a) => commands::cache::run(&a),
        Command::Models(a) => commands::models::run(&a),
        Command::Domains => commands::domains::run(),
        Command::Theory(a) => commands::theory::run(&a),
        Command::Report(a) => commands::report::run(&a),
        Command::Audit(a) => commands::audit::run(&a),
        Command::Ballista(a) => commands::ballista::run(&a),
    };
    match result {
        Ok(()) => 0,
        Err(Error::Write { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}
