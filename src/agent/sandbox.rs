//! The box an agent program runs in, one per episode. lucid re-executes itself as a launcher
//! (`lucid __lucid_box ...`, never typed by a user) which, before it starts the program:
//!
//! - enters a new **user and PID namespace** (no root needed): the program is process 1 of its
//!   own namespace, so when it exits — or is killed at its timeout or its output limit — the
//!   kernel ends every process it started, however it detached (`setsid`, double forks, a child
//!   that holds its standard output open). Nothing of the episode outlives it.
//! - lets `socket()` make only what the box needs, with **seccomp**: a TCP stream of IPv4 or
//!   IPv6 (protocol 0 or 6), which Landlock then confines to the proxy's port. Every other
//!   family, type and protocol is refused with EACCES — Unix sockets (a host service's socket
//!   file), netlink, packet, vsock, UDP, raw, SCTP, and MPTCP (protocol 262, which Landlock's TCP
//!   rules do not see) — and so is io_uring, which opens sockets without the `socket` call;
//!   `socketpair` stays (its two ends never leave the box);
//! - confines itself with **Landlock** (inherited by the program and all it starts): the
//!   filesystem is the system's read-only directories (`/usr`, `/lib*`, `/bin`, `/sbin`, `/etc`),
//!   the interpreter's own tree and the stage's `read:` paths, read-only, and the episode's fresh
//!   folder, read-write — nothing else: not the run store, the runs folder, the caches, the
//!   user's home, `/proc` (so no other process's environment or working directory), `/tmp`. TCP
//!   may connect to the episode's proxy port only and bind nothing; signals and abstract Unix
//!   sockets are scoped to the box where the kernel has scopes.
//! - passes the program only its standard streams: every other descriptor lucid's caller left
//!   open (a shell's pipe) is closed at the program's `exec`;
//! - bounds each of its processes with rlimits ([`BoxLimits`]): CPU seconds (past them the kernel
//!   ends the process; the program's own end is reported as [`CPU_LIMIT`]), address space and
//!   file size. lucid watches the box from outside for the totals (the memory of all its
//!   processes, the disk its folder holds) and kills it past them, naming the bound
//!   (`super::watch`); exit codes [`TIMEOUT`] to [`UNAVAILABLE`] are the launcher's alone (a
//!   program that exits with one is reported as exit 1);
//! - bounds the program's time: it is killed at `timeout` (exit [`TIMEOUT`]). lucid reads its
//!   standard output up to [`STDOUT_LIMIT`] (past it, the launcher's process group is killed:
//!   the namespace with it) and keeps its standard error up to [`STDERR_LIMIT`].
//!
//! A kernel without user namespaces or without Landlock's filesystem and TCP rules (Linux 6.7+)
//! cannot give the box: the launcher exits [`UNAVAILABLE`] naming the missing piece, and the stage
//! fails — it runs a program unboxed only where the pipeline says `box: off`, which the manifest
//! records.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use crate::error::Invalid;
use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, Ruleset, RulesetAttr, RulesetCreatedAttr,
    Scope, path_beneath_rules,
};

/// The first argument that makes `lucid` the launcher.
pub const LAUNCHER: &str = "__lucid_box";

/// Exit code: the program ran past its timeout and was killed.
pub const TIMEOUT: i32 = 124;
/// Exit code: the program passed its CPU-time bound and the kernel ended it.
pub const CPU_LIMIT: i32 = 125;
/// Exit code: the kernel cannot give the box.
pub const UNAVAILABLE: i32 = 126;

/// The most a program may write on standard output (its one JSON reply): 16 MiB.
pub const STDOUT_LIMIT: usize = 16 << 20;
/// The most of its standard error that is kept: 1 MiB (the rest is read and dropped).
pub const STDERR_LIMIT: usize = 1 << 20;

/// The system's directories a program may read and execute from.
const SYSTEM: [&str; 7] = ["/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc"];

/// Device files a program may read and write.
const DEVICES: [&str; 4] = ["/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"];

