//! `pip download --no-deps`, as lucid runs it to fetch its offline packages. On a terminal pip
//! shows its own progress (each file's size, rate and time left) on standard error, so a command's
//! standard output keeps only its results; elsewhere pip is quiet and its error is kept for the
//! message.

use std::ffi::OsStr;
use std::io::IsTerminal;
use std::process::{Command, Stdio};

use crate::error::{Error, Result};

/// `python -m pip download --no-deps <args>`; `what` names what is fetched in an error.
pub fn download<S: AsRef<OsStr>>(python: &str, args: &[S], what: &str) -> Result<()> {
    let mut cmd = Command::new(python);
    cmd.args(["-m", "pip", "download", "--no-deps", "--disable-pip-version-check"]);
    let live = std::io::stderr().is_terminal();
    if !live {
        cmd.arg("-q");
    }
    cmd.args(args);
    let missing =
        |e: std::io::Error| Error::environment_from(format!("pip is needed to fetch {what} (python3 -m pip)"), e);
    let failed = |detail: &str| Error::environment(format!("pip download of {what} failed: {detail}"));
    if live {
        let status = cmd.stdout(Stdio::from(std::io::stderr())).status().map_err(missing)?;
        if !status.success() {
            return Err(failed("pip's output is above"));
        }
    } else {
        let o = cmd.output().map_err(missing)?;
        if !o.status.success() {
            return Err(failed(String::from_utf8_lossy(&o.stderr).trim()));
        }
    }
    Ok(())
}
