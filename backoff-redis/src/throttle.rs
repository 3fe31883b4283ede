//! A throttle shared by a fleet: [`SharedThrottle`] and its sync.

use core::fmt;
use core::time::Duration;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use backoff_runtime::AdaptiveThrottle;
use backoff_runtime::control::Throttle;
use backoff_runtime::throttle::{Remote, RemoteView};

use crate::store::Inner;
#[cfg(doc)]
use crate::store::RedisStore;
use crate::sync::{Conn, command};
use crate::{PREFIX, lock};

/// An [`AdaptiveThrottle`] that judges by the requests and accepts of a
/// whole fleet, shared through a [`RedisStore`].
///
/// Calls go through [`local`](SharedThrottle::local), this process's
/// throttle (also through `Deref`); the background thread adds the rest of
/// the fleet's counts to it at each sync.
///
/// ```no_run
/// use backoff_runtime::AdaptiveThrottle;
/// use backoff_redis::RedisStore;
/// use std::time::{Duration, Instant};
///
/// let store = RedisStore::new("redis://127.0.0.1/")?;
/// let throttle = store.throttle("search", AdaptiveThrottle::new(2.0, Duration::from_secs(120)));
/// match throttle.try_acquire(Instant::now()) {
///     Ok(permit) => permit.accepted(), // (after sending the request)
///     Err(rejected) => println!("{rejected}"),
/// }
/// # Ok::<(), backoff_redis::RedisError>(())
/// ```
///
/// `#[retry(throttle = ..)]` takes it as it takes a local throttle (it
/// implements [`backoff_runtime::control::Throttle`]):
///
/// ```no_run
/// use backoff_redis::{RedisStore, SharedThrottle};
/// use backoff_runtime::{AdaptiveThrottle, retry};
/// use std::sync::LazyLock;
/// use std::time::Duration;
///
/// static STORE: LazyLock<RedisStore> =
///     LazyLock::new(|| RedisStore::new("redis://127.0.0.1/").expect("a valid url"));
/// static SEARCH: LazyLock<SharedThrottle> = LazyLock::new(|| {
///     STORE.throttle("search", AdaptiveThrottle::new(2.0, Duration::from_secs(120)))
/// });
///
/// #[retry(attempts = 3, throttle = SEARCH)]
/// fn search(query: &str) -> Result<usize, std::io::Error> {
///     Ok(query.len())
/// }
/// # search("fleet").unwrap();
/// ```
pub struct SharedThrottle {
    pub(crate) entry: Arc<ThrottleEntry>,
    /// Keeps the store's thread running.
    pub(crate) store: Arc<Inner>,
}

pub(crate) struct ThrottleEntry {
    pub(crate) name: String,
    pub(crate) throttle: AdaptiveThrottle,
    /// Whether a sync has answered for this throttle.
    pub(crate) joined: AtomicBool,
    /// The rest of the fleet's requests and accepts, as last heard (|
    /// requests: 32 | accepts: 32 |): what the throttle's remote answers.
    pub(crate) rest: Arc<AtomicU64>,
}

/// The throttle's [`Remote`]: the rest of the fleet's counts.
pub(crate) struct Rest(pub(crate) Arc<AtomicU64>);

impl Remote for Rest {
    fn rest(&self) -> (u64, u64) {
        let word = self.0.load(Ordering::Acquire);
        (word >> 32, word & u64::from(u32::MAX))
    }
}

impl ThrottleEntry {
    /// What the rest of the fleet counts (each kept to `u32::MAX`); `(0,
    /// 0)` when it cannot be heard.
    pub(crate) fn set_rest(&self, requests: u64, accepts: u64) {
        let word = (requests.min(u64::from(u32::MAX)) << 32) | accepts.min(u64::from(u32::MAX));
        self.rest.store(word, Ordering::Release);
    }
}

impl fmt::Debug for SharedThrottle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedThrottle")
            .field("name", &self.entry.name)
            .finish_non_exhaustive()
    }
}

impl SharedThrottle {
    /// This process's throttle, which every request asks.
    ///
    /// ```
    /// use backoff_runtime::AdaptiveThrottle;
    /// use backoff_redis::RedisStore;
    /// use std::time::{Duration, Instant};
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let shared = store.throttle("a", AdaptiveThrottle::new(2.0, Duration::from_secs(60)));
    /// assert!(shared.local().try_acquire(Instant::now()).is_ok());
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    #[inline]
    pub fn local(&self) -> &AdaptiveThrottle {
        &self.entry.throttle
    }

