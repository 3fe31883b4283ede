//! `hedge`'s checks: a hedged call runs its body in several attempts at the
//! same time, inside the call's own future.

use syn::{FnArg, Pat, Signature, Type};

use super::closures::closure;
use super::shape::{receiver_borrow, ungrouped_pat, ungrouped_type};

use crate::attr::{Attempts, RetryArgs};
use crate::errors::Errors;

/// The most attempts a hedged call may start: the in-flight attempts live
/// in a fixed array in the call's future.
pub(crate) const MAX_HEDGED_ATTEMPTS: u64 = 8;

/// Checks `hedge` against the other arguments and the signature.
pub(crate) fn check_hedge(sig: &Signature, is_async: bool, args: &RetryArgs, errors: &mut Errors) {
    let Some(hedge) = &args.hedge else {
        if let Some(on_hedge) = &args.on_hedge {
            errors.push(syn::Error::new(
                on_hedge.key,
                "`on_hedge` is called when `hedge`'s delay starts an attempt, and there is no `hedge` here; add one (`hedge = \"50ms\"`), or use `on_retry`, called before each retry",
            ));
        }
        return;
    };
    if !is_async {
        errors.push(syn::Error::new(
            hedge.key,
            "`hedge` runs attempts at the same time, which needs an `async fn`: a blocking fn runs one attempt at a time; make the function `async` or remove `hedge`",
        ));
    }
    match args.attempts.as_ref().map(|a| (&a.value, a.span)) {
        Some((Attempts::Unlimited, span)) => errors.push(syn::Error::new(
            span,
            format!("`hedge` needs an attempt limit: each attempt may still be running when the next starts, and the call keeps them all in its own future; write a limit from 2 to {MAX_HEDGED_ATTEMPTS}, as in `attempts = 3`"),
        )),
        Some((Attempts::Limited(1), span)) => errors.push(syn::Error::new(
            span,
            "`hedge` with `attempts = 1` never starts a second attempt; allow at least 2, or remove `hedge`",
        )),
        Some((Attempts::Limited(n), span)) if *n > MAX_HEDGED_ATTEMPTS => {
            errors.push(syn::Error::new(
                span,
                format!("`hedge` starts at most {MAX_HEDGED_ATTEMPTS} attempts, since they may all run at once; lower `attempts` to {MAX_HEDGED_ATTEMPTS} or less"),
            ));
        }
        _ => {}
    }
    // What a hedged call has no use for: its attempts start on `hedge`'s
    // clock, not after a backoff's sleep.
    let schedule = "`hedge` sets when each attempt starts (the delay after the previous one, or at once when one fails)";
    if let Some(s) = &args.strategy {
        errors.push(syn::Error::new(
            s.span,
            format!("{schedule}, so a strategy has nothing to schedule; remove `{}`, or remove `hedge` to retry one attempt at a time", s.kind.name()),
        ));
    }
    for (name, key) in [
        ("jitter", args.jitter.as_ref().map(|a| a.key)),
        ("throttled", args.throttled.as_ref().map(|a| a.key)),
        ("max_elapsed", args.max_elapsed.as_ref().map(|a| a.key)),
        ("policy", args.policy.as_ref().map(|a| a.key)),
        ("sleep", args.sleep.as_ref().map(|a| a.key)),
        (
            "retry_after_max",
            args.retry_after_max.as_ref().map(|a| a.key),
        ),
        ("stop_at_delay", args.stop_at_delay.as_ref().map(|a| a.key)),
        ("on_deadline", args.on_deadline.as_ref().map(|a| a.key)),
        ("reset_after", args.reset_after.as_ref().map(|a| a.key)),
    ] {
        if let Some(key) = key {
            let fix = match name {
                "reset_after" => "; its attempts overlap, so none can start the schedule over: remove `reset_after`, or remove `hedge` to retry a long-running session one attempt at a time".to_owned(),
                "max_elapsed" => "; bound the call with `timeout` instead".to_owned(),
                "sleep" => "; its timer is tokio's".to_owned(),
                _ => format!("; remove `{name}`"),
            };
            errors.push(syn::Error::new(
                key,
                format!("`{name}` cannot be combined with `hedge`: {schedule}{fix}"),
            ));
        }
    }
    // What the hedged call does not take yet.
    if let Some(throttle) = &args.throttle {
        errors.push(syn::Error::new(
            throttle.key,
            "`throttle` cannot be combined with `hedge` yet: a hedge is refused by an open `circuit` and paid for by a `budget`; use those",
        ));
    }
    check_unique_access(sig, args, errors);
    check_on_retry_of_a_hedge(args, errors);
}

