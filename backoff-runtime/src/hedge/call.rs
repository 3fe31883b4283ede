//! A hedged call running: [`Hedged`], the future, and its state.

use super::*;

pin_project! {
    /// A hedged call's future: see the [module](crate::hedge). Built by
    /// [`Hedge::call`]; it holds its attempts' futures in `L`, `N` slots,
    /// and reports its retries and its giving up to `Tr` (the attribute's
    /// `tracing` events). Dropping it drops every attempt in flight.
    ///
    /// ```
    /// use backoff_runtime::hedge::HedgeDelay;
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

/// The types a [`Call`] names without holding.
pub(super) type Marker<Fut, T, E> = PhantomData<fn() -> (Fut, Result<T, E>)>;

/// How [`Hedge::circuit`] makes a refusal the call's error.
pub(super) type FromOpen<E> = fn(CircuitOpen) -> E;

/// What a hedged call keeps besides its pinned attempts and timer.
pub(super) struct Call<'p, S, Op, Fut, T, E, C, H, U> {
    pub(super) op: Op,
    pub(super) start: Origin<'p, S>,
    pub(super) state: Option<RetryState<'p, S>>,
    pub(super) hooks: H,
    /// Taken by the one call that succeeds.
    pub(super) on_success: Option<U>,
    pub(super) recording: Recording,
    pub(super) delay: HedgeDelay<'p>,
    /// The delay read when the call began.
    pub(super) hedge_after: Duration,
    pub(super) refused: Option<C>,
    pub(super) started: u32,
    pub(super) in_flight: u32,
    pub(super) hedges: u32,
    /// Whether the timer runs for the next hedge.
    pub(super) armed: bool,
    /// Whether it is to be started when the attempts next wait.
    pub(super) arm: bool,
    pub(super) done: bool,
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
        let learn = self.delay.latency();
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
        let context = || {
            let context = AttemptContext::of(start.policy, number).with_kind(kind);
            match start.deadline() {
                // (The policy's `max_elapsed`; the attribute's `timeout`,
                // which bounds the call from outside, its op counts to.)
                Some(deadline) => context.with_deadline(Some(deadline), (start.clock)()),
                None => context,
            }
        };
        slots.start(self.started, self.op.attempt_with(context), meta);
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

    /// No other hedge may start.
    pub(super) fn disarm(&mut self) {
        self.armed = false;
        self.arm = false;
    }

    /// The call gives up: the breaker refused its next attempt (its first,
    /// or a retry with none in flight).
    pub(super) fn refused(&mut self, open: CircuitOpen, trace: &impl Trace<E>) -> Result<T, E> {
        self.done = true;
        let error = match &self.refused {
            Some(from) => from.refuse(open),
            None => unreachable!("refused without a breaker"),
        };
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
            &progress,
            Err(error),
            &mut self.hooks,
            trace,
            &mut recording,
            None,
        )
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
        if call.started == 0 {
            call.hedge_after = call.delay.get();
            if let Err(open) = call.start(slots.as_mut(), AttemptKind::Original) {
                return Poll::Ready(call.refused(open, trace));
            }
        }
        loop {
            if call.armed
                && let Some(sleep) = timer.as_mut().as_pin_mut()
                && sleep.poll(cx).is_ready()
            {
                call.armed = false;
                let granted = !call.op.cancelled() && {
                    let mut progress = Lazy {
                        slot: &mut call.state,
                        start: &call.start,
                    };
                    driver::hedge_now::<T, E, H>(&mut progress, call.hedge_after, &mut call.hooks)
                };
                if granted {
                    let _ = call.start(slots.as_mut(), AttemptKind::Hedge);
                }
                continue;
            }
            let Poll::Ready((outcome, mut meta)) = slots.as_mut().poll_any(cx) else {
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
            call.in_flight -= 1;
            if let (Some(latency), Some(began)) = (meta.learn.take(), meta.began) {
                // An answer after `took`; a failure says only "at least".
                let took = (call.start.clock)().saturating_duration_since(began);
                if outcome.is_ok() {
                    latency.record(took);
                } else {
                    latency.record_at_least(took);
                }
            }
            if let Some(permit) = meta.permit.take() {
                // (Told of the outcome by the state's step or success.)
                let state = call.state.get_or_insert_with(|| call.start.state());
                state.put_permit(Some(permit));
            }
            // (A constant `false` but for the attribute's `cancel`.)
            let cancelled = call.op.cancelled();
            let mut progress = Lazy {
                slot: &mut call.state,
                start: &call.start,
            };
            let in_flight = |f: &mut dyn FnMut(_, _, _)| slots.as_ref().get_ref().in_flight(f);
            let mut recording = HedgedRecording {
                recording: &mut call.recording,
                kind: meta.kind,
                number: meta.number,
                began: meta.began,
                started: call.started,
                in_flight: &in_flight,
            };
            match driver::after_hedged_attempt(
                &mut progress,
                outcome,
                HedgeCount {
                    in_flight: call.in_flight > 0,
                    room: call.started < L::LEN,
                    cancelled,
                    started: call.started,
                    hedges: call.hedges,
                },
                &mut call.hooks,
                trace,
                &mut recording,
            ) {
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
