//! The host side of WASI preview 1 as the sandbox gives it to CPython: nothing but standard
//! input, output and error, and all of it deterministic.
//!
//! - args and environment: what the run names, nothing of the host's;
//! - stdin: the run's bytes; stdout and stderr: kept up to the output cap (writes beyond it are
//!   acknowledged and dropped uncopied, and the run is marked truncated); in the gold check's
//!   candidate run, a write to stdout that starts with the run's record tag goes to a records
//!   buffer of its own (its own cap), so nothing the candidate prints can crowd the records out;
//! - host work charged to fuel: every call that moves bytes costs a fixed amount plus one per
//!   byte copied, so fuel alone bounds a run's time and the host holds no more than the caps;
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

use super::{Host, Stream};

const ESUCCESS: i32 = 0;
const EBADF: i32 = 8;
const EINVAL: i32 = 28;
const ENOTSUP: i32 = 58;
const ESPIPE: i32 = 70;
const ENOTCAPABLE: i32 = 76;
const WASI: &str = "wasi_snapshot_preview1";
/// The virtual clock's start: 2024-01-01T00:00:00Z in nanoseconds.
const EPOCH_NS: u64 = 1_704_067_200_000_000_000;
/// Fuel every host call that moves bytes costs before its bytes (about the instructions of a
/// small guest function): a loop of empty writes costs fuel, not only time.
const CALL_FUEL: u64 = 1_000;

/// The status of a `proc_exit` (carried out of the run as its error).
#[derive(Debug)]
pub struct Exit(pub i32);

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {}", self.0)
    }
}

impl std::error::Error for Exit {}

/// A host call asked to move more bytes than the run's memory limit allows in one call (the
/// `output` limit): carried out of the run as its error, so the host never copies it.
#[derive(Debug)]
pub struct OutputLimit(pub u64);

impl std::fmt::Display for OutputLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "one write of {} bytes", self.0)
    }
}

impl std::error::Error for OutputLimit {}

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
        charge(&mut c, u64::from(len as u32))?;
        let Some(m) = memory(&mut c) else { return Ok(EINVAL) };
        // Written in place: the host allocates nothing, whatever length the guest asks for.
        let (data, host) = m.data_and_store_mut(&mut c);
        let (at, len) = (buf as u32 as usize, len as u32 as usize);
        let Some(out) = at.checked_add(len).and_then(|end| data.get_mut(at..end)) else { return Ok(EINVAL) };
        for b in out {
            let s = &mut host.rng;
            *s ^= *s << 13;
            *s ^= *s >> 7;
            *s ^= *s << 17;
            *b = (*s >> 24) as u8;
        }
        Ok(ESUCCESS)
    })?;
    l.func_wrap(WASI, "fd_write", fd_write)?;
    l.func_wrap(WASI, "fd_read", |mut c: Caller<'_, Host>, fd: i32, iovs: i32, n: i32, read: i32| {
        if fd != 0 {
            return Ok(EBADF);
        }
        let Some(vecs) = iovecs(&mut c, iovs, n) else { return Ok(EINVAL) };
        let mut total = 0u32;
        for (at, len) in vecs {
            let st = c.data_mut();
            let take = len.min(st.stdin.len() - st.stdin_pos);
            let bytes = st.stdin[st.stdin_pos..st.stdin_pos + take].to_vec();
            st.stdin_pos += take;
            if !put(&mut c, at as i32, &bytes) {
                return Ok(EINVAL);
            }
            total += take as u32;
            if take < len {
                break;
            }
        }
        charge(&mut c, u64::from(total))?;
        Ok(if put(&mut c, read, &total.to_le_bytes()) { ESUCCESS } else { EINVAL })
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
    l.func_wrap(WASI, "proc_exit", |mut c: Caller<'_, Host>, code: i32| -> wasmtime::Result<()> {
        c.data_mut().proc_exit = true;
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

/// Fuel a host call costs: [`CALL_FUEL`] plus one per byte it copies. Host work is charged to the
/// same budget as the guest's instructions, so fuel alone bounds a run's time, host calls
/// included; a call the budget cannot pay ends the run in `fuel`.
fn charge(c: &mut Caller<'_, Host>, bytes: u64) -> wasmtime::Result<()> {
    let cost = CALL_FUEL.saturating_add(bytes);
    let left = c.get_fuel()?;
    if left < cost {
        c.set_fuel(0)?;
        return Err(wasmtime::Error::new(wasmtime::Trap::OutOfFuel));
    }
    c.set_fuel(left - cost)
}

/// `fd_write` to stdout (1) or stderr (2): each iovec is checked against the module's memory and only the bytes the stream still has room for
/// are copied, straight into it; the rest are acknowledged and dropped uncopied. So the host never
/// holds more than the caps, whatever the guest asks. One call asking to write more than the
/// run's memory limit (a `writev` of fifty 200 MiB vectors, all the same buffer) ends the run in
/// the `output` limit: no program writes more than it can hold without repeating itself.
fn fd_write(mut c: Caller<'_, Host>, fd: i32, iovs: i32, n: i32, written: i32) -> wasmtime::Result<i32> {
    if fd != 1 && fd != 2 {
        return Ok(EBADF);
    }
    let Some(vecs) = iovecs(&mut c, iovs, n) else { return Ok(EINVAL) };
    let Some(m) = memory(&mut c) else { return Ok(EINVAL) };
    let mut total: u64 = 0;
    let mut copied: u64 = 0;
    let mut stream = Stream::from(fd);
    for (i, (at, len)) in vecs.into_iter().enumerate() {
        let (data, host) = m.data_and_store_mut(&mut c);
        let Some(bytes) = at.checked_add(len).and_then(|end| data.get(at..end)) else { return Ok(EINVAL) };
        if i == 0 && fd == 1 && host.records_tag.as_ref().is_some_and(|t| bytes.starts_with(t)) {
            stream = Stream::Records;
        }
        total += len as u64;
        copied += host.write(stream, bytes) as u64;
    }
    charge(&mut c, copied.saturating_add(n as u32 as u64))?;
    if total > c.data().limits.memory_bytes as u64 {
        return Err(wasmtime::Error::new(OutputLimit(total)));
    }
    Ok(if put(&mut c, written, &(total as u32).to_le_bytes()) { ESUCCESS } else { EINVAL })
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
