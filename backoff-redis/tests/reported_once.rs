//! A store whose syncs keep failing (a refused password) reports it once
//! through `tracing`, not once per sync, and once more when Redis answers
//! again; no event shows the password. (A test binary of its own: the
//! subscriber is global.)

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use backoff_redis::RedisStore;
use backoff_redis_testing::{RedisServer, wait_until};
use backoff_runtime::CircuitBreaker;

/// Every event of target `backoff_redis`, as text.
static EVENTS: Mutex<Vec<String>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

struct Collect;

struct Text(String);

impl tracing::field::Visit for Text {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0 += &format!("{}={value:?} ", field.name());
    }
}

impl tracing::Subscriber for Collect {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(NEXT_ID.fetch_add(1, Ordering::Relaxed))
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        if event.metadata().target() == "backoff_redis" {
            let mut text = Text(format!("{} ", event.metadata().level()));
            event.record(&mut text);
            EVENTS.lock().unwrap().push(text.0);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_refused_password_is_reported_once() {
    tracing::subscriber::set_global_default(Collect).expect("the only subscriber");
    let server = RedisServer::start().expect("redis-server");
    let mut admin = redis::Client::open(server.url())
        .and_then(|c| c.get_connection())
        .expect("the test's own connection");
    let url = format!("redis://late:hunter2@127.0.0.1:{}/", server.port());
    let store = RedisStore::new(&url)
        .expect("a valid url")
        .sync_every(Duration::from_millis(20));
    let _b = store.breaker("once", CircuitBreaker::new(4, 1, Duration::from_secs(1)));
    assert!(wait_until(Duration::from_secs(10), || store
        .health()
        .failures_in_a_row
        >= 3));
    // The user now exists: the next sync succeeds.
    let _: () = redis::cmd("ACL")
        .arg(&["SETUSER", "late", "on", ">hunter2", "~*", "&*", "+@all"][..])
        .query(&mut admin)
        .expect("ACL SETUSER");
    assert!(wait_until(Duration::from_secs(10), || store
        .health()
        .last_error
        .is_none()));
    let events = EVENTS.lock().unwrap().clone();
    eprintln!("{events:#?}");
    assert_eq!(events.len(), 2, "{events:#?}");
    assert!(events[0].starts_with("WARN"), "{events:#?}");
    assert!(events[1].starts_with("INFO"), "{events:#?}");
    assert!(!events.iter().any(|e| e.contains("hunter2")), "{events:#?}");
}
