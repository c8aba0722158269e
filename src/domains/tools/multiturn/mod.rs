//! BFCL's multi-turn tasks (`multi_turn_{base,miss_func,miss_param,long_context}`, 800): a user's
//! requests over several turns against stateful tools — a file system, a math API, messaging,
//! posting, tickets, a trading bot, travel booking, vehicle control — that BFCL ships as plain
//! Python in its wheel. [`data`] reads the tasks and their ground-truth calls per turn; [`env`]
//! runs calls against the environments inside lucid's Python sandbox with BFCL's own executor and
//! reports each step's results and the environments' state after it; [`gold`] is BFCL's own
//! evaluation of a trajectory, run there too. Tests hold both equal to BFCL's own code run natively
//! (`tests/tools_multiturn.rs`, through `src/domains/tools/data/multiturn.py`). The model's side of a multi-turn episode (a dialogue
//! step in the seam) is not built yet: the memory loop reads the single-turn categories only.

pub mod data;
pub mod env;
pub mod gold;
