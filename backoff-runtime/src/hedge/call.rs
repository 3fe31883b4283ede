//! A hedged call running: [`Hedged`], the future, and its state.

use super::*;

pin_project! {
    /// A hedged call's future: see [`Hedge`](crate::Hedge). Built by
    /// [`Hedge::call`]; it holds its attempts' futures in `L`, `N` slots,
    /// and reports its retries and its giving up to `Tr` (the attribute's
    /// `tracing` events). Dropping it drops every attempt in flight.
    ///
    /// ```
    /// use backoff_runtime::HedgeDelay;
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let policy = Policy::immediate().attempts(2);
    /// let call = policy
    ///     .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .call(|| std::future::pending::<Result<(), ()>>());
    /// // Both attempts are cancelled with the call.
    /// assert!(tokio::time::timeout(Duration::from_secs(1), call).await.is_err());
    /// # }
    /// ```
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Hedged<'p, S, Op, Fut, T, E, C, H, U, L, Tr> {
        #[pin]
        pub(super) slots: L,
        #[pin]
        pub(super) timer: Option<tokio::time::Sleep>,
        pub(super) call: Call<'p, S, Op, Fut, T, E, C, H, U>,
        pub(super) trace: Tr,
    }
}

/// How [`Hedge::circuit`] makes a refusal the call's error.
pub(super) type FromOpen<E> = fn(CircuitOpen) -> E;

/// How a hedged call goes on after one of its attempts ended.
pub(super) enum Hedging<T, E> {
    /// The call ends with this outcome: accepted (`true`: the `Ok` that
    /// `on_success` is told of), or given up with (stopped, or the failure
    /// of the last attempt in flight when no other may start).
    Done(Result<T, E>, bool),
    /// Start another attempt now (the failure was told to `on_retry` and
    /// dropped).
    Next,
    /// No other attempt may start: wait for those in flight (the failure
    /// was dropped; it was not the last).
    Wait,
}

/// The types a [`Call`] names without holding.
pub(super) type Marker<Fut, T, E> = PhantomData<fn() -> (Fut, Result<T, E>)>;

/// What a hedged call keeps besides its pinned attempts and timer.
pub(super) struct Call<'p, S, Op, Fut, T, E, C, H, U> {
    pub(super) op: Op,
    pub(super) start: Origin<'p, S>,
    pub(super) state: Option<RetryState<'p, S>>,
    pub(super) hooks: H,
    pub(super) recording: Recording,
    /// The delay, read when the call was made.
    pub(super) hedge_after: Duration,
    /// The estimate each attempt teaches, if the delay is learned.
    pub(super) learn: Option<&'p Latency>,
    pub(super) refused: Option<C>,
    pub(super) started: u32,
    pub(super) in_flight: u32,
    pub(super) hedges: u32,
    /// Whether the timer runs for the next hedge.
    pub(super) armed: bool,
    /// Whether it is to be started when the attempts next wait.
    pub(super) arm: bool,
    pub(super) done: bool,
    /// Taken by the one call that succeeds.
    pub(super) on_success: Option<U>,
    pub(super) outcome: Marker<Fut, T, E>,
}

