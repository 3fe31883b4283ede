//! The cold steps the expansion's loop calls after a failed attempt, over
//! the driver, and the small pieces of glue its attempts and sleeps need.

use super::*;
use crate::driver;
use crate::record::{CompactRecording, Records};
use crate::state::Gate;
use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};

mod cancelling;
pub use cancelling::*;

/// The call's start, read before the first attempt only if something needs
/// the time (`timed`, or a deadline); the state itself is built on the first
/// failure, so a success builds nothing.
pub use crate::state::began;

/// What `on_success` is told (named by the expansion's typed closures).
pub use crate::event::SuccessEvent;

/// `on_retry`'s event under a whole-call `timeout`: the time left counted
/// to the nearer of its end and the policy's deadline.
#[inline(never)]
pub fn within(event: &RetryEvent, timeout: Duration) -> RetryEvent {
    event.within(timeout)
}

/// `attempt_timeout`'s `limit` for an attempt of `context`, cut to its
/// time left until the call's deadline (a hedged attempt's; a loop's
/// through [`Call::attempt_timeout`]).
#[inline(always)]
pub fn cut(limit: Duration, context: AttemptContext) -> Duration {
    context.remaining.map_or(limit, |left| limit.min(left))
}

/// `context` under a whole-call `timeout` counted from `began` (which the
/// caller enforces): its deadline the nearer of the two, read at `clock`
/// (a loop's through [`Call::context_within`]; a hedged attempt's).
#[inline]
pub fn within_timeout(
    context: AttemptContext,
    began: Option<std::time::Instant>,
    timeout: Duration,
    clock: Clock,
) -> AttemptContext {
    let call = began.and_then(|b| b.checked_add(timeout));
    let (a, b) = (context.deadline(), call);
    let nearer = a.zip(b).map(|(a, b)| a.min(b)).or(a).or(b);
    context.with_deadline(nearer, clock())
}

/// The clock of a blocking loop.
pub const SYNC_CLOCK: Clock = crate::clock::system;

/// The clock of an async loop.
pub const ASYNC_CLOCK: Clock = crate::clock::for_async();

#[cfg(feature = "tokio")]
pin_project_lite::pin_project! {
    /// The default sleep of an `async fn`: tokio's timer, held in the
    /// function's future by value, and polled through a poll function of
    /// its own, so that the function's own poll, all that the success path
    /// runs, stays small enough for the compiler to inline into its caller.
    pub struct DefaultSleeping {
        #[pin]
        pub(super) sleep: ::tokio::time::Sleep,
    }
}

#[cfg(feature = "tokio")]
impl Future for DefaultSleeping {
    type Output = ();

    #[inline(never)]
    fn poll(
        self: core::pin::Pin<&mut Self>,
        cx: &mut core::task::Context<'_>,
    ) -> core::task::Poll<()> {
        self.project().sleep.poll(cx)
    }
}

/// Whether a delay is slept: it is not zero. (By value: `delay.is_zero()`,
/// which borrows it, keeps the delay in an `async fn`'s future across the
/// sleep: 44 instructions more on the success path, measured.)
#[inline(always)]
pub fn sleeps(delay: Duration) -> bool {
    !delay.is_zero()
}

/// Gives an attempt's async block its output type, so `?` inside it knows
/// the error type to convert into.
#[inline]
pub fn attempt<R, Fut: Future<Output = R>>(fut: Fut) -> Fut {
    fut
}

/// Gives an attempt's closure its return type, so `?` inside it knows the
/// error type to convert into; runs it once.
#[inline(always)]
pub fn attempt_sync<R, F: FnOnce() -> R>(f: F) -> R {
    f()
}

/// The step of a loop that keeps a [`Carried`] between attempts (an
/// `async fn`'s, whose future it keeps small), out of line, one copy per
/// policy.
#[cold]
#[inline(never)]
fn next_retry_carried<F: FixedOrigin>(carried: &mut Carried<F::Previous>) -> Option<Duration> {
    F::ORIGIN.policy.next_carried(carried)
}

