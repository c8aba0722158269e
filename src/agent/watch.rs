//! lucid's view of a running box from outside: the memory of all the box's processes together
//! (the resident pages of the launcher and every process below it, read from `/proc`) and the
//! disk its folder holds (allocated blocks, so a sparse file counts what it uses). The box's
//! rlimits bound each process; these are the totals, checked every [`EVERY`], and the first one
//! passed names the bound the episode is killed for. Only lucid reads these numbers: nothing the
//! program prints can claim or hide a bound.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often the totals are read.
pub const EVERY: Duration = Duration::from_millis(100);

/// A bound the box passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The memory of its processes together.
    Memory,
    /// The disk its folder holds.
    Disk,
}

/// The totals of one box, read from outside.
pub struct Watch {
    root: u32,
    dir: PathBuf,
    memory: u64,
    disk: u64,
    next: Instant,
    /// The most memory its processes held together at one reading, bytes.
    pub peak_memory: u64,
    /// The bound it passed, once it has.
    pub passed: Option<Bound>,
}

impl Watch {
    /// Watch the processes under `root` (the launcher's pid) and the folder `dir`, against
    /// `memory` and `disk` bytes.
    pub fn new(root: u32, dir: &Path, memory: u64, disk: u64) -> Watch {
        Watch { root, dir: dir.into(), memory, disk, next: Instant::now(), peak_memory: 0, passed: None }
    }

    /// Whether the box has passed a bound (read again when [`EVERY`] has gone by since the last
    /// reading).
    pub fn over(&mut self) -> bool {
        if self.passed.is_none() && Instant::now() >= self.next {
            self.next = Instant::now() + EVERY;
            let held = tree_memory(self.root);
            self.peak_memory = self.peak_memory.max(held);
            if held > self.memory {
                self.passed = Some(Bound::Memory);
            } else if folder_disk(&self.dir, self.disk) > self.disk {
                self.passed = Some(Bound::Disk);
            }
        }
        self.passed.is_some()
    }
}

/// The resident bytes of `root` and every process below it.
pub fn tree_memory(root: u32) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut rss: HashMap<u32, u64> = HashMap::new();
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(status) = std::fs::read_to_string(e.path().join("status")) else { continue };
        let field = |name: &str| -> Option<u64> {
            status.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.split_whitespace().next()?.parse().ok())
        };
        // A kernel thread or a zombie has no VmRSS: it holds nothing.
        if let Some(ppid) = field("PPid:").and_then(|p| u32::try_from(p).ok()) {
            children.entry(ppid).or_default().push(pid);
            rss.insert(pid, field("VmRSS:").unwrap_or(0) * 1024);
        }
    }
    let (mut total, mut todo) = (0u64, vec![root]);
    while let Some(pid) = todo.pop() {
        total += rss.get(&pid).copied().unwrap_or(0);
        todo.extend(children.get(&pid).into_iter().flatten().copied());
    }
    total
}

/// The bytes allocated under `dir` (symbolic links not followed), counting stops past `stop`.
pub fn folder_disk(dir: &Path, stop: u64) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let (mut total, mut todo) = (0u64, vec![dir.to_path_buf()]);
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let Ok(m) = e.path().symlink_metadata() else { continue };
            total += m.blocks() * 512;
            if m.is_dir() {
                todo.push(e.path());
            }
            if total > stop {
                return total;
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_counts_what_its_files_hold_and_the_tree_its_own_memory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/a"), vec![7u8; 1 << 20]).unwrap();
        let held = folder_disk(dir.path(), u64::MAX);
        assert!((1 << 20..2 << 20).contains(&held), "{held}");
        assert!(tree_memory(std::process::id()) > 1 << 20);
        let mut w = Watch::new(std::process::id(), dir.path(), u64::MAX, 4096);
        assert!(w.over() && w.passed == Some(Bound::Disk));
    }
}