/// `on_retry = |e: Option<&E>, ..|`, the form it had under `hedge` when a
/// hedge (no error) went to it too: that now goes to `on_hedge`.
fn check_on_retry_of_a_hedge(args: &RetryArgs, errors: &mut Errors) {
    let Some(first) = args
        .on_retry
        .as_ref()
        .and_then(closure)
        .and_then(|c| c.inputs.first())
    else {
        return;
    };
    let Pat::Type(typed) = first else { return };
    let Type::Path(path) = ungrouped_type(&typed.ty) else {
        return;
    };
    if path
        .path
        .segments
        .last()
        .is_some_and(|s| s.ident == "Option")
    {
        errors.push(syn::Error::new_spanned(
            &typed.ty,
            "under `hedge`, `on_retry` runs before an attempt that a failure started, and takes that error as `&E`, not an `Option`; an attempt that `hedge`'s delay starts goes to `on_hedge = |event: &RetryEvent| ..`",
        ));
    }
}

/// A body that needs `&mut` access cannot run twice at once: one error on
/// each such parameter (`&mut self`, `x: &mut T`, a by-value `mut x` that
/// `clone(..)` does not give each attempt a copy of).
fn check_unique_access(sig: &Signature, args: &RetryArgs, errors: &mut Errors) {
    let why = "`hedge` runs this body in more than one attempt at the same time";
    let cloned = |name: &syn::Ident| {
        args.clone
            .as_ref()
            .is_some_and(|c| c.value.iter().any(|n| n == name))
    };
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(r) if receiver_borrow(r).is_some_and(|(_, mutable)| mutable) => {
                errors.push(syn::Error::new_spanned(
                    r,
                    format!("{why}, and `&mut self` lets only one of them use `self` at a time; take `&self` (a client such as `reqwest::Client` or a `tonic` channel sends from `&self`; one whose calls need `&mut` can be cloned per attempt in the body, `let mut client = self.client.clone();`, where a `Mutex` would make the hedges wait on each other), or remove `hedge`"),
                ));
            }
            FnArg::Typed(t) => {
                if let Type::Reference(r) = ungrouped_type(&t.ty)
                    && r.mutability.is_some()
                {
                    let name = match ungrouped_pat(&t.pat) {
                        Pat::Ident(p) => format!("`{}`", p.ident),
                        _ => "this parameter".to_owned(),
                    };
                    errors.push(syn::Error::new_spanned(
                        &t.ty,
                        format!("{why}, and {name} is a `&mut` that only one of them can use at a time; take a shared reference (with a `Mutex` or atomics for what changes), or remove `hedge`"),
                    ));
                } else if let Pat::Ident(p) = ungrouped_pat(&t.pat)
                    && p.mutability.is_some()
                    && p.by_ref.is_none()
                    && !cloned(&p.ident)
                {
                    let name = &p.ident;
                    errors.push(syn::Error::new_spanned(
                        p,
                        format!("{why}, and each would change `{name}`: give each attempt its own copy with `clone({name})`, or take `{name}` without `mut`"),
                    ));
                }
            }
            FnArg::Receiver(_) => {}
        }
    }
}
