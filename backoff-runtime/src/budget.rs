//! [`RetryBudget`]: a token bucket shared by every call that names it, so a
//! fleet of callers cannot multiply the load on a failing service.
//!
//! # The model, and why
//!
//! Two budgets are well known:
//!
//! - **gRPC retry throttling** keeps `max_tokens` tokens; every failure
//!   takes one, every success gives back `token_ratio`; retries are allowed
//!   while the bucket is above a threshold. When the service is fully down
//!   there are no successes, so after the bucket drains nobody retries: the
//!   load falls to one attempt per request.
//! - **Finagle's `RetryBudget`** deposits a percentage of a token on every
//!   *request*, plus a minimum number of retries per second over a
//!   time-to-live window. In a full outage it still allows `percent` retries
//!   per request forever, and it needs a sliding window (a clock and a ring
//!   of counters) to express the per-second reserve.
//!
//! This budget follows gRPC, simplified to what the spec asks: the bucket
//! starts full with `max_tokens`; **a retry spends one token, a success
//! refills `token_ratio` tokens** (capped at `max_tokens`), and when fewer
//! than one token is left, calls stop retrying and return their error at
//! once. It spends on *retries* rather than on failures (so first attempts
//! never drain it) and needs no clock, so it is one `AtomicU64` and a
//! compare-and-swap. Over `n` requests it allows at most
//! `max_tokens + token_ratio · successes` retries: when the service is
//! fully down, attempts per request tend to 1 (`max_tokens / n` above it);
//! when `s` of `n` succeed, retries are bounded by `token_ratio · s`.
//!
//! Tokens are kept in thousandths, so `token_ratio` has a resolution of
//! 0.001 (rounded to the nearest thousandth); `max_tokens` up to
//! `u32::MAX`. The bucket's atomics are model-checked with loom
//! (`src/loom.rs`).

use std::sync::OnceLock;

use crate::sync::{AtomicU64, Ordering};

/// Thousandths of a token.
const MILLI: u64 = 1000;

/// A lock-free token bucket limiting retries across calls and threads.
///
/// # Examples
///
/// ```
/// use backoff_runtime::RetryBudget;
///
/// // Up to 10 retries in a burst; each success earns back a tenth of one.
/// static BUDGET: RetryBudget = RetryBudget::new(10, 0.1);
///
/// assert!(BUDGET.try_spend()); // a retry
/// assert_eq!(BUDGET.tokens(), 9.0);
/// BUDGET.deposit(); // a success
/// assert_eq!(BUDGET.tokens(), 9.1);
/// ```
///
/// With `#[retry(budget = BUDGET)]`, each retry of the function spends a
/// token and each success deposits.
#[derive(Debug)]
pub struct RetryBudget {
    /// Thousandths of a token.
    tokens: AtomicU64,
    max: u64,
    refill: u64,
    /// Its name, for the `backoff.budget.tokens` gauge.
    name: Option<&'static str>,
    /// What a spend asks first, once attached ([`RemoteView::attach`]).
    remote: OnceLock<Box<dyn Remote>>,
}

/// What a [`RetryBudget`] asks before each spend, once
/// [attached](RemoteView::attach): whether the tokens it holds may be
/// spent now. The remote works the budget through its [`RemoteView`].
///
/// A coordinator of many processes' budgets (crate `backoff-redis`, or one
/// of your own over etcd or a database) lends each process a share of one
/// bucket for a while: a lease. A process frozen past its lease (SIGSTOP,
/// a paused VM) must not spend a share the coordinator has meanwhile
/// handed to another; its remote says so by its own monotonic clock,
/// before the process's coordinator has had a chance to run again.
/// Consulted on spends only (a retry), never on the success path.
///
/// ```
/// use backoff_runtime::RetryBudget;
/// use backoff_runtime::budget::{Remote, RemoteView};
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicBool, Ordering};
///
/// /// A lease that its coordinator revokes by hand.
/// struct Lease(Arc<AtomicBool>);
/// impl Remote for Lease {
///     fn spendable(&self) -> bool {
///         self.0.load(Ordering::Acquire)
///     }
/// }
///
/// let valid = Arc::new(AtomicBool::new(true));
/// let budget = RetryBudget::new(10, 0.1);
/// assert!(RemoteView::attach(&budget, Box::new(Lease(valid.clone()))).is_some());
/// assert!(budget.try_spend());
/// valid.store(false, Ordering::Release); // the lease expired
/// assert!(!budget.try_spend());
/// assert_eq!(budget.tokens(), 9.0, "nothing spent of an expired lease");
/// ```
pub trait Remote: Send + Sync {
    /// Whether the budget's tokens may be spent now.
    fn spendable(&self) -> bool;
}

