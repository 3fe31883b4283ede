//! Checks that involve more than one argument, or the function itself, by
//! family: the arguments against each other (`args`), the hooks' closures
//! (`closures`), the function's signature and attributes (`signature`),
//! `clone(..)` (`clone`) and `hedge` (`hedge`).

mod args;
mod clone;
mod closures;
mod hedge;
mod kinds;
mod signature;

pub(crate) use args::check_args;
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
