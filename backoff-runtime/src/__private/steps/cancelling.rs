//! `cancel = TOKEN`: the steps of the function's own loop beside a token.
//! The loop keeps a retry's outcome across the sleep (the call's result if
//! the sleep is cancelled), waits on the token rather than in
//! `std::thread::sleep` (a plain fn) or races it (an `async fn`), and gives
//! up through the driver's give-up step, reason `Cancelled`.

use super::*;

/// The token's trait, under the name the expansion checks `cancel`'s value
/// with (rustc prints it as `backoff_runtime::control::Cancel`).
pub use crate::control::Cancel as AsCancel;

/// An `async fn`'s sleep raced against the token's `cancelled()`: whether
/// the token won.
pub use crate::cancel::race;

/// The error of a call cancelled before its first attempt.
pub use crate::cancel::Cancelled;

/// `on_retry` beside `cancel`, a closure of the outcome built at the call,
/// called at most once.
#[inline(always)]
pub fn on_retry_once<T, E>(f: impl FnOnce(&Result<T, E>, &RetryEvent)) -> impl OnRetry<T, E> {
    Once(Some(f))
}

impl<'p, S: Strategy, K: Kept<'p, S>> Call<Full<'p, S, K>> {
    /// [`Call::after`] beside a token: the outcome of a retry is kept
    /// beside its delay, for [`Call::cancelled`] if the sleep is cancelled.
    #[inline(never)]
    pub fn after_kept<T, E, N: OnRetry<T, E>>(
        &mut self,
        function: &'static str,
        trace: impl Trace<E>,
        decision: impl Verdict<T, E>,
        outcome: Result<T, E>,
        on_retry: N,
    ) -> ControlFlow<Ended<T, E>, (Duration, Result<T, E>)> {
        self.0.state.build(&self.0.start);
        step(&mut self.0, function, trace, decision, outcome, on_retry)
    }

    /// The call gives up with `outcome` because its token was cancelled
    /// (during a sleep: the last attempt's outcome; before the first
    /// attempt: `E::from(Cancelled)`): the driver's give-up step, reason
    /// [`GiveUpReason::Cancelled`].
    #[cold]
    #[inline(never)]
    pub fn cancelled<T, E, R: Trace<E>>(&mut self, trace: R, outcome: Result<T, E>) -> Ended<T, E> {
        let (progress, mut recording) = self.0.parts("");
        let report = || driver::Progress::cancelled(&progress);
        give_up(report, &mut recording, trace, outcome)
    }
}