/// The compact form of a [`Call`]: a call of the function's own loop that
/// keeps nothing but its attempt count (an `async fn` whose policy is the
/// type `P`, with no hook but a `when`), over a [`Carried`] (8 bytes)
/// rather than a whole retry state, so that the function's future stays
/// small. Its recording's steps are told the function's name rather than
/// keep it.
pub struct Compact<P: FixedOrigin> {
    carried: Carried<P::Previous>,
    began: CallBegan,
    attempt: AttemptBegan,
}

/// A call in the compact form under the policy type `P` begins, and its
/// first attempt.
#[inline(always)]
pub fn compact<P: FixedOrigin>() -> Call<Compact<P>> {
    let mut began = CallBegan::default();
    let attempt = began.attempt(P::ORIGIN.clock);
    Call(Compact {
        carried: Carried::NEW,
        began,
        attempt,
    })
}

impl<P: FixedOrigin> Form for Compact<P> {
    #[inline(always)]
    fn parts(&mut self, function: &'static str) -> (impl driver::Progress, impl Records) {
        let recording = CompactRecording {
            function,
            clock: P::ORIGIN.clock,
            began: &self.began,
            attempt: core::mem::take(&mut self.attempt),
            attempts: self.carried.attempt(),
        };
        (Carrying::<P>(&mut self.carried), recording)
    }

    #[inline(always)]
    fn next_attempt(&mut self) {
        self.attempt = self.began.attempt(P::ORIGIN.clock);
    }
}

/// The driver's progress of a loop that keeps a [`Carried`] under the
/// policy type `P`: no start time, budget or breaker, so an accepted
/// outcome tells no one.
pub(crate) struct Carrying<'a, P: FixedOrigin>(&'a mut Carried<P::Previous>);

impl<P: FixedOrigin> driver::Progress for Carrying<'_, P> {
    #[inline(always)]
    fn step(&mut self, decision: Decision) -> Option<Duration> {
        // (Without a `when`, every error is retried: the branch folds away.)
        match decision {
            Decision::Retry => next_retry_carried::<P>(self.0),
            decision => P::ORIGIN.policy.next_carried_for(self.0, decision),
        }
    }

    fn event(&self, delay: Duration) -> RetryEvent {
        RetryEvent::new(self.0.attempt(), delay, Duration::ZERO)
    }

    fn report(&self) -> GiveUp {
        self.0.report()
    }
}

/// Never called: `if false { return outcome_type::<R>(); }`, first in an
/// attempt's async block, gives the block its output type `R` before its
/// body is checked (a `return` of the wrong type in the body is then one
/// error, at that `return`). It is cheaper for rustc to check than the
/// `if let Some(r) = None::<R> { return r; }` that `async-trait` writes.
#[inline(always)]
pub fn outcome_type<R>() -> R {
    unreachable!("`outcome_type` is never called")
}

/// The verdict without a `when`: every error is retried.
pub const RETRY: RetryAll = RetryAll;

/// How the driver ended a call: with an outcome to return as it is, or
/// with one it gave up with and its report, for `on_giveup` and `fallback`
/// ([`Ended::finish`]).
pub enum Ended<T, E> {
    /// Return this.
    Done(Result<T, E>),
    /// The call gave up with this outcome, for this report.
    GaveUp(Result<T, E>, GiveUp),
}

impl<T, E> Ended<T, E> {
    /// The call's result: the outcome, or what the give-up hooks (the
    /// expansion's `on_giveup` then `fallback`, one `FnOnce` built on the
    /// path that returns, so it may move an argument) make of it.
    #[inline(always)]
    pub fn finish(
        self,
        give_up: impl FnOnce(Result<T, E>, GiveUp) -> Result<T, E>,
    ) -> Result<T, E> {
        match self {
            Ended::Done(result) => result,
            Ended::GaveUp(result, report) => give_up(result, report),
        }
    }

    /// The call's result, with no give-up hooks.
    #[inline(always)]
    pub fn result(self) -> Result<T, E> {
        match self {
            Ended::Done(result) | Ended::GaveUp(result, _) => result,
        }
    }