/// What one episode's box allows.
#[derive(Clone, Debug)]
pub struct BoxSpec {
    /// The episode's own folder (read-write; the program's working directory).
    pub dir: PathBuf,
    /// Read-only trees beyond the system's (the interpreter's, the stage's `read:`).
    pub read: Vec<PathBuf>,
    /// The one TCP port the program may connect to (the episode's proxy).
    pub port: u16,
    /// Wall-clock seconds before the program is killed.
    pub timeout: Duration,
    /// The rlimits of each of its processes.
    pub limits: BoxLimits,
}

/// The per-process bounds the launcher sets (inherited by everything the program starts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoxLimits {
    /// CPU seconds (RLIMIT_CPU: SIGXCPU at them, SIGKILL a second later).
    pub cpu_secs: u64,
    /// Bytes of address space (RLIMIT_AS).
    pub memory: u64,
    /// The largest file it may write, bytes (RLIMIT_FSIZE).
    pub file: u64,
}

/// The launcher's command line for `program` in the box `spec` (its environment is the caller's
/// to set).
pub fn command(spec: &BoxSpec, program: &[String]) -> std::io::Result<Command> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.arg(LAUNCHER)
        .arg(&spec.dir)
        .arg(spec.port.to_string())
        .arg(spec.timeout.as_millis().to_string())
        .arg(spec.limits.cpu_secs.to_string())
        .arg(spec.limits.memory.to_string())
        .arg(spec.limits.file.to_string())
        .args(&spec.read)
        .arg("--")
        .args(program);
    Ok(cmd)
}

/// The launcher (`lucid __lucid_box DIR PORT TIMEOUT_MS CPU_S MEMORY FILE [READ...] -- PROGRAM
/// ARGS...`): box, run, and exit with the program's code, [`TIMEOUT`], [`CPU_LIMIT`] or
/// [`UNAVAILABLE`].
pub fn launcher(args: &[OsString]) -> i32 {
    let Some(split) = args.iter().position(|a| a == "--") else {
        eprintln!("lucid box: usage: {LAUNCHER} DIR PORT TIMEOUT_MS CPU_S MEMORY FILE [READ...] -- PROGRAM ARGS...");
        return UNAVAILABLE;
    };
    let (head, program) = (&args[..split], &args[split + 1..]);
    let parsed = (|| {
        let dir = PathBuf::from(head.first()?);
        let port: u16 = head.get(1)?.to_str()?.parse().ok()?;
        let num = |i: usize| -> Option<u64> { head.get(i)?.to_str()?.parse().ok() };
        let limits = BoxLimits { cpu_secs: num(3)?, memory: num(4)?, file: num(5)? };
        let read = head[6..].iter().map(PathBuf::from).collect();
        Some(BoxSpec { dir, read, port, timeout: Duration::from_millis(num(2)?), limits })
    })();
    let (Some(spec), Some((bin, rest))) = (parsed, program.split_first()) else {
        eprintln!("lucid box: usage: {LAUNCHER} DIR PORT TIMEOUT_MS CPU_S MEMORY FILE [READ...] -- PROGRAM ARGS...");
        return UNAVAILABLE;
    };
    if let Err(why) = enter_namespaces().and_then(|()| confine(&spec)).and_then(|()| tcp_only()) {
        eprintln!(
            "lucid box: the box is unavailable on this machine: {why} (a pipeline may run agent programs unboxed with `box: off`)"
        );
        return UNAVAILABLE;
    }
    run_bounded(&spec, bin, rest)
}

/// A new user namespace (the same ids mapped) and PID namespace for the launcher's children.
fn enter_namespaces() -> Result<(), Invalid> {
    use nix::sched::{CloneFlags, unshare};
    let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
    unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWPID)
        .map_err(|e| Invalid(format!("user and PID namespaces ({e})")))?;
    let write = |file: &str, text: String| {
        std::fs::write(format!("/proc/self/{file}"), text).map_err(|e| Invalid(format!("/proc/self/{file} ({e})")))
    };
    write("setgroups", "deny".into())?;
    write("uid_map", format!("{uid} {uid} 1"))?;
    write("gid_map", format!("{gid} {gid} 1"))
}