impl<'p, S: Strategy, Op, Fut, T, E, C, H, U> Call<'p, S, Op, Fut, T, E, C, H, U>
where
    C: Refuse<E>,
    Op: HedgeOp<Fut>,
    Fut: Future<Output = Result<T, E>>,
    H: Hooks<T, E>,
{
    /// Starts attempt `started + 1` of kind `kind` in its slot, with a
    /// permit from the breaker, if any (`Err(open)` if it refused), and
    /// rearms the timer for the next hedge.
    #[inline(always)]
    pub(super) fn start<L: Slots<'p, Fut>>(
        &mut self,
        slots: Pin<&mut L>,
        kind: AttemptKind,
    ) -> Result<(), CircuitOpen> {
        let mut permit = None;
        if self.refused.is_some() {
            let state = self.state.get_or_insert_with(|| self.start.state());
            state.before_attempt()?;
            permit = state.take_permit();
        }
        let learn = self.learn;
        let (start, number) = (&self.start, self.started.saturating_add(1));
        let meta = Meta {
            kind,
            number,
            // (Timed when recording or learning the latency.)
            began: (self.recording.is_live() || learn.is_some()).then(|| (start.clock)()),
            permit,
            quiet: self.in_flight > 0,
            learn,
        };
        // (The deadline is the policy's `max_elapsed`; the attribute's
        // `timeout`, which bounds the call from outside, its op counts to.)
        let context = || AttemptContext {
            kind,
            ..start.context(number)
        };
        slots.start(self.started, self.op.attempt(context), meta);
        self.started += 1;
        self.in_flight += 1;
        self.hedges += u32::from(kind == AttemptKind::Hedge);
        // The timer is to run for the next hedge (from when the attempts
        // next wait, in this poll), if one may start (no more than the
        // slots do).
        self.armed = false;
        self.arm = self.started < L::LEN && !self.state.as_ref().is_some_and(RetryState::is_done);
        Ok(())
    }

    /// No other hedge may start: the timer stops, and is not started again.
    fn disarm(&mut self) {
        (self.armed, self.arm) = (false, false);
    }

    /// The call gives up: the breaker refused its next attempt (its first,
    /// or a retry with none in flight).
    pub(super) fn refused(&mut self, open: CircuitOpen, trace: &impl Trace<E>) -> Result<T, E> {
        self.done = true;
        let from = self.refused.as_ref().expect("refused without a breaker");
        let progress = Lazy {
            slot: &mut self.state,
            start: &self.start,
        };
        let mut recording = HedgedRecording {
            recording: &mut self.recording,
            kind: AttemptKind::Original,
            number: 0,
            began: None,
            started: self.started,
            in_flight: &|_| {},
        };
        driver::give_up(
            || progress.report(),
            Err(from.refuse(open)),
            &mut self.hooks,
            trace,
            &mut recording,
            None,
        )
    }

    /// After one attempt (`meta`, from `slots`) ended with `outcome`: the
    /// driver's rule ([`after_attempt`](crate::driver)), with one
    /// difference. Each further attempt is a step of the same state (so
    /// the attempt limit, the deadline, the breaker and the budget grant
    /// it), and the granted delay is not slept: a failure to retry starts
    /// the next attempt at once. A failure that cannot be followed by
    /// another attempt gives the call up only if it is the last in flight;
    /// otherwise it is dropped and the call waits for the others (the last
    /// error is the one returned).
    #[inline]
    fn ended<L: Slots<'p, Fut>, Tr: Trace<E>>(
        &mut self,
        slots: &L,
        outcome: Result<T, E>,
        mut meta: Meta<'p>,
        trace: &Tr,
    ) -> Hedging<T, E> {
        self.in_flight -= 1;
        // An answer after `took`; a failure says only "at least".
        meta.teach(outcome.is_ok());
        if let Some(permit) = meta.permit.take() {
            // (Told of the outcome by the state's step or success.)
            let state = self.state.get_or_insert_with(|| self.start.state());
            state.put_permit(Some(permit));
        }
        // (A constant `false` but for the attribute's `cancel`.)
        let cancelled = self.op.cancelled();
        // (Whether a slot is free for another: the attempt limit, at most
        // the slots, leaves room for what the step grants, but for a
        // throttled schedule's own limit.)
        let room = self.started < L::LEN;
        let mut progress = Lazy {
            slot: &mut self.state,
            start: &self.start,
        };
        let in_flight = |f: &mut dyn FnMut(_, _, _)| slots.in_flight(f);
        let mut recording = HedgedRecording {
            recording: &mut self.recording,
            kind: meta.kind,
            number: meta.number,
            began: meta.began,
            started: self.started,
            in_flight: &in_flight,
        };
        let hooks = &mut self.hooks;
        let (decision, outcome) = verdict!(progress, outcome, hooks, recording, |accepted| {
            Hedging::Done(accepted, true)
        });
        let stop = matches!(decision, Decision::Stop);
        // (The step always runs: it tells the breaker of the attempt's outcome.)
        match progress.step(decision) {
            Some(_) if room && !cancelled => {
                recording.retried(outcome.is_ok(), Duration::ZERO);
                let event = progress.event(Duration::ZERO);
                if H::ON_RETRY {
                    hooks.on_retry(&outcome, &event);
                }
                if let Err(error) = &outcome {
                    trace.retry(error, &event);
                }
                Hedging::Next
            }
            _ if self.in_flight > 0 && !stop => {
                recording.retried(outcome.is_ok(), Duration::ZERO);
                Hedging::Wait
            }
            _ => {
                // The report (built only if read) counts every attempt
                // started, and the hedges.
                let report = || {
                    let mut report = progress.report();
                    (report.attempts, report.hedges) = (self.started, self.hedges);
                    // (With attempts left, the token ended the call: the
                    // steps the attempts it kept from starting took do not
                    // count.)
                    if cancelled && room && !stop {
                        report.reason = GiveUpReason::Cancelled;
                    }
                    report
                };
                let ended = Some(outcome.is_ok());
                let outcome = driver::give_up(report, outcome, hooks, trace, &mut recording, ended);
                Hedging::Done(outcome, false)
            }
        }
    }
}

