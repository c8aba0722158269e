//! The agent-program box: a user's agent program run as a sandboxed process (`program`), the
//! Linux sandbox it runs in (`sandbox`: namespaces, Landlock, seccomp, rlimits), the local proxy
//! that is its only way out to a model (`proxy`), the watch on what it writes (`watch`) and the
//! launcher's descriptors (`descriptors`). The memory loop that drives a program episode by
//! episode is the `memory_loop` module; the episode records both share are [`crate::seam`].

pub mod descriptors;
pub mod program;
pub mod proxy;
pub mod sandbox;
pub mod watch;
