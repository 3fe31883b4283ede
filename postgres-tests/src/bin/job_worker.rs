//! One worker of the job queue in `backoff_postgres_tests::queue`, as a
//! process of its own: claims jobs until the queue is empty, then prints
//! what it did (`runs done dead`) and exits.
//!
//! ```text
//! job_worker --port P --worker NAME --unit-us U --attempts N [--work-us W]
//! ```

use std::process::ExitCode;

use backoff_postgres_tests::queue::WorkerArgs;

fn main() -> ExitCode {
    let args = match WorkerArgs::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    match args.run() {
        Ok(report) => {
            println!("{} {} {}", report.runs, report.done, report.dead);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: worker {}: {e}", args.worker);
            ExitCode::FAILURE
        }
    }
}