impl<'p, S, Op, Fut, T, E, C, H, U, L, Tr> Future for Hedged<'p, S, Op, Fut, T, E, C, H, U, L, Tr>
where
    Tr: Trace<E>,
    C: Refuse<E>,
    S: Strategy,
    Op: HedgeOp<Fut>,
    Fut: Future<Output = Result<T, E>>,
    H: Hooks<T, E>,
    U: OnSuccess<T>,
    L: Slots<'p, Fut>,
{
    type Output = Result<T, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, E>> {
        let this = self.project();
        let call = this.call;
        let trace = &*this.trace;
        let mut slots = this.slots;
        let mut timer = this.timer;
        assert!(!call.done, "`Hedged` polled after it completed");
        if call.started == 0
            && let Err(open) = call.start(slots.as_mut(), AttemptKind::Original)
        {
            return Poll::Ready(call.refused(open, trace));
        }
        loop {
            if call.armed
                && let Some(sleep) = timer.as_mut().as_pin_mut()
                && sleep.poll(cx).is_ready()
            {
                // The delay ran out with attempts in flight and none ended:
                // a hedge starts if the step grants it (as a retry: attempt
                // limit, deadline, breaker, budget; refused, the state has
                // given up for its reason, and the call waits for the
                // attempts in flight), and none once the attribute's
                // `cancel` token was cancelled. `on_hedge` hears of it with
                // the event of kind `Hedge` and the delay that ran out.
                call.armed = false;
                let mut progress = Lazy {
                    slot: &mut call.state,
                    start: &call.start,
                };
                if !call.op.cancelled() && progress.step(Decision::Retry).is_some() {
                    if H::ON_HEDGE {
                        let event = progress.event(call.hedge_after);
                        let kind = AttemptKind::Hedge;
                        call.hooks.on_hedge(&RetryEvent { kind, ..event });
                    }
                    let _ = call.start(slots.as_mut(), AttemptKind::Hedge);
                }
                continue;
            }
            let Poll::Ready((outcome, meta)) = slots.as_mut().poll_any(cx) else {
                if call.arm {
                    // The attempts wait: the timer starts now, in the poll
                    // that started the attempt (so an attempt that is ready
                    // at once never builds it).
                    call.arm = false;
                    if let Some(at) = tokio::time::Instant::now().checked_add(call.hedge_after) {
                        match timer.as_mut().as_pin_mut() {
                            Some(sleep) => sleep.reset(at),
                            None => timer.set(Some(tokio::time::sleep_until(at))),
                        }
                        call.armed = true;
                        continue;
                    }
                }
                return Poll::Pending;
            };
            match call.ended(slots.as_ref().get_ref(), outcome, meta, trace) {
                Hedging::Done(outcome, accepted) => {
                    call.done = true;
                    // The losers are dropped now, not with the future.
                    slots.as_mut().cancel_all();
                    timer.set(None);
                    if U::GIVEN
                        && accepted
                        && let Ok(value) = &outcome
                        && let Some(hook) = call.on_success.take()
                    {
                        hook.on_success(
                            value,
                            &SuccessEvent::new(call.started, call.start.elapsed()),
                        );
                    }
                    return Poll::Ready(outcome);
                }
                Hedging::Next => {
                    if let Err(open) = call.start(slots.as_mut(), AttemptKind::Retry) {
                        if call.in_flight == 0 {
                            // The breaker refused the retry at the last
                            // moment (the state had admitted it): the call
                            // ends.
                            timer.set(None);
                            return Poll::Ready(call.refused(open, trace));
                        }
                        call.disarm();
                    }
                }
                Hedging::Wait => call.disarm(),
            }
        }
    }
}
