//! [`AdaptiveThrottle`]: client-side throttling (Google SRE book, "Handling
//! Overload"): when the backend rejects much of what it is sent, the client
//! rejects part of its own requests locally, before they cost the backend
//! anything.
//!
//! Over a sliding window (two minutes in the book) the client counts
//! `requests` (every request the application attempted, including those
//! rejected locally) and `accepts` (those the backend accepted), and
//! rejects a new request locally with probability
//!
//! ```text
//! P(reject) = max(0, (requests − K·accepts) / (requests + 1))
//! ```
//!
//! With `K = 2` the backend keeps receiving about twice what it accepts:
//! enough to notice when it recovers, and far less than a fleet retrying
//! every rejection `attempts` times. While the backend accepts more than
//! `1/K` of what it gets, nothing is rejected locally.
//!
//! The counters are ten atomic buckets of `window / 10`, each one
//! `AtomicU64` (its time index and two 20-bit counts): no lock, `Sync`, a
//! `const fn` constructor, so a throttle lives in a `static`. The atomics
//! are model-checked with loom (`src/loom.rs`).

use core::time::Duration;
use std::sync::OnceLock;
use std::time::Instant;

use crate::circuit::{Buckets, Epoch};
use crate::jitter::JitterRng;

/// The error of a request rejected locally by an [`AdaptiveThrottle`]: it
/// never reached the backend. Turn it into your error type with
/// `E::from(Rejected)`.
///
/// ```
/// use backoff_runtime::Rejected;
///
/// #[derive(Debug)]
/// enum Error { Overloaded, Io(std::io::Error) }
///
/// impl From<Rejected> for Error {
///     fn from(_: Rejected) -> Self { Error::Overloaded }
/// }
/// assert!(matches!(Error::from(Rejected), Error::Overloaded));
/// assert_eq!(Rejected.to_string(), "rejected locally by adaptive throttling");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Rejected;

crate::control_error! {
    /// So `io::Result` functions can use a throttle directly: an error of kind
    /// [`ResourceBusy`](std::io::ErrorKind::ResourceBusy) whose source is the
    /// [`Rejected`].
    ///
    /// ```
    /// use backoff_runtime::Rejected;
    ///
    /// let e = std::io::Error::from(Rejected);
    /// assert_eq!(e.kind(), std::io::ErrorKind::ResourceBusy);
    /// assert!(e.get_ref().unwrap().is::<Rejected>());
    /// ```
    Rejected: "rejected locally by adaptive throttling", ResourceBusy
}

/// Client-side adaptive throttling, shared by every call that names it.
///
/// Before each attempt, ask [`try_acquire`](AdaptiveThrottle::try_acquire):
/// `Err(Rejected)` means do not send it (fail fast with
/// `E::from(Rejected)`, [`GiveUpReason::Rejected`](crate::GiveUpReason));
/// otherwise send it and report the backend's answer on the
/// [`ThrottlePermit`]: [`accepted`](ThrottlePermit::accepted) when the
/// backend took the request (any answer that is not an overload
/// rejection), [`rejected`](ThrottlePermit::rejected) (or drop the permit)
/// when it refused it for load.
///
/// # Examples
///
/// ```
/// use backoff_runtime::AdaptiveThrottle;
/// use std::time::{Duration, Instant};
///
/// static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(120));
///
/// let now = Instant::now();
/// // A backend that rejects everything: after a few requests, most are
/// // rejected locally.
/// let mut sent = 0;
/// for _ in 0..1000 {
///     if let Ok(permit) = THROTTLE.try_acquire(now) {
///         sent += 1;
///         permit.rejected();
///     }
/// }
/// assert!(sent < 100, "{sent} reached the backend");
/// assert!(THROTTLE.reject_probability(now) > 0.9);
/// ```
///
/// # Limits
///
/// - The window slides in tenths: a request counts for between 0.9 and 1
///   times `window` after it.
/// - Each tenth of the window counts at most 1,048,575 requests (about
///   87,000 a second over a two-minute window); further requests in it
///   are neither counted nor throttled by their own count.
/// - `k` has a resolution of 0.001; below 1 (NaN included) it acts as 1
///   (the book's useful range is 1.1 to 2; 1 rejects whatever the backend
///   would not accept).
/// - An accept is counted in the tenth where its request was; one
///   reported after that tenth has left the window is not counted.
/// - The sum of the buckets is not one atomic snapshot: a decision racing
///   with reports may see them a few requests late.
#[derive(Debug)]
pub struct AdaptiveThrottle {
    /// `k` in thousandths.
    k_milli: u64,
    /// The first instant this throttle saw; time is kept in ms from there.
    epoch: Epoch,
    /// Its requests (the high counts) and accepts (the low ones).
    buckets: Buckets<20>,
    /// What each decision adds to its own counts, once attached
    /// ([`RemoteView::attach`]).
    remote: OnceLock<Box<dyn Remote>>,
}

