//! Checks that involve more than one argument, or the function itself, by
//! family: the arguments against each other (`args`), a plain fn's `Ok`
//! borrowing from a `&mut` (`borrows`), the hooks' closures
//! (`closures`), the function's signature and attributes (`signature`),
//! `clone(..)` (`clone`), `hedge` (`hedge`), and a generic error type's
//! bounds (`generic`).

mod args;
mod bindings;
mod borrows;
mod clone;
mod closures;
mod controls;
mod generic;
mod hedge;
mod kinds;
mod moves;
mod schedule;
mod shape;
mod signature;

pub(crate) use args::check_args;
pub(crate) use bindings::{check_struct_bindings, struct_patterns};
pub(crate) use borrows::check_borrows_handed_over;
pub(crate) use closures::hook_parameter_types;
pub(crate) use controls::other_control;
pub(crate) use generic::generic_error;
pub(crate) use moves::moved_arguments;
pub(crate) use signature::{
    blocks_on_its_body, check_attributes, check_instrumented, check_signature, output_may_borrow,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::RetryArgs;
    use crate::errors::Errors;

    fn messages(args: &str, item: &str) -> Vec<String> {
        let mut errors = Errors::default();
        let args = RetryArgs::parse(args.parse().unwrap(), &mut errors);
        let func: syn::ItemFn = syn::parse_str(item).unwrap();
        check_args(&args, &mut errors);
        check_signature(
            &func.sig,
            func.sig.asyncness.is_some(),
            false,
            &args,
            &mut errors,
        );
        match errors.finish() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    const ITEM: &str = "fn f() -> Result<u32, FetchError> { Ok(1) }";

    #[test]
    fn a_fleet_builder_is_refused_but_a_lookup_of_the_same_name_is_not() {
        let refused = messages(
            r#"circuit = STORE.breaker("payments", CircuitBreaker::new(5, 1, D))"#,
            ITEM,
        );
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(
            refused[0].contains("makes a new shared value"),
            "{refused:?}"
        );
        let method = "fn f(&self) -> Result<u32, FetchError> { Ok(1) }";
        assert_eq!(
            messages("circuit = self.pool.breaker(host, region)", method),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_generic_error_without_the_refusals_from_bounds_is_one_error_naming_them() {
        let item = "async fn f<E: std::fmt::Debug>() -> Result<u32, E> { todo!() }";
        let got = messages(r#"circuit = B, throttle = T, timeout = "1s""#, item);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0].contains("add the bound `E: From<backoff_runtime::CircuitOpen> + From<backoff_runtime::Rejected> + From<backoff_runtime::Elapsed>`"),
            "{got:?}"
        );
        // Only what is missing is named.
        let item = "async fn f<E>() -> Result<u32, E> where E: From<backoff_runtime::CircuitOpen> { todo!() }";
        let got = messages(r#"circuit = B, timeout = "1s""#, item);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0].contains("add the bound `E: From<backoff_runtime::Elapsed>`"),
            "{got:?}"
        );
        // Bounds that may imply them, a concrete error, or no refusal: none.
        for (args, item) in [
            (
                "circuit = B",
                "fn f<E: MyError>() -> Result<u32, E> { todo!() }",
            ),
            (
                "circuit = B",
                "fn f<E>() -> Result<u32, std::io::Error> { todo!() }",
            ),
            ("attempts = 2", "fn f<E>() -> Result<u32, E> { todo!() }"),
            // A plain fn has no timeout to convert (its own error says so).
            (
                "circuit = B",
                "fn f<E: From<CircuitOpen>>() -> Result<u32, E> { todo!() }",
            ),
        ] {
            assert_eq!(
                messages(args, item),
                Vec::<String>::new(),
                "{args} on {item}"
            );
        }
    }

    #[test]
    fn closure_parameters_by_value_are_refused() {
        for (args, expect) in [
            ("when = |e: FetchError| true", "write `&FetchError`"),
            ("when = |e: u32| true", "write `&u32`"),
            (
                "when = |(a, b): (u8, u8)| true",
                "takes the error by reference",
            ),
            ("when = |e: &mut FetchError| true", "remove `mut`"),
            (
                "when_ok = |v: u32| false",
                "takes the `Ok` value by reference",
            ),
            ("on_retry = |e, ev: RetryEvent| ()", "write `&RetryEvent`"),
            (
                "on_giveup = |o: Result<u32, FetchError>, g| ()",
                "takes the outcome by reference",
            ),
            (
                "on_giveup = |o, g: backoff_runtime::GiveUp| ()",
                "write `&backoff_runtime::GiveUp`",
            ),
        ] {
            let all = messages(args, ITEM);
            assert_eq!(all.len(), 1, "{args}: {all:?}");
            assert!(all[0].contains(expect), "{args}: {}", all[0]);
        }
    }

    /// A path that may be an alias of a reference (`type Ref<'a> =
    /// &'a FetchError;` compiles as `|e: Ref|`), an inferred or reference
    /// type, and the `E` of an alias such as `io::Result` are left alone.
    #[test]
    fn closure_parameters_that_may_be_references_are_accepted() {
        for (args, item) in [
            ("when = |e: Ref| true", ITEM),
            ("when = |e: &FetchError| true", ITEM),
            ("when = |e: _| true", ITEM),
            ("when = |&FetchError| true", ITEM),
            (
                "when = |e: std::io::Error| true",
                "fn f() -> std::io::Result<()> { Ok(()) }",
            ),
            ("on_retry = |e: &FetchError, ev: &RetryEvent| ()", ITEM),
            ("on_giveup = |o: Outcome, g: &GiveUp| ()", ITEM),
        ] {
            assert_eq!(messages(args, item), Vec::<String>::new(), "{args}");
        }
    }

    #[test]
    fn future_returning_functions_are_told_to_be_async() {
        for item in [
            "fn f() -> impl std::future::Future<Output = Result<u8, E>> { async { Ok(1) } }",
            "fn f() -> Pin<Box<dyn Future<Output = Result<u8, E>> + Send>> { Box::pin(async { Ok(1) }) }",
            "fn f() -> BoxFuture<'static, Result<u8, E>> { todo() }",
        ] {
            let all = messages("", item);
            assert_eq!(all.len(), 1, "{item}: {all:?}");
            assert!(
                all[0].ends_with("make it an `async fn` returning `Result<u8, E>`"),
                "{item}: {}",
                all[0]
            );
        }
        assert_eq!(
            messages("", "async fn f() -> Result<u8, E> { Ok(1) }"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn composed_schedules_report_each_mistake_once() {
        for (args, expect) in [
            (
                "chain(exponential(times = 3), constant(\"1m\", times = 2)), attempts = 10",
                "`times` on the last stage of `chain`",
            ),
            (
                "chain(exponential, constant(\"1m\")), attempts = 5",
                "stage 1 of `chain` needs `times`",
            ),
            (
                "chain(exponential(times = 4), constant(\"1m\")), attempts = 5",
                "stage 2 of `chain` (`constant`) is never reached: it starts at retry 5, and `attempts = 5` allows 4 retries; raise `attempts` to at least 6",
            ),
            (
                "chain(exponential(times = 2), constant(\"1m\"))",
                "the default `attempts` (3) allows 2 retries",
            ),
            (
                "chain(exponential(times = 1, jitter = \"full\"), immediate)",
                "`jitter` applies once, to the composed delay",
            ),
            (
                "sum(constant(\"1s\"), decorrelated)",
                "`decorrelated` cannot be a stage of `sum`",
            ),
            (
                "shorter(chain(decorrelated(times = 2), immediate), constant(\"1s\"))",
                "`decorrelated` cannot be a stage of `shorter`",
            ),
            (
                "union(constant(\"1s\"), immediate)",
                "did you mean `shorter`?",
            ),
            (
                "intersect(constant(\"1s\"), immediate)",
                "did you mean `longer`?",
            ),
            (
                "chain(and_then(immediate, immediate), immediate)",
                "did you mean `chain`?",
            ),
            (
                "sum(constant(\"1s\", times = 2), immediate)",
                "`times` belongs to a stage of `chain`",
            ),
            (
                "exponential(times = 2)",
                "`times` belongs to a stage of `chain`",
            ),
            ("sum(immediate)", "`sum` takes at least two stages"),
            ("steps()", "`steps` takes at least one delay"),
            (
                "jitter = range(1.5, 0.5)",
                "the lower bound of `range` is above the upper one",
            ),
            ("jitter = range(-1, 0.5)", "cannot be negative"),
            ("jitter = range(0, 1e400)", "must be finite"),
            (
                "throttled(steps(), attempts = 3), when = f",
                "`steps` takes at least one delay",
            ),
            (
                "throttled(sum(immediate), attempts = 3), when = f",
                "`sum` takes at least two stages",
            ),
            (
                "throttled(constant(\"1s\"), attempts = 256), when = f",
                "`throttled` allows at most 255 throttled attempts, not 256",
            ),
        ] {
            let all = messages(args, ITEM);
            assert_eq!(all.len(), 1, "{args}: {all:?}");
            assert!(all[0].contains(expect), "{args}: {}", all[0]);
        }
        assert_eq!(
            messages(
                "chain(exponential(times = 3), sum(constant(\"3m\"), steps(\"1s\", \"2s\"), times = 2), decorrelated), attempts = 7, jitter = range(0, 1)",
                ITEM
            ),
            Vec::<String>::new()
        );
        // Any schedule may be `throttled`'s, as an `on(..)` arm's.
        for throttled in [
            "chain(constant(\"1s\", times = 2), exponential(base = \"2s\", max = \"1m\"))",
            "steps(\"1s\", \"5s\")",
            "sum(constant(\"1s\"), exponential(base = \"1s\"))",
            "sidekiq",
            "buckets",
        ] {
            let args = format!("throttled({throttled}, attempts = 6), when = f");
            assert_eq!(messages(&args, ITEM), Vec::<String>::new(), "{args}");
        }
    }

    #[test]
    fn stop_at_delay_must_be_able_to_act() {
        for (args, expect) in [
            (
                "exponential(base = \"1s\", max = \"5s\"), stop_at_delay = \"10s\"",
                "is above the schedule's `max` (`\"5s\"`)",
            ),
            (
                "decorrelated(base = \"1s\", max = \"5s\"), stop_at_delay = \"10s\"",
                "would never stop the call",
            ),
            (
                "exponential(base = \"1s\", max = \"1m\"), stop_at_delay = \"10s\", attempts = 5",
                "`attempts = 5` always ends the call before `stop_at_delay`",
            ),
            (
                "constant(\"10s\"), stop_at_delay = \"10s\"",
                "the first delay already reaches `stop_at_delay`",
            ),
            (
                "policy = P, stop_at_delay = \"1s\"",
                "`stop_at_delay` cannot be combined with `policy`",
            ),
        ] {
            let all = messages(args, ITEM);
            assert_eq!(all.len(), 1, "{args}: {all:?}");
            assert!(all[0].contains(expect), "{args}: {}", all[0]);
        }
        // `attempts = 0` is its own error; the stop rule's check does not
        // trip over it.
        let all = messages(
            "exponential(base = \"1s\", max = \"1m\"), stop_at_delay = \"10s\", attempts = 0",
            ITEM,
        );
        assert!(all.iter().any(|m| m.contains("`attempts = 0`")), "{all:?}");
        for args in [
            "exponential(base = \"1s\", max = \"1m\"), stop_at_delay = \"10s\", attempts = 6",
            "exponential(base = \"1s\", max = \"1m\"), stop_at_delay = \"10s\"",
            "sum(constant(\"3m\"), exponential(base = \"2m\", max = \"1h\")), stop_at_delay = \"30m\"",
            "decorrelated(base = \"1s\", max = \"1m\"), stop_at_delay = \"10s\"",
        ] {
            assert_eq!(messages(args, ITEM), Vec::<String>::new(), "{args}");
        }
    }

    /// A zero duration: one error, on the value, in the words
    /// `Policy::parse` uses for the schedule's arguments.
    #[test]
    fn a_zero_duration_is_refused_as_the_schedule_language_refuses_it() {
        let item = "async fn f() -> Result<u32, FetchError> { Ok(1) }";
        for name in [
            "max_elapsed",
            "stop_at_delay",
            "retry_after_max",
            "timeout",
            "attempt_timeout",
            "reset_after",
        ] {
            let all = messages(&format!("{name} = \"0s\""), item);
            assert_eq!(all.len(), 1, "{name}: {all:?}");
            assert!(all[0].contains(&format!("`{name}` of zero")), "{}", all[0]);
            assert!(all[0].contains("; give a positive"), "{}", all[0]);
            if backoff_schedule::macro_support::SCHEDULE_ARGUMENTS.contains(&name) {
                let e = backoff_schedule::parse(&format!("{name} = \"0s\"")).unwrap_err();
                assert_eq!(e.errors()[0].message(), all[0], "{name}");
            }
        }
    }

    #[test]
    fn on_deadline_needs_a_deadline_and_time_for_its_try() {
        let all = messages("on_deadline = \"last_try\"", ITEM);
        assert_eq!(all.len(), 1, "{all:?}");
        assert!(all[0].contains("add `max_elapsed"), "{}", all[0]);
        let item = "async fn f() -> Result<u32, FetchError> { Ok(1) }";
        let all = messages(
            "max_elapsed = \"10s\", on_deadline = \"last_try\", timeout = \"10s\"",
            item,
        );
        assert_eq!(all.len(), 1, "{all:?}");
        assert!(
            all[0].contains("would have no time for its try"),
            "{}",
            all[0]
        );
        let all = messages("max_elapsed = \"10s\", on_deadline = \"last\"", ITEM);
        assert_eq!(all.len(), 1, "{all:?}");
        assert!(all[0].contains("unknown `on_deadline` rule"), "{}", all[0]);
        assert_eq!(
            messages(
                "max_elapsed = \"10s\", on_deadline = \"last_try\", timeout = \"11s\"",
                item
            ),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_schedule_evaluator_matches_the_runtime_formulas() {
        use crate::attr::schedule::{StopAt, stop_at};
        let s = |args: &str| {
            let mut errors = Errors::default();
            let parsed = RetryArgs::parse(args.parse().unwrap(), &mut errors);
            assert!(errors.finish().is_ok(), "{args}");
            parsed.strategy
        };
        let sec = std::time::Duration::from_secs;
        let clojure = s("exponential(base = \"1s\", max = \"1m\")");
        assert_eq!(stop_at(clojure.as_ref(), sec(10)), StopAt::Attempts(5));
        assert_eq!(
            stop_at(None, std::time::Duration::from_millis(400)),
            StopAt::Attempts(3)
        );
        let essay = s("sum(constant(\"3m\"), exponential(base = \"2m\", max = \"1h\"))");
        // 5, 7, 11, 19, 35 minutes: the fifth reaches 30.
        assert_eq!(stop_at(essay.as_ref(), sec(30 * 60)), StopAt::Attempts(5));
        let chain =
            s("chain(linear(base = \"1s\", times = 3), fibonacci(base = \"2s\", max = \"1m\"))");
        // 1, 2, 3, then 2, 2, 4, 6, 10 s.
        assert_eq!(stop_at(chain.as_ref(), sec(6)), StopAt::Attempts(7));
        let shorter = s("shorter(exponential(base = \"1s\", max = \"1m\"), steps(\"3s\", \"4s\"))");
        assert_eq!(
            stop_at(shorter.as_ref(), sec(5)),
            StopAt::Never { max: sec(4) }
        );
        let random = s("chain(constant(\"1s\", times = 2), decorrelated)");
        assert_eq!(stop_at(random.as_ref(), sec(5)), StopAt::Random);
    }

    #[test]
    fn closure_arity_names_each_parameter() {
        let all = messages("on_retry = |e| ()", ITEM);
        assert_eq!(
            all,
            [
                "`on_retry` takes two parameters, the error `&E` and the event `&RetryEvent`; this closure takes 1"
            ]
        );
        let all = messages("when = || true", ITEM);
        assert_eq!(
            all,
            ["`when` takes one parameter, the error `&E`; this closure takes none"]
        );
    }
}