    /// Whether a sync has answered for this throttle: it counts the rest
    /// of the fleet's requests from then on.
    ///
    /// ```
    /// use backoff_runtime::AdaptiveThrottle;
    /// use backoff_redis::RedisStore;
    /// use std::time::Duration;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?; // nothing listens there
    /// let shared = store.throttle("a", AdaptiveThrottle::new(2.0, Duration::from_secs(60)));
    /// assert!(!shared.joined());
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn joined(&self) -> bool {
        self.entry.joined.load(Ordering::Acquire)
    }
}

/// `throttle = EXPR` accepts a shared throttle: every attempt asks its
/// local throttle, which counts the rest of the fleet's requests too.
// (Not listed in a misplaced value's error: no source line of this crate in it.)
#[diagnostic::do_not_recommend]
impl Throttle for SharedThrottle {
    #[inline]
    fn as_throttle(&self) -> &AdaptiveThrottle {
        self.local()
    }
}

impl core::ops::Deref for SharedThrottle {
    type Target = AdaptiveThrottle;

    #[inline]
    fn deref(&self) -> &AdaptiveThrottle {
        &self.entry.throttle
    }
}

impl Drop for SharedThrottle {
    fn drop(&mut self) {
        lock(&self.store.throttles).retain(|e| !Arc::ptr_eq(e, &self.entry));
        self.store.wake.notify_one();
    }
}

/// A throttle's sync: record this process's window counts, drop stale
/// reports, return the rest of the fleet's `{requests, accepts}`.
///
/// A script run after its deadline (its client gave up on it) changes
/// nothing (status 2). Returns `{requests, accepts, status, server_ms}`.
///
/// KEYS: requests (hash), accepts (hash), seen (zset).
/// ARGV: process, requests, accepts, stale_ms, deadline.
pub(crate) const THROTTLE_SYNC: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local deadline = tonumber(ARGV[5])
if deadline > 0 and now > deadline then return {0, 0, 2, now} end
local req, acc, seen = KEYS[1], KEYS[2], KEYS[3]
local me, stale = ARGV[1], tonumber(ARGV[4])
for _, p in ipairs(redis.call('ZRANGEBYSCORE', seen, '-inf', now - stale)) do
  redis.call('HDEL', req, p)
  redis.call('HDEL', acc, p)
  redis.call('ZREM', seen, p)
end
redis.call('ZADD', seen, now, me)
redis.call('HSET', req, me, ARGV[2])
redis.call('HSET', acc, me, ARGV[3])
local keep = math.max(stale * 10, 60000)
redis.call('PEXPIRE', seen, keep)
redis.call('PEXPIRE', req, keep)
redis.call('PEXPIRE', acc, keep)
local r, a = 0, 0
local all = redis.call('HGETALL', req)
for i = 1, #all, 2 do
  if all[i] ~= me then r = r + tonumber(all[i + 1]) end
end
all = redis.call('HGETALL', acc)
for i = 1, #all, 2 do
  if all[i] ~= me then a = a + tonumber(all[i + 1]) end
end
return {r, a, 0, now}
"#;

pub(crate) fn throttle_key(name: &str, what: &str) -> String {
    format!("{PREFIX}:a:{name}:{what}")
}

/// One throttle's sync: report this process's window, hear the fleet's.
pub(crate) async fn sync_throttle(
    inner: &Arc<Inner>,
    conn: &mut Conn,
    script: &redis::Script,
    entry: &ThrottleEntry,
    stale: u64,
    timeout: Duration,
) -> Result<(), String> {
    let (requests, accepts) = RemoteView::of(&entry.throttle).own_counts(Instant::now());
    let mut invocation = script.prepare_invoke();
    invocation
        .key(throttle_key(&entry.name, "requests"))
        .key(throttle_key(&entry.name, "accepts"))
        .key(throttle_key(&entry.name, "seen"))
        .arg(&inner.process)
        .arg(requests)
        .arg(accepts)
        .arg(stale)
        .arg(inner.deadline(timeout));
    let (requests, accepts, status, server_ms): (u64, u64, u64, u64) =
        command(timeout, invocation.invoke_async(&mut conn.con)).await?;
    inner.heard(server_ms);
    if status == 2 {
        return Err("the server ran the throttle's sync after its deadline".into());
    }
    entry.set_rest(requests, accepts);
    entry.joined.store(true, Ordering::Release);
    Ok(())
}
