//! Episodes decoded together. The loop keeps several model calls in flight; each used to decode
//! alone, reading every weight once per token per call. Here the calls that are generating meet
//! at each step: the first to find every generating call's next token waiting computes one
//! [`Transformer::step`] for all of them (each weight read once for the batch) and hands each
//! its logits; the others wait. No clock is involved: a step waits only for calls that are
//! generating and will submit their next token or finish, so whichever calls share a step, each
//! sequence's logits are the bits it gets alone ([`Transformer::step`]) and the tokens, the
//! response cache and reruns are unchanged.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use candle_core::Tensor;

use super::qlinear::{Idle, MAX_ROWS};
use super::transformer::{Cache, Transformer};

/// A finished step: the sequence's cache after it, and its logits or the step's error (shared
/// by every sequence of the step).
type Done = (Cache, Result<Tensor, Arc<candle_core::Error>>);

/// A next token waiting for its step.
struct Slot {
    id: u64,
    token: u32,
    cache: Cache,
}

#[derive(Default)]
struct State {
    /// Calls between [`Batcher::join`] and the end of their generation.
    generating: usize,
    waiting: Vec<Slot>,
    /// A step is being computed (by a waiting call's thread).
    busy: bool,
    done: HashMap<u64, Done>,
    next_id: u64,
}

/// The meeting point of one model's generating calls.
#[derive(Default)]
pub struct Batcher {
    state: Mutex<State>,
    turn: Condvar,
}

/// One call's part in the batch, from its first generated token to its last (counted while it
/// lives, so that no step waits for a call that has finished).
pub struct Member<'a> {
    batcher: &'a Batcher,
}

impl Batcher {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Join the generating calls (after the prompt is read).
    pub fn join(&self) -> Member<'_> {
        self.lock().generating += 1;
        Member { batcher: self }
    }
}

impl Drop for Member<'_> {
    fn drop(&mut self) {
        self.batcher.lock().generating -= 1;
        self.batcher.turn.notify_all();
    }
}

impl Member<'_> {
    /// Read `token` after `cache` (with the steps of the other generating calls, when they are
    /// waiting too): the logits of the token after it.
    pub fn step(&self, model: &Transformer, token: u32, cache: &mut Cache) -> candle_core::Result<Tensor> {
        let b = self.batcher;
        let mut st = b.lock();
        let id = st.next_id;
        st.next_id += 1;
        st.waiting.push(Slot { id, token, cache: std::mem::take(cache) });
        b.turn.notify_all();
        loop {
            if let Some((c, out)) = st.done.remove(&id) {
                *cache = c;
                return out.map_err(|e| candle_core::Error::Msg(e.to_string()));
            }
            let full = st.waiting.len() >= st.generating.min(MAX_ROWS);
            if !st.busy && full && st.waiting.iter().any(|s| s.id == id) {
                st.busy = true;
                let take = st.waiting.len().min(MAX_ROWS);
                // This call's own slot is among those computed (first in line when it was not).
                let mine = st.waiting.iter().position(|s| s.id == id).unwrap_or(0);
                if mine >= take {
                    st.waiting.swap(0, mine);
                }
                let batch: Vec<Slot> = st.waiting.drain(..take).collect();
                drop(st);
                let results = compute(model, batch);
                st = b.lock();
                st.done.extend(results);
                st.busy = false;
                b.turn.notify_all();
                continue;
            }
            let _idle = Idle::begin();
            st = b.turn.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// One step of the sequences in `batch`: each slot's id, its cache after the step and its logits.
fn compute(model: &Transformer, batch: Vec<Slot>) -> Vec<(u64, Done)> {
    let tokens: Vec<u32> = batch.iter().map(|s| s.token).collect();
    let ids: Vec<u64> = batch.iter().map(|s| s.id).collect();
    let mut caches: Vec<Cache> = batch.into_iter().map(|s| s.cache).collect();
    let out = model.step(&tokens, &mut caches);
    let outs: Vec<Result<Tensor, Arc<candle_core::Error>>> = match out {
        Ok(logits) => logits.into_iter().map(Ok).collect(),
        Err(e) => vec![Err(Arc::new(e)); ids.len()],
    };
    ids.into_iter().zip(caches.into_iter().zip(outs)).collect()
}
