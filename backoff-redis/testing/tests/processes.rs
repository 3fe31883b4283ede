//! Real processes of a fleet sharing a breaker through a real
//! `redis-server` that the test starts on a free port (`src/bin/fleet_child.rs`
//! is each process). `#[ignore]`d, as every test that needs the server:
//!
//! ```text
//! cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored
//! ```

use std::process::{Command, Stdio};

use backoff_redis_testing::RedisServer;

fn server() -> RedisServer {
    RedisServer::start().unwrap_or_else(|e| panic!("cannot start redis-server: {e}"))
}

/// Real processes of a fleet: one failing
/// alone opens nothing elsewhere; a second one makes the quorum, and the
/// watcher, which made no call, is told the fleet is open.
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn separate_processes_share_a_breaker() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Child, ChildStdout};

    let server = server();
    let spawn = |args: &[&str]| -> (Child, BufReader<ChildStdout>) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fleet_child"))
            .arg(server.url())
            .arg("processes")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the child starts");
        let out = BufReader::new(child.stdout.take().expect("piped"));
        (child, out)
    };
    let ask = |child: &mut Child, out: &mut BufReader<ChildStdout>, request: &str| -> String {
        if !request.is_empty() {
            let stdin = child.stdin.as_mut().expect("piped");
            writeln!(stdin, "{request}")
                .and_then(|()| stdin.flush())
                .expect("the child reads");
        }
        let mut line = String::new();
        out.read_line(&mut line).expect("the child answers");
        line.trim().to_owned()
    };
    let (mut watcher, mut watched) = spawn(&["watch"]);
    assert_eq!(ask(&mut watcher, &mut watched, ""), "ready");
    // 5 failures in one process: its own breaker opens, the fleet's not.
    let (mut first, mut first_out) = spawn(&["fail", "5"]);
    assert_eq!(ask(&mut first, &mut first_out, ""), "ready");
    assert_eq!(ask(&mut watcher, &mut watched, "state"), "closed");
    // 2 more in a second process: 3 (at most ceil(5 / 2) from one) + 2.
    let (mut second, mut second_out) = spawn(&["fail", "2"]);
    assert_eq!(ask(&mut second, &mut second_out, ""), "ready");
    assert_eq!(ask(&mut watcher, &mut watched, "wait-open"), "open");
    assert_eq!(ask(&mut first, &mut first_out, "wait-open"), "open");
    for mut child in [watcher, first, second] {
        drop(child.stdin.take());
        assert!(child.wait().expect("the child exits").success());
    }
}
