//! The `#[retry]` attribute of [`backoff-runtime`]. Depend on
//! `backoff-runtime` and write `use backoff_runtime::retry;`: it re-exports
//! this macro, and the code the macro generates calls into it.
//!
//! [`backoff-runtime`]: https://docs.rs/backoff-runtime
#![forbid(unsafe_code)]

mod attr;
use backoff_schedule::duration;
mod errors;
mod expand;
#[cfg(test)]
mod fuzz;
mod valid;

use proc_macro::TokenStream;

/// Retries a function that returns `Result`, with backoff and jitter.
///
/// ```
/// use backoff_runtime::retry;
/// # #[derive(Debug)] struct FetchError { transient: bool }
/// # async fn get(_: &str) -> Result<String, FetchError> { Ok("page".into()) }
///
/// fn is_transient(e: &FetchError) -> bool {
///     e.transient
/// }
///
/// #[retry(exponential(base = "100ms", max = "5s"), attempts = 5, jitter = "full", when = is_transient)]
/// async fn fetch(url: &str) -> Result<String, FetchError> {
///     get(url).await
/// }
/// # #[tokio::main(flavor = "current_thread")] async fn main() { assert_eq!(fetch("x").await.unwrap(), "page"); }
/// ```
///
/// Each call runs the body; on `Err`, the call sleeps and runs the whole
/// body again, until it succeeds, `when` says stop, the attempts run out or
/// the deadline would pass. Then the last error is returned unchanged.
///
/// # Arguments
///
/// Every argument is optional, in any order, at most once; `#[retry]` alone
/// uses every default.
///
/// | argument | forms | default |
/// |---|---|---|
/// | strategy | `exponential(base = D, factor = F, max = D)`, `linear(base = D, max = D)`, `constant(D)` or `constant(delay = D)`, `fibonacci(base = D, max = D)`, `decorrelated(base = D, max = D)`, `immediate`, `sidekiq(unit = D, max = D)`, `buckets(unit = D, max = D)` (the runtime's `Sidekiq` and `Buckets`: random by themselves, default jitter `"none"`, unit `"1s"`, uncapped unless `max` is given); composed, and nesting: `chain(A(.., times = n), B, ..)` (each stage but the last runs `times` retries, or with `for = D` until the first failure once D has passed since it began, and the next starts at its own first retry), `steps(D, ..)` (the last repeating), `shorter(A, B)`, `longer(A, B)`, `sum(A, B)` (retry by retry; no `decorrelated` stage; a side of `shorter` or `longer` may end with `times` or `for`: `shorter` goes on with the other side's delays, `longer` ends the call, reason `Attempts`), each stage with its own parameters and defaults and no `jitter` | `exponential(base = "100ms", factor = 2, max = "10s")` |
/// | `attempts` | integer ≥ 1: total calls, the first included; or `unlimited` | `3` |
/// | `preset` | `"internal_api"`, `"external_api"`, `"rate_limited"`, `"database"`, `"third_party"` or `"aws_standard"`: the runtime's `presets` constant of that name (exponential, full jitter, its `attempts`); a strategy, `attempts` or `jitter` written beside it replaces that part. Not with `on(..)`, `policy` or `hedge` | none |
/// | `jitter` | `"full"`, `"equal"` (alias `"half"`), `"none"`, `"spread"`, `scattered(R)` with 0 < R ≤ 1, `range(LO, HI)` (uniform(v·LO, v·HI), 0 ≤ LO ≤ HI, capped at `max`), or `NAME`, a `static` whose type implements `jitter::Jitterer` (your own; capped at `max`) | `"full"` (`"none"` for `decorrelated`, which takes only `"spread"`, and for `immediate`, `sidekiq`, `buckets` and `steps`, which read as written) |
/// | `max_elapsed` | D: no retry starts a sleep that would end later than D after the call began | none |
/// | `when` | a path or closure taking `&E`, returning `bool` (true = retry) or [`Decision`] | retry every error |
/// | `on(PATTERN, ..)` | beside a `when` that returns your own type: `on(PATTERN, STRATEGY, attempts = n, jitter = ..)` (a schedule of the kind's own, each kind counting its own retries; `attempts` defaults to 3, `jitter` to the top-level one, else the strategy's), `on(PATTERN, stop)`, or `on(PATTERN, after = EXPR)` (a `Duration`, which may use the pattern's bindings: `Decision::RetryAfter`). Any number of arms, up to 8, matched without a wildcard: a variant without an arm is a compile error at `when` (`on(_, stop)` opts out). The top-level `attempts` then defaults to `unlimited`. Not with a strategy, `throttled`, `policy` or `hedge` | none |
/// | `on_retry` | a path or closure, `FnMut(&E, &RetryEvent)`, called before each sleep | none |
/// | `on_hedge` | with `hedge`: a path or closure, `FnMut(&RetryEvent)`, called when the hedge delay starts an attempt (`event.delay` is the delay it waited) | none |
/// | `sleep` | a path: `fn(Duration)` for a plain fn, `fn(Duration) -> impl Future<Output = ()>` for an `async fn` | `std::thread::sleep` / `tokio::time::sleep` |
/// | `policy` | an expression giving a [`Policy`] or `&Policy`, evaluated once per call (it may use the arguments and `self`); excludes strategy, `attempts`, `jitter`, `max_elapsed` | none |
/// | `crate` | `"path"` to the runtime, if it is renamed or re-exported | `"::backoff_runtime"` |
/// | `throttled(STRATEGY, attempts = N)` | a second schedule (and limit) for errors `when` classifies as `Decision::Throttled`, any strategy an `on(..)` arm takes (composed ones, `sidekiq`, `buckets`); needs `when`. The per-kind schedules with two kinds: throttled failures count against `N` alone (at most 255, or `unlimited`; `attempts` defaults to 3), the others against the top-level `attempts` alone, each kind's k-th retry waits its schedule's delay k, and `GiveUp`'s and `RetryEvent`'s `failure_kind` is `"throttled"` for a throttled failure | none |
/// | `budget` | an expression giving a `RetryBudget` (a `static`'s path, `self.budget`, `&*self.shared` from an `Arc`, a keyed lookup), evaluated once per call: each retry spends a token, each success refills; none left, no retry | none |
/// | `circuit` | an expression giving a `CircuitBreaker`, likewise: while it is open, calls fail fast with `E::from(CircuitOpen)` without running the body | none |
/// | `throttle` | an expression giving an `AdaptiveThrottle`, likewise (Google SRE client-side throttling): before each attempt it may reject the attempt locally, and the call then fails fast with `E::from(Rejected)` without running the body; an attempt counts as accepted by the backend when it succeeds or `when` says `Stop` | none |
/// | `attempt_timeout` | D, `async fn` only: an attempt running longer fails with `E::from(Elapsed)`; beside `timeout`, less than it. Cut to the time the call has left (until the nearer of `timeout` and `max_elapsed`), so an attempt never outlives the call's deadline; the last try of `on_deadline = "last_try"` keeps it whole | none |
/// | `when_ok` | a path or closure taking `&T` (the `Ok` type), returning `bool` or `Decision`: an `Ok` it retries (`true`, `Retry`, `RetryAfter`, `Throttled`) is retried like an error; on giving up, that last `Ok` is returned unchanged | every `Ok` accepted |
/// | `on_giveup` | a path or closure, `FnOnce(&Result<T, E>, &GiveUp)`, called once when the call ends with an outcome it did not accept | none |
/// | `on_success` | a path or closure, `FnOnce(&T, &SuccessEvent)`, called once when the call returns an `Ok` it accepted (that `when_ok` did not retry), with the attempts it took and the time since it began; never when it gives up, also not for `fallback`'s value. Under `hedge`, the attempts counted are those started, the losers included | none |
/// | `reset_after` | D, more than zero: an attempt that ran at least D before it failed starts the schedule over, as the first failure of a new run (the schedule's first delay next; `attempts`, each `on(..)` arm's attempts and `max_elapsed` counting from that failure; `timeout` still bounds the whole call). `context.attempt` keeps counting; `RetryEvent::run` says which run. An attempt's time runs from the end of the sleep before it. Not with `hedge` or `policy` (give it to the `Policy`: `Policy::reset_after`) | none |
/// | `chaos` | a `static` `backoff_runtime::Chaos<E>` (the runtime's feature `chaos`, for tests): each attempt draws from it before the body, failing with its error or starting late for a seeded share of attempts, so `when`, timeouts, `circuit`, `budget`, hedging, hooks and metrics see injected outcomes as real ones. Without the feature, a compile error that names it | none |
/// | `hedge` | `"20ms"` (a delay) or `"p95"` (`"p50"` to `"p99.9"`: that percentile of the function's latency, learned as it runs; 100 ms until 20 calls), `async fn` only, with `attempts` from 2 to 8: gRPC A6 hedging. Attempt 1 starts at once; while none has given an accepted outcome, the next starts the delay after the previous one, or at once when one fails with an error `when` retries. The first accepted outcome is returned and the other attempts are dropped; `Stop` ends the call; when every attempt failed, the last error is returned. Each hedge pays a `budget` token and is refused by an open `circuit`. The attempts overlap inside the function's own future (no task, no allocation), so the body must be runnable twice at once: no `&mut self`, no `&mut` or `mut` parameters, and a by-value argument the body moves must be in `clone(..)`. `on_retry` keeps `(&E, &RetryEvent)` and runs before an attempt a failure started; `on_hedge` runs when the delay starts one; `context`'s `kind` says what started each attempt. Not with a strategy, `jitter`, `throttled`, `max_elapsed`, `policy`, `sleep`, `retry_after_max` or `throttle` | none |
/// | `fallback` | a path or closure, `FnOnce(E, &GiveUp) -> Result<T, E>`: called once when the call gives up with an error (attempts spent, `Stop`, an open breaker, a throttle's rejection, a timeout), after `on_giveup`; its result is the call's result. Never called on `Ok`, also not on an `Ok` that `when_ok` rejected (that `Ok` is returned unchanged) | none |
/// | `context` | a name, `context = ctx`: binds `ctx: AttemptContext` in the body (`ctx.attempt` from 1, `ctx.last`, `ctx.remaining`: the time left until the nearer of `timeout` and `max_elapsed`, `None` without either, and `ctx.deadline()`); `context = mut ctx` for a body that changes its copy | none |
/// | `clone` | `clone(a, b, ..)`: by-value parameters (or `self`) each attempt gets its own `Clone::clone` of, so the body may move them | none |
/// | `timeout` | D, `async fn` only: bounds the whole call, sleeps and the attempt in flight included; then `E::from(Elapsed)` | none |
/// | `cancel` | an expression giving a token (`backoff_runtime::CancelToken`, tokio-util's `CancellationToken` with the runtime's feature `tokio-util`, a reference or `Arc` of one, or any `backoff_runtime::control::Cancel`), evaluated where it is used (before the first attempt, at each sleep): a cancel ends the sleep at once (a plain fn waits on the token, not in `std::thread::sleep`; an `async fn`'s sleep races it), no further attempt runs, and the call returns the last attempt's outcome, giving up with `GiveUpReason::Cancelled` (`on_giveup` and `fallback` see it). Cancelled before the first attempt: `E::from(Cancelled)` without running the body. An attempt in flight is never interrupted; beside `hedge`, no attempt starts once it is cancelled and none in flight is dropped. The outcome of a failed attempt is kept during the sleep (an `async fn`'s future holds it). Not with `sleep` in a plain fn | none |
/// | `retry_after_max` | D: a `Decision::RetryAfter` longer than this gives up at once instead of sleeping | `"5m"` |
/// | `stop_at_delay` | D: give up instead of a sleep whose delay before jitter would reach D (reason `Attempts`); `attempts` then defaults to `unlimited`. A schedule without randomness becomes an attempt count when the code compiles. Beside `on(..)` it applies to each arm's own delay (an attempt count per arm; an arm random by itself must take `attempts` instead) | none |
/// | `on_deadline` | `"give_up"` or `"last_try"`, beside `max_elapsed`: with `"last_try"` the sleep that would cross the deadline is cut to end at it and one last attempt (`context.last`) runs there | `"give_up"` |
///
/// With `when_ok`, `on_retry` receives the whole outcome,
/// `FnMut(&Result<T, E>, &RetryEvent)`.
///
/// `jitter = "spread"` (`Jitter::Spread`) spreads a herd of calls that
/// failed together evenly over time: each call draws one phase at its first
/// retry and keeps it, retry k waits the strategy's own schedule read at
/// the fractional retry k − ½ + phase, and no wait is shorter than the one
/// before it. With `decorrelated` it spreads around the strategy's
/// mid-range chain.
///
/// `context` is read before each attempt from a counter the loop keeps; it
/// reads no clock and allocates nothing. `last` is `true` when the attempt
/// limit makes this attempt the last (never under `attempts = unlimited`);
/// a deadline, budget or breaker may still end a call earlier.
///
/// `on_giveup` gets a `GiveUp`: calls made (0 when a breaker refused the
/// first one), time since the call began, and the `GiveUpReason`:
/// `Stopped` (`when`/`when_ok` said stop), `Attempts`, `Deadline`
/// (`max_elapsed`, or a `RetryAfter` past it or past `retry_after_max`),
/// `Budget`, `CircuitOpen` or `Timeout`. It is never called on success.
///
/// With the runtime's `tracing` feature, each retry is a WARN event, and
/// giving up an event carrying `attempts` and `reason` whose level says how
/// unexpected the end is: ERROR when retrying did not help (attempts,
/// deadline, budget, timeout), WARN for a breaker's refusal, for a
/// `cancel` and for an error `when` stopped after retries, DEBUG for an error stopped on the
/// first attempt (an answer such as a 404, not a failed retry).
///
/// D is a string literal, a number and a unit (`ns us ms s m h`), without
/// spaces: `"250ms"`, `"1.5s"`, `"2m"`, `"1m30s"`, checked when the code
/// compiles. Strategy parameters default to base `"100ms"`, factor `2`, max
/// `"10s"`, constant delay `"1s"`.
///
/// Every value but the callables, `policy`, `budget` and `circuit` is a
/// literal, read when the code compiles: `attempts = MAX_TRIES` or
/// `base = Duration::from_millis(100)` are errors that show the literal to
/// write. For a value from a `const` or known only at run time, build a
/// [`Policy`] and pass it with `policy = ...`.
///
/// [`Decision`]: https://docs.rs/backoff-runtime/latest/backoff_runtime/enum.Decision.html
/// [`Policy`]: https://docs.rs/backoff-runtime/latest/backoff_runtime/struct.Policy.html
///
/// # The rewrite
///
/// - The signature is kept exactly (name, visibility, generics, where
///   clauses, parameters, return type, `async`, `unsafe`, attributes). It
///   works on free functions, methods (`&self`, `&mut self`,
///   `self: Arc<Self>`), trait impl methods, trait methods with a default
///   body, `async fn` in traits, and generic functions.
/// - The return type must be a `Result`, possibly through an alias such as
///   `std::io::Result<T>`; `impl Trait` inside it works
///   (`Result<impl Iterator<Item = u32>, E>`), sync and async.
/// - `?` and `return` in the body end that attempt with that result.
/// - Arguments are not cloned unless `clone(..)` names them, so a body that
///   moves a by-value argument does not compile (it could not run twice):
///
/// ```compile_fail
/// use backoff_runtime::retry;
///
/// #[retry]
/// fn send(message: String) -> Result<(), String> {
///     Err(message) // moves `message`: a second attempt would have none
/// }
/// ```
///
///   Name it in `clone(..)` and each attempt gets a clone of its own (the
///   parameter's type must be `Clone`; `clone(self)` clones a by-value
///   `self`), or borrow it in the body:
///
/// ```
/// use backoff_runtime::retry;
///
/// #[retry(immediate, clone(message))]
/// fn send(message: String) -> Result<(), String> {
///     Err(message) // this attempt's own clone
/// }
/// assert_eq!(send("hi".into()), Err("hi".into()));
/// ```
///
///   Clones made: one per attempt that runs, the first included (a call
///   that succeeds at once clones once); the original is dropped when the
///   call returns. (The last attempt could take the original instead, but
///   only by keeping it in an `Option` in every call's frame or future, to
///   save one clone on calls that already used every attempt.)
/// - Each `&mut` parameter bound by name, with an elided lifetime, is
///   reborrowed by each attempt: the body may re-point it
///   (`dst = &mut dst[..n];`) and the next attempt starts from the caller's
///   reference again, while what an attempt wrote through it stays
///   written. A parameter with a named lifetime (`&'h mut [u8]`, which the
///   body may store in `self`) or that the result borrows from is left as
///   it is, and so is `&mut self`: a body that gives `self` itself away
///   (`Parser::new(self)`) writes `&mut *self` there instead.
/// - Each attempt sees `mut` and `&mut` arguments as the previous attempt
///   left them: a body that is not safe to run again is yours to make so.
/// - Each hook (`when`, `when_ok`, `on_retry`, `on_giveup`) is evaluated
///   where it is called, as in a loop written by hand: a closure may use
///   `self` (also `&mut self`) and the `&mut` arguments that the body uses
///   too, and `on_giveup`, which runs once just before the call returns,
///   may move a by-value argument that the body does not move. The
///   expression is evaluated at each call: a `when`, `when_ok` or
///   `on_retry` closure is made anew for each outcome it judges or reports,
///   so it keeps no state of its own from one call to the next (count into
///   a variable it borrows), and a `move` closure moves its captures each
///   time (over a `&mut` argument or a value that is not `Copy`, that is
///   the error a hand-written loop would give). Under `timeout`,
///   `on_giveup` runs after the attempts' future has ended, on either path.
/// - A `&mut self` method whose `Ok` value borrows from `self` compiles when
///   the body's borrows of `self` are of distinct fields; when the body uses
///   `self` whole (`self.advance()?; Ok(&self.buf)`), rustc refuses it
///   (E0524, "two closures require unique access to `*self`", or "captured
///   variable cannot escape `FnMut` closure body" where the attempts are
///   one closure, see below): any loop
///   that may return a borrow from one iteration and borrow anew in the next
///   is beyond today's borrow checker. Return owned data, or split the
///   method: retry the part that does the fallible work, then borrow in a
///   second method. (The attribute refuses a shared borrow only where the
///   body certainly takes the `&mut` whole, as in `&mut *self` or
///   `buf.iter_mut()`, since many such methods compile; a unique borrow in
///   the `Ok` type of a
///   `&mut self` or `&mut` argument, which no loop can hand out, is refused,
///   in a plain fn and an `async fn` alike: a `&mut T`; a type whose name
///   says it holds one (`IterMut<'_, T>`, `ReadyMutGuard<'a>`,
///   `MutexGuard<'_>`, `Entry<'_>`) with its lifetime written; or any type
///   with the `&mut`'s lifetime when the body hands the `&mut` itself over,
///   as in `Ok(Field { multipart: self })`.)
/// - `#[track_caller]` is a compile error beside `#[retry]`: the body runs
///   in a closure, which stable Rust cannot mark `#[track_caller]`, so it
///   would silently stop naming the caller. Two `#[retry]` on one function
///   are a compile error too (the attempts would multiply).
/// - The expansion adds no warning and hides none, down to `rust-version =
///   "1.85"`: the function's own lints (`missing_docs`, `unused_mut`,
///   `clippy::needless_return`, `clippy::missing_safety_doc`,
///   `clippy::result_large_err`) fire as they would without the attribute.
///   Three exceptions: in a plain fn, `clippy::result_large_err` on a closure
///   *inside* the body is hidden (the attempts are a closure returning the
///   function's `Result`, which the lint would flag too, and a lint level
///   covers everything nested in it; the function itself is still
///   reported); and `clippy::doc_lazy_continuation` on the function's doc
///   comment is hidden, since an attribute macro receives `///` lines as
///   `#[doc = ".."]` attributes, which the lint does not read; and the
///   pedantic `clippy::unnecessary_wraps` (a private function that always
///   returns `Ok`) is hidden, since the lint reads the values the body
///   returns, and under `#[retry]` the body returns what the loop gives.
/// - An `async fn`'s future is `Send` whenever it would be without the
///   attribute, with one exception: an argument whose type is `Send` but not
///   `Sync` (a `Cell`, a `RefCell`), taken by value (not in `clone(..)`) or
///   by `&mut self` (or a `&mut` argument that is not reborrowed, see
///   below), that the body only reads. Each attempt borrows such arguments,
///   and a shared borrow of such a value is not `Send`. Put the value behind
///   a `Mutex` or an atomic. (A reborrowed `&mut` argument is held as a
///   unique borrow, which is `Send`.)
///   Dropping the future cancels cleanly, even mid-sleep.
/// - Without `max_elapsed`, `on_retry`, `on_giveup`, `on_success`,
///   `reset_after` and `timeout`, a call
///   that succeeds at once reads no clock (a closed breaker included), draws
///   no random number and allocates nothing; no path allocates.
/// - On a plain fn whose attribute names only its policy (a strategy,
///   `attempts`, `jitter`, `max_elapsed`, `throttled`, `retry_after_max`
///   or `policy`, with `clone(..)` and `crate`, but no hook, `sleep`,
///   `budget`, `circuit` or `context`), the runtime runs the loop: the
///   attempts are one `FnMut` closure, the first runs inline, and only a
///   failure calls the rest of the loop, out of line. A call that succeeds
///   at once then costs what its test of the outcome costs. A body that
///   moves a by-value argument is then E0507 ("cannot move out of ..., a
///   captured variable in an `FnMut` closure") rather than E0382.
/// - The same holds beside a `when` that names neither `self` nor a
///   parameter (a path such as `is_transient` or `Self::is_transient`, or
///   a closure of its own parameter): the runtime runs the loop with the
///   verdict beside the attempts, every attempt behind a pointer, so the
///   body is compiled once. `when` is still evaluated at each verdict, as
///   in the function's own loop. A `when` that names `self` or a parameter
///   keeps the function's own loop, where it borrows them only while it
///   decides.
/// - The attribute reads the signature, not the body: the body is handed
///   back as it was written (only a body that starts with an attribute or
///   an item is parsed, to keep the item first). A syntax error in the body
///   is reported by rustc, at its own tokens. A policy made of literal
///   arguments is a type of the runtime's, not a `static` in the function,
///   and the traces of the runtime's `tracing` feature expand to nothing
///   without it: what the compiler checks for each function is the loop
///   alone.
///
/// # Errors
///
/// Every mistake in the attribute is a compile error on the offending token,
/// all of them at once, and the function is still emitted unchanged so the
/// rest of the crate keeps compiling. A name from another retry library
/// (`max_retries`, `max_delay`, `multiplier`) or at the wrong level (`base`
/// beside the strategy, `attempts` inside it) is told where it belongs; a
/// closure given to `when`, `when_ok`, `on_retry` or `on_giveup` with the
/// wrong number of parameters, or taking by value what is passed by
/// reference, is an error on its parameters; an `async` closure there is an
/// error on its `async` (the loop would never await it), and a closure that
/// moves a captured argument is rustc's E0382 on that argument, as in a
/// loop written by hand. Combinations that cannot act are errors too: an
/// `attempt_timeout` not below `timeout`.
///
/// Attributes that rewrite the function before `#[retry]` sees it go
/// below it: under `#[tokio::test]` (or `#[tokio::main]`) the function is
/// already a plain fn, so `timeout` is told to put `#[retry]` above it;
/// under `#[tracing::instrument]` an `async fn`'s arguments move into a
/// future of the first attempt, so a `&mut self`, or a `String`, `Vec`, `Box`
/// (and the like) not in `clone(..)`, is told to put `#[retry]` above it or
/// to clone the argument.
#[proc_macro_attribute]
pub fn retry(args: TokenStream, item: TokenStream) -> TokenStream {
    // `#[retry = ".."]`: rustc refuses the form itself; a second error from
    // the macro about the value would only repeat it.
    if !args.is_empty()
        && proc_macro::Span::call_site()
            .source_text()
            .is_some_and(|source| attr::is_key_value_form(&source))
    {
        return item;
    }
    expand::retry(args.into(), item.into()).into()
}
