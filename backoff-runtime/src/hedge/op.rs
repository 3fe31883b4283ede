//! What a hedged call runs: its operation ([`HedgeOp`], [`WithContext`]),
//! and how a breaker's refusal becomes its error ([`Refuse`],
//! [`NoCircuit`]). Its hooks are every call's: see [`hooks`](crate::hooks).

use super::*;

/// What a hedged call runs for each attempt: a closure `Fn() -> Fut`, or,
/// given to [`Hedge::call_with_context`], `Fn(AttemptContext) -> Fut`
/// (wrapped in a [`WithContext`]).
pub trait HedgeOp<Fut> {
    /// Makes attempt `context.attempt`'s future, its context built by
    /// `context`, which an operation not told it never calls (its policy
    /// and clock are not read, 15 instructions per attempt).
    fn attempt(&self, context: impl FnOnce() -> AttemptContext) -> Fut;

    /// Whether the attribute's `cancel` token was cancelled: no attempt
    /// starts then ([`Cancellable`]); never, for any other operation.
    #[inline(always)]
    fn cancelled(&self) -> bool {
        false
    }
}

/// The attribute's `cancel` beside `hedge`: an operation (`F`, either kind)
/// and whether the token was cancelled. Once it is, no attempt starts (no
/// hedge, no retry) and none in flight is dropped; when the last one in
/// flight fails, the call gives up with its outcome, reason
/// [`Cancelled`](crate::GiveUpReason::Cancelled). (The attribute asks the
/// token before the first attempt itself.)
#[doc(hidden)]
pub struct Cancellable<'a, F>(pub F, pub &'a (dyn Fn() -> bool + Sync));

impl<F: HedgeOp<Fut>, Fut> HedgeOp<Fut> for Cancellable<'_, F> {
    #[inline(always)]
    fn attempt(&self, context: impl FnOnce() -> AttemptContext) -> Fut {
        self.0.attempt(context)
    }

    fn cancelled(&self) -> bool {
        (self.1)()
    }
}

impl<F: Fn() -> Fut, Fut> HedgeOp<Fut> for F {
    #[inline(always)]
    fn attempt(&self, _: impl FnOnce() -> AttemptContext) -> Fut {
        self()
    }
}

/// An operation told each attempt's [`AttemptContext`] (its number, whether
/// it is the last, and whether a hedge started it): see
/// [`Hedge::call_with_context`].
#[derive(Debug, Clone, Copy)]
pub struct WithContext<F>(pub F);

impl<F: Fn(AttemptContext) -> Fut, Fut> HedgeOp<Fut> for WithContext<F> {
    #[inline(always)]
    fn attempt(&self, context: impl FnOnce() -> AttemptContext) -> Fut {
        (self.0)(context())
    }
}

/// How a breaker's refusal becomes a hedged call's error: the
/// `fn(CircuitOpen) -> E` given to [`Hedge::circuit`], or [`NoCircuit`].
pub trait Refuse<E> {
    /// The call's error for a refusal.
    fn refuse(&self, open: CircuitOpen) -> E;
}

impl<E> Refuse<E> for fn(CircuitOpen) -> E {
    fn refuse(&self, open: CircuitOpen) -> E {
        self(open)
    }
}

/// No breaker (a [`Hedge`] before [`circuit`](Hedge::circuit)): never
/// refuses, it has no value.
#[derive(Debug, Clone, Copy)]
pub enum NoCircuit {}

impl<E> Refuse<E> for NoCircuit {
    fn refuse(&self, _: CircuitOpen) -> E {
        match *self {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AttemptKind;

    #[test]
    fn an_op_is_told_the_context_only_when_wrapped_and_a_refusal_is_the_fns() {
        let plain = || 7;
        assert_eq!(plain.attempt(|| unreachable!("not told")), 7);
        let told = WithContext(|c: AttemptContext| c.kind);
        let hedge = || AttemptContext {
            kind: AttemptKind::Hedge,
            ..AttemptContext::new(2, true)
        };
        assert_eq!(told.attempt(hedge), AttemptKind::Hedge);
        let from: fn(CircuitOpen) -> &'static str = |_| "open";
        assert_eq!(from.refuse(CircuitOpen::default()), "open");
    }
}