    /// The call's end after `timeout`'s future returned `result`, having
    /// given up for `gave_up`'s report if it holds one.
    #[inline(always)]
    pub fn resume(result: Result<T, E>, gave_up: Option<GiveUp>) -> Self {
        match gave_up {
            None => Ended::Done(result),
            Some(report) => Ended::GaveUp(result, report),
        }
    }
}

/// The expansion's `on_retry` of the outcome, called at most once.
struct Once<F>(Option<F>);

impl<T, E, F: FnOnce(&Result<T, E>, &RetryEvent)> OnRetry<T, E> for Once<F> {
    #[inline(always)]
    fn on_retry(&mut self, outcome: &Result<T, E>, event: &RetryEvent) {
        if let Some(hook) = self.0.take() {
            hook(outcome, event);
        }
    }
}

/// Keeps the report of a call that gives up, for the function's
/// `on_giveup` and `fallback`.
struct Keep<'r>(&'r mut Option<GiveUp>);

impl<T, E> OnGiveUp<T, E> for Keep<'_> {
    #[inline(always)]
    fn on_giveup(self, _: &Result<T, E>, report: &GiveUp) {
        *self.0 = Some(*report);
    }
}

/// The driver's give-up step with no attempt just ended (a breaker's
/// refusal, a throttle's rejection, a `timeout`, a cancel), for `report`,
/// which is kept for the give-up hooks.
#[inline(always)]
fn give_up<T, E, R: Trace<E>, M: Records>(
    report: impl FnOnce() -> GiveUp,
    recording: &mut M,
    trace: R,
    outcome: Result<T, E>,
) -> Ended<T, E> {
    let mut kept = None;
    let mut hooks = HookSet::of(Decision::Stop, Decision::Stop, NoHook, Keep(&mut kept));
    let result = driver::give_up(report, outcome, &mut hooks, &trace, recording, None);
    Ended::resume(result, kept)
}

/// A call of the function's own loop, as the driver sees it, in one of
/// two forms (`F`): [`Full`], what the first failure builds a retry state
/// from and that state, or [`Compact`], a [`Carried`] under a policy type.
/// The steps after an attempt are the same for both ([`Call::after_error`]
/// and its kin, [`Call::accepted`], [`Call::next_attempt`]); each is told
/// the function's name, which the compact form's recording does not keep.
pub struct Call<F>(F);

/// What a [`Call`] keeps: the driver's view of it after an attempt, and
/// where that step runs. (The runtime's own: the expansion calls the
/// methods of a `Call`, and never names this.)
pub(crate) trait Form: Sized {
    /// The call's progress, as the driver steps it, and its recording, as
    /// the driver tells it, of the attempt of `function` that just ended.
    fn parts(&mut self, function: &'static str) -> (impl driver::Progress, impl Records);
    /// The driver's rule after an attempt: [`step`], out of line (one
    /// copy per function) for a whole retry state, inline for the compact
    /// form, whose step is out of line already. (One out-of-line copy for
    /// both cost the compact form 31 instructions per retry, 38 -> 69,
    /// measured: so the full form's override differs only in that
    /// attribute.)
    #[inline(always)]
    fn step<T, E, N: OnRetry<T, E>>(
        &mut self,
        function: &'static str,
        trace: impl Trace<E>,
        decision: impl Verdict<T, E>,
        outcome: Result<T, E>,
        on_retry: N,
    ) -> ControlFlow<Ended<T, E>, Duration> {
        driver::unit(step(self, function, trace, decision, outcome, on_retry))
    }
    /// Another attempt begins.
    fn next_attempt(&mut self);
    /// Before an accepted outcome reaches the progress.
    #[inline(always)]
    fn accepting(&mut self) {}
}

/// The full form of a [`Call`]: what the first failure builds the retry
/// state from (the policy, the clock, the call's start if read, the
/// budget, the breaker and the throttle), the state once built (from the
/// start, beside a breaker or a throttle, which admit each attempt), and
/// the call's recording.
///
/// Without a breaker or a throttle the state holds nothing to release (its
/// only `Drop` part is a breaker's permit), so it is kept in a
/// `ManuallyDrop`: a call that returns, or an `async fn`'s future, has no
/// drop of it to run. [`Call::with_circuit`] and [`Call::with_throttle`]
/// keep it in an `Option`.
pub struct Full<'p, S, K = ManuallyDrop<Option<RetryState<'p, S>>>> {
    start: Origin<'p, S>,
    state: K,
    recording: Recording,
}

impl<'p, S: Strategy + 'p, K: Kept<'p, S>> Form for Full<'p, S, K> {
    #[inline(always)]
    fn parts(&mut self, _: &'static str) -> (impl driver::Progress, impl Records) {
        let progress = driver::Lazy {
            slot: &mut *self.state,
            start: &self.start,
        };
        (progress, &mut self.recording)
    }

