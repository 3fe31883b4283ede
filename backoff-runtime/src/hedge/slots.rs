//! The slots that pin a hedged call's attempts ([`Capacity`], [`Slots`]).

use super::*;
use crate::circuit::Permit;
use std::time::Instant;

/// What a slot keeps of its attempt besides the future. Dropped with its
/// attempt unfinished (the caller dropped the call), it tells the breaker
/// and the latency estimate: see [`Drop`].
pub struct Meta<'p> {
    pub kind: AttemptKind,
    /// Its number in the call, from 1, as its `context` says.
    pub number: u32,
    /// When it began (read when recording or learning latency).
    pub began: Option<Instant>,
    /// The breaker's permit for it.
    pub permit: Option<Permit<'p>>,
    /// Whether another attempt was in flight when it started: dropped
    /// unfinished, its permit is released (the call's cancellation is
    /// the older attempt's failure, counted once).
    pub quiet: bool,
    /// The estimate its latency teaches (timed by the async clock, as
    /// `began` was).
    pub learn: Option<&'p Latency>,
}

impl Drop for Meta<'_> {
    #[inline]
    fn drop(&mut self) {
        if self.permit.is_some() || self.learn.is_some() {
            self.unfinished();
        }
    }
}

impl Meta<'_> {
    /// Dropped with its attempt unfinished: the permit is a failure
    /// unless `quiet` (then released), the latency "at least" what ran.
    #[cold]
    #[inline(never)]
    fn unfinished(&mut self) {
        if let Some(permit) = self.permit.take()
            && self.quiet
        {
            permit.release();
        } // (else dropped: one failure, as a cancelled plain call)
        self.teach(false);
    }

    /// Teaches the estimate, if any, what the attempt ran: its latency if
    /// it `answered`, else (it failed, or was dropped) at least that.
    #[inline]
    pub(super) fn teach(&mut self, answered: bool) {
        if let (Some(latency), Some(began)) = (self.learn.take(), self.began) {
            let ran = clock::for_async()().saturating_duration_since(began);
            latency.add(
                [&latency.censored, &latency.answered][usize::from(answered)],
                ran,
            );
        }
    }
}

pin_project! {
    /// One attempt's slot of a hedged call and the slots after it (a cons
    /// list, so that `N` futures are pinned without `unsafe`). You never
    /// name it: [`Capacity`] does.
    pub struct Slot<'p, F, Rest> {
        #[pin]
        head: Option<F>,
        meta: Option<Meta<'p>>,
        #[pin]
        rest: Rest,
    }
}

