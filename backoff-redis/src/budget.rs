//! A budget shared by a fleet: [`SharedBudget`], its lease on the fleet's
//! bucket and its sync.

use core::fmt;
use core::time::Duration;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use backoff_runtime::RetryBudget;
use backoff_runtime::budget::{Remote, RemoteView as BudgetView};
use backoff_runtime::control::Budget;

use crate::store::Inner;
#[cfg(doc)]
use crate::store::RedisStore;
use crate::sync::{Conn, command, stale_after};
use crate::{PREFIX, lock, millis};

/// A [`RetryBudget`] whose bucket a fleet shares through a [`RedisStore`];
/// what `#[retry(budget = ..)]` takes, as a reference, a field or a
/// `static` in a [`LazyLock`](std::sync::LazyLock).
///
/// Calls spend and refill [`local`](SharedBudget::local), this process's
/// share of the fleet's bucket; the background thread trades it with the
/// fleet's bucket at each sync.
///
/// ```no_run
/// use backoff_redis::RedisStore;
/// use backoff_runtime::{RetryBudget, retry};
///
/// let store = RedisStore::new("redis://127.0.0.1/")?;
/// let budget = store.budget("search", RetryBudget::new(50, 0.1));
///
/// #[retry(attempts = 3, budget = &budget)]
/// fn search(budget: &backoff_redis::SharedBudget) -> Result<u32, std::io::Error> {
///     Ok(1)
/// }
/// assert_eq!(search(&budget)?, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SharedBudget {
    pub(crate) entry: Arc<BudgetEntry>,
    /// Keeps the store's thread running.
    pub(crate) store: Arc<Inner>,
}

impl fmt::Debug for SharedBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedBudget")
            .field("name", &self.entry.name)
            .field("local_tokens", &self.entry.budget.tokens())
            .finish_non_exhaustive()
    }
}

pub(crate) struct BudgetEntry {
    pub(crate) name: String,
    pub(crate) budget: RetryBudget,
    /// This process's side of its lease on the fleet's bucket.
    pub(crate) lease: Mutex<Lease>,
    /// When the lease expires, which every spend asks (the budget's
    /// [`Remote`]).
    pub(crate) expiry: Arc<Expiry>,
    /// Whether a sync has answered for this budget.
    pub(crate) joined: AtomicBool,
}

/// The tokens a process holds before its first answered sync, unless
/// [`SharedBudget::startup_tokens`] says otherwise: 1.
pub const DEFAULT_STARTUP_TOKENS: u32 = 1;

/// This process's side of its lease on a fleet's bucket.
#[derive(Default)]
pub(crate) struct Lease {
    /// The number of this process's last budget transaction.
    pub(crate) seq: u64,
    /// The number of the last transaction answered.
    pub(crate) ack: u64,
    /// Whether a sync has granted this process a share yet.
    pub(crate) joined: bool,
    /// Before the first answered sync: the startup allowance this process
    /// holds (thousandths), which the fleet never lent it. What is below
    /// it at that sync was spent and is charged.
    pub(crate) startup: u64,
    /// What the local bucket could not hold of the last share (above its
    /// size: deposits meanwhile), given back at the next sync.
    pub(crate) owed: i64,
    /// What syncs took out of the local bucket that no answer confirmed
    /// (the next transaction undoes an unanswered one, and gives it back
    /// again).
    pub(crate) pending: i64,
    /// The fair share the last answered sync computed: what a sync keeps
    /// locally at most.
    pub(crate) fair: u64,
    /// What was left of the share (in thousandths) when this process gave
    /// it up, Redis having been away for half a lease (see
    /// [`lease_ttl`]): given back at the next sync answered, whether the
    /// fleet still holds the lease or reclaimed it meanwhile.
    pub(crate) dropped: Option<u64>,
}

/// A lease's expiry by this process's monotonic clock: the budget's
/// [`Remote`], which every spend asks. A process frozen past it (SIGSTOP,
/// a paused VM) spends nothing of the lease before a sync answers, even if
/// its calls run before its sync thread does.
pub(crate) struct Expiry {
    epoch: Instant,
    /// Milliseconds from `epoch`; [`NO_LEASE`]: nothing to expire (the
    /// startup allowance, or the process's own refills after it gave its
    /// share up).
    at_ms: AtomicU64,
}

const NO_LEASE: u64 = u64::MAX;

impl Expiry {
    pub(crate) fn new() -> Self {
        Expiry {
            epoch: Instant::now(),
            at_ms: AtomicU64::new(NO_LEASE),
        }
    }

