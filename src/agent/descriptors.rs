//! An audited `unsafe` module: the box's descriptors. The launcher marks every
//! descriptor above the standard streams close-on-exec before it starts the program, so
//! whatever lucid's caller left open (a shell's pipe) never reaches the box. `close_range` with
//! `CLOSE_RANGE_CLOEXEC` (Linux 5.11; the box needs 6.7) only sets a flag: it closes nothing
//! the launcher still uses and touches no memory, so the one `unsafe` call has nothing to uphold
//! beyond passing plain integers.

#![allow(unsafe_code)]

/// Mark every descriptor from 3 up close-on-exec.
pub fn close_above_stdio_on_exec() -> std::io::Result<()> {
    // SAFETY: the syscall takes three integers and only sets the close-on-exec flag.
    let r = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, libc::CLOSE_RANGE_CLOEXEC) };
    if r == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}