/// A budget as its [`Remote`] sees it: what a coordinator of many
/// processes' budgets (crate `backoff-redis`, or one of your own) reads
/// from a local [`RetryBudget`] and does to it, in thousandths of a token
/// (every retry spends 1000, every success deposits a fraction of it).
///
/// ```
/// use backoff_runtime::RetryBudget;
/// use backoff_runtime::budget::RemoteView;
///
/// let budget = RetryBudget::new(10, 0.0);
/// let view = RemoteView::of(&budget);
/// assert_eq!((view.balance(), view.max()), (10_000, 10_000));
/// assert_eq!(view.take(4_000), 6_000); // given back to the fleet's bucket
/// assert_eq!(view.add(3_000), 0); // a share granted
/// assert_eq!(budget.tokens(), 7.0);
/// assert_eq!(view.add(-12_000), -5_000); // 5 tokens it could not take
/// ```
#[derive(Debug, Clone, Copy)]
pub struct RemoteView<'a>(&'a RetryBudget);

impl<'a> RemoteView<'a> {
    /// Makes every spend of `budget` ask `remote` first (see [`Remote`]),
    /// once, and returns its view; `None` (and `remote` dropped) if it has
    /// one already.
    pub fn attach(budget: &'a RetryBudget, remote: Box<dyn Remote>) -> Option<Self> {
        budget.remote.set(remote).ok().map(|()| RemoteView(budget))
    }

    /// The view of `budget` (with or without a remote).
    pub fn of(budget: &'a RetryBudget) -> Self {
        RemoteView(budget)
    }

    /// The tokens left, in thousandths.
    pub fn balance(&self) -> u64 {
        self.0.tokens.load(Ordering::Acquire)
    }

    /// The bucket's size ([`RetryBudget::new`]'s `max_tokens`), in
    /// thousandths.
    pub fn max(&self) -> u64 {
        self.0.max
    }

    /// Takes out every thousandth above `keep`, atomically (no spend can
    /// race it), and returns them: what a fleet takes back at a sync (a
    /// balance read first and subtracted later would give back tokens
    /// spent meanwhile).
    pub fn take(&self, keep: u64) -> u64 {
        let b = self.0;
        let before = b
            .tokens
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                (t > keep).then_some(keep)
            })
            .unwrap_or(keep);
        b.record_tokens();
        before - keep.min(before)
    }

    /// Adds `delta` thousandths (a negative `delta` takes them away), the
    /// result kept between 0 and `max_tokens`: a share granted. Returns
    /// what could not be applied: negative below zero, positive above
    /// `max_tokens`; 0 otherwise.
    pub fn add(&self, delta: i64) -> i64 {
        let mut left = 0;
        let _ = self
            .0
            .tokens
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                let want = i128::from(t) + i128::from(delta);
                let got = want.clamp(0, i128::from(self.0.max));
                // Within i64: below zero it is `want`, above it at most `delta`.
                left = i64::try_from(want - got).unwrap_or_default();
                u64::try_from(got).ok()
            });
        self.0.record_tokens();
        left
    }
}

crate::remote_debug!();

impl RetryBudget {
    /// A full bucket of `max_tokens`, refilled by `token_ratio` tokens on
    /// every success.
    ///
    /// A ratio that is negative or NaN is taken as 0 (successes never
    /// refill); ratios are rounded to the nearest thousandth (so `1.001`
    /// refills 1.001 tokens, although `1.001 * 1000.0` is `1000.999…` in
    /// floating point).
    ///
    /// ```
    /// use backoff_runtime::RetryBudget;
    ///
    /// let budget = RetryBudget::new(2, 1.001);
    /// assert!(budget.try_spend() && budget.try_spend());
    /// budget.deposit();
    /// assert_eq!(budget.tokens(), 1.001);
    ///
    /// let budget = RetryBudget::new(1, 0.0004);
    /// assert!(budget.try_spend());
    /// budget.deposit();
    /// assert_eq!(budget.tokens(), 0.0);
    /// ```
    pub const fn new(max_tokens: u32, token_ratio: f64) -> Self {
        let max = max_tokens as u64 * MILLI;
        // Rounded to the nearest thousandth: a ratio k/1000 is within an
        // ulp of k once scaled, on either side. `as` saturates: NaN and
        // negatives give 0, huge ratios u64::MAX.
        let refill = (token_ratio * MILLI as f64 + 0.5) as u64;
        RetryBudget {
            tokens: AtomicU64::new(max),
            max,
            refill,
            name: None,
            remote: OnceLock::new(),
        }
    }

