//! A store tells the recording facade (`backoff_runtime::record`,
//! `backoff-redis`'s feature `record`) at its first answer, once when its
//! Redis stops answering and once when it answers again. (A test binary of
//! its own: the recorder is global.)

use std::sync::Mutex;
use std::time::Duration;

use backoff_redis::RedisStore;
use backoff_redis_testing::{RedisServer, wait_until};
use backoff_runtime::record::{Recorder, set_recorder};

/// Every `remote_reachable` told: (remote, reachable).
static TOLD: Mutex<Vec<(String, bool)>> = Mutex::new(Vec::new());

struct Remotes;

impl Recorder for Remotes {
    fn remote_reachable(&self, remote: &str, reachable: bool) {
        TOLD.lock().unwrap().push((remote.to_owned(), reachable));
    }
}

fn told(store: &RedisStore) -> Vec<bool> {
    TOLD.lock()
        .unwrap()
        .iter()
        .filter(|(r, _)| r == store.process())
        .map(|&(_, ok)| ok)
        .collect()
}

#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_store_tells_the_recorder_when_redis_stops_and_answers_again() {
    set_recorder(&Remotes).expect("the only recorder");
    let mut server = RedisServer::start().expect("redis-server");
    let store = RedisStore::new(&server.url())
        .expect("a valid url")
        .sync_every(Duration::from_millis(20));
    let budget = store.budget("recorded", backoff_runtime::RetryBudget::new(10, 0.1));
    assert!(wait_until(Duration::from_secs(10), || budget.joined()));
    // Its first answer, once; then nothing while it answers.
    let answered = store.syncs().0;
    assert!(wait_until(Duration::from_secs(10), || store.syncs().0 >= answered + 2));
    assert_eq!(told(&store), [true], "told at its first answer only");
    server.kill();
    assert!(
        wait_until(Duration::from_secs(10), || told(&store) == [true, false]),
        "{:?}",
        told(&store)
    );
    // Failing syncs in a row (a backoff between them) tell nothing more.
    let failed = store.syncs().1;
    assert!(wait_until(Duration::from_secs(10), || store.syncs().1 >= failed + 2));
    assert_eq!(told(&store), [true, false]);
    server.restart().expect("restart");
    assert!(
        wait_until(Duration::from_secs(10), || told(&store)
            == [true, false, true]),
        "{:?}",
        told(&store)
    );
}
