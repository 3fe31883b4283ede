//! A breaker shared by a fleet: [`SharedBreaker`] and its sync.

use core::fmt;
use core::time::Duration;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use backoff_runtime::circuit::{RemoteView, Report, TrialWanted};
use backoff_runtime::control::Circuit;
use backoff_runtime::{CircuitBreaker, CircuitState};

use crate::store::Inner;
#[cfg(doc)]
use crate::store::RedisStore;
use crate::sync::{Conn, command};
use crate::{PREFIX, lock};

/// A [`CircuitBreaker`] shared by a fleet through a [`RedisStore`]; what
/// `#[retry(circuit = ..)]` takes, as a reference, a field or a `static`
/// in a [`LazyLock`](std::sync::LazyLock).
///
/// Calls go through [`local`](SharedBreaker::local), this process's
/// breaker: the fleet opens it (and lets one trial through in the whole
/// fleet per `open_for`) from the background thread.
///
/// ```no_run
/// use backoff_redis::RedisStore;
/// use backoff_runtime::{CircuitBreaker, retry};
/// use std::time::Duration;
///
/// struct Client {
///     breaker: backoff_redis::SharedBreaker,
/// }
///
/// impl Client {
///     #[retry(attempts = 2, circuit = self.breaker)]
///     fn get(&self) -> Result<u32, std::io::Error> {
///         Ok(1)
///     }
/// }
///
/// let store = RedisStore::new("redis://127.0.0.1/")?;
/// let client = Client {
///     breaker: store.breaker("search", CircuitBreaker::new(5, 1, Duration::from_secs(5))).quorum(3),
/// };
/// assert_eq!(client.get()?, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SharedBreaker {
    pub(crate) entry: Arc<BreakerEntry>,
    /// Keeps the store's thread running.
    pub(crate) store: Arc<Inner>,
}