    fn set(&self, at: Option<Instant>) {
        let ms = at.map_or(NO_LEASE, |at| {
            millis(at.saturating_duration_since(self.epoch))
        });
        self.at_ms.store(ms, Ordering::Release);
    }
}

/// The budget's side of its [`Expiry`].
struct Expires(Arc<Expiry>);

impl Remote for Expires {
    fn spendable(&self) -> bool {
        let at = self.0.at_ms.load(Ordering::Acquire);
        at == NO_LEASE || millis(self.0.epoch.elapsed()) < at
    }
}

impl SharedBudget {
    /// This process's share of the bucket, which every call spends and
    /// refills.
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use backoff_runtime::RetryBudget;
    /// use backoff_runtime::budget::RemoteView;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let shared = store.budget("a", RetryBudget::new(10, 0.5));
    /// assert_eq!(RemoteView::of(shared.local()).max(), 10_000); // in thousandths
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    #[inline]
    pub fn local(&self) -> &RetryBudget {
        &self.entry.budget
    }

    /// Whether a sync has answered for this budget: from then on it spends
    /// a share the fleet lent it. Before, it holds only its
    /// [startup allowance](SharedBudget::startup_tokens).
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use backoff_runtime::RetryBudget;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?; // nothing listens there
    /// let shared = store.budget("a", RetryBudget::new(10, 0.5));
    /// assert!(!shared.joined());
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn joined(&self) -> bool {
        self.entry.joined.load(Ordering::Acquire)
    }

    /// The tokens this process may spend before its first answered sync
    /// ([`DEFAULT_STARTUP_TOKENS`], 1, unless set here; at most the
    /// bucket's size). What it spends of them is charged to the fleet's
    /// bucket at that sync, so a process that lives past its first sync
    /// costs the fleet nothing extra; a process that dies before it (a
    /// crash loop) spends at most this much uncounted. Without Redis the
    /// budget runs on this allowance and its own refills. Set it where the
    /// budget is made: once a sync has answered, it changes nothing.
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use backoff_runtime::RetryBudget;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?; // nothing listens there
    /// let shared = store.budget("a", RetryBudget::new(10, 0.0)).startup_tokens(3);
    /// assert_eq!(shared.local().tokens(), 3.0);
    /// let shared = store.budget("b", RetryBudget::new(10, 0.0));
    /// assert_eq!(shared.local().tokens(), 1.0);
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn startup_tokens(self, tokens: u32) -> Self {
        let mut lease = lock(&self.entry.lease);
        if !lease.joined {
            let b = &self.entry.budget;
            let startup = (u64::from(tokens) * 1000).min(BudgetView::of(b).max());
            let delta = i64::try_from(startup).unwrap_or(i64::MAX)
                - i64::try_from(lease.startup).unwrap_or(i64::MAX);
            lease.owed += BudgetView::of(b).add(delta);
            lease.startup = startup;
        }
        drop(lease);
        self
    }
}

/// A budget for the fleet: its local bucket holds the startup allowance
/// only, and asks its lease's expiry before each spend.
pub(crate) fn entry(name: &str, budget: RetryBudget) -> BudgetEntry {
    let startup = (u64::from(DEFAULT_STARTUP_TOKENS) * 1000).min(BudgetView::of(&budget).balance());
    let owed = BudgetView::of(&budget).add(
        i64::try_from(startup).unwrap_or(i64::MAX)
            - i64::try_from(BudgetView::of(&budget).balance()).unwrap_or(i64::MAX),
    );
    let expiry = Arc::new(Expiry::new());
    // A budget moved in is this store's alone: no remote was set.
    let _ = BudgetView::attach(&budget, Box::new(Expires(Arc::clone(&expiry))));
    BudgetEntry {
        name: name.to_owned(),
        budget,
        lease: Mutex::new(Lease {
            startup,
            owed,
            ..Lease::default()
        }),
        expiry,
        joined: AtomicBool::new(false),
    }
}

/// `budget = EXPR` accepts a shared budget: every retry spends from its
/// local share of the fleet's bucket.
// (Not listed in a misplaced value's error: no source line of this crate in it.)
#[diagnostic::do_not_recommend]
impl Budget for SharedBudget {
    #[inline]
    fn as_budget(&self) -> &RetryBudget {
        self.local()
    }
}

impl core::ops::Deref for SharedBudget {
    type Target = RetryBudget;

    #[inline]
    fn deref(&self) -> &RetryBudget {
        &self.entry.budget
    }
}

