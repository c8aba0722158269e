//! The `lucid` command: parse, run, exit with the library's code.

fn main() {
    std::process::exit(lucid::run(std::env::args_os()));
}