impl fmt::Debug for SharedBreaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedBreaker")
            .field("name", &self.entry.name)
            .field("state", &self.state())
            .field("quorum", &self.entry.quorum.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

pub(crate) struct BreakerEntry {
    pub(crate) name: String,
    pub(crate) breaker: CircuitBreaker,
    pub(crate) quorum: AtomicU32,
    /// What the thread last heard of the fleet.
    pub(crate) fleet: Mutex<FleetSeen>,
    /// Whether a sync has answered for this breaker.
    pub(crate) joined: AtomicBool,
}

#[derive(Default)]
pub(crate) struct FleetSeen {
    /// The sequence number of this process's last push (the fleet applies
    /// a push only if it is newer than the last applied).
    pub(crate) seq: u64,
    /// The fleet's opening this process holds its breaker open for (0:
    /// not known).
    pub(crate) opening: u64,
    /// The fleet's trial key lapses then (a claim before is refused).
    pub(crate) trial_free_at: Option<tokio::time::Instant>,
    /// The run of consecutive failures (a count breaker's) and the run
    /// ends last pushed: a run the fleet counts that a success has since
    /// ended is pushed at once, past the floor on syncs.
    pub(crate) pushed: (u64, u64),
}

/// Whether a run of failures the fleet counts for this process has ended
/// since (a success): its push must not wait (the fleet would open on a
/// run that is over).
pub(crate) fn run_end_unpushed(entry: &BreakerEntry) -> bool {
    let (run, ends) = lock(&entry.fleet).pushed;
    run > 0 && RemoteView::of(&entry.breaker).run_ends() != ends
}

impl SharedBreaker {
    /// Opens the fleet's breaker only when at least `n` distinct processes
    /// (1 at least; the default is 2) report failures.
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use backoff_runtime::CircuitBreaker;
    /// use std::time::Duration;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let shared = store.breaker("a", CircuitBreaker::new(5, 1, Duration::from_secs(1))).quorum(3);
    /// assert_eq!(shared.quorum_size(), 3);
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn quorum(self, n: u32) -> Self {
        self.entry.quorum.store(n.max(1), Ordering::Relaxed);
        self
    }

    /// The quorum set by [`quorum`](SharedBreaker::quorum).
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use backoff_runtime::CircuitBreaker;
    /// use std::time::Duration;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let shared = store.breaker("a", CircuitBreaker::new(5, 1, Duration::from_secs(1)));
    /// assert_eq!(shared.quorum_size(), 2);
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn quorum_size(&self) -> u32 {
        self.entry.quorum.load(Ordering::Relaxed)
    }

    /// This process's breaker, which every call uses.
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use backoff_runtime::CircuitBreaker;
    /// use std::time::{Duration, Instant};
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let shared = store.breaker("a", CircuitBreaker::new(5, 1, Duration::from_secs(1)));
    /// shared.local().acquire(Instant::now()).unwrap().success();
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    #[inline]
    pub fn local(&self) -> &CircuitBreaker {
        &self.entry.breaker
    }

    /// The local breaker's state (held open while the fleet is open).
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use backoff_runtime::{CircuitBreaker, CircuitState};
    /// use std::time::Duration;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let shared = store.breaker("a", CircuitBreaker::new(5, 1, Duration::from_secs(1)));
    /// assert_eq!(shared.state(), CircuitState::Closed);
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn state(&self) -> CircuitState {
        self.entry.breaker.state()
    }

    /// Whether the fleet holds this process's breaker open (the fleet's
    /// breaker is open, as last heard from Redis).
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use backoff_runtime::CircuitBreaker;
    /// use std::time::Duration;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let shared = store.breaker("a", CircuitBreaker::new(5, 1, Duration::from_secs(1)));
    /// assert!(!shared.fleet_open());
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn fleet_open(&self) -> bool {
        RemoteView::of(&self.entry.breaker).held()
    }

    /// Whether a sync has answered for this breaker: the fleet has its
    /// counts and it hears the fleet's state.
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use backoff_runtime::CircuitBreaker;
    /// use std::time::Duration;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?; // nothing listens there
    /// let shared = store.breaker("a", CircuitBreaker::new(5, 1, Duration::from_secs(1)));
    /// assert!(!shared.joined());
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn joined(&self) -> bool {
        self.entry.joined.load(Ordering::Acquire)
    }
}

/// `circuit = EXPR` accepts a shared breaker: every call acquires its
/// local breaker, which the fleet holds open when the fleet is open.
// (Not listed in a misplaced value's error: no source line of this crate in it.)
#[diagnostic::do_not_recommend]
impl Circuit for SharedBreaker {
    #[inline]
    fn as_circuit(&self) -> &CircuitBreaker {
        self.local()
    }
}

impl core::ops::Deref for SharedBreaker {
    type Target = CircuitBreaker;

    #[inline]
    fn deref(&self) -> &CircuitBreaker {
        &self.entry.breaker
    }
}

impl Drop for SharedBreaker {
    fn drop(&mut self) {
        lock(&self.store.breakers).retain(|e| !Arc::ptr_eq(e, &self.entry));
        self.store.wake.notify_one();
    }
}

/// A breaker's sync: record this process's report (idempotently: a push
/// whose sequence number is not newer than the last one applied changes
/// nothing), drop stale ones, open the fleet when the reports trip it with
/// a quorum (publishing `open:GEN`), or close it when `ARGV[11]` says this
/// process's trial of opening `ARGV[14]` succeeded (publishing
/// `close:GEN`). Returns `{open, trial_ttl_ms, open_gen, closed_gen,
/// server_ms}`; `open` is 2, and nothing is changed, if the server runs it
/// after `ARGV[15]` (the client's deadline in the server's milliseconds,
/// 0 for none): its client timed out on it and pushes again.
///
/// A count breaker pushes running totals: its failures (`tot`), its
/// successes that ended a run (`ends`), and its current run. The fleet
/// counts each process's failures since its `base`, which a success
/// ending a run anywhere moves up to the process's total (its own to its
/// failures before its current run). A rate breaker pushes its window's
/// failures (`tot`) and calls.
///
/// KEYS: tot, base, ends, seq, calls (hashes), seen (zset), open, trial,
/// closed, gen.
/// ARGV: process, seq, failures, run or calls, run ends, stale_ms,
/// threshold, per_mille (0 for a count breaker), min_calls, quorum, event
/// ("closed" or ""), open_for_ms, channel, held generation, deadline.
pub(crate) const BREAKER_SYNC: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tot, base, ends, seqs, calls = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local seen, open, trial, closed, gen = KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local me, seq = ARGV[1], tonumber(ARGV[2])
local fails, ncalls, nends = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local stale, threshold, per_mille = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local min_calls, quorum, event = tonumber(ARGV[9]), tonumber(ARGV[10]), ARGV[11]
local open_for, channel, held = tonumber(ARGV[12]), ARGV[13], ARGV[14]
local keep = math.max(stale * 10, open_for * 4, 60000)
local function reply(o, ttl, g, c) return {o, ttl, g, c, now} end
-- A script that runs after its client gave up on it (a stall) changes
-- nothing: the client pushes again.
local deadline = tonumber(ARGV[15])
if deadline > 0 and now > deadline then return reply(2, 0, 0, 0) end
local function closed_gen() return tonumber(redis.call('GET', closed) or 0) end
if event == 'closed' then
  -- Only the opening this trial was for (a late script closes no later one).
  local g = redis.call('GET', open)
  if g and g == held then
    redis.call('DEL', open, trial)
    if per_mille > 0 then
      redis.call('DEL', tot, calls)
    else
      local all = redis.call('HGETALL', tot)
      for i = 1, #all, 2 do redis.call('HSET', base, all[i], all[i + 1]) end
    end
    redis.call('SET', closed, g, 'PX', keep)
    redis.call('PUBLISH', channel, 'close:' .. g)
  end
  return reply(0, 0, 0, closed_gen())
end
local is_open = redis.call('EXISTS', open) == 1
redis.call('ZADD', seen, now, me)
for _, p in ipairs(redis.call('ZRANGEBYSCORE', seen, '-inf', now - stale)) do
  for _, h in ipairs({tot, base, ends, seqs, calls}) do redis.call('HDEL', h, p) end
  redis.call('ZREM', seen, p)
end
local last = tonumber(redis.call('HGET', seqs, me) or -1)
if seq > last then
  redis.call('HSET', seqs, me, seq)
  if per_mille > 0 then
    redis.call('HSET', tot, me, fails)
    redis.call('HSET', calls, me, ncalls)
  else
    local known = redis.call('HGET', ends, me)
    local ended = known and nends > tonumber(known)
    if ended and not is_open then
      -- A success here ended the fleet's run: every failure reported so
      -- far is behind it. (While open, a late success ends nothing.)
      local all = redis.call('HGETALL', tot)
      for i = 1, #all, 2 do redis.call('HSET', base, all[i], all[i + 1]) end
    end
    if ended or not known then
      -- This process's failures before its current run are behind it.
      redis.call('HSET', base, me, math.max(fails - ncalls, 0))
    end
    redis.call('HSET', ends, me, nends)
    redis.call('HSET', tot, me, fails)
  end
end
for _, k in ipairs({seen, tot, base, ends, seqs, calls}) do redis.call('PEXPIRE', k, keep) end
if is_open then
  return reply(1, math.max(redis.call('PTTL', trial), 0), tonumber(redis.call('GET', open)), 0)
end
local sum_f, sum_c, reporters = 0, 0, 0
local counts = {}
local all = redis.call('HGETALL', tot)
for i = 1, #all, 2 do
  local f = tonumber(all[i + 1])
  if per_mille == 0 then f = f - tonumber(redis.call('HGET', base, all[i]) or 0) end
  if f > 0 then
    reporters = reporters + 1
    counts[#counts + 1] = f
  end
end
local trips
if per_mille == 0 then
  -- At most a quorum's share of the threshold from any one process.
  local cap = math.ceil(threshold / quorum)
  for _, f in ipairs(counts) do sum_f = sum_f + math.min(f, cap) end
  trips = sum_f >= threshold
else
  local c = redis.call('HGETALL', calls)
  for i = 1, #c, 2 do sum_c = sum_c + tonumber(c[i + 1]) end
  -- At most a quorum's share of the failures the ratio needs from any
  -- one process.
  local needed = math.ceil(per_mille * sum_c / 1000)
  local cap = math.ceil(needed / quorum)
  for _, f in ipairs(counts) do sum_f = sum_f + math.min(f, cap) end
  trips = sum_c >= min_calls and sum_f > 0 and sum_f >= needed
end
if trips and reporters >= quorum then
  local g = redis.call('INCR', gen)
  redis.call('SET', open, g)
  redis.call('SET', trial, 'opened', 'PX', open_for)
  redis.call('PUBLISH', channel, 'open:' .. g)
  return reply(1, open_for, g, 0)
end
return reply(0, 0, 0, closed_gen())
"#;

pub(crate) fn breaker_key(name: &str, what: &str) -> String {
    format!("{PREFIX}:b:{name}:{what}")
}

pub(crate) async fn sync_breaker(
    inner: &Arc<Inner>,
    conn: &mut Conn,
    script: &redis::Script,
    entry: &BreakerEntry,
    stale: u64,
    timeout: Duration,
) -> Result<(), String> {
    let b = &entry.breaker;
    let held = RemoteView::of(b).held();
    // Held, and closed since: this process's trial (a grant) succeeded.
    let closed = held && b.state() == CircuitState::Closed;
    // One consistent snapshot: the run ends read before and after the
    // report agree (a success in between is in the next push).
    let (mut failures, mut calls, mut ends, mut opens) = (0, 0, 0, (0, 0, 0));
    for _ in 0..4 {
        let before = RemoteView::of(b).run_ends();
        (failures, calls, opens) = match RemoteView::of(b).report(Instant::now()) {
            Report::Count {
                failures,
                run,
                threshold,
            } => (failures, run, (threshold, 0, 0)),
            Report::Rate {
                failures,
                calls,
                per_mille,
                min_calls,
            } => (failures, calls, (0, per_mille, min_calls)),
        };
        ends = RemoteView::of(b).run_ends();
        if ends == before {
            break;
        }
    }
    let (threshold, per_mille, min_calls) = opens;
    let (seq, held_gen) = {
        let mut seen = lock(&entry.fleet);
        seen.seq += 1;
        (seen.seq, seen.opening)
    };
    let mut invocation = script.prepare_invoke();
    for what in [
        "tot", "base", "ends", "seq", "calls", "seen", "open", "trial", "closed", "gen",
    ] {
        invocation.key(breaker_key(&entry.name, what));
    }
    invocation
        .arg(&inner.process)
        .arg(seq)
        .arg(failures)
        .arg(calls)
        .arg(ends)
        .arg(stale)
        .arg(threshold)
        .arg(per_mille)
        .arg(min_calls)
        .arg(entry.quorum.load(Ordering::Relaxed))
        .arg(if closed { "closed" } else { "" })
        .arg(b.open_for_ms())
        .arg(breaker_key(&entry.name, "ch"))
        .arg(held_gen.to_string())
        .arg(inner.deadline(timeout));
    let (open, trial_ttl, open_gen, closed_gen, server_ms): (u64, u64, u64, u64, u64) =
        command(timeout, invocation.invoke_async(&mut conn.con)).await?;
    inner.heard(server_ms);
    if open == 2 {
        return Err("the server ran the sync after its deadline".into());
    }
    entry.joined.store(true, Ordering::Release);
    if threshold > 0 {
        lock(&entry.fleet).pushed = (calls, ends);
    }
    if closed {
        RemoteView::of(b).release(true);
        let mut seen = lock(&entry.fleet);
        seen.trial_free_at = None;
        seen.opening = 0;
        return Ok(());
    }
    if open == 0 {
        if held {
            // Closed by a trial (its message may not have arrived) only if
            // the closing is the one of the opening held here; otherwise
            // (the keys were lost: FLUSHALL, a restart without data) the
            // local breaker follows its own rules: a trial after `open_for`.
            let opening = lock(&entry.fleet).opening;
            RemoteView::of(b).release(opening != 0 && closed_gen == opening);
        }
        let mut seen = lock(&entry.fleet);
        seen.trial_free_at = None;
        seen.opening = 0;
        return Ok(());
    }
    lock(&entry.fleet).opening = open_gen;
    RemoteView::of(b).hold(Instant::now());
    // Open: claim the fleet's trial if a call here wants it and no grant is
    // waiting unused.
    let TrialWanted {
        wanted: want,
        grant_unused: granted,
    } = RemoteView::of(b).take_want();
    if granted {
        return Ok(());
    }
    if trial_ttl > 0 {
        // Claimed or opening: look again when it lapses (if wanted).
        lock(&entry.fleet).trial_free_at =
            want.then(|| tokio::time::Instant::now() + Duration::from_millis(trial_ttl));
        if want {
            // Keep the mark for then.
            RemoteView::of(b).mark_want();
        }
        return Ok(());
    }
    if !want {
        return Ok(());
    }
    let mut set = redis::cmd("SET");
    set.arg(breaker_key(&entry.name, "trial"))
        .arg(&inner.process)
        .arg("NX")
        .arg("PX")
        .arg(b.open_for_ms());
    let claimed: Option<String> = match command(timeout, set.query_async(&mut conn.con)).await {
        Ok(c) => c,
        Err(e) => {
            // Wanted still.
            RemoteView::of(b).mark_want();
            return Err(e);
        }
    };
    if claimed.is_some() {
        RemoteView::of(b).grant();
        lock(&entry.fleet).trial_free_at = None;
    } else {
        // Another process took it; look again when its claim lapses.
        RemoteView::of(b).mark_want();
        lock(&entry.fleet).trial_free_at =
            Some(tokio::time::Instant::now() + Duration::from_millis(b.open_for_ms()));
    }
    Ok(())
}