/// Landlock: the filesystem and TCP rules of the module doc, required; UDP and scopes where the
/// kernel has them.
fn confine(spec: &BoxSpec) -> Result<(), Invalid> {
    let fail = |e: landlock::RulesetError| Invalid(format!("Landlock ({e})"));
    let abi = ABI::V6;
    let ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V1))
        .map_err(fail)?
        .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
        .map_err(fail)?
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(fail)?
        .scope(Scope::AbstractUnixSocket | Scope::Signal)
        .map_err(fail)?;
    let read: Vec<PathBuf> =
        SYSTEM.iter().map(PathBuf::from).chain(spec.read.iter().cloned()).filter(|p| p.exists()).collect();
    let devices: Vec<&str> = DEVICES.iter().copied().filter(|d| Path::new(d).exists()).collect();
    let status = ruleset
        .create()
        .map_err(fail)?
        .add_rules(path_beneath_rules(&read, AccessFs::from_read(abi)))
        .map_err(fail)?
        .add_rules(path_beneath_rules(&devices, AccessFs::from_read(abi) | AccessFs::WriteFile))
        .map_err(fail)?
        .add_rules(path_beneath_rules([&spec.dir], AccessFs::from_all(abi)))
        .map_err(fail)?
        .add_rule(NetPort::new(spec.port, AccessNet::ConnectTcp))
        .map_err(fail)?
        .restrict_self()
        .map_err(fail)?;
    if status.ruleset == landlock::RulesetStatus::NotEnforced {
        return Err(Invalid::from("Landlock is not enabled in this kernel"));
    }
    Ok(())
}

/// seccomp: `socket()` makes only a TCP stream of IPv4 or IPv6 (protocol 0 or 6); any other
/// family, type or protocol (Unix, netlink, packet, UDP, raw, SCTP, MPTCP, ...) and io_uring
/// (which opens sockets without the `socket` call) are refused with EACCES.
fn tcp_only() -> Result<(), Invalid> {
    use seccompiler::{SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule};
    fn fail(e: impl std::fmt::Display) -> Invalid {
        Invalid(format!("seccomp ({e})"))
    }
    // A rule refuses when all its conditions hold; the rules of one call are alternatives.
    let cond =
        |arg: u8, op: SeccompCmpOp, v: u64| SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, v).map_err(fail);
    let rule = |c: Vec<SeccompCondition>| SeccompRule::new(c).map_err(fail);
    let (inet, inet6) = (libc::AF_INET as u64, libc::AF_INET6 as u64);
    let mut refuse = vec![
        rule(vec![cond(0, SeccompCmpOp::Ne, inet)?, cond(0, SeccompCmpOp::Ne, inet6)?])?,
        rule(vec![cond(2, SeccompCmpOp::Ne, 0)?, cond(2, SeccompCmpOp::Ne, libc::IPPROTO_TCP as u64)?])?,
    ];
    // The type's low four bits (its flags above them): every kind but a stream.
    for kind in (0..16u64).filter(|k| *k != libc::SOCK_STREAM as u64) {
        refuse.push(rule(vec![cond(1, SeccompCmpOp::MaskedEq(0xf), kind)?])?);
    }
    let rules = [(libc::SYS_socket, refuse), (libc::SYS_io_uring_setup, vec![])].into_iter().collect();
    let arch = seccompiler::TargetArch::try_from(std::env::consts::ARCH).map_err(fail)?;
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EACCES as u32), arch)
        .map_err(fail)?;
    let program: seccompiler::BpfProgram = filter.try_into().map_err(fail)?;
    seccompiler::apply_filter(&program).map_err(fail)
}

