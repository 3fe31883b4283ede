//! A user's own control types (SPEC.md, "Integrations at the edge"):
//! `circuit`, `budget` and `throttle` accept any value implementing
//! `backoff_runtime::control::{Circuit, Budget, Throttle}`, in the
//! attribute (as a field, a reference argument, a `static` in a `LazyLock`)
//! and in the runtime's loops (`Retrying`, `Hedge`). The types here are
//! what a user writes: each owns the core's control and drives it through
//! the control's public extension point (`circuit::{Remote, RemoteView}`,
//! `budget::{Remote, RemoteView}`, `throttle::{Remote, RemoteView}`: an
//! operator's hold, a coordinator's counts), as `backoff-redis` does, with
//! no Redis; the last test is a whole fleet kept in memory.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use backoff_runtime::circuit::{RemoteView, Report};
use backoff_runtime::control::{Budget, Circuit, Throttle};
use backoff_runtime::{
    AdaptiveThrottle, CircuitBreaker, CircuitOpen, CircuitState, HedgeDelay, Policy, Rejected,
    RetryBudget, retry,
};
use backoff_workspace_tests::block_on_paused;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum E {
    Down,
    Open,
    Rejected,
}

impl From<CircuitOpen> for E {
    fn from(_: CircuitOpen) -> Self {
        E::Open
    }
}

impl From<Rejected> for E {
    fn from(_: Rejected) -> Self {
        E::Rejected
    }
}

/// A breaker an operator can hold open, and that counts what it was told
/// (the wakes a fleet would sync on).
struct Operated {
    breaker: CircuitBreaker,
    wakes: Arc<AtomicU32>,
}

impl Operated {
    fn new(threshold: u32) -> Self {
        let breaker = CircuitBreaker::new(threshold, 1, Duration::from_secs(3600));
        let wakes = Arc::new(AtomicU32::new(0));
        let w = Arc::clone(&wakes);
        assert!(
            RemoteView::attach(
                &breaker,
                Box::new(move || {
                    w.fetch_add(1, Ordering::Relaxed);
                })
            )
            .is_some()
        );
        Operated { breaker, wakes }
    }

    fn wakes(&self) -> u32 {
        self.wakes.load(Ordering::Relaxed)
    }
}

impl Circuit for Operated {
    fn as_circuit(&self) -> &CircuitBreaker {
        &self.breaker
    }
}

/// A service holding its own breaker type in a field.
struct Service {
    breaker: Operated,
    calls: Cell<u32>,
}

impl Service {
    #[retry(immediate, attempts = 1, circuit = self.breaker)]
    fn get(&self, ok: bool) -> Result<u32, E> {
        self.calls.set(self.calls.get() + 1);
        if ok { Ok(7) } else { Err(E::Down) }
    }
}

#[test]
fn a_field_of_a_users_breaker_type_opens_and_refuses() {
    let service = Service {
        breaker: Operated::new(2),
        calls: Cell::new(0),
    };
    assert_eq!(service.get(true), Ok(7));
    assert_eq!(service.breaker.wakes(), 0, "a success with nothing to end");
    assert_eq!(service.get(false), Err(E::Down));
    assert_eq!(service.get(false), Err(E::Down));
    assert_eq!(
        service.breaker.wakes(),
        2,
        "each failure wakes the user's hook"
    );
    assert_eq!(service.breaker.as_circuit().state(), CircuitState::Open);
    // Open: refused, the body does not run.
    assert_eq!(service.get(true), Err(E::Open));
    assert_eq!(service.calls.get(), 3);
    // The failures the user's coordinator would export.
    assert_eq!(
        RemoteView::of(&service.breaker.breaker).report(Instant::now()),
        Report::Count {
            failures: 2,
            run: 0,
            threshold: 2,
        }
    );
}

static HELD: LazyLock<Operated> = LazyLock::new(|| Operated::new(100));

#[retry(immediate, attempts = 1, circuit = HELD)]
fn through_a_static(ok: bool, calls: &mut u32) -> Result<u32, E> {
    *calls += 1;
    if ok { Ok(1) } else { Err(E::Down) }
}

#[test]
fn a_static_in_a_lazylock_follows_the_operators_hold_and_grant() {
    let mut calls = 0;
    assert_eq!(through_a_static(true, &mut calls), Ok(1));
    RemoteView::of(&HELD.breaker).hold(Instant::now());
    assert!(RemoteView::of(&HELD.breaker).held());
    // Held: refused without running the body, however long it is open.
    for _ in 0..3 {
        assert_eq!(through_a_static(true, &mut calls), Err(E::Open));
    }
    assert_eq!(calls, 1);
    // The refusals asked for the trial; none was granted yet.
    let want = RemoteView::of(&HELD.breaker).take_want();
    assert!(want.wanted && !want.grant_unused, "{want:?}");
    // One grant, one trial (it fails: still held, no more trials).
    RemoteView::of(&HELD.breaker).grant();
    assert_eq!(through_a_static(false, &mut calls), Err(E::Down));
    assert_eq!(through_a_static(true, &mut calls), Err(E::Open));
    assert_eq!(calls, 2);
    // Released with a close: calls go through again.
    RemoteView::of(&HELD.breaker).release(true);
    assert_eq!(HELD.as_circuit().state(), CircuitState::Closed);
    assert_eq!(through_a_static(true, &mut calls), Ok(1));
    assert_eq!(calls, 3);
}

