//! The background thread: the sync loop, its connection and reconnects.

use core::time::Duration;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use backoff_runtime::circuit::RemoteView;

use crate::breaker::{BREAKER_SYNC, breaker_key, run_end_unpushed, sync_breaker};
use crate::budget::{BUDGET_SYNC, give_up_leases, lease_ttl, sync_budget};
use crate::store::Inner;
use crate::throttle::{THROTTLE_SYNC, sync_throttle};
use crate::{PREFIX, RECONNECT_CAP, lock, millis};

/// The background thread: a current-thread runtime of its own.
pub(crate) fn run(inner: Arc<Inner>) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    rt.block_on(sync_loop(inner));
}

pub(crate) struct Conn {
    pub(crate) con: redis::aio::MultiplexedConnection,
    /// The pub/sub listener's task (aborted with the connection).
    pub(crate) listener: tokio::task::JoinHandle<()>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

/// The schedule of reconnects after failed syncs: this library's own
/// exponential backoff from 100 ms with full jitter, to a cap of 2 s.
pub(crate) fn reconnect_policy() -> backoff_runtime::Policy {
    backoff_runtime::Policy::exponential(Duration::from_millis(100))
        .max_delay(RECONNECT_CAP)
        .unlimited_attempts()
}

pub(crate) async fn sync_loop(inner: Arc<Inner>) {
    let breaker_script = redis::Script::new(BREAKER_SYNC);
    let budget_script = redis::Script::new(BUDGET_SYNC);
    let throttle_script = redis::Script::new(THROTTLE_SYNC);
    let scripts = Scripts {
        breaker: &breaker_script,
        budget: &budget_script,
        throttle: &throttle_script,
    };
    let policy = reconnect_policy();
    let mut delays = policy.delays();
    // No connection is made (and no sync tried) before this instant: the
    // backoff after a failed sync.
    let mut retry_at: Option<tokio::time::Instant> = None;
    let mut conn: Option<Conn> = None;
    let mut next = tokio::time::Instant::now();
    // The last sync that reached Redis: the fleet's hold on a breaker
    // outlives a slow command or two, not an absence.
    let mut last_ok = tokio::time::Instant::now();
    let mut last_start = tokio::time::Instant::now();
    loop {
        // Stop once the store and every shared value are gone.
        if Arc::strong_count(&inner) == 1 {
            return;
        }
        let every = Duration::from_millis(inner.sync_every_ms.load(Ordering::Relaxed));
        // The earliest lapse of a trial claim this process wants.
        let mut wake_at = next;
        for entry in lock(&inner.breakers).iter() {
            if let Some(at) = lock(&entry.fleet).trial_free_at
                && at < wake_at
            {
                wake_at = at;
            }
        }
        if let Some(at) = retry_at {
            // Backing off: wakes before then change nothing.
            wake_at = wake_at.max(at);
        }
        tokio::select! {
            () = tokio::time::sleep_until(wake_at) => {}
            () = inner.wake.notified(), if retry_at.is_none() => {}
            // (A dropped store has no strong count left to notice at once:
            // look again now and then.)
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
        // The floor: at most one sync per `sync_every / 10`, however often
        // failures wake the thread; a success that ended a run the fleet
        // counts is pushed at once.
        if !lock(&inner.breakers).iter().any(|e| run_end_unpushed(e)) {
            tokio::time::sleep_until(last_start + every / 10).await;
        }
        let now = tokio::time::Instant::now();
        last_start = now;
        let timeout = Duration::from_millis(inner.command_timeout_ms.load(Ordering::Relaxed));
        let away = now.saturating_duration_since(last_ok) >= stale_after(every);
        if retry_at.is_some_and(|at| now < at) {
            if away {
                fall_back(&inner);
            }
            continue;
        }
        retry_at = None;
        if now >= next {
            next = now + every;
        }
        // A listener whose subscription ended (its connection broke) is
        // remade with the connection: polling alone would be a period late.
        if conn.as_ref().is_some_and(|c| c.listener.is_finished()) {
            conn = None;
        }
        let result = match conn.as_mut() {
            Some(c) => sync_all(&inner, c, &scripts, every, timeout).await,
            None => match connect(&inner, timeout).await {
                Ok(c) => sync_all(&inner, conn.insert(c), &scripts, every, timeout).await,
                Err(e) => Err(e),
            },
        };
        match result {
            Ok(()) => {
                inner.synced.fetch_add(1, Ordering::Relaxed);
                last_ok = tokio::time::Instant::now();
                delays = policy.delays();
                inner.health_ok();
            }
            Err(e) => {
                inner.failed.fetch_add(1, Ordering::Relaxed);
                conn = None;
                if away {
                    fall_back(&inner);
                }
                if now.saturating_duration_since(last_ok) >= lease_ttl(every) / 2 {
                    give_up_leases(&inner);
                }
                let delay = delays.next().unwrap_or(RECONNECT_CAP);
                retry_at = Some(tokio::time::Instant::now() + delay);
                inner.health_failed(&e);
            }
        }
    }
}

/// How long a report lives in the fleet, and how long the fleet's hold on a
/// breaker outlives failed syncs: 3 × `sync_every`, at least 1 s.
pub(crate) fn stale_after(every: Duration) -> Duration {
    every.saturating_mul(3).max(Duration::from_secs(1))
}

/// Redis is away: every breaker follows its local rules again.
pub(crate) fn fall_back(inner: &Inner) {
    for entry in lock(&inner.breakers).iter() {
        if RemoteView::of(&entry.breaker).held() {
            // Each process's own trial at a random point of the next
            // `open_for`: N processes held open together try the
            // dependency N times per `open_for`, spread, not all at once.
            let open_for = entry.breaker.open_for_ms().min(u64::from(u32::MAX));
            let offset = Duration::from_millis(random_below(open_for));
            let now = Instant::now();
            let at = now
                .checked_sub(Duration::from_millis(open_for))
                .unwrap_or(now);
            RemoteView::of(&entry.breaker).release_at(at + offset);
        }
        lock(&entry.fleet).trial_free_at = None;
    }
    for entry in lock(&inner.throttles).iter() {
        entry.set_rest(0, 0);
    }
}

/// A random number below `n` (0 if `n` is 0), from the standard library's
/// randomly keyed hasher.
fn random_below(n: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(n);
    h.finish().checked_rem(n).unwrap_or(0)
}

/// A new connection, with the server's clock read first: every script,
/// the first one included, then carries a deadline (see
/// [`Inner::deadline`]).
pub(crate) async fn connect(inner: &Arc<Inner>, timeout: Duration) -> Result<Conn, String> {
    let mut con = command(timeout, inner.client.get_multiplexed_async_connection()).await?;
    // (Its round trip is the first measured: `deadline` marks it sent.)
    inner.deadline(timeout);
    let (secs, micros): (u64, u64) =
        command(timeout, redis::cmd("TIME").query_async(&mut con)).await?;
    inner.heard(secs.saturating_mul(1000).saturating_add(micros / 1000));
    let pubsub = command(timeout, inner.client.get_async_pubsub()).await?;
    let weak = Arc::downgrade(inner);
    let listener = tokio::spawn(listen(pubsub, weak, timeout));
    Ok(Conn { con, listener })
}

/// Hears the fleet's breakers open and close.
pub(crate) async fn listen(
    mut pubsub: redis::aio::PubSub,
    inner: std::sync::Weak<Inner>,
    timeout: Duration,
) {
    use futures_util::StreamExt;
    let pattern = format!("{PREFIX}:b:*");
    if tokio::time::timeout(timeout, pubsub.psubscribe(&pattern))
        .await
        .map_or(true, |r| r.is_err())
    {
        return;
    }
    let mut messages = pubsub.on_message();
    while let Some(msg) = messages.next().await {
        let Some(inner) = inner.upgrade() else { return };
        let channel = msg.get_channel_name().to_owned();
        let Ok(payload) = msg.get_payload::<String>() else {
            continue;
        };
        for entry in lock(&inner.breakers).iter() {
            if channel == breaker_key(&entry.name, "ch") {
                match payload.split_once(':') {
                    Some(("open", opening)) => {
                        if let Ok(opening) = opening.parse() {
                            lock(&entry.fleet).opening = opening;
                        }
                        RemoteView::of(&entry.breaker).hold(Instant::now());
                    }
                    // Only the close of the opening held here.
                    Some(("close", opening))
                        if RemoteView::of(&entry.breaker).held()
                            && opening.parse() == Ok(lock(&entry.fleet).opening) =>
                    {
                        RemoteView::of(&entry.breaker).release(true);
                        let mut seen = lock(&entry.fleet);
                        seen.opening = 0;
                        seen.trial_free_at = None;
                    }
                    _ => {}
                }
            }
        }
    }
}

/// One sync of every shared value; `false` if Redis failed (or timed out).
pub(crate) struct Scripts<'a> {
    pub(crate) breaker: &'a redis::Script,
    pub(crate) budget: &'a redis::Script,
    pub(crate) throttle: &'a redis::Script,
}

pub(crate) async fn sync_all(
    inner: &Arc<Inner>,
    conn: &mut Conn,
    scripts: &Scripts<'_>,
    every: Duration,
    timeout: Duration,
) -> Result<(), String> {
    let (breaker_script, budget_script, throttle_script) =
        (scripts.breaker, scripts.budget, scripts.throttle);
    let stale = millis(stale_after(every));
    let breakers: Vec<_> = lock(&inner.breakers).clone();
    for entry in breakers {
        sync_breaker(inner, conn, breaker_script, &entry, stale, timeout).await?;
    }
    let throttles: Vec<_> = lock(&inner.throttles).clone();
    for entry in throttles {
        sync_throttle(inner, conn, throttle_script, &entry, stale, timeout).await?;
    }
    let budgets: Vec<_> = lock(&inner.budgets).clone();
    for entry in budgets {
        sync_budget(inner, conn, budget_script, &entry, every, timeout).await?;
    }
    Ok(())
}

/// A command with the sync's timeout; its error as a message (which never
/// holds the URL: the `redis` crate's errors name no credentials).
pub(crate) async fn command<T>(
    timeout: Duration,
    fut: impl core::future::Future<Output = redis::RedisResult<T>>,
) -> Result<T, String> {
    match tokio::time::timeout(timeout, fut).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no answer within {timeout:?}")),
    }
}