    #[inline(never)]
    fn step<T, E, N: OnRetry<T, E>>(
        &mut self,
        function: &'static str,
        trace: impl Trace<E>,
        decision: impl Verdict<T, E>,
        outcome: Result<T, E>,
        on_retry: N,
    ) -> ControlFlow<Ended<T, E>, Duration> {
        // (The state built first, if more than the start builds it.)
        self.state.build(&self.start);
        driver::unit(step(self, function, trace, decision, outcome, on_retry))
    }

    #[inline(always)]
    fn next_attempt(&mut self) {
        self.recording.attempt_starts();
    }

    #[inline(always)]
    fn accepting(&mut self) {
        self.state.settle(&self.start);
    }
}

/// Where a full [`Call`] keeps its retry state: behind a `ManuallyDrop`
/// when it holds nothing to release, or [`Gated`].
pub trait Kept<'p, S: 'p>: DerefMut<Target = Option<RetryState<'p, S>>> {
    /// Before a step: the state built, if it is built from more than
    /// `start` (the driver builds it from `start` otherwise).
    #[inline(always)]
    fn build(&mut self, _: &Origin<'p, S>) {}
    /// An accepted attempt: the breaker and the throttle hear of it if no
    /// state keeps their permits.
    #[inline(always)]
    fn settle(&mut self, _: &Origin<'p, S>) {}
}

impl<'p, S> Kept<'p, S> for ManuallyDrop<Option<RetryState<'p, S>>> {}

/// Where a [`Call`] behind a breaker or a throttle keeps its state and,
/// until a failure (or a refusal) builds that state, the breaker, the
/// throttle and the permits they gave the first attempt: a call that
/// succeeds at once builds no state. Dropped with the call (a permit's drop
/// tells its breaker).
pub struct Gated<'p, S> {
    state: Option<RetryState<'p, S>>,
    gate: Gate<'p>,
}

impl<'p, S> Deref for Gated<'p, S> {
    type Target = Option<RetryState<'p, S>>;
    #[inline(always)]
    fn deref(&self) -> &Self::Target {
        &self.state
    }
}

impl<S> DerefMut for Gated<'_, S> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.state
    }
}

impl<'p, S> Kept<'p, S> for Gated<'p, S> {
    #[inline(always)]
    fn build(&mut self, start: &Origin<'p, S>) {
        if self.state.is_none() {
            self.built(start);
        }
    }

    #[inline(always)]
    fn settle(&mut self, start: &Origin<'p, S>) {
        self.gate.settle(true, start.clock);
    }
}

impl<'p, S> Gated<'p, S> {
    /// The state, built from `start` and the gate (the breaker, the
    /// throttle and their permits) if no failure built it yet.
    #[cold]
    #[inline(never)]
    fn built(&mut self, start: &Origin<'p, S>) -> &mut RetryState<'p, S> {
        let gate = &mut self.gate;
        self.state.get_or_insert_with(|| {
            let state = start.gated(gate.circuit, gate.throttle);
            state.holding(core::mem::take(gate))
        })
    }

    /// The first attempt was refused for `reason`: the call's state gives
    /// up with it.
    #[cold]
    #[inline(never)]
    fn refused<R>(&mut self, start: &Origin<'p, S>, reason: GiveUpReason, refusal: R) -> R {
        self.built(start).refuse(reason);
        refusal
    }
}

impl<'p, S> Call<Full<'p, S>> {
    /// A call of `function` begins under `policy`: the start is read only
    /// if `timed` (a hook reads `elapsed`) or the policy has a deadline;
    /// nothing else is built until an attempt fails.
    #[inline(always)]
    pub fn begin(policy: &'p Policy<S>, clock: Clock, timed: bool, function: &'static str) -> Self
    where
        S: crate::Strategy,
    {
        Call(Full {
            start: Origin::at(policy, clock, driver::began(policy, clock, timed), None),
            state: ManuallyDrop::new(None),
            recording: Recording::begin(function, clock),
        })
    }