impl Drop for SharedBudget {
    fn drop(&mut self) {
        lock(&self.store.budgets).retain(|e| !Arc::ptr_eq(e, &self.entry));
        self.store.wake.notify_one();
    }
}

/// A budget's sync, a transaction numbered `seq` per process: undo this
/// process's last transaction if its answer never arrived (`ack`, the last
/// number answered, is older: the balance given back is still the
/// process's, the share granted never reached it), take back this
/// process's balance, reclaim the leases of processes unheard of for
/// `lease_ttl` (a process cut off that long has given its lease up
/// itself), grant a new share (the bucket divided by the processes heard
/// from, rounded up to whole tokens). A transaction not newer than the
/// last applied, or run after its deadline, changes nothing. The bucket
/// and the leases together stay at most `max` (a refill beyond is
/// dropped; a give-back never is). Returns `{share, left, status,
/// server_ms}` in thousandths; status 2: nothing done.
///
/// A reclaimed lease is credited to the bucket and remembered (`reclaimed`,
/// `gone`, for 100 × `lease_ttl`): a process that comes back after it
/// undoes the reclaim first, so what it spent of its share meanwhile is
/// charged and what it kept (`dropped`, what was left when it gave its
/// share up, or its balance if it never did) is given back: the bucket may
/// go below zero until refills cover what the process spent.
///
/// KEYS: tokens, leases, lseq, lprev, ldelta (hashes), seen (zset),
/// reclaimed (hash), gone (zset).
/// ARGV: process, seq, ack, balance (given back; negative: a startup
/// allowance spent), max, lease_ttl_ms, deadline, kept (what the process
/// keeps of its tokens, spendable while the script runs: its lease is
/// `kept` + the share granted, the share making it up to a fair one).
/// Returns `{share, left, status, server_ms, fair}`.
pub(crate) const BUDGET_SYNC: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tokens, leases, lseq, lprev, ldelta, seen = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local reclaimed, gone = KEYS[7], KEYS[8]
local me, seq, ack = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local balance, max, ttl, deadline = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local kept = tonumber(ARGV[8])
if deadline > 0 and now > deadline then return {0, 0, 2, now} end
local left = tonumber(redis.call('GET', tokens) or max)
for _, p in ipairs(redis.call('ZRANGEBYSCORE', seen, '-inf', now - ttl)) do
  local lease = tonumber(redis.call('HGET', leases, p) or 0)
  left = left + lease
  redis.call('HDEL', leases, p)
  redis.call('HSET', reclaimed, p, lease)
  redis.call('ZADD', gone, now, p)
  redis.call('ZREM', seen, p)
end
for _, p in ipairs(redis.call('ZRANGEBYSCORE', gone, '-inf', now - ttl * 100)) do
  for _, h in ipairs({lseq, lprev, ldelta, reclaimed}) do redis.call('HDEL', h, p) end
  redis.call('ZREM', gone, p)
end
local last = tonumber(redis.call('HGET', lseq, me) or 0)
if seq <= last then
  redis.call('SET', tokens, left)
  return {0, left, 2, now}
end
local back = redis.call('HGET', reclaimed, me)
if back then
  -- Back after its lease was reclaimed: as if the fleet had kept it.
  left = left - tonumber(back)
  redis.call('HSET', leases, me, back)
  redis.call('HDEL', reclaimed, me)
  redis.call('ZREM', gone, me)
end
if ack < last then
  left = left - tonumber(redis.call('HGET', ldelta, me) or 0)
  redis.call('HSET', leases, me, redis.call('HGET', lprev, me) or 0)
end
redis.call('ZADD', seen, now, me)
local before = left
local others = 0
local all = redis.call('HGETALL', leases)
for i = 1, #all, 2 do
  if all[i] ~= me then others = others + tonumber(all[i + 1]) end
end
left = left + balance
if left + others + kept > max then left = math.max(max - others - kept, before) end
local n = math.max(redis.call('ZCARD', seen), 1)
-- Whole tokens (a share of 0.7 token allows no retry anywhere).
-- A fair share of everything the fleet holds (the bucket and the leases).
local fair = math.max(math.min(math.ceil(math.ceil((left + kept + others) / n) / 1000) * 1000, left + kept), 0)
local share = math.max(math.min(fair - kept, left), 0)
left = left - share
redis.call('SET', tokens, left)
redis.call('HSET', lprev, me, redis.call('HGET', leases, me) or 0)
redis.call('HSET', leases, me, kept + share)
redis.call('HSET', lseq, me, seq)
redis.call('HSET', ldelta, me, left - before)
return {share, left, 0, now, fair}
"#;

