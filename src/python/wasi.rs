//! The host side of WASI preview 1 as the sandbox gives it to CPython: nothing but standard
//! input, output and error, and all of it deterministic.
//!
//! - args and environment: what the run names, nothing of the host's;
//! - stdin: the run's bytes; stdout and stderr: kept up to the output cap (writes beyond it are
//!   acknowledged and dropped, and the run is marked truncated);
//! - no file, directory or socket: no descriptor is preopened (the interpreter's standard
//!   library lives inside the module, packed by wasi-vfs), every `path_*` call answers
//!   `ENOTCAPABLE`, every `sock_*` call `ENOTSUP`, every descriptor past stderr `EBADF`;
//! - clocks: virtual, starting at a fixed instant and advancing 1 µs per reading, and by the
//!   timeout of every `poll_oneoff` (so `time.sleep` returns at once and costs no wall time, and a
//!   loop waiting on the clock ends in fuel, the same on every machine);
//! - randomness: a fixed xorshift stream (with `PYTHONHASHSEED=0`, the same run is the same
//!   instruction stream: fuel counts repeat exactly);
//! - `proc_exit`: ends the run with its status.
//!
//! Every import the module declares and this file does not implement is answered by a stub that
//! returns the error above for its family, built from the import's own signature, so the module
//! always links and never reaches the host.

use wasmtime::{Caller, Extern, ExternType, Linker, Module, Val};

use super::Host;

const ESUCCESS: i32 = 0;
const EBADF: i32 = 8;
const EINVAL: i32 = 28;
const ENOTSUP: i32 = 58;
const ESPIPE: i32 = 70;
const ENOTCAPABLE: i32 = 76;
const WASI: &str = "wasi_snapshot_preview1";
/// The virtual clock's start: 2024-01-01T00:00:00Z in nanoseconds.
const EPOCH_NS: u64 = 1_704_067_200_000_000_000;

/// The status of a `proc_exit` (carried out of the run as its error).
#[derive(Debug)]
pub struct Exit(pub i32);

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {}", self.0)
    }
}

impl std::error::Error for Exit {}

fn memory(caller: &mut Caller<'_, Host>) -> Option<wasmtime::Memory> {
    caller.get_export("memory").and_then(Extern::into_memory)
}

fn read_u32(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?))
}

/// Write `bytes` at `at` in the module's memory; false when out of bounds.
fn put(caller: &mut Caller<'_, Host>, at: i32, bytes: &[u8]) -> bool {
    match memory(caller) {
        Some(m) => m.write(caller, at as u32 as usize, bytes).is_ok(),
        None => false,
    }
}

/// The (offset, length) pairs of an iovec array.
fn iovecs(caller: &mut Caller<'_, Host>, iovs: i32, n: i32) -> Option<Vec<(usize, usize)>> {
    let m = memory(caller)?;
    let data = m.data(&*caller);
    (0..n as u32 as usize)
        .map(|i| {
            let at = iovs as u32 as usize + 8 * i;
            Some((read_u32(data, at)? as usize, read_u32(data, at + 4)? as usize))
        })
        .collect()
}

/// Strings as WASI lays them out: pointers at `ptrs`, NUL-terminated bytes from `buf`.
fn put_strings(caller: &mut Caller<'_, Host>, items: &[String], ptrs: i32, buf: i32) -> i32 {
    let mut at = buf as u32;
    for (i, s) in items.iter().enumerate() {
        let mut bytes = s.as_bytes().to_vec();
        bytes.push(0);
        if !put(caller, ptrs + 4 * i as i32, &at.to_le_bytes()) || !put(caller, at as i32, &bytes) {
            return EINVAL;
        }
        at += bytes.len() as u32;
    }
    ESUCCESS
}

fn sizes(caller: &mut Caller<'_, Host>, items: &[String], count: i32, size: i32) -> i32 {
    let total: usize = items.iter().map(|s| s.len() + 1).sum();
    if put(caller, count, &(items.len() as u32).to_le_bytes()) && put(caller, size, &(total as u32).to_le_bytes()) {
        ESUCCESS
    } else {
        EINVAL
    }
}

/// The virtual clock's next reading.
fn tick(state: &mut Host) -> u64 {
    state.clock_ns += 1_000;
    EPOCH_NS + state.clock_ns
}