    /// With `budget`, which each retry spends from and each success
    /// refills.
    #[inline(always)]
    pub fn with_budget(mut self, budget: &'p RetryBudget) -> Self {
        self.0.start.budget = Some(budget);
        self
    }

    /// Behind `circuit`, which admits each attempt.
    #[inline(always)]
    pub fn with_circuit(self, circuit: &'p CircuitBreaker) -> Call<Full<'p, S, Gated<'p, S>>> {
        self.gated(Some(circuit), None)
    }

    /// Behind `throttle`, which admits each attempt.
    #[inline(always)]
    pub fn with_throttle(self, throttle: &'p AdaptiveThrottle) -> Call<Full<'p, S, Gated<'p, S>>> {
        self.gated(None, Some(throttle))
    }

    /// The call behind a breaker or a throttle, which admit each attempt.
    #[inline(always)]
    fn gated(
        self,
        circuit: Option<&'p CircuitBreaker>,
        throttle: Option<&'p AdaptiveThrottle>,
    ) -> Call<Full<'p, S, Gated<'p, S>>> {
        let gate = Gate {
            circuit,
            throttle,
            ..Gate::default()
        };
        let state = Gated { state: None, gate };
        Call(Full {
            state,
            start: self.0.start,
            recording: self.0.recording,
        })
    }
}

impl<'p, S> Call<Full<'p, S, Gated<'p, S>>> {
    /// Behind a throttle too.
    #[inline(always)]
    pub fn with_throttle(mut self, throttle: &'p AdaptiveThrottle) -> Self {
        self.0.state.gate.throttle = Some(throttle);
        self
    }

    /// Before an attempt: whether the breaker admits it (the state's
    /// `before_attempt`, whose gate this is until a failure builds it).
    #[inline(always)]
    pub fn admit(&mut self) -> Result<(), CircuitOpen> {
        let Full { start, state, .. } = &mut self.0;
        match &mut state.state {
            Some(state) => state.before_attempt(),
            None => (state.gate.admit(start.clock))
                .map_err(|open| state.refused(start, GiveUpReason::CircuitOpen, open)),
        }
    }

    /// Before an attempt: whether the throttle lets it run.
    #[inline(always)]
    pub fn ask_throttle(&mut self) -> Result<(), Rejected> {
        let Full { start, state, .. } = &mut self.0;
        match &mut state.state {
            Some(state) => state.ask_throttle(),
            None => (state.gate.ask_throttle(start.clock))
                .map_err(|rejected| state.refused(start, GiveUpReason::Rejected, rejected)),
        }
    }
}

/// A verdict as the function's own loop hands it to the driver: `when`'s
/// (or `when_ok`'s) [`Decision`], or [`RETRY`] without either, a constant
/// the driver's step folds.
pub trait Verdict<T, E>: Classify<T> + Classify<E> + Copy {}

impl<T, E, V: Classify<T> + Classify<E> + Copy> Verdict<T, E> for V {}

#[allow(private_bounds)]
impl<F: Form> Call<F> {
    /// An accepted outcome of `function`, which the loop returns at once
    /// (no `when_ok`): the breaker, the budget and the metrics hear of it.
    #[inline(always)]
    pub fn accepted(&mut self, function: &'static str) {
        self.0.accepting();
        let (mut progress, mut recording) = self.0.parts(function);
        driver::Progress::succeeded(&mut progress);
        recording.succeeded();
    }

    /// Another attempt begins, after a retry's sleep.
    #[inline(always)]
    pub fn next_attempt(&mut self) {
        self.0.next_attempt();
    }