/// What an [`AdaptiveThrottle`] asks at each decision, once
/// [attached](RemoteView::attach): the rest of its fleet's requests and
/// accepts, which it adds to its own. A fleet (crate `backoff-redis`, or a
/// coordinator of your own) hears them from the other processes and keeps
/// them where this reads them quickly (one atomic load: it is asked on
/// every attempt through the throttle); it exports this process's own
/// through [`RemoteView::own_counts`]. A fleet that can no longer hear
/// the others answers `(0, 0)`.
///
/// ```
/// use backoff_runtime::AdaptiveThrottle;
/// use backoff_runtime::throttle::{Remote, RemoteView};
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::time::{Duration, Instant};
///
/// /// The rest of the fleet, as last heard: | requests: 32 | accepts: 32 |.
/// struct Rest(Arc<AtomicU64>);
/// impl Remote for Rest {
///     fn rest(&self) -> (u64, u64) {
///         let word = self.0.load(Ordering::Acquire);
///         (word >> 32, word & u64::from(u32::MAX))
///     }
/// }
///
/// let throttle = AdaptiveThrottle::new(2.0, Duration::from_secs(120));
/// let heard = Arc::new(AtomicU64::new(0));
/// let view = RemoteView::attach(&throttle, Box::new(Rest(heard.clone()))).expect("its first remote");
/// let now = Instant::now();
/// throttle.try_acquire(now).unwrap().accepted();
/// heard.store(100 << 32 | 10, Ordering::Release); // 100 requests, 10 accepted
/// assert_eq!(view.own_counts(now), (1, 1)); // what it exports
/// assert_eq!(throttle.counts(now), (101, 11));
/// assert!(throttle.reject_probability(now) > 0.7);
/// ```
pub trait Remote: Send + Sync {
    /// The rest of the fleet's requests and accepts over its window (each
    /// taken as at most `u32::MAX`).
    fn rest(&self) -> (u64, u64);
}

crate::remote_debug!();

/// A throttle as its remote sees it: see [`Remote`].
#[derive(Debug, Clone, Copy)]
pub struct RemoteView<'a>(&'a AdaptiveThrottle);

impl<'a> RemoteView<'a> {
    /// Gives `throttle` to `remote`, once, and returns its view; `None`
    /// (and `remote` dropped) if it has one already.
    pub fn attach(throttle: &'a AdaptiveThrottle, remote: Box<dyn Remote>) -> Option<Self> {
        throttle
            .remote
            .set(remote)
            .ok()
            .map(|()| RemoteView(throttle))
    }

    /// The view of `throttle`.
    pub fn of(throttle: &'a AdaptiveThrottle) -> Self {
        RemoteView(throttle)
    }

    /// This process's own requests and accepts in the window ending at
    /// `now`: what it reports to its fleet (see [`Remote`]).
    pub fn own_counts(&self, now: Instant) -> (u64, u64) {
        let t = self.0;
        t.buckets.totals(0, t.index(now))
    }
}

impl AdaptiveThrottle {
    /// A throttle rejecting locally with probability
    /// `max(0, (requests − k·accepts) / (requests + 1))` over the last
    /// `window` (the SRE book: `k = 2.0`, a two-minute window).
    ///
    /// Its cost: about `k` times the accepted requests reach the backend,
    /// at random moments, so a backend that cannot hold a burst (no queue)
    /// idles between them and accepts less: with no buffer at all, about
    /// `C · (k − 1) / k` of its capacity `C` (half at `k = 2`). A backend
    /// with even a fraction of a second of queue loses almost nothing; a
    /// larger `k` trades more load on the backend for less of that loss.
    pub const fn new(k: f64, window: Duration) -> Self {
        let k_milli = if k.is_nan() || k < 1.0 {
            1000
        } else if k >= 1e15 {
            1_000_000_000_000_000_000
        } else {
            (k * 1000.0 + 0.5) as u64
        };
        AdaptiveThrottle {
            k_milli,
            epoch: Epoch::new(),
            buckets: Buckets::new(window),
            remote: OnceLock::new(),
        }
    }