/// A budget per tenant, lent to the attribute by reference.
struct Tenant {
    budget: RetryBudget,
}

impl Budget for Tenant {
    fn as_budget(&self) -> &RetryBudget {
        &self.budget
    }
}

#[retry(immediate, attempts = 10, budget = tenant)]
fn for_tenant(tenant: &Tenant, calls: &mut u32) -> Result<(), E> {
    *calls += 1;
    Err(E::Down)
}

#[test]
fn a_users_budget_type_bounds_the_retries() {
    let tenant = Tenant {
        budget: RetryBudget::new(3, 0.0),
    };
    let mut calls = 0;
    assert_eq!(for_tenant(&tenant, &mut calls), Err(E::Down));
    assert_eq!(calls, 4, "3 tokens: 3 retries");
    assert_eq!(for_tenant(&tenant, &mut calls), Err(E::Down));
    assert_eq!(calls, 5, "none left: no retry");
    // A coordinator grants the tenant more (thousandths of a token).
    backoff_runtime::budget::RemoteView::of(&tenant.budget).add(2_000);
    assert_eq!(for_tenant(&tenant, &mut calls), Err(E::Down));
    assert_eq!(calls, 8);
}

/// A throttle that hears another process's counts: its remote answers
/// what it was last told.
struct Heard {
    throttle: AdaptiveThrottle,
    rest: Arc<std::sync::Mutex<(u64, u64)>>,
}

struct Rest(Arc<std::sync::Mutex<(u64, u64)>>);

impl backoff_runtime::throttle::Remote for Rest {
    fn rest(&self) -> (u64, u64) {
        *self.0.lock().unwrap()
    }
}

impl Heard {
    fn new() -> Self {
        let throttle = AdaptiveThrottle::new(2.0, Duration::from_secs(120));
        let rest = Arc::new(std::sync::Mutex::new((0, 0)));
        let view =
            backoff_runtime::throttle::RemoteView::attach(&throttle, Box::new(Rest(rest.clone())));
        assert!(view.is_some());
        Heard { throttle, rest }
    }

    fn tell(&self, requests: u64, accepts: u64) {
        *self.rest.lock().unwrap() = (requests, accepts);
    }

    fn own_counts(&self, now: Instant) -> (u64, u64) {
        backoff_runtime::throttle::RemoteView::of(&self.throttle).own_counts(now)
    }
}

impl Throttle for Heard {
    fn as_throttle(&self) -> &AdaptiveThrottle {
        &self.throttle
    }
}

#[retry(immediate, attempts = 1, throttle = heard)]
fn behind(heard: &Heard, calls: &mut u32) -> Result<(), E> {
    *calls += 1;
    Ok(())
}

#[test]
fn a_users_throttle_type_rejects_by_the_counts_it_was_told() {
    let heard = Heard::new();
    let mut calls = 0;
    assert_eq!(behind(&heard, &mut calls), Ok(()));
    // The rest of the fleet: every request refused (the most it holds).
    heard.tell(u64::MAX, 0);
    assert!(heard.throttle.reject_probability(Instant::now()) > 0.999_999);
    for _ in 0..20 {
        assert_eq!(behind(&heard, &mut calls), Err(E::Rejected));
    }
    assert_eq!(calls, 1);
    // Every request counted here, the rejected ones too; the fleet's
    // counts gone again, only this process's remain.
    let now = Instant::now();
    assert_eq!(heard.own_counts(now), (21, 1));
    heard.tell(0, 0);
    assert_eq!(heard.throttle.counts(now), (21, 1));
}