/// The slots of a hedged call: `()` (none) or a [`Slot`] and the rest.
/// (Unnameable outside the crate, as the module is private.)
pub trait Slots<'p, F: Future> {
    /// How many.
    const LEN: u32;
    /// None started.
    fn empty() -> Self;
    /// Starts `attempt` in slot `index`.
    fn start(self: Pin<&mut Self>, index: u32, attempt: F, meta: Meta<'p>);
    /// Polls each attempt in flight: the first that ended, and its meta.
    fn poll_any(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<(F::Output, Meta<'p>)>;
    /// Drops every attempt in flight, releasing its permit.
    fn cancel_all(self: Pin<&mut Self>);
    /// Calls `f` with the kind, number and start of each attempt in
    /// flight that was timed.
    fn in_flight(&self, f: &mut dyn FnMut(AttemptKind, u32, Instant));
}

impl<'p, F: Future> Slots<'p, F> for () {
    const LEN: u32 = 0;
    fn empty() -> Self {}
    fn start(self: Pin<&mut Self>, _: u32, _: F, _: Meta<'p>) {
        debug_assert!(false, "no slot left");
    }
    fn poll_any(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<(F::Output, Meta<'p>)> {
        Poll::Pending
    }
    fn cancel_all(self: Pin<&mut Self>) {}
    fn in_flight(&self, _: &mut dyn FnMut(AttemptKind, u32, Instant)) {}
}

impl<'p, F: Future, R: Slots<'p, F>> Slots<'p, F> for Slot<'p, F, R> {
    const LEN: u32 = 1 + R::LEN;

    fn empty() -> Self {
        Slot {
            head: None,
            meta: None,
            rest: R::empty(),
        }
    }

    fn start(self: Pin<&mut Self>, index: u32, attempt: F, meta: Meta<'p>) {
        let mut this = self.project();
        if index == 0 {
            this.head.set(Some(attempt));
            *this.meta = Some(meta);
        } else {
            this.rest.start(index - 1, attempt, meta);
        }
    }

    fn poll_any(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<(F::Output, Meta<'p>)> {
        let mut this = self.project();
        if let Some(attempt) = this.head.as_mut().as_pin_mut()
            && let Poll::Ready(output) = attempt.poll(cx)
        {
            this.head.set(None);
            if let Some(meta) = this.meta.take() {
                return Poll::Ready((output, meta));
            }
        }
        this.rest.poll_any(cx)
    }

    fn cancel_all(self: Pin<&mut Self>) {
        let mut this = self.project();
        this.head.set(None);
        if let Some(mut meta) = this.meta.take() {
            // Cancelled because another attempt won: not a failure (the
            // meta, dropped, releases its permit and teaches the estimate
            // "at least this long").
            meta.quiet = true;
        }
        this.rest.cancel_all();
    }

    fn in_flight(&self, f: &mut dyn FnMut(AttemptKind, u32, Instant)) {
        if let Some(meta) = &self.meta
            && let Some(began) = meta.began
        {
            f(meta.kind, meta.number, began);
        }
        self.rest.in_flight(f);
    }
}

/// The capacity of a hedged call: `N` attempt slots, for `N` in `1..=8`
/// (see [`Holds`]).
#[derive(Debug, Clone, Copy)]
pub struct Capacity<const N: usize>;

/// The slots `Capacity<N>` stands for: implemented for `N` in `1..=8`
/// alone (gRPC caps hedging at 5), so a larger `N` is a compile error.
///
/// ```compile_fail
/// use backoff_runtime::Policy;
/// use backoff_runtime::HedgeDelay;
/// use std::time::Duration;
///
/// # async fn f() {
/// let policy = Policy::immediate().attempts(9);
/// // error: a hedged call holds at most 8 attempts: `Capacity<9>` is too many
/// let _ = policy
///     .hedge_async::<9>(HedgeDelay::After(Duration::from_millis(20)))
///     .call(|| async { Ok::<u32, ()>(1) })
///     .await;
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "a hedged call holds at most 8 attempts: `{Self}` is too many",
    label = "give `N` from 1 to 8",
    note = "gRPC caps hedging at 5 attempts; each attempt is a slot in the call's future"
)]
pub trait Holds<'p, F: Future> {
    /// `N` slots.
    type Slots: Slots<'p, F>;
}

impl<'p, F: Future> Holds<'p, F> for Capacity<1> {
    type Slots = Slot<'p, F, ()>;
}

macro_rules! capacity {
    ($($n:literal => $m:literal),*) => {$(
        impl<'p, F: Future> Holds<'p, F> for Capacity<$n> {
            type Slots = Slot<'p, F, <Capacity<$m> as Holds<'p, F>>::Slots>;
        }
    )*};
}
capacity!(2 => 1, 3 => 2, 4 => 3, 5 => 4, 6 => 5, 7 => 6, 8 => 7);

/// The slots of a call of `N` attempts of `F`.
pub(super) type SlotsOf<'p, const N: usize, F> = <Capacity<N> as Holds<'p, F>>::Slots;

#[cfg(test)]
mod tests {
    use super::*;
    use core::future::Ready;

    #[test]
    fn a_capacity_holds_that_many_slots() {
        type Fut = Ready<Result<u32, ()>>;
        type Three = <Capacity<3> as Holds<'static, Fut>>::Slots;
        assert_eq!(<Three as Slots<'static, Fut>>::LEN, 3);
        type Eight = <Capacity<8> as Holds<'static, Fut>>::Slots;
        assert_eq!(<Eight as Slots<'static, Fut>>::LEN, 8);
    }
}