    /// Asks to send a request at `now`: a [`ThrottlePermit`] to report the
    /// backend's answer to, or [`Rejected`] (the request is counted either
    /// way). Draws a random number from the process-wide sequence only
    /// when the probability of rejecting is above zero.
    pub fn try_acquire(&self, now: Instant) -> Result<ThrottlePermit<'_>, Rejected> {
        self.try_acquire_with(now, || JitterRng::from_entropy().unit_f64())
    }

    /// [`try_acquire`](AdaptiveThrottle::try_acquire) with the random number
    /// (uniform in `[0, 1)`) drawn by `unit`, which is called only when the
    /// probability of rejecting is above zero: for simulations and tests.
    ///
    /// ```
    /// use backoff_runtime::AdaptiveThrottle;
    /// use std::time::{Duration, Instant};
    ///
    /// let throttle = AdaptiveThrottle::new(2.0, Duration::from_secs(120));
    /// let now = Instant::now();
    /// // Nothing counted yet: P = 0, no draw.
    /// let permit = throttle.try_acquire_with(now, || unreachable!()).unwrap();
    /// permit.rejected();
    /// // 1 request, 0 accepts: P = 1/2.
    /// assert_eq!(throttle.reject_probability(now), 0.5);
    /// assert!(throttle.try_acquire_with(now, || 0.49).is_err());
    /// // 2 requests, 0 accepts: P = 2/3.
    /// assert!(throttle.try_acquire_with(now, || 0.67).is_ok());
    /// ```
    #[doc(hidden)]
    pub fn try_acquire_with(
        &self,
        now: Instant,
        unit: impl FnOnce() -> f64,
    ) -> Result<ThrottlePermit<'_>, Rejected> {
        let index = self.index(now);
        let (requests, accepts) = self.totals(index);
        let over = (requests * 1000).saturating_sub(self.k_milli.saturating_mul(accepts));
        let reject = over > 0 && unit() * (((requests + 1) * 1000) as f64) < (over as f64);
        let counted = self.buckets.add(0, index, 1 << 20, true);
        if reject {
            return Err(Rejected);
        }
        Ok(ThrottlePermit {
            throttle: self,
            index: if counted { index } else { UNCOUNTED },
        })
    }

    /// The probability that a request at `now` is rejected locally.
    #[doc(hidden)]
    pub fn reject_probability(&self, now: Instant) -> f64 {
        let (requests, accepts) = self.counts(now);
        let over = (requests * 1000).saturating_sub(self.k_milli.saturating_mul(accepts));
        over as f64 / ((requests + 1) * 1000) as f64
    }

    /// The requests and accepts in the window ending at `now`: this
    /// process's own and the rest of its fleet's, as its [`Remote`] says
    /// (a shared throttle's, `backoff_redis::SharedThrottle`). (For tests:
    /// a remote reads [`RemoteView::own_counts`].)
    #[doc(hidden)]
    pub fn counts(&self, now: Instant) -> (u64, u64) {
        self.totals(self.index(now))
    }

    /// The index of the bucket of `now`.
    fn index(&self, now: Instant) -> u64 {
        self.epoch.millis(now).0 / self.buckets.width
    }

    /// Requests and accepts of the window ending at `index`: this
    /// process's and the rest of its fleet's.
    #[inline]
    fn totals(&self, index: u64) -> (u64, u64) {
        let (requests, accepts) = self.buckets.totals(0, index);
        let Some(remote) = self.remote.get() else {
            return (requests, accepts);
        };
        // Each kept to `u32::MAX`, as a window's own counts are.
        let (rest_requests, rest_accepts) = remote.rest();
        let cap = u64::from(u32::MAX);
        (
            requests.saturating_add(rest_requests.min(cap)),
            accepts.saturating_add(rest_accepts.min(cap)),
        )
    }
}

/// Leave to send one request past an [`AdaptiveThrottle`]; report whether
/// the backend accepted it. Dropped without a report, the request counts as
/// not accepted (a cancelled or timed-out request tells nothing good).
#[derive(Debug)]
#[must_use = "report whether the backend accepted the request with `accepted` or `rejected`"]
pub struct ThrottlePermit<'a> {
    throttle: &'a AdaptiveThrottle,
    /// The request's bucket, [`UNCOUNTED`] if it was not counted (8 bytes,
    /// not an `Option`'s 16: a call's retry state keeps a permit).
    index: u64,
}

/// [`ThrottlePermit::index`] of a request that was not counted. (A request
/// of that bucket, `u64::MAX` milliseconds, 584 million years, or more
/// after the throttle's first, has its accept uncounted too.)
const UNCOUNTED: u64 = u64::MAX;