#[test]
fn the_runtimes_loops_take_a_users_types() {
    let operated = Operated::new(1);
    let tenant = Tenant {
        budget: RetryBudget::new(1, 0.0),
    };
    let heard = Heard::new();
    let policy = Policy::immediate().attempts(5);
    let mut calls = 0;
    let result: Result<(), E> = policy
        .retrying(|| {
            calls += 1;
            Err(E::Down)
        })
        .budget(&tenant)
        .circuit(&operated)
        .throttle(&heard)
        .call();
    // The first failure opens the threshold-1 breaker: the retry the
    // budget allows would only be refused, so the call gives up with its
    // error at once (without the breaker: two calls).
    assert_eq!(result, Err(E::Down));
    assert_eq!(calls, 1);
    assert_eq!(operated.as_circuit().state(), CircuitState::Open);
    assert_eq!(operated.wakes(), 1);
    assert_eq!(heard.own_counts(Instant::now()).0, 1);

    // A hedged call behind the same (open) breaker, by an `Arc` of it.
    let shared = Arc::new(operated);
    let hedged: Result<u32, E> = block_on_paused(
        Policy::immediate()
            .attempts(2)
            .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
            .budget(&tenant)
            .circuit(&shared, |_| E::Open)
            .call(|| async { Ok(1) }),
    );
    assert_eq!(hedged, Err(E::Open));
    RemoteView::of(&shared.breaker).hold(Instant::now());
    RemoteView::of(&shared.breaker).release(true);
    let hedged: Result<u32, E> = block_on_paused(
        Policy::immediate()
            .attempts(2)
            .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
            .circuit(&shared, |_| E::Open)
            .call(|| async { Ok(1) }),
    );
    assert_eq!(hedged, Ok(1), "released with a close");
}

/// A fleet of two processes kept in memory, written from the extension
/// points' docs alone: each process's breaker tells the fleet of its
/// failures ([`Remote::wake`](backoff_runtime::circuit::Remote)),
/// the fleet adds up their reports and holds every breaker open at the
/// threshold; their budgets share one bucket (each sync takes back what a
/// process holds and grants it its part of the bucket).
#[test]
fn a_fleet_kept_in_memory_through_the_extension_points() {
    use backoff_runtime::budget::RemoteView as BudgetView;
    use std::sync::atomic::AtomicBool;

    struct Process {
        breaker: CircuitBreaker,
        budget: RetryBudget,
    }
    /// What the fleet keeps: a bucket, and whether a failure was told.
    struct Fleet {
        bucket: std::sync::Mutex<u64>,
        woken: Arc<AtomicBool>,
    }
    impl Fleet {
        fn sync(&self, processes: &[Process], threshold: u64) {
            let now = Instant::now();
            let failures: u64 = processes
                .iter()
                .map(|p| match RemoteView::of(&p.breaker).report(now) {
                    Report::Count { run, .. } => run,
                    Report::Rate { failures, .. } => failures,
                })
                .sum();
            if failures >= threshold {
                for p in processes {
                    RemoteView::of(&p.breaker).hold(now);
                }
            }
            let mut bucket = self.bucket.lock().unwrap();
            for (i, p) in processes.iter().enumerate() {
                let view = BudgetView::of(&p.budget);
                *bucket += view.take(0);
                let share = *bucket / u64::try_from(processes.len() - i).unwrap();
                *bucket -= share;
                *bucket += u64::try_from(view.add(i64::try_from(share).unwrap())).unwrap_or(0);
            }
        }
    }

    let fleet = Fleet {
        bucket: std::sync::Mutex::new(0),
        woken: Arc::new(AtomicBool::new(false)),
    };
    let processes: Vec<Process> = (0..2)
        .map(|_| {
            let p = Process {
                breaker: CircuitBreaker::new(10, 1, Duration::from_secs(60)),
                budget: RetryBudget::new(10, 0.0),
            };
            let woken = fleet.woken.clone();
            assert!(
                RemoteView::attach(
                    &p.breaker,
                    Box::new(move || woken.store(true, Ordering::Relaxed))
                )
                .is_some()
            );
            p
        })
        .collect();
    // One bucket of 10 for the fleet: the processes start empty.
    for p in &processes {
        *fleet.bucket.lock().unwrap() += BudgetView::of(&p.budget).take(0);
    }
    *fleet.bucket.lock().unwrap() = 10_000;
    fleet.sync(&processes, 3);
    let mut spent = 0;
    for p in &processes {
        while p.budget.try_spend() {
            spent += 1;
        }
    }
    fleet.sync(&processes, 3);
    for p in &processes {
        while p.budget.try_spend() {
            spent += 1;
        }
    }
    assert_eq!(spent, 10, "one bucket of 10 for the two processes");

    // Two failures in one process, one in the other: the fleet's three
    // hold both breakers open (each alone has a threshold of 10).
    let now = Instant::now();
    for (p, n) in processes.iter().zip([2, 1]) {
        for _ in 0..n {
            p.breaker.acquire(now).unwrap().failure(now);
        }
    }
    assert!(
        fleet.woken.load(Ordering::Relaxed),
        "the failures told the fleet"
    );
    fleet.sync(&processes, 3);
    for p in &processes {
        assert_eq!(p.breaker.state(), CircuitState::Open);
        assert!(p.breaker.acquire(now).is_err());
    }
}