/// How long the fleet keeps the lease of a process it does not hear from
/// (10 × the report lifetime, at least 10 s); a process that has not
/// reached Redis for half of it gives its share up (spends only what its
/// own successes refill), so a lease is reclaimed only once its process no
/// longer spends it.
pub(crate) fn lease_ttl(every: Duration) -> Duration {
    stale_after(every)
        .saturating_mul(10)
        .max(Duration::from_secs(10))
}

/// Redis has been away for half a lease: every budget gives up its share
/// of the fleet's bucket (the fleet may reclaim it), keeping what it
/// refills itself from then on. What was left of the share is given back
/// at the next sync answered.
pub(crate) fn give_up_leases(inner: &Inner) {
    for entry in lock(&inner.budgets).iter() {
        let mut lease = lock(&entry.lease);
        if lease.joined && lease.dropped.is_none() {
            lease.dropped = Some(BudgetView::of(&entry.budget).take(0));
            lease.fair = 0;
            // From here on it spends its own refills.
            entry.expiry.set(None);
        }
    }
}

pub(crate) fn budget_key(name: &str, what: &str) -> String {
    format!("{PREFIX}:t:{name}:{what}")
}

/// One budget's sync: a numbered transaction giving this process's balance
/// back and taking a new share (see [`BUDGET_SYNC`]).
pub(crate) async fn sync_budget(
    inner: &Arc<Inner>,
    conn: &mut Conn,
    script: &redis::Script,
    entry: &BudgetEntry,
    every: Duration,
    timeout: Duration,
) -> Result<(), String> {
    let b = &entry.budget;
    // The lease granted now runs from here, before the script runs.
    let sent = Instant::now();
    let (seq, ack, given, kept) = {
        let mut lease = lock(&entry.lease);
        lease.seq += 1;
        // What it keeps (spendable while the script runs) stays its own;
        // the rest is taken out of the local bucket at once, so nothing
        // given back can be spent meanwhile. Given back with it: what
        // earlier syncs took and no answer confirmed, what the bucket
        // could not hold, what was dropped; less the startup allowance
        // before the first answer (never the fleet's: what is below it was
        // spent, and is charged).
        let kept_max = if lease.joined { lease.fair } else { 0 };
        let taken = BudgetView::of(b).take(kept_max);
        lease.pending += i64::try_from(taken).unwrap_or(i64::MAX);
        let kept = BudgetView::of(b).balance().min(kept_max);
        let dropped = i64::try_from(lease.dropped.unwrap_or(0)).unwrap_or(i64::MAX);
        let startup = i64::try_from(lease.startup).unwrap_or(i64::MAX);
        let given = lease.pending + lease.owed + dropped - startup;
        (lease.seq, lease.ack, given, kept)
    };
    let mut invocation = script.prepare_invoke();
    for what in [
        "tokens",
        "leases",
        "lseq",
        "lprev",
        "ldelta",
        "seen",
        "reclaimed",
        "gone",
    ] {
        invocation.key(budget_key(&entry.name, what));
    }
    invocation
        .arg(&inner.process)
        .arg(seq)
        .arg(ack)
        .arg(given)
        .arg(BudgetView::of(b).max())
        .arg(millis(lease_ttl(every)))
        .arg(inner.deadline(timeout))
        .arg(kept);
    // Not answered: the balance stays this process's (a transaction
    // that ran is undone by the next one).
    let (share, _left, status, server_ms, fair): (u64, i64, u64, u64, u64) =
        command(timeout, invocation.invoke_async(&mut conn.con)).await?;
    inner.heard(server_ms);
    if status == 2 {
        return Err("the server ran the budget's sync after its deadline".into());
    }
    let mut lease = lock(&entry.lease);
    lease.ack = seq;
    lease.joined = true;
    lease.dropped = None;
    lease.startup = 0;
    lease.fair = fair;
    // The share is added to what was kept and spent meanwhile; what the
    // bucket cannot hold (deposits meanwhile) is given back next time.
    lease.owed = BudgetView::of(b).add(i64::try_from(share).unwrap_or(i64::MAX));
    // Above a fair share, what it kept is given back: a process back after
    // its lease was reclaimed (and spent by others) keeps nothing of it.
    lease.pending = i64::try_from(BudgetView::of(b).take(fair)).unwrap_or(i64::MAX);
    entry.expiry.set(Some(sent + lease_ttl(every) / 2));
    entry.joined.store(true, Ordering::Release);
    Ok(())
}