impl ThrottlePermit<'_> {
    /// The backend accepted the request (it answered with anything but an
    /// overload rejection).
    pub fn accepted(self) {
        if self.index != UNCOUNTED {
            self.throttle.buckets.add(0, self.index, 1, false);
        }
    }

    /// The backend rejected the request for load (the same as dropping the
    /// permit).
    pub fn rejected(self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(base: Instant, ms: u64) -> Instant {
        base + Duration::from_millis(ms)
    }

    #[test]
    fn nothing_is_rejected_while_the_backend_accepts_more_than_1_in_k() {
        let th = AdaptiveThrottle::new(2.0, Duration::from_secs(120));
        let t = Instant::now();
        for i in 0..10_000u64 {
            // Every second request accepted: requests = 2·accepts at most
            // one request ahead, so P stays at or below 1/(requests+1).
            let permit = th
                .try_acquire_with(t, || 0.999)
                .expect("never rejected at a 50 % accept rate");
            if i % 2 == 0 {
                permit.accepted();
            } else {
                permit.rejected();
            }
        }
        assert_eq!(th.counts(t), (10_000, 5_000));
        assert_eq!(th.reject_probability(t), 0.0);
    }

    #[test]
    fn the_sre_formula() {
        let th = AdaptiveThrottle::new(2.0, Duration::from_secs(120));
        let t = Instant::now();
        for i in 0..100 {
            let permit = th.try_acquire_with(t, || 1.0).unwrap();
            if i < 10 {
                permit.accepted();
            }
        }
        // (100 − 2·10) / 101
        assert_eq!(th.counts(t), (100, 10));
        assert!((th.reject_probability(t) - 80.0 / 101.0).abs() < 1e-12);
        // A draw below P rejects (and counts the request), above lets through.
        assert_eq!(th.try_acquire_with(t, || 0.79).unwrap_err(), Rejected);
        assert_eq!(th.counts(t), (101, 10));
        th.try_acquire_with(t, || 0.8).unwrap().accepted();
        assert_eq!(th.counts(t), (102, 11));
    }

    #[test]
    fn the_random_draw_is_made_only_when_p_is_above_zero() {
        let th = AdaptiveThrottle::new(1.5, Duration::from_secs(120));
        let t = Instant::now();
        for _ in 0..1000 {
            th.try_acquire_with(t, || unreachable!("P = 0"))
                .unwrap()
                .accepted();
        }
        th.try_acquire_with(t, || unreachable!("P = 0"))
            .unwrap()
            .rejected();
        let mut drew = false;
        let _ = th.try_acquire_with(t, || {
            drew = true;
            0.0
        });
        assert!(!drew, "1001 requests, 1000 accepts: P = 0");
    }

    #[test]
    fn the_window_slides() {
        // 10 s window: tenths of 1 s.
        let th = AdaptiveThrottle::new(2.0, Duration::from_secs(10));
        let t = Instant::now();
        for _ in 0..50 {
            let _ = th.try_acquire_with(t, || 1.0);
        }
        assert_eq!(th.counts(at(t, 9_999)), (50, 0));
        assert!(th.reject_probability(at(t, 9_999)) > 0.9);
        // A tenth later the rejections have slid out: no local rejection.
        assert_eq!(th.counts(at(t, 10_000)), (0, 0));
        assert_eq!(th.reject_probability(at(t, 10_000)), 0.0);
        th.try_acquire_with(at(t, 10_000), || unreachable!())
            .unwrap()
            .accepted();
        assert_eq!(th.counts(at(t, 10_000)), (1, 1));
    }

    #[test]
    fn an_accept_counts_with_its_request() {
        let th = AdaptiveThrottle::new(2.0, Duration::from_secs(10));
        let t = Instant::now();
        let slow = th.try_acquire_with(t, || 1.0).unwrap();
        // Answered after its bucket left the window: not counted.
        let _ = th.try_acquire_with(at(t, 10_000), || 1.0);
        slow.accepted();
        assert_eq!(th.counts(at(t, 10_000)), (1, 0));
        // Accepts never exceed requests in a bucket.
        let p = th.try_acquire_with(at(t, 10_000), || 1.0).unwrap();
        p.accepted();
        assert_eq!(th.counts(at(t, 10_000)), (2, 1));
    }

    #[test]
    fn odd_arguments_are_clamped() {
        let t = Instant::now();
        for k in [f64::NAN, -1.0, 0.0, 0.5] {
            let th = AdaptiveThrottle::new(k, Duration::ZERO);
            th.try_acquire_with(t, || 1.0).unwrap().accepted();
            // k acts as 1: one request, one accept, P = 0.
            assert_eq!(th.reject_probability(t), 0.0, "{k}");
        }
        let th = AdaptiveThrottle::new(f64::INFINITY, Duration::MAX);
        th.try_acquire_with(t, || 1.0).unwrap().rejected();
        assert_eq!(th.reject_probability(t), 0.5);
    }

    #[test]
    fn is_sync_and_const() {
        static T: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(120));
        fn assert<T: Send + Sync>(_: &T) {}
        assert(&T);
        assert!(T.try_acquire(Instant::now()).is_ok());
    }
}