    /// After an attempt of `function` that ended with `outcome`, judged
    /// `decision` (by `when` or `when_ok`, in the function): the driver's
    /// rule (the step, the trace, the metrics, giving up).
    /// `Continue(delay)`: the outcome was dropped; sleep and try again.
    /// `Break(ended)`: the call ends ([`Ended::finish`]).
    ///
    /// Out of line for a full call, one copy per function: the loop keeps
    /// one call and one match.
    #[inline(always)]
    pub fn after<T, E>(
        &mut self,
        function: &'static str,
        trace: impl Trace<E>,
        decision: impl Verdict<T, E>,
        outcome: Result<T, E>,
    ) -> ControlFlow<Ended<T, E>, Duration> {
        self.0.step(function, trace, decision, outcome, NoHook)
    }

    /// [`Call::after`], with `on_retry`, a closure built at the call (so a
    /// borrow it makes ends with the call), called before a retry's sleep.
    #[inline(always)]
    pub fn after_hooked<T, E>(
        &mut self,
        function: &'static str,
        trace: impl Trace<E>,
        decision: impl Verdict<T, E>,
        outcome: Result<T, E>,
        on_retry: impl FnOnce(&Result<T, E>, &RetryEvent),
    ) -> ControlFlow<Ended<T, E>, Duration> {
        let on_retry = Once(Some(on_retry));
        self.0.step(function, trace, decision, outcome, on_retry)
    }

    /// [`Call::after`] an attempt that failed with `error` (no `when_ok`:
    /// every `Ok` was accepted).
    #[inline(always)]
    pub fn after_error<T, E>(
        &mut self,
        function: &'static str,
        trace: impl Trace<E>,
        decision: impl Verdict<T, E>,
        error: E,
    ) -> ControlFlow<Ended<T, E>, Duration> {
        self.0.step(function, trace, decision, Err(error), NoHook)
    }

    /// [`Call::after_error`], with `on_retry`, which takes the error.
    #[inline(always)]
    pub fn after_error_hooked<T, E>(
        &mut self,
        function: &'static str,
        trace: impl Trace<E>,
        decision: impl Verdict<T, E>,
        error: E,
        on_retry: impl FnOnce(&E, &RetryEvent),
    ) -> ControlFlow<Ended<T, E>, Duration> {
        // (Without `when_ok`, only errors are retried.)
        let on_retry = |outcome: &Result<T, E>, event: &RetryEvent| {
            if let Err(error) = outcome {
                on_retry(error, event);
            }
        };
        let on_retry = Once(Some(on_retry));
        self.0.step(function, trace, decision, Err(error), on_retry)
    }
}

/// After an attempt, through the driver's rule, with the one adapter of
/// hooks ([`HookSet`]), as the driver calls the expansion's: its verdict,
/// taken in the function (`when` on the error, `when_ok` on the `Ok` value,
/// each built and called where a loop written by hand would) and handed
/// over as a [`Decision`] (or [`RETRY`]); `on_retry`, a closure built at
/// the call (called at most once, so an `FnOnce`), or [`NoHook`]; and the
/// report of a call that gives up, kept for `on_giveup` and `fallback`,
/// which run after the loop (kept whether or not the function has either:
/// building it is the give-up path's, which is cold, and the expansion then
/// needs no word to say whether it has them). Where it runs:
/// [`Form::step`]. What `K` keeps of a retry's outcome is kept beside its
/// delay (see [`driver::Keep`]).
#[inline(always)]
fn step<F: Form, T, E, N: OnRetry<T, E>, K: driver::Keep<T, E>>(
    form: &mut F,
    function: &'static str,
    trace: impl Trace<E>,
    decision: impl Verdict<T, E>,
    outcome: Result<T, E>,
    on_retry: N,
) -> ControlFlow<Ended<T, E>, (Duration, K)> {
    let mut report = None;
    let mut hooks = HookSet::of(decision, decision, on_retry, Keep(&mut report));
    let (mut progress, mut recording) = form.parts(function);
    let (hooks, recording) = (&mut hooks, &mut recording);
    match driver::after_attempt(&mut progress, outcome, hooks, &trace, recording) {
        ControlFlow::Continue(kept) => ControlFlow::Continue(kept),
        ControlFlow::Break(result) => ControlFlow::Break(Ended::resume(result, report)),
    }
}