/// `fdstat` of a standard stream: a character device, no rights to seek or tell.
fn fdstat(fd: i32) -> Option<[u8; 24]> {
    (0..=2).contains(&fd).then(|| {
        let mut s = [0u8; 24];
        s[0] = 2; // character device
        let rights: u64 = if fd == 0 { 1 << 1 } else { 1 << 6 }; // fd_read / fd_write
        s[8..16].copy_from_slice(&rights.to_le_bytes());
        s
    })
}

/// The errno a stub answers for an import of this name.
fn denied(name: &str) -> i32 {
    match name {
        n if n.starts_with("path_") => ENOTCAPABLE,
        n if n.starts_with("sock_") => ENOTSUP,
        _ => EBADF,
    }
}

/// The calls implemented above; the rest are denied.
const IMPLEMENTED: &[&str] = &[
    "args_sizes_get",
    "args_get",
    "environ_sizes_get",
    "environ_get",
    "clock_res_get",
    "clock_time_get",
    "random_get",
    "fd_write",
    "fd_read",
    "fd_fdstat_get",
    "fd_filestat_get",
    "fd_seek",
    "fd_tell",
    "fd_close",
    "fd_sync",
    "sched_yield",
    "proc_exit",
    "poll_oneoff",
];

/// The linker with every import of `module` defined.
pub fn linker(engine: &wasmtime::Engine, module: &Module) -> wasmtime::Result<Linker<Host>> {
    let mut l: Linker<Host> = Linker::new(engine);
    l.func_wrap(WASI, "args_sizes_get", |mut c: Caller<'_, Host>, count: i32, size: i32| {
        let args = c.data().args.clone();
        sizes(&mut c, &args, count, size)
    })?;
    l.func_wrap(WASI, "args_get", |mut c: Caller<'_, Host>, ptrs: i32, buf: i32| {
        let args = c.data().args.clone();
        put_strings(&mut c, &args, ptrs, buf)
    })?;
    l.func_wrap(WASI, "environ_sizes_get", |mut c: Caller<'_, Host>, count: i32, size: i32| {
        let env = c.data().env.clone();
        sizes(&mut c, &env, count, size)
    })?;
    l.func_wrap(WASI, "environ_get", |mut c: Caller<'_, Host>, ptrs: i32, buf: i32| {
        let env = c.data().env.clone();
        put_strings(&mut c, &env, ptrs, buf)
    })?;
    l.func_wrap(
        WASI,
        "clock_res_get",
        |mut c: Caller<'_, Host>, _id: i32, out: i32| {
            if put(&mut c, out, &1_000u64.to_le_bytes()) { ESUCCESS } else { EINVAL }
        },
    )?;
    l.func_wrap(WASI, "clock_time_get", |mut c: Caller<'_, Host>, _id: i32, _precision: i64, out: i32| {
        let now = tick(c.data_mut());
        if put(&mut c, out, &now.to_le_bytes()) { ESUCCESS } else { EINVAL }
    })?;
    l.func_wrap(WASI, "random_get", |mut c: Caller<'_, Host>, buf: i32, len: i32| {
        let mut bytes = vec![0u8; len as u32 as usize];
        for b in &mut bytes {
            let s = &mut c.data_mut().rng;
            *s ^= *s << 13;
            *s ^= *s >> 7;
            *s ^= *s << 17;
            *b = (*s >> 24) as u8;
        }
        if put(&mut c, buf, &bytes) { ESUCCESS } else { EINVAL }
    })?;
    l.func_wrap(WASI, "fd_write", |mut c: Caller<'_, Host>, fd: i32, iovs: i32, n: i32, written: i32| {
        if fd != 1 && fd != 2 {
            return EBADF;
        }
        let Some(vecs) = iovecs(&mut c, iovs, n) else { return EINVAL };
        let Some(m) = memory(&mut c) else { return EINVAL };
        let mut chunk = Vec::new();
        for (at, len) in vecs {
            match m.data(&c).get(at..at + len) {
                Some(b) => chunk.extend_from_slice(b),
                None => return EINVAL,
            }
        }
        let total = chunk.len() as u32;
        c.data_mut().write(fd, &chunk);
        if put(&mut c, written, &total.to_le_bytes()) { ESUCCESS } else { EINVAL }
    })?;
    l.func_wrap(WASI, "fd_read", |mut c: Caller<'_, Host>, fd: i32, iovs: i32, n: i32, read: i32| {
        if fd != 0 {
            return EBADF;
        }
        let Some(vecs) = iovecs(&mut c, iovs, n) else { return EINVAL };
        let mut total = 0u32;
        for (at, len) in vecs {
            let st = c.data_mut();
            let take = len.min(st.stdin.len() - st.stdin_pos);
            let bytes = st.stdin[st.stdin_pos..st.stdin_pos + take].to_vec();
            st.stdin_pos += take;
            if !put(&mut c, at as i32, &bytes) {
                return EINVAL;
            }
            total += take as u32;
            if take < len {
                break;
            }
        }
        if put(&mut c, read, &total.to_le_bytes()) { ESUCCESS } else { EINVAL }
    })?;
    l.func_wrap(WASI, "fd_fdstat_get", |mut c: Caller<'_, Host>, fd: i32, out: i32| match fdstat(fd) {
        Some(s) => {
            if put(&mut c, out, &s) {
                ESUCCESS
            } else {
                EINVAL
            }
        }
        None => EBADF,
    })?;
    l.func_wrap(WASI, "fd_filestat_get", |mut c: Caller<'_, Host>, fd: i32, out: i32| {
        if !(0..=2).contains(&fd) {
            return EBADF;
        }
        let mut s = [0u8; 64];
        s[16] = 2; // character device
        if put(&mut c, out, &s) { ESUCCESS } else { EINVAL }
    })?;
    l.func_wrap(
        WASI,
        "fd_seek",
        |_c: Caller<'_, Host>, fd: i32, _off: i64, _whence: i32, _out: i32| {
            if (0..=2).contains(&fd) { ESPIPE } else { EBADF }
        },
    )?;
    l.func_wrap(
        WASI,
        "fd_tell",
        |_c: Caller<'_, Host>, fd: i32, _out: i32| {
            if (0..=2).contains(&fd) { ESPIPE } else { EBADF }
        },
    )?;
    l.func_wrap(
        WASI,
        "fd_close",
        |_c: Caller<'_, Host>, fd: i32| if (0..=2).contains(&fd) { ESUCCESS } else { EBADF },
    )?;
    l.func_wrap(WASI, "fd_sync", |_c: Caller<'_, Host>, fd: i32| if (0..=2).contains(&fd) { ESUCCESS } else { EBADF })?;
    l.func_wrap(WASI, "sched_yield", |_c: Caller<'_, Host>| ESUCCESS)?;
    l.func_wrap(WASI, "proc_exit", |_c: Caller<'_, Host>, code: i32| -> wasmtime::Result<()> {
        Err(wasmtime::Error::new(Exit(code)))
    })?;
    l.func_wrap(WASI, "poll_oneoff", poll_oneoff)?;
    // Everything else the module imports: denied, by the import's own signature.
    for import in module.imports() {
        if import.module() != WASI || IMPLEMENTED.contains(&import.name()) {
            continue;
        }
        if let ExternType::Func(ty) = import.ty() {
            let errno = denied(import.name());
            let results = ty.results().len();
            l.func_new(WASI, import.name(), ty, move |_c, _args, out: &mut [Val]| {
                if results == 1 {
                    out[0] = Val::I32(errno);
                }
                Ok(())
            })?;
        }
    }
    Ok(l)
}