/// Run the program (process 1 of the new PID namespace: no thread may be started after
/// `unshare`, so the launcher only waits) with its time and rlimits bounded and only its
/// standard streams (lucid bounds them). The exit code as the module doc says.
fn run_bounded(spec: &BoxSpec, bin: &OsString, args: &[OsString]) -> i32 {
    use nix::sys::resource::{Resource, setrlimit};
    use std::os::unix::process::ExitStatusExt;
    // Every descriptor above the standard streams is closed at the program's exec (it is the
    // launcher's own or one its caller left open).
    if let Err(e) = super::descriptors::close_above_stdio_on_exec() {
        eprintln!("lucid box: the box is unavailable on this machine: close_range ({e})");
        return UNAVAILABLE;
    }
    // The launcher's own bounds, inherited by the program (the launcher only waits: it neither
    // allocates nor writes past them).
    let limits = spec.limits;
    let set = [
        (Resource::RLIMIT_CPU, limits.cpu_secs, limits.cpu_secs + 1),
        (Resource::RLIMIT_AS, limits.memory, limits.memory),
        (Resource::RLIMIT_FSIZE, limits.file, limits.file),
        (Resource::RLIMIT_CORE, 0, 0),
    ];
    for (what, soft, hard) in set {
        if let Err(e) = setrlimit(what, soft, hard) {
            eprintln!("lucid box: the box is unavailable on this machine: setrlimit {what:?} ({e})");
            return UNAVAILABLE;
        }
    }
    let mut child = match Command::new(bin).args(args).current_dir(&spec.dir).spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("lucid box: the agent did not start ({}): {e}", bin.to_string_lossy());
            return 127;
        }
    };
    // At the deadline process 1 is killed: the kernel ends the rest of the namespace.
    let Some(status) = wait_until(&mut child, Instant::now() + spec.timeout, || false, |_| ()) else {
        return TIMEOUT;
    };
    let cpu = || {
        use nix::sys::resource::{UsageWho, getrusage};
        getrusage(UsageWho::RUSAGE_CHILDREN)
            .map_or(0, |u| (u.user_time().tv_sec() + u.system_time().tv_sec()).max(0) as u64)
    };
    match (status.code(), status.signal()) {
        (_, Some(libc::SIGXCPU)) => CPU_LIMIT,
        (_, Some(libc::SIGKILL)) if cpu() >= limits.cpu_secs => CPU_LIMIT,
        // The launcher's codes are its own: a program cannot claim a bound it did not meet.
        (Some(c), _) if (TIMEOUT..=UNAVAILABLE).contains(&c) => 1,
        (Some(c), _) => c,
        (None, sig) => 128 + sig.unwrap_or(9),
    }
}

/// Wait for `child` until `deadline`, or until `stop()` says to give up; then `kill` it (and
/// what it started, as the caller knows how), kill and reap `child` itself, and return None.
pub fn wait_until(
    child: &mut Child,
    deadline: Instant,
    mut stop: impl FnMut() -> bool,
    kill: impl FnOnce(&Child),
) -> Option<ExitStatus> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline && !stop() => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                kill(child);
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// The trees an interpreter found on `PATH` as `bin` lives in, for the box to read: the
/// grandparent of the path named (`/usr` for `/usr/bin/python3`, a virtual environment's or
/// pyenv's root) and of its real path (a virtual environment's base interpreter), the system's
/// directories aside.
pub fn interpreter_trees(bin: &str) -> Vec<PathBuf> {
    let found = if bin.contains('/') {
        Some(PathBuf::from(bin))
    } else {
        std::env::var_os("PATH")
            .and_then(|path| std::env::split_paths(&path).map(|d| d.join(bin)).find(|p| p.is_file()))
    };
    let Some(found) = found else { return Vec::new() };
    let mut out: Vec<PathBuf> = Vec::new();
    for p in [Some(found.clone()), std::fs::canonicalize(&found).ok()].into_iter().flatten() {
        let tree = p.parent().and_then(Path::parent).map(Path::to_path_buf);
        if let Some(t) = tree.filter(|t| !SYSTEM.iter().any(|s| t.starts_with(s)) && t != Path::new("/"))
            && !out.contains(&t)
        {
            out.push(t);
        }
    }
    out
}