    /// Names this budget: the installed recorder is told the tokens left
    /// after each spend and refill
    /// (`record::Recorder::budget_tokens`, with the feature `record`;
    /// `backoff-opentelemetry` records them in the gauge
    /// `backoff.budget.tokens` with the attribute `budget` = `name`). An
    /// unnamed budget records nothing.
    ///
    /// ```
    /// use backoff_runtime::RetryBudget;
    ///
    /// static PAYMENTS: RetryBudget = RetryBudget::new(10, 0.1).named("payments");
    /// assert!(PAYMENTS.try_spend());
    /// ```
    pub const fn named(mut self, name: &'static str) -> Self {
        self.name = Some(name);
        self
    }

    /// Tells the recorder the tokens left, if one is installed and this
    /// budget is named.
    #[inline(always)]
    fn record_tokens(&self) {
        if crate::record::on()
            && let Some(name) = self.name
        {
            crate::record::budget_tokens(name, self.tokens());
        }
    }

    /// Takes one token for a retry; `false` (and nothing taken) if fewer than
    /// one token is left, or if its [`Remote`] says they may not be spent.
    #[inline]
    pub fn try_spend(&self) -> bool {
        if let Some(remote) = self.remote.get()
            && !remote.spendable()
        {
            return false;
        }
        let spent = self
            .tokens
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                t.checked_sub(MILLI)
            })
            .is_ok();
        if spent {
            self.record_tokens();
        }
        spent
    }

    /// Gives back `token_ratio` tokens for a success, up to `max_tokens`.
    ///
    /// A full bucket (the common case: a healthy service) costs one atomic
    /// load and no write.
    #[inline]
    pub fn deposit(&self) {
        if self.refill == 0 || self.tokens.load(Ordering::Relaxed) >= self.max {
            return;
        }
        self.refill_some();
    }

    /// [`deposit`](RetryBudget::deposit) into a bucket that was not full.
    #[cold]
    #[inline(never)]
    fn refill_some(&self) {
        let _ = self
            .tokens
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                (t < self.max).then(|| t.saturating_add(self.refill).min(self.max))
            });
        self.record_tokens();
    }

    /// The tokens left.
    pub fn tokens(&self) -> f64 {
        self.tokens.load(Ordering::Acquire) as f64 / MILLI as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spends_to_empty_then_refuses() {
        let b = RetryBudget::new(3, 0.5);
        assert!(b.try_spend() && b.try_spend() && b.try_spend());
        assert!(!b.try_spend());
        assert_eq!(b.tokens(), 0.0);
        b.deposit();
        assert!(!b.try_spend(), "half a token is not a retry");
        b.deposit();
        assert!(b.try_spend());
    }

    #[test]
    fn deposits_cap_at_max() {
        let b = RetryBudget::new(2, 0.7);
        b.deposit();
        assert_eq!(b.tokens(), 2.0);
        assert!(b.try_spend());
        b.deposit();
        b.deposit();
        assert_eq!(b.tokens(), 2.0);
    }

    #[test]
    fn odd_ratios_do_not_panic() {
        for r in [f64::NAN, -1.0, 0.0, f64::INFINITY, 1e300] {
            let b = RetryBudget::new(u32::MAX, r);
            b.deposit();
            assert!(b.tokens() <= f64::from(u32::MAX));
        }
        let b = RetryBudget::new(1, f64::NAN);
        assert!(b.try_spend());
        b.deposit();
        assert_eq!(b.tokens(), 0.0);
    }

    #[test]
    fn every_ratio_in_thousandths_is_kept_exactly() {
        // As written in code: `1.001`, `0.029`, ... (95 of these lost a
        // thousandth to `as u64` truncation).
        let lost: Vec<String> = (0..10_000u64)
            .map(|k| format!("{}.{:03}", k / 1000, k % 1000))
            .filter(|r| {
                let k: u64 = r.replace('.', "").parse().unwrap();
                RetryBudget::new(1, r.parse().unwrap()).refill != k
            })
            .collect();
        assert_eq!(lost, [] as [String; 0], "ratios that lost a thousandth");
        assert_eq!(RetryBudget::new(1, 0.0004).refill, 0);
        assert_eq!(RetryBudget::new(1, 0.0006).refill, 1);
    }

    #[test]
    fn is_sync_and_const() {
        static B: RetryBudget = RetryBudget::new(1, 0.1);
        fn assert<T: Send + Sync>(_: &T) {}
        assert(&B);
    }
}