impl<'p, S: Strategy, K: Kept<'p, S>> Call<Full<'p, S, K>> {
    /// The context of the attempt about to run (`context = ctx`): the
    /// state's, once a failure built it.
    #[inline(always)]
    pub fn context(&self) -> AttemptContext {
        match &*self.0.state {
            Some(state) => state.context(),
            None => self.0.start.context(1),
        }
    }

    /// [`context`](Call::context) under a whole-call `timeout` (counted
    /// from the call's start, which a `timeout` reads): its deadline the
    /// nearer of the two.
    #[inline(never)]
    pub fn context_within(&self, timeout: Duration) -> AttemptContext {
        let start = &self.0.start;
        within_timeout(self.context(), start.began, timeout, start.clock)
    }

    /// `attempt_timeout`'s `limit` for the attempt about to run, of
    /// `context`, cut to the time left until the call's deadline (but for
    /// the last try that `on_deadline = "last_try"` grants at the
    /// deadline, which keeps it).
    #[inline(always)]
    pub fn attempt_timeout(&self, limit: Duration, context: AttemptContext) -> Duration {
        if self.0.state.as_ref().is_some_and(RetryState::is_last_try) {
            limit
        } else {
            cut(limit, context)
        }
    }

    /// What `on_success` is told, if the call `ended` with an accepted
    /// `Ok` (the expansion calls the hook itself: a hook of the wrong type
    /// is then rustc's error at it, naming no bound of the runtime's).
    #[inline(always)]
    pub fn success<'e, T, E>(&self, ended: &'e Ended<T, E>) -> Option<(&'e T, SuccessEvent)> {
        match ended {
            Ended::Done(Ok(value)) => Some((value, self.0.start.success(self.0.state.as_ref()))),
            _ => None,
        }
    }

    /// The call gives up with `outcome` (an error) before an attempt ran (a
    /// breaker refused it, a throttle rejected it): the driver's give-up
    /// step.
    #[cold]
    #[inline(never)]
    pub fn refused<T, E, R: Trace<E>>(&mut self, trace: R, outcome: Result<T, E>) -> Ended<T, E> {
        let (progress, mut recording) = self.0.parts("");
        let report = || driver::Progress::report(&progress);
        give_up(report, &mut recording, trace, outcome)
    }

    /// The call gives up with `outcome` (an error) because its `timeout`
    /// passed after `calls` attempts began: the driver's give-up step, with
    /// the report of that (reason [`GiveUpReason::Timeout`]).
    #[cold]
    #[inline(never)]
    pub fn timed_out<T, E, R: Trace<E>>(
        &mut self,
        calls: u32,
        trace: R,
        outcome: Result<T, E>,
    ) -> Ended<T, E> {
        let start = &self.0.start;
        let report = driver::timeout_report(calls, start.clock, start.began);
        timed_out(report, &mut self.0.recording, trace, outcome)
    }
}

/// The call gives up with `outcome` for `report` (a `timeout` passed): the
/// driver's give-up step. A hedged call's, whose recording counted its
/// attempts itself, passes [`Recording::OFF`].
#[cold]
#[inline(never)]
pub fn timed_out<T, E, R: Trace<E>>(
    report: GiveUp,
    recording: &mut Recording,
    trace: R,
    outcome: Result<T, E>,
) -> Ended<T, E> {
    give_up(|| report, recording, trace, outcome)
}

/// The report of a hedged call that ran past its `timeout` after `calls`
/// attempts began, `start` being its start.
pub use crate::driver::timeout_report;

/// An untimed state machine of `policy` (the delay benches' start: no clock
/// read, as in the attribute's own loop without a deadline).
#[inline]
pub fn state_from<S>(
    policy: &Policy<S>,
    clock: Clock,
    start: Option<std::time::Instant>,
) -> RetryState<'_, S> {
    RetryState::starting_at(policy, clock, start)
}