/// Every subscription is ready at once; a clock subscription advances the virtual clock by its
/// timeout (relative) or to its deadline (absolute).
fn poll_oneoff(mut c: Caller<'_, Host>, subs: i32, events: i32, n: i32, out: i32) -> i32 {
    let Some(m) = memory(&mut c) else { return EINVAL };
    let mut written = 0u32;
    for i in 0..n as u32 as usize {
        let at = subs as u32 as usize + 48 * i;
        let Some(sub) = m.data(&c).get(at..at + 48).map(<[u8]>::to_vec) else { return EINVAL };
        let tag = sub[8];
        if tag == 0 {
            let timeout = u64::from_le_bytes(sub[24..32].try_into().expect("8 bytes"));
            let absolute = u16::from_le_bytes(sub[40..42].try_into().expect("2 bytes")) & 1 == 1;
            let st = c.data_mut();
            let now = EPOCH_NS + st.clock_ns;
            st.clock_ns += if absolute { timeout.saturating_sub(now) } else { timeout };
        }
        let mut event = [0u8; 32];
        event[0..8].copy_from_slice(&sub[0..8]);
        event[10] = tag;
        if tag != 0 {
            event[8..10].copy_from_slice(&(EBADF as u16).to_le_bytes());
        }
        if !put(&mut c, events + 32 * i as i32, &event) {
            return EINVAL;
        }
        written += 1;
    }
    if put(&mut c, out, &written.to_le_bytes()) { ESUCCESS } else { EINVAL }
}
